#!/usr/bin/env python3
"""Run every contender on every corpus, interleaved, and record the results.

  bench.py --root .cache/bench --ns 10,200,2000 --reps 3 --results FILE.jsonl

For each corpus (kind x N) and each repetition the contenders run one after
the other (A B C A B C ...), so ratios are measured side by side on this
shared machine. Each run is a fresh process: wall time and peak RSS of that
client process (wait4 ru_maxrss) are recorded with the 1-minute load average
before it, then its output is checked against the corpus' expected rows and
columns (not timed). A contender that fails or times out on a corpus is not
repeated there. Results are appended to the JSONL file as they come.

Extra passes (not timed with the others):
  --rpc-count N     count Spark Connect RPCs per Spark contender at that N
                    through rpcproxy.py (one run each).
  --discovery N     schema discovery alone (sparkmerge --dry-run) at
                    --parallelism 1, 8, 32, next to reading the same
                    headers/footers locally.
  --analysis N      server-side analysis time of a union of N inputs:
                    left-deep unionByName chain vs balanced tree (PySpark),
                    measured as the AnalyzePlan (df.schema) round trip.
"""
import argparse
import glob
import re
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import gen

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PY = sys.executable
# run.sh builds a private binary so that another session rebuilding bin/
# cannot change the contender in the middle of a run.
SPARKMERGE = os.environ.get("BENCH_SPARKMERGE", os.path.join(REPO, "bin", "sparkmerge"))
KINDS = [("wide-drift-csv", "csv", "csv"), ("wide-drift-json", "json", "json"), ("parquet-evolve", "parquet", "parquet"),
         # Real drops (issue 34; gen.py --kinds dated-csv,lake): run only
         # when named in --corpora. The lakes' N is their number of files.
         ("dated-csv", "csv", "csv"), ("lake-csv", "csv", "csv"), ("lake-json", "json", "json")]
DEFAULT_KINDS = ["wide-drift-csv", "wide-drift-json", "parquet-evolve"]
SPARK_CONTENDERS = ["sparkmerge-auto", "sparkmerge-union", "sparkmerge-multipath", "pyspark-reduce",
                    "pyspark-reduce-ansioff", "pyspark-multiread", "floor-infer", "floor-schema"]
# Each contender again with NOOP: the same run writing nothing (Spark's
# noop format), so that the report can split a run into its read and
# project part and its write (issue 14's phases).
NOOP = "+noop"
NOOP_CONTENDERS = ["sparkmerge-auto" + NOOP, "floor-infer" + NOOP, "floor-schema" + NOOP]
# sparkmerge auto with --spark-inference: every CSV and JSON file typed by
# Spark, the path every file the client's typing refuses takes (issue 34).
SPARK_INFERENCE = "+spark-inference"
CONTENDERS = SPARK_CONTENDERS + ["duckdb"] + NOOP_CONTENDERS + ["sparkmerge-auto" + SPARK_INFERENCE]
# --server-root: the corpora as the server sees them, and as this machine does.
SERVER_ROOT, CLIENT_ROOT = "", ""


def loadavg():
    return os.getloadavg()


REMOTE = "@remote"


def command(contender, corpus, fmt, ext, out, listfile, remote):
    if contender.endswith(REMOTE):
        # The same contender on the corpus where only the server sees it
        # (--server-root): every input path names the server's copy.
        corpus = dict(corpus, dir=corpus["server_dir"])
        contender, listfile = contender[:-len(REMOTE)], corpus["server_listfile"]
    d = corpus["dir"]
    if contender.endswith(SPARK_INFERENCE):
        cmd = command(contender[:-len(SPARK_INFERENCE)], corpus, fmt, ext, out, listfile, remote)
        return cmd[:2] + ["--spark-inference"] + cmd[2:]
    if contender.endswith(NOOP):
        cmd = command(contender[:-len(NOOP)], corpus, fmt, ext, out, listfile, remote)
        if cmd[0] == SPARKMERGE:
            i = cmd.index("--out")
            return cmd[:i] + ["--out-format", "noop"] + cmd[i + 2:]
        return cmd + ["--noop"]
    if contender.startswith("sparkmerge-"):
        strategy = contender.split("-", 1)[1]
        # A glob: sparkmerge expands it into one source per file.
        return [SPARKMERGE, "merge", "--remote", remote, "--strategy", strategy,
                "--out", out, "--mode", "overwrite", "-o", "json", os.path.join(d, "*." + ext)]
    if contender == "transfer-floor":
        # Issue 11's floor of typing on the client: Spark sends the bytes
        # sparkmerge fetches to type the corpus (binaryFile as Arrow), no
        # typing, no merge.
        return [PY, os.path.join(HERE, "pyspark_driver.py"), "--remote", remote, "--mode", "transfer",
                "--format", fmt, "--out", out, "--files", d]
    if contender.startswith("floor-"):
        # The no-drift floor: the same rows without drift (gen.py writes
        # them under floor/), read by Spark in one load.
        floor = os.path.join(os.path.dirname(d), "floor", os.path.basename(d))
        cmd = [PY, os.path.join(HERE, "pyspark_driver.py"), "--remote", remote, "--mode", contender,
               "--format", fmt, "--out", out, "--files", floor]
        if contender == "floor-schema":
            cmd += ["--schema", floor_schema(floor, fmt, corpus["expected"])]
        return cmd
    if contender == "pyspark-reduce-ansioff":
        return [PY, os.path.join(HERE, "pyspark_driver.py"), "--remote", remote, "--mode", "reduce",
                "--conf", "spark.sql.ansi.enabled=false", "--format", fmt, "--out", out, "--files", listfile]
    if contender.startswith("pyspark-"):
        return [PY, os.path.join(HERE, "pyspark_driver.py"), "--remote", remote, "--mode", contender.split("-", 1)[1],
                "--format", fmt, "--out", out, "--files", listfile]
    return [PY, os.path.join(HERE, "duckdb_driver.py"), "--format", fmt, "--out", out, "--files", listfile]


def floor_schema(floor, fmt, expected):
    """The floor's schema in DDL: its columns in the floor files' order,
    typed as the expected result."""
    if SERVER_ROOT and floor.startswith(SERVER_ROOT):
        floor = CLIENT_ROOT + floor[len(SERVER_ROOT):]  # read here, from the client's copy
    first = sorted(glob.glob(os.path.join(floor, "*." + ("parquet" if fmt == "parquet" else fmt))))[0]
    if fmt == "csv":
        names = open(first).readline().strip().split(",")
    elif fmt == "json":
        names = list(json.loads(open(first).readline()))
    else:
        import pyarrow.parquet as pq
        names = pq.read_schema(first).names
    return ", ".join(f"`{n}` {expected['columns'][n.lower()]}" for n in names)


def run(cmd, timeout, env=None):
    """Runs cmd in its own process group; returns wall, peak RSS (KiB), rc, out, err."""
    # GNU time reports the client's peak RSS; wait4's ru_maxrss would also
    # count the pages this (large) Python process had when it forked.
    rss_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"bench-rss-{os.getpid()}")
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    timed_out = threading.Event()
    finished = threading.Event()

    def kill():
        # SIGTERM first, so a client can cancel its work on the server
        # (a killed Spark Connect client leaves its job running there).
        timed_out.set()
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 0)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and not finished.is_set():
                time.sleep(0.2)

    timer = threading.Timer(timeout, kill)
    timer.start()
    out_chunks, err_chunks = [], []
    t1 = threading.Thread(target=lambda: out_chunks.append(p.stdout.read()))
    t2 = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()))
    t1.start()
    t2.start()
    _, status, _ = os.wait4(p.pid, 0)
    finished.set()
    wall = time.monotonic() - start
    timer.cancel()
    t1.join()
    t2.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    out = (out_chunks[0] if out_chunks else b"").decode(errors="replace")
    err = (err_chunks[0] if err_chunks else b"").decode(errors="replace")
    rc = "timeout" if timed_out.is_set() else p.returncode
    try:
        rss = int(open(rss_file).read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        rss = 0
    return wall, rss, rc, out, err


def arrow_type(t):
    import pyarrow as pa

    if pa.types.is_int32(t) or pa.types.is_int16(t) or pa.types.is_int8(t):
        return "int"
    if pa.types.is_int64(t):
        return "bigint"
    if pa.types.is_floating(t):
        return "double" if t.bit_width == 64 else "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        # Spark writes its timestamp as INT96 (read back as ns without a
        # zone) and timestamp_ntz as micros without a zone.
        if t.tz is not None or t.unit == "ns":
            return "timestamp"
        return "timestamp_ntz"
    if pa.types.is_date(t):
        return "date"
    return str(t)


def nonnull_counts(files):
    """Non-null values per lower-case column, from the Parquet footers'
    statistics (or the column itself when a writer left them out)."""
    import pyarrow.parquet as pq

    counts = {}
    for f in files:
        pf = pq.ParquetFile(f)
        md = pf.metadata
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            for j in range(rg.num_columns):
                col = rg.column(j)
                stats = col.statistics
                if stats is not None and stats.has_null_count:
                    n = rg.num_rows - stats.null_count
                else:
                    arr = pf.read_row_group(g, columns=[col.path_in_schema]).column(0)
                    n = len(arr) - arr.null_count
                name = col.path_in_schema.lower()
                counts[name] = counts.get(name, 0) + n
    return counts


def check_output(out, expected):
    """Rows and columns of a Parquet output (file or Spark directory) against the expectation."""
    import pyarrow.dataset as ds

    try:
        if os.path.isdir(out):
            files = sorted(glob.glob(os.path.join(out, "**", "*.parquet"), recursive=True))
        else:
            files = [out]
        if not files:
            return {"ok": False, "check": "no output files"}
        dataset = ds.dataset(files, format="parquet")
        rows = dataset.count_rows()
        schema = dataset.schema
    except Exception as e:  # unreadable output
        return {"ok": False, "check": f"unreadable output: {str(e)[:200]}"}
    names = [f.name for f in schema]
    lower = [n.lower() for n in names]
    want = expected["columns"]
    missing = sorted(set(want) - set(lower))
    extra = sorted(set(lower) - set(want))
    dup = len(lower) != len(set(lower))
    types = {f.name.lower(): arrow_type(f.type) for f in schema}
    type_diff = sorted(f"{c}: {types[c]} (want {t})" for c, t in want.items() if c in types and types[c] != t)
    counted = nonnull_counts(files)
    wrong_values = sorted(c for c, k in expected["nonnull"].items() if counted.get(c) != k)
    fingerprints_differ = []
    if "fingerprints" in expected and cols_ok_for(lower, want):
        try:
            got = gen.value_fingerprints(files, want, reference=False)
            fingerprints_differ = sorted(c for c, fp in expected["fingerprints"].items() if got.get(c) != fp)
        except Exception as e:  # a column of another type than expected
            fingerprints_differ = [f"(fingerprints not computed: {str(e)[:160]})"]
    rows_ok = rows == expected["rows"]
    cols_ok = not missing and not extra and not dup
    problems = []
    if not rows_ok:
        problems.append(f"rows {rows} != {expected['rows']}")
    if missing:
        problems.append(f"{len(missing)} columns missing (e.g. {missing[:3]})")
    if extra:
        problems.append(f"{len(extra)} unexpected columns (e.g. {extra[:3]})")
    if dup:
        problems.append("duplicate column names")
    if wrong_values and cols_ok:
        problems.append(f"non-null counts differ in {len(wrong_values)} columns (values in the wrong columns?), e.g. {wrong_values[:3]}")
    if fingerprints_differ:
        problems.append(f"values differ from the expected ones in {len(fingerprints_differ)} columns, e.g. {fingerprints_differ[:3]}")
    return {"ok": rows_ok and cols_ok and not wrong_values and not fingerprints_differ,
            "values_ok": not wrong_values and not fingerprints_differ,
            "values_checked": "fingerprints" if "fingerprints" in expected else "non-null counts", "out_files": len(files), "rows": rows, "rows_ok": rows_ok, "cols_ok": cols_ok,
            "types_ok": not type_diff, "type_diff": type_diff[:6], "type_diff_count": len(type_diff),
            "check": "; ".join(problems)}


def cols_ok_for(lower, want):
    """Whether an output has exactly the expected columns (case-insensitively)."""
    return sorted(lower) == sorted(want)


def error_summary(err):
    lines = []
    for line in err.strip().splitlines():
        line = line.strip()
        if line.startswith("{"):  # pyspark's JSON log lines
            try:
                line = json.loads(line).get("msg", line)
            except ValueError:
                pass
        line = line.split("\n")[0].split("JVM stacktrace")[0].strip()
        if line:
            lines.append(line)
    classed = [line for line in lines if re.search(r"\[[A-Z][A-Z_.]+\]", line) or "StatusCode" in line or "refusing" in line]
    if classed:
        return classed[0][:600]
    keep = [line for line in lines if any(k in line for k in ("Error", "error", "Exception", "refusing", "RESOURCE", "CAST", "StatusCode"))]
    text = " | ".join((keep or lines)[-3:])
    return text[:600]


def corpora(root, ns, kinds=""):
    for n in ns:
        for kind, fmt, ext in KINDS:
            if kind not in (kinds.split(",") if kinds else DEFAULT_KINDS):
                continue
            name = f"{kind}-{n}"
            exp_path = os.path.join(root, "corpora", name + ".expected.json")
            if not kinds and not os.path.exists(exp_path):
                continue
            expected = json.load(open(exp_path))
            listfile = os.path.join(root, "corpora", name + ".files")
            with open(listfile, "w") as out:
                out.write("\n".join(expected["files"]) + "\n")
            corpus = {"name": name, "kind": kind, "n": n, "format": fmt, "ext": ext, "dir": os.path.join(root, "corpora", name),
                      "expected": expected, "listfile": listfile}
            if SERVER_ROOT:
                server_listfile = os.path.join(root, "corpora", name + ".server-files")
                with open(server_listfile, "w") as out:
                    out.write("\n".join(SERVER_ROOT + f[len(CLIENT_ROOT):] for f in expected["files"]) + "\n")
                corpus.update(server_dir=os.path.join(SERVER_ROOT, name), server_listfile=server_listfile)
            yield corpus


def warm_up(args, ns):
    """Runs every Spark contender once, untimed, on the first corpus: the
    first query on a fresh server pays for JIT and class loading (a first
    sparkmerge run took 15.6 s where the next took 2 s), which would
    otherwise land on whichever contender happens to run first."""
    corpus = next(corpora(args.root, ns, args.corpora), None)
    if corpus is None:
        return
    for contender in all_contenders(args):
        if contender == "duckdb":
            continue
        out = os.path.join(args.root, "out", "warm-up", contender)
        shutil.rmtree(out, ignore_errors=True)
        wall, _, rc, _, _ = run(command(contender, corpus, corpus["format"], corpus["ext"], out, corpus["listfile"], args.remote),
                                args.timeout)
        print(f"warm-up {corpus['name']:<24} {contender:<24} {wall:6.2f}s rc {rc} (not recorded)", flush=True)


def all_contenders(args):
    """The contenders, with each of --remote-contenders again on the
    server-only corpus when --server-root is set."""
    out = list(CONTENDERS)
    if args.server_root:
        out += [c + REMOTE for c in args.remote_contenders.split(",") if c]
    return [c for c in out if not args.only or c in args.only.split(",")]


def bench(args, ns, results):
    contenders = all_contenders(args)
    for corpus in corpora(args.root, ns, args.corpora):
        failed = set()
        for rep in range(args.rep_offset, args.rep_offset + args.reps):
            # Rotate the order per repetition so no contender always runs
            # first (cold OS and server caches) or last.
            k = rep % len(contenders)
            for contender in contenders[k:] + contenders[:k]:
                if contender in failed:
                    continue
                out = os.path.join(args.root, "out", contender, corpus["name"])
                if contender == "duckdb":
                    out += ".parquet"
                shutil.rmtree(out, ignore_errors=True)
                if os.path.isfile(out):
                    os.remove(out)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                cmd = command(contender, corpus, corpus["format"], corpus["ext"], out, corpus["listfile"], args.remote)
                load = loadavg()
                start_ms = int(time.time() * 1000)
                wall, rss, rc, stdout, stderr = run(cmd, args.timeout)
                # start_ms and end_ms bound the run, so that a server's event
                # log can be summed per run (its jobs' task CPU).
                rec = {"corpus": corpus["kind"], "n": corpus["n"], "contender": contender, "rep": rep,
                       "wall_s": round(wall, 3), "rss_kib": rss, "rc": rc, "load1": round(load[0], 2),
                       "bytes": corpus["expected"]["bytes"], "expected_rows": corpus["expected"]["rows"],
                       "time": time.strftime("%H:%M:%S"), "start_ms": start_ms, "end_ms": int(time.time() * 1000)}
                if rc == 0 and contender.startswith("transfer-floor"):
                    rec.update({"ok": True, "check": "nothing written (a transfer)"})
                    try:
                        rec["transfer_s"] = json.loads(stdout.strip().splitlines()[-1])["transfer_s"]
                    except (ValueError, IndexError, KeyError):
                        pass
                elif rc == 0 and contender.endswith(NOOP):
                    rec.update({"ok": True, "check": "nothing written (noop)"})
                elif rc == 0:
                    rec.update(check_output(out, corpus["expected"]))
                    if contender.startswith("sparkmerge-"):
                        try:
                            res = json.loads(stdout)
                            rec["remote_typed"] = res.get("remote_typed", 0)
                            rec["remote_fetch_jobs"] = res.get("remote_fetch_jobs", 0)
                            rec["discovery_s"] = res.get("discovery_ns", 0) / 1e9
                            rec["inference_s"] = res.get("inference_ns", 0) / 1e9
                            rec["elapsed_s"] = res.get("elapsed_ns", 0) / 1e9
                            rec["reads"] = len(res.get("reads") or [])
                            rec["reads_local"] = sum(1 for r in res.get("reads") or [] if r.get("inferred_locally"))
                            rec["scans"] = res.get("scans")
                            rec["rows_written"] = res.get("rows_written")
                            # What discovery asked of Spark (issue 34):
                            # analyses, executions, settings and the
                            # bytes of results sent to the client.
                            rec["requests"] = res.get("requests")
                            rec["typed_together"] = res.get("typed_together", 0)
                            rec["together_requests"] = res.get("together_requests", 0)
                        except ValueError:
                            pass
                else:
                    rec["ok"] = False
                    rec["error"] = error_summary(stderr) if rc != "timeout" else f"timeout after {args.timeout}s"
                    failed.add(contender)
                results.write(json.dumps(rec) + "\n")
                results.flush()
                status = "ok" if rec.get("ok") else ("FAIL " + (rec.get("error") or rec.get("check", ""))[:160])
                print(f"[{rec['time']}] {corpus['name']:<24} rep{rep} {contender:<22} {wall:8.2f}s "
                      f"rss {rss/1024:7.1f}MiB load {load[0]:5.2f} {status}", flush=True)
                if rc == 0 and not args.keep_outputs:
                    shutil.rmtree(out, ignore_errors=True)
                    if os.path.isfile(out):
                        os.remove(out)


def rpc_count(args, n, results):
    """One run per Spark contender through the counting proxy."""
    import socket

    # A free port: a fixed one may be the Spark server's own.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for corpus in corpora(args.root, [n]):
        for contender in [c for c in SPARK_CONTENDERS if c in args.rpc_contenders.split(",")]:
            count_file = os.path.join(args.root, "rpc.count")
            proxy = subprocess.Popen([PY, os.path.join(HERE, "rpcproxy.py"), "--listen", str(port), "--target",
                                      args.remote.replace("sc://", "").split("/")[0], "--count", count_file])
            time.sleep(1.0)
            out = os.path.join(args.root, "out", "rpc", contender, corpus["name"])
            shutil.rmtree(out, ignore_errors=True)
            cmd = command(contender, corpus, corpus["format"], corpus["ext"], out, corpus["listfile"], f"sc://127.0.0.1:{port}")
            wall, _, rc, _, stderr = run(cmd, args.timeout)
            time.sleep(0.3)
            proxy.terminate()
            proxy.wait()
            count = int(open(count_file).read() or 0)
            rec = {"pass": "rpc", "corpus": corpus["kind"], "n": n, "contender": contender, "rpcs": count, "rc": rc,
                   "wall_s": round(wall, 3)}
            if rc != 0:
                rec["error"] = error_summary(stderr)
            results.write(json.dumps(rec) + "\n")
            results.flush()
            print(f"rpc {corpus['name']:<24} {contender:<22} rpcs={count} rc={rc}", flush=True)
            shutil.rmtree(out, ignore_errors=True)


def analysis(args, n, results):
    """AnalyzePlan time of a union of n Parquet inputs: left-deep vs balanced."""
    script = os.path.join(HERE, "analysis_driver.py")
    listfile = os.path.join(args.root, "corpora", f"parquet-evolve-{n}.files")
    expected = json.load(open(os.path.join(args.root, "corpora", f"parquet-evolve-{n}.expected.json")))
    with open(listfile, "w") as out:
        out.write("\n".join(expected["files"]) + "\n")
    for shape in ("balanced", "left-deep"):
        cmd = [PY, script, "--remote", args.remote, "--shape", shape, "--files", listfile]
        load = loadavg()
        wall, rss, rc, stdout, stderr = run(cmd, args.timeout)
        rec = {"pass": "analysis", "n": n, "shape": shape, "wall_s": round(wall, 3), "rc": rc, "load1": round(load[0], 2)}
        if rc == 0:
            rec.update(json.loads(stdout.strip().splitlines()[-1]))
        else:
            rec["error"] = error_summary(stderr)
        results.write(json.dumps(rec) + "\n")
        results.flush()
        print(f"analysis n={n} {shape:<10} {json.dumps({k: v for k, v in rec.items() if k not in ('pass',)})[:400]}", flush=True)


def discovery_probe(args, n, results):
    """Schema discovery alone (--dry-run, union: one read per file): with
    sparkmerge's default (small local CSV/JSON files inferred on the client)
    and with --spark-inference (one schema RPC per file) at several
    --parallelism values, next to Python reading the same header lines or
    Parquet footers."""
    import pyarrow.parquet as pq

    for corpus in corpora(args.root, [n]):
        files = corpus["expected"]["files"]
        t0 = time.monotonic()
        for f in files:
            if corpus["format"] == "parquet":
                pq.read_schema(f)
            else:
                with open(f) as fh:
                    fh.readline()
        local = time.monotonic() - t0
        for par, spark_inference in ((8, False), (1, True), (8, True), (32, True)):
            cmd = [SPARKMERGE, "merge", "--dry-run", "--remote", args.remote, "--strategy", "union",
                   "--parallelism", str(par), "--out", "/nonexistent-dry-run", "-o", "json",
                   os.path.join(corpus["dir"], "*." + corpus["ext"])]
            if spark_inference:
                cmd.insert(2, "--spark-inference")
            load = loadavg()
            wall, _, rc, stdout, stderr = run(cmd, args.timeout)
            rec = {"pass": "discovery", "corpus": corpus["kind"], "n": n, "parallelism": par,
                   "spark_inference": spark_inference, "wall_s": round(wall, 3), "rc": rc,
                   "load1": round(load[0], 2), "local_first_line_or_footer_s": round(local, 3)}
            if rc == 0:
                res = json.loads(stdout)
                rec["discovery_s"] = res["discovery_ns"] / 1e9
                rec["reads_local"] = sum(1 for r in res.get("reads") or [] if r.get("inferred_locally"))
            else:
                rec["error"] = error_summary(stderr)
            results.write(json.dumps(rec) + "\n")
            results.flush()
            print(f"discovery {corpus['name']:<24} parallelism {par:>2} spark-inference {spark_inference}: "
                  f"{rec.get('discovery_s', rc)} s (local read of the same {len(files)} headers/footers: {local:.3f} s)",
                  flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--ns", type=gen.corpus_sizes, default="10,200,2000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--remote", default="sc://127.0.0.1:15002")
    ap.add_argument("--results", required=True)
    ap.add_argument("--only", default="", help="comma-separated contenders")
    ap.add_argument("--corpora", default="", help="comma-separated corpus kinds (default: all)")
    ap.add_argument("--rpc-count", type=int, default=0)
    ap.add_argument("--analysis", type=int, default=0)
    ap.add_argument("--discovery", type=int, default=0, help="probe schema discovery alone at this N")
    ap.add_argument("--keep-outputs", action="store_true")
    ap.add_argument("--rep-offset", type=int, default=0,
                    help="number the repetitions from this one: a later invocation that adds repetitions to an "
                         "earlier one's continues its rotation of the order")
    ap.add_argument("--large", type=int, default=1000, help="N from which --reps-large applies; run after the rest")
    ap.add_argument("--reps-large", type=int, default=0, help="repetitions for N >= --large (default --reps)")
    ap.add_argument("--rpc-contenders", default="sparkmerge-auto,sparkmerge-union,pyspark-reduce-ansioff,pyspark-multiread")
    ap.add_argument("--server-root", default="",
                    help="where the Spark server sees ROOT/corpora, a path absent on this machine (e.g. a directory "
                         "mounted into the Spark container alone): adds each --remote-contenders contender again, "
                         "named CONTENDER@remote, reading from there (issue 11)")
    ap.add_argument("--remote-contenders", default="sparkmerge-auto,pyspark-reduce,pyspark-reduce-ansioff,pyspark-multiread")
    args = ap.parse_args()
    args.root = os.path.abspath(args.root)
    global SERVER_ROOT, CLIENT_ROOT
    if args.server_root:
        if os.path.exists(args.server_root):
            sys.exit(f"bench.py: --server-root {args.server_root} exists on this machine: it must be a path only the server sees")
        SERVER_ROOT, CLIENT_ROOT = args.server_root.rstrip("/"), os.path.join(args.root, "corpora")
    with open(args.results, "a") as results:
        meta = {"pass": "meta", "started": time.strftime("%Y-%m-%d %H:%M:%S"), "argv": sys.argv[1:], "load": loadavg(), "sparkmerge": SPARKMERGE,
                "commit": subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True,
                                         text=True).stdout.strip(),
                "order": "rotating"}
        results.write(json.dumps(meta) + "\n")
        # The big N last, with its own repetition count, so that a slow or
        # stuck big run cannot cost the rest.
        small = [n for n in args.ns if n < args.large]
        large = [n for n in args.ns if n >= args.large]
        if args.reps > 0 and small:
            # (Runs at N >= --large take minutes: warm-up is noise there.)
            warm_up(args, small)
        if small and args.reps > 0:
            bench(args, small, results)
        if args.rpc_count:
            rpc_count(args, args.rpc_count, results)
        if args.analysis:
            analysis(args, args.analysis, results)
        if args.discovery:
            discovery_probe(args, args.discovery, results)
        if large and args.reps > 0:
            reps = args.reps
            args.reps = args.reps_large or args.reps
            bench(args, large, results)
            args.reps = reps
        results.write(json.dumps({"pass": "meta", "finished": time.strftime("%Y-%m-%d %H:%M:%S"), "load": loadavg()}) + "\n")


if __name__ == "__main__":
    main()
