#!/usr/bin/env python3
"""Time schema discovery (`sparkmerge plan`) of small CSV files with and
without date and timestamp columns, which the client's typing leaves to
Spark, and of the same rows as JSON files.

  discovery.py --remote sc://127.0.0.1:15002 --bin NAME=PATH [--bin ...]
               [--files 120] [--rows 200] [--runs 3] [--dir DIR]
               [--corpora dated,plain,json] [--flag=--spark-inference]

Writes corpora of FILES files of ROWS rows each, four header versions,
seeded: `dated` (CSV, every file with an ISO date column and a timestamp
column), `plain` (the same files without them) and `json` (the dated rows
as JSON lines). Runs `plan -o json` (with the --flag arguments, e.g.
--spark-inference, which leaves every schema to Spark) of each binary on
each corpus, RUNS times, interleaved (binary after binary, corpus after
corpus), and prints per binary and corpus the wall time of each run, the
best, and from the last run's plan the files typed on the client, the
files Spark typed together, its requests for that, and all the Spark
requests the plan made (analyses and executions; `requests` in -o json,
absent from builds before it). Compare two builds, e.g. --bin
main=/tmp/sm-main --bin new=/tmp/sm-new.
"""
import argparse
import json
import os
import random
import subprocess
import tempfile
import time

HEADERS = [
    ["id", "name", "amount", "qty", "region"],
    ["id", "name", "amount", "qty", "region", "channel"],
    ["id", "customer", "amount", "qty", "region", "channel"],
    ["id", "customer", "amount", "qty", "zone", "channel", "score"],
]


def value(col, f, r, rng):
    if col == "id":
        return str(f * 1000 + r)
    if col in ("name", "customer"):
        return "n%d" % rng.randint(0, 999)
    if col == "amount":
        return "%.2f" % (rng.random() * 1000)
    if col == "qty":
        return str(rng.randint(0, 50))
    if col in ("region", "zone", "channel"):
        return rng.choice(["eu", "us", "apac", "web"])
    if col == "score":
        return str(rng.randint(0, 10**6))
    if col == "day":
        return "2024-%02d-%02d" % (rng.randint(1, 12), rng.randint(1, 28))
    return "2024-%02d-%02d %02d:%02d:%02d" % (rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))


def corpus(out, files, rows, dated, as_json=False):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    for f in range(files):
        header = list(HEADERS[f % len(HEADERS)]) + (["day", "at"] if dated else [])
        if as_json:
            lines = [json.dumps({c: value(c, f, r, rng) for c in header}) for r in range(rows)]
        else:
            lines = [",".join(header)]
            for r in range(rows):
                lines.append(",".join(value(c, f, r, rng) for c in header))
        with open(os.path.join(out, "f%04d.%s" % (f, "json" if as_json else "csv")), "w") as w:
            w.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remote", required=True)
    ap.add_argument("--bin", action="append", required=True, help="NAME=PATH of a sparkmerge binary")
    ap.add_argument("--files", type=int, default=120)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir")
    ap.add_argument("--corpora", default="dated,plain")
    ap.add_argument("--flag", action="append", default=[], help="an argument passed to plan, e.g. --flag=--spark-inference")
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="sparkmerge-discovery-")
    corpora = a.corpora.split(",")
    for name in corpora:
        corpus(os.path.join(root, name), a.files, a.rows, name != "plain", as_json=name == "json")
    bins = [b.split("=", 1) for b in a.bin]
    env = dict(os.environ, SPARK_REMOTE=a.remote)
    times, last = {}, {}
    for _ in range(a.runs):
        for name, path in bins:
            for c in corpora:
                start = time.monotonic()
                out = subprocess.run([path, "plan", "-o", "json", *a.flag, os.path.join(root, c) + "/"], env=env, capture_output=True, text=True)
                took = time.monotonic() - start
                if out.returncode != 0:
                    raise SystemExit("%s plan %s: %s" % (name, c, out.stderr))
                times.setdefault((name, c), []).append(took)
                last[(name, c)] = json.loads(out.stdout)
    print("%-8s %-6s %-26s %7s %7s %9s %8s %6s" % ("binary", "corpus", "runs (s)", "best", "client", "together", "requests", "spark"))
    for name, _ in bins:
        for c in corpora:
            p = last[(name, c)]
            p = p.get("planned", p)
            client = sum(len(r["sources"]) for r in p["reads"] if r.get("inferred_locally"))
            req = p.get("requests")
            spark = "%d" % (req["analyses"] + req["executions"]) if req else "-"
            print("%-8s %-6s %-26s %7.2f %7d %9d %8d %6s" % (name, c, " ".join("%.2f" % t for t in times[(name, c)]), min(times[(name, c)]),
                                                           client, p.get("typed_together", 0), p.get("together_requests", 0), spark))


if __name__ == "__main__":
    main()
