#!/usr/bin/env python3
"""Generate the seeded benchmark corpora and their expected results.

  gen.py --root DIR --n 10,200,2000 [--scale 1.0] [--seed 42]

Writes, per N, under DIR:
  wide-drift-csv-N/     N CSV files (header, drifting columns and types)
  wide-drift-json-N/    the same rows as JSON lines
  parquet-evolve-N/     N Parquet files, columns added over "days", one
                        decimal and one timestamp column changing type
  floor/CORPUS/         the no-drift floor of each corpus: the same rows in
                        the same number of files, without drift (every file
                        has every column, spelled and typed alike, in one
                        order: one CSV header, one set of JSON keys, one
                        Parquet schema), which Spark reads in one load
and next to each corpus a file CORPUS.expected.json:
  {"rows": int, "columns": {lower-case name: expected type},
   "nonnull": {lower-case name: non-null values}, "files": [...]}
The non-null counts catch values that land in the wrong column (a multi-path
CSV read maps later files by position), which row counts and column sets
alone do not.

Expected types follow sparkmerge's documented rules (widen: int < bigint <
double, string wins over numbers; decimals widen to keep integer digits and
scale; timestamp + timestamp_ntz -> timestamp) applied to what Spark infers
per file (CSV: int/bigint/double/string; JSON: bigint/double/string).

Re-running with the same arguments is a no-op (a stamp file records them).
"""
import argparse
import datetime as dt
import decimal
import json
import os
import random
import shutil

POOL = 50
# Rows per file for each N. At --scale 1 (the default) the N=200 corpora are
# the "about 200 MB" (CSV 197 MB, Parquet 201 MB; the JSON lines hold
# the same rows as the CSV files, 2.5x the bytes). N=10 holds half the rows
# of N=200 (ten CSV files of about 10 MB), N=2000 the same rows as N=200 in
# 2,000 small files. --scale multiplies these (run.sh --quick uses 0.08).
ROWS_PER_FILE = {10: 24000, 200: 2400, 2000: 240}
PARQUET_ROWS_PER_FILE = {10: 120000, 200: 12000, 2000: 1200}


def rows_for(table, n, scale):
    if n in table:
        base = table[n]
    else:  # interpolate for other N: keep the total of N=200
        base = max(10, table[200] * 200 // n)
    return max(5, int(base * scale))


def column_pool(rng):
    """50 columns with a kind that decides how their type drifts."""
    kinds = (["drift"] * 20) + (["int_to_string"] * 5) + (["int"] * 10) + (["string"] * 10) + (["double"] * 5)
    rng.shuffle(kinds)
    cols = []
    for i, kind in enumerate(kinds):
        # Per-column breakpoints for int -> bigint -> double over file index.
        a = rng.uniform(0.2, 0.5)
        b = rng.uniform(0.55, 0.85)
        cols.append({"name": f"col_{i:02d}_{kind.split('_')[0]}", "kind": kind, "a": a, "b": b})
    return cols


def file_type(col, pos, rng_file):
    """The type a column has in the file at relative position pos (0..1)."""
    k = col["kind"]
    if k == "drift":
        return "int" if pos < col["a"] else ("bigint" if pos < col["b"] else "double")
    if k == "int_to_string":
        return "string" if rng_file.random() < 0.10 else "int"
    return k


def value(t, rng):
    if t == "int":
        return rng.randint(-1_000_000, 1_000_000)
    if t == "bigint":
        return rng.randint(3_000_000_000, 9_000_000_000_000)
    if t == "double":
        return round(rng.uniform(-1e6, 1e6), 3)
    return "s" + format(rng.getrandbits(40), "x")  # never parses as a number


WIDTH = {"int": 0, "bigint": 1, "double": 2, "string": 3}


def widen(a, b):
    if a is None:
        return b
    return a if WIDTH[a] >= WIDTH[b] else b


def gen_wide_drift(root, n, scale, seed):
    rng = random.Random(seed * 1_000_003 + n)
    pool = column_pool(rng)
    rows_per_file = rows_for(ROWS_PER_FILE, n, scale)
    csv_dir = os.path.join(root, f"wide-drift-csv-{n}")
    json_dir = os.path.join(root, f"wide-drift-json-{n}")
    flat_csv_dir = os.path.join(root, "floor", f"wide-drift-csv-{n}")
    flat_json_dir = os.path.join(root, "floor", f"wide-drift-json-{n}")
    flat_names = [c["name"] for c in pool]
    for d in (csv_dir, json_dir, flat_csv_dir, flat_json_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    exp_csv, exp_json = {}, {}
    nonnull = {}
    total = 0
    csv_files, json_files = [], []
    for f in range(n):
        pos = f / max(1, n - 1)
        frng = random.Random(rng.getrandbits(64))
        k = max(1, int(round(POOL * frng.uniform(0.6, 1.0))))
        cols = frng.sample(pool, k)  # random subset in shuffled order
        types = [file_type(c, pos, frng) for c in cols]
        names = []
        for c in cols:
            name = c["name"]
            r = frng.random()
            if r < 0.05:
                name = name.upper()  # case drift
            elif r < 0.10:
                name = name.title()
            names.append(name)
        for c, t in zip(cols, types):
            key = c["name"].lower()
            exp_csv[key] = widen(exp_csv.get(key), t)
            exp_json[key] = widen(exp_json.get(key), "bigint" if t == "int" else t)
        rows = []
        for _ in range(rows_per_file):
            row = [None if frng.random() < 0.02 else value(t, frng) for t in types]
            rows.append(row)
            if frng.random() < 0.05:  # duplicate rows
                rows.append(list(row))
        total += len(rows)
        for j, c in enumerate(cols):
            key = c["name"].lower()
            nonnull[key] = nonnull.get(key, 0) + sum(1 for row in rows if row[j] is not None)
        base = f"part-{f:05d}"
        cpath = os.path.join(csv_dir, base + ".csv")
        with open(cpath, "w") as out:
            out.write(",".join(names) + "\n")
            for row in rows:
                out.write(",".join("" if v is None else str(v) for v in row) + "\n")
        jpath = os.path.join(json_dir, base + ".json")
        with open(jpath, "w") as out:
            for row in rows:
                out.write(json.dumps({nm: v for nm, v in zip(names, row)}, separators=(",", ":")) + "\n")
        csv_files.append(cpath)
        json_files.append(jpath)
        # The floor: the same rows under one header, every column in the
        # pool's order (empty / null where the file lacks it).
        where = {c["name"]: j for j, c in enumerate(cols)}
        flat = [[None if nm not in where else row[where[nm]] for nm in flat_names] for row in rows]
        with open(os.path.join(flat_csv_dir, base + ".csv"), "w") as out:
            out.write(",".join(flat_names) + "\n")
            for row in flat:
                out.write(",".join("" if v is None else str(v) for v in row) + "\n")
        with open(os.path.join(flat_json_dir, base + ".json"), "w") as out:
            for row in flat:
                out.write(json.dumps(dict(zip(flat_names, row)), separators=(",", ":")) + "\n")
    for d, exp, files, fmt in ((csv_dir, exp_csv, csv_files, "csv"), (json_dir, exp_json, json_files, "json")):
        write_expected(d, fmt, total, exp, files, rows_per_file, nonnull)


def gen_parquet_evolve(root, n, scale, seed):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed * 7_000_001 + n)
    rows_per_file = rows_for(PARQUET_ROWS_PER_FILE, n, scale)
    d = os.path.join(root, f"parquet-evolve-{n}")
    flat_d = os.path.join(root, "floor", f"parquet-evolve-{n}")
    for x in (d, flat_d):
        shutil.rmtree(x, ignore_errors=True)
        os.makedirs(x)
    features = 12  # feat_01..feat_12 added one by one over the days
    exp = {"id": "bigint", "day": "date", "name": "string", "amount": "decimal(18,4)", "ts": "timestamp"}
    total = 0
    files = []
    nonnull = {}
    day0 = dt.date(2024, 1, 1)
    epoch = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    for f in range(n):
        pos = f / max(1, n - 1)
        frng = random.Random(rng.getrandbits(64))
        m = rows_per_file
        day = day0 + dt.timedelta(days=f)
        ids = [f * 1_000_000 + i for i in range(m)]
        cols = {
            "id": pa.array(ids, pa.int64()),
            "day": pa.array([day] * m, pa.date32()),
            "name": pa.array(["n" + format(frng.getrandbits(32), "x") for _ in range(m)], pa.string()),
        }
        # amount: decimal(9,2) for the first half of the days, then (18,4).
        if pos < 0.5:
            cols["amount"] = pa.array([decimal.Decimal(frng.randint(-9_999_999, 9_999_999)).scaleb(-2) for _ in range(m)], pa.decimal128(9, 2))
        else:
            cols["amount"] = pa.array([decimal.Decimal(frng.randint(-10**13, 10**13)).scaleb(-4) for _ in range(m)], pa.decimal128(18, 4))
        # ts: milliseconds with UTC, then microseconds with UTC, then local
        # (no time zone: Spark reads it as timestamp_ntz).
        secs = [frng.randint(0, 86400 * 365) for _ in range(m)]
        if pos < 1 / 3:
            cols["ts"] = pa.array([epoch + dt.timedelta(seconds=s) for s in secs], pa.timestamp("ms", tz="UTC"))
        elif pos < 2 / 3:
            cols["ts"] = pa.array([epoch + dt.timedelta(seconds=s, microseconds=7) for s in secs], pa.timestamp("us", tz="UTC"))
        else:
            cols["ts"] = pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=s) for s in secs], pa.timestamp("us"))
        added = int(pos * features + 1e-9)
        for k in range(1, added + 1):
            cols[f"feat_{k:02d}"] = pa.array([frng.uniform(0, 1) for _ in range(m)], pa.float64())
            exp[f"feat_{k:02d}"] = "double"
        for k in cols:
            nonnull[k] = nonnull.get(k, 0) + m
        path = os.path.join(d, f"day-{f:05d}.parquet")
        pq.write_table(pa.table(cols), path)
        # The floor: one schema for every day (decimal(18,4), microseconds
        # with UTC, every feature, null before it appears).
        flat = dict(cols)
        flat["amount"] = cols["amount"].cast(pa.decimal128(18, 4))
        flat["ts"] = pa.array([epoch + dt.timedelta(seconds=s) for s in secs], pa.timestamp("us", tz="UTC"))
        for k in range(added + 1, features + 1):
            flat[f"feat_{k:02d}"] = pa.nulls(m, pa.float64())
        pq.write_table(pa.table(flat), os.path.join(flat_d, f"day-{f:05d}.parquet"))
        files.append(path)
        total += m
    write_expected(d, "parquet", total, exp, files, rows_per_file, nonnull)


def write_expected(d, fmt, rows, columns, files, rows_per_file, nonnull):
    size = sum(os.path.getsize(p) for p in files)
    with open(d + ".expected.json", "w") as out:
        json.dump({"format": fmt, "rows": rows, "columns": dict(sorted(columns.items())), "files": files,
                   "bytes": size, "rows_per_file": rows_per_file,
                   "nonnull": dict(sorted(nonnull.items()))}, out, indent=1)


def corpus_sizes(text):
    """The corpus sizes N of gen.py's --n and bench.py's --ns: comma-separated,
    e.g. 10,200,2000."""
    return [int(x) for x in text.split(",") if x]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--n", type=corpus_sizes, default="10,200,2000")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    args.root = os.path.abspath(args.root)
    os.makedirs(args.root, exist_ok=True)
    for n in args.n:
        stamp = os.path.join(args.root, f".stamp-{n}")
        want = json.dumps({"scale": args.scale, "seed": args.seed, "v": 6})
        if os.path.exists(stamp) and open(stamp).read() == want:
            continue
        gen_wide_drift(args.root, n, args.scale, args.seed)
        gen_parquet_evolve(args.root, n, args.scale, args.seed)
        with open(stamp, "w") as out:
            out.write(want)
        print(f"generated N={n} under {args.root}", flush=True)


if __name__ == "__main__":
    main()
