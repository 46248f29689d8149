#!/usr/bin/env python3
"""Generate the seeded benchmark corpora and their expected results.

  gen.py --root DIR --n 10,200,2000 [--scale 1.0] [--seed 42]

Writes, per N, under DIR:
  wide-drift-csv-N/     N CSV files (header, drifting columns and types)
  wide-drift-json-N/    the same rows as JSON lines
  parquet-evolve-N/     N Parquet files, columns added over "days", one
                        decimal and one timestamp column changing type
  dated-csv-N/          (--kinds dated-csv) wide-drift-csv-N's rows and
                        drift with three more columns in every file, as
                        real drops have them: an ISO date, a timestamp as
                        Spark's CSV writer writes it (2024-03-05T12:34:56.123Z)
                        and a free-text note that holds the separator and
                        quotes, quoted and escaped as Spark's CSV writer
                        does ("said \"hi\", then left")
  lake-csv-F/, lake-json-F/
                        (--kinds lake) F files (--lake-files, default 20) of
                        about --lake-mb MB each (default 50), four header
                        versions (columns added, reordered, one spelled in
                        another case, one widening from int to bigint), with
                        dates, timestamps and quoted notes; meant to be read
                        where only the Spark server sees them
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
alone do not. The dated and lake corpora also get "fingerprints": per
column, its non-null values and the sum of DuckDB's hash of each value in
the column's expected type, computed from a reference (ref/CORPUS/: every
value as the text written, unescaped, in Parquet) so that an output is
checked value for value (value_fingerprints).

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


# Real drops (issue 34): dates, timestamps and quoted text, which the
# client's typing leaves to Spark, and lakes of large files only the server
# sees.

WORDS = ["parcel", "late", "refund", "blue", "north", "invoice", "urgent", "fragile", "gift", "return",
         "damaged", "express", "customer", "warehouse", "monday", "priority", "note", "call", "pallet", "box"]
CITIES = ["Lyon", "Oslo", "Porto", "Graz", "Turku", "Bergen", "Ghent", "Cork"]


def note_pool(rng, size):
    """Free-text notes as people type them: commas, quotes, apostrophes;
    never a leading or trailing blank (Spark's CSV writer trims those),
    a backslash, a line break or the empty string."""
    notes = []
    for _ in range(size):
        w = [rng.choice(WORDS) for _ in range(4)]
        k = rng.randrange(5)
        if k == 0:
            notes.append(f"order {rng.randint(1, 99999)} for {w[0]}, shipped to {rng.choice(CITIES)}")
        elif k == 1:
            notes.append(f'customer said "{w[0]} {w[1]}" on the phone')
        elif k == 2:
            notes.append(f'ref {rng.randint(100, 999)}; "{w[2]}", {w[3]}, {rng.choice(CITIES)}')
        elif k == 3:
            notes.append(f"{w[0]} {w[1]} {w[2]}")
        else:
            notes.append(f"it's {w[3]}")
    return notes


def spark_csv_field(text):
    """text as Spark's CSV writer writes it (default options): quoted when
    it holds the separator or a quote, a quote inside escaped with a
    backslash."""
    if '"' in text or "," in text:
        return '"' + text.replace('"', '\\"') + '"'
    return text


def iso_date(rng):
    return (dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(730))).isoformat()


def iso_timestamp(rng):
    """A UTC instant as Spark's CSV writer writes a timestamp
    (yyyy-MM-dd'T'HH:mm:ss.SSSXXX in a UTC session)."""
    t = dt.datetime(2023, 1, 1) + dt.timedelta(milliseconds=rng.randrange(730 * 86400 * 1000))
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


DATED_EXTRA = [("event_date", "date"), ("event_ts", "timestamp"), ("note", "string")]


def write_ref(path, columns):
    """A reference file: each column's values as the text written
    (unescaped; None for null), all strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()}), path)


def gen_dated_csv(root, n, scale, seed):
    """wide-drift-csv-N's column pool and drift (the same pool; its own
    seeded rows) with an ISO date, a timestamp and a quoted note in every
    file, at random positions."""
    pool = column_pool(random.Random(seed * 1_000_003 + n))
    rng = random.Random(seed * 9_000_011 + n)
    notes = note_pool(random.Random(seed), 4096)
    rows_per_file = rows_for(ROWS_PER_FILE, n, scale)
    name = f"dated-csv-{n}"
    d, flat_d, ref_d = (os.path.join(root, name), os.path.join(root, "floor", name), os.path.join(root, "ref", name))
    for x in (d, flat_d, ref_d):
        shutil.rmtree(x, ignore_errors=True)
        os.makedirs(x)
    flat_names = [c["name"] for c in pool] + [k for k, _ in DATED_EXTRA]
    exp, nonnull, files, total, headers = {k: t for k, t in DATED_EXTRA}, {}, [], 0, set()
    for f in range(n):
        pos = f / max(1, n - 1)
        frng = random.Random(rng.getrandbits(64))
        k = max(1, int(round(POOL * frng.uniform(0.6, 1.0))))
        cols = frng.sample(pool, k)
        kinds = [file_type(c, pos, frng) for c in cols]
        names = []
        for c in cols:
            r = frng.random()
            names.append(c["name"].upper() if r < 0.05 else (c["name"].title() if r < 0.10 else c["name"]))
        for key, t in DATED_EXTRA:
            at = frng.randrange(len(cols) + 1)
            cols.insert(at, {"name": key})
            kinds.insert(at, t)
            names.insert(at, key)
        headers.add(tuple(names))
        for c, t in zip(cols, kinds):
            if c["name"] not in dict(DATED_EXTRA):
                exp[c["name"]] = widen(exp.get(c["name"]), t)

        def text(t):
            if frng.random() < 0.02:
                return None
            if t == "date":
                return iso_date(frng)
            if t == "timestamp":
                return iso_timestamp(frng)
            return str(value(t, frng))

        note_at = names.index("note")
        rows = []
        for _ in range(rows_per_file):
            row = [text(t) for t in kinds]
            if row[note_at] is not None:
                row[note_at] = frng.choice(notes)
            rows.append(row)
            if frng.random() < 0.05:
                rows.append(list(row))
        total += len(rows)
        keys = [c["name"] for c in cols]
        for j, key in enumerate(keys):
            nonnull[key] = nonnull.get(key, 0) + sum(1 for row in rows if row[j] is not None)
        base = f"part-{f:05d}"
        path = os.path.join(d, base + ".csv")
        quote = [spark_csv_field if key == "note" else None for key in keys]
        with open(path, "w") as out:
            out.write(",".join(names) + "\n")
            for row in rows:
                out.write(",".join("" if v is None else (q(v) if q else v) for v, q in zip(row, quote)) + "\n")
        files.append(path)
        where = {key: j for j, key in enumerate(keys)}
        with open(os.path.join(flat_d, base + ".csv"), "w") as out:
            out.write(",".join(flat_names) + "\n")
            for row in rows:
                vals = [None if nm not in where else row[where[nm]] for nm in flat_names]
                out.write(",".join("" if v is None else (spark_csv_field(v) if nm == "note" else v)
                                   for v, nm in zip(vals, flat_names)) + "\n")
        write_ref(os.path.join(ref_d, base + ".parquet"), {key: [row[j] for row in rows] for j, key in enumerate(keys)})
    write_expected(d, "csv", total, exp, files, rows_per_file, nonnull, ref=ref_d, headers=len(headers))


LAKE_VERSIONS = [
    ["id", "event_date", "event_ts", "customer", "region", "amount", "qty", "score", "note"],
    ["id", "event_date", "event_ts", "customer", "region", "channel", "amount", "qty", "score", "note"],
    ["id", "event_ts", "event_date", "customer", "channel", "region", "amount", "discount", "qty", "score", "note"],
    ["id", "event_date", "event_ts", "Customer", "channel", "region", "amount", "discount", "qty", "score", "note"],
]
LAKE_COLUMNS = ["id", "event_date", "event_ts", "customer", "region", "channel", "amount", "discount", "qty", "score", "note"]
# What Spark infers: JSON has no date or timestamp inference by default
# (inferTimestamp is false), and its integers are bigint.
LAKE_TYPES = {
    "csv": {"id": "bigint", "event_date": "date", "event_ts": "timestamp", "customer": "string", "region": "string",
            "channel": "string", "amount": "double", "discount": "double", "qty": "int", "score": "bigint",
            "note": "string"},
    "json": {"id": "bigint", "event_date": "string", "event_ts": "string", "customer": "string", "region": "string",
             "channel": "string", "amount": "double", "discount": "double", "qty": "bigint", "score": "bigint",
             "note": "string"},
}
REGIONS = ["eu-west", "eu-north", "us-east", "us-west", "apac", "latam"]
CHANNELS = ["web", "store", "phone", "partner", "app"]


def lake_chunk(nrng, version, file_index, start, m, notes, customers):
    """m rows of a lake file of this header version, column by column:
    each value's text as written (None for null), and for JSON whether
    it is a number."""
    import numpy as np

    def text(arr):
        return arr.tolist()

    last = version == len(LAKE_VERSIONS) - 1
    cols = {
        "id": text((10**10 + file_index * 10**7 + start + np.arange(m)).astype(str)),
        "event_date": text(np.datetime_as_string(np.datetime64("2023-01-01") + nrng.integers(0, 730, m).astype("timedelta64[D]"))),
        "event_ts": text(np.datetime_as_string(np.datetime64("2023-01-01T00:00:00.000")
                                                + nrng.integers(0, 730 * 86400 * 1000, m).astype("timedelta64[ms]"),
                                                unit="ms", timezone="UTC")),
        "customer": [customers[i] for i in nrng.integers(0, len(customers), m).tolist()],
        "region": [REGIONS[i] for i in nrng.integers(0, len(REGIONS), m).tolist()],
        "channel": [CHANNELS[i] for i in nrng.integers(0, len(CHANNELS), m).tolist()],
        "amount": text(np.round(nrng.uniform(0.01, 10000, m), 2).astype(str)),
        "discount": text(np.round(nrng.uniform(0.001, 0.5, m), 3).astype(str)),
        "qty": text(nrng.integers(0, 500, m).astype(str)),
        "score": text((nrng.integers(3_000_000_000, 9_000_000_000_000, m) if last else nrng.integers(0, 2_000_000_000, m)).astype(str)),
        "note": [notes[i] for i in nrng.integers(0, len(notes), m).tolist()],
    }
    for k, v in cols.items():
        if k == "id":
            continue
        for i in np.flatnonzero(nrng.random(m) < 0.01).tolist():
            v[i] = None
    return cols


NUMERIC = {"id", "amount", "discount", "qty", "score"}


def lake_lines(fmt, names, cols, m):
    """The lines of m rows: CSV fields in names' order (the note quoted as
    Spark writes it), or JSON objects with names' keys (nulls left out, as
    Spark's JSON writer does)."""
    keys = [nm.lower() for nm in names]
    if fmt == "csv":
        fields = [[("" if v is None else spark_csv_field(v)) for v in cols[k]] if k == "note"
                  else [("" if v is None else v) for v in cols[k]] for k in keys]
        return [",".join(r) for r in zip(*fields)]
    frags = []
    for nm, k in zip(names, keys):
        head = json.dumps(nm) + ":"
        if k in NUMERIC:
            frags.append(["" if v is None else head + v for v in cols[k]])
        else:
            frags.append(["" if v is None else head + json.dumps(v) for v in cols[k]])
    return ["{" + ",".join(x for x in r if x) + "}" for r in zip(*frags)]


def floor_lines(fmt, cols, have, m):
    """The no-drift floor's lines: every column, in LAKE_COLUMNS' order
    (JSON: every key, null where the file lacks the column or the value)."""
    full = {k: (cols[k] if k in have else [None] * m) for k in LAKE_COLUMNS}
    if fmt == "csv":
        return lake_lines("csv", LAKE_COLUMNS, full, m)
    frags = []
    for k in LAKE_COLUMNS:
        head = json.dumps(k) + ":"
        if k in NUMERIC:
            frags.append([head + ("null" if v is None else v) for v in full[k]])
        else:
            frags.append([head + ("null" if v is None else json.dumps(v)) for v in full[k]])
    return ["{" + ",".join(r) + "}" for r in zip(*frags)]


def gen_lake(root, fmt, files, mb, seed):
    """files files of about mb MB each, four header versions in turn."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = f"lake-{fmt}-{files}"
    d, flat_d, ref_d = (os.path.join(root, name), os.path.join(root, "floor", name), os.path.join(root, "ref", name))
    for x in (d, flat_d, ref_d):
        shutil.rmtree(x, ignore_errors=True)
        os.makedirs(x)
    rng = random.Random(seed * 5_000_011 + files + (1 if fmt == "json" else 0))
    notes = note_pool(random.Random(seed + 1), 4096)
    customers = ["c%05x" % rng.getrandbits(20) for _ in range(20000)]
    exp = dict(LAKE_TYPES[fmt])
    nonnull, paths, total, chunk = {}, [], 0, 20000
    for f in range(files):
        version = f * len(LAKE_VERSIONS) // files
        names = LAKE_VERSIONS[version]
        keys = [nm.lower() for nm in names]
        nrng = np.random.default_rng(rng.getrandbits(64))
        path = os.path.join(d, f"part-{f:05d}.{fmt}")
        schema = pa.schema([(k, pa.string()) for k in keys])
        size, start = 0, 0
        with open(path, "w") as out, open(os.path.join(flat_d, f"part-{f:05d}.{fmt}"), "w") as flat, \
                pq.ParquetWriter(os.path.join(ref_d, f"part-{f:05d}.parquet"), schema) as ref:
            if fmt == "csv":
                out.write(",".join(names) + "\n")
                flat.write(",".join(LAKE_COLUMNS) + "\n")
            while size < mb * 1_000_000:
                cols = lake_chunk(nrng, version, f, start, chunk, notes, customers)
                text = "\n".join(lake_lines(fmt, names, cols, chunk)) + "\n"
                size += len(text.encode())
                out.write(text)
                flat.write("\n".join(floor_lines(fmt, cols, set(keys), chunk)) + "\n")
                ref.write_table(pa.table({k: pa.array(cols[k], pa.string()) for k in keys}, schema=schema))
                for k in keys:
                    nonnull[k] = nonnull.get(k, 0) + sum(1 for v in cols[k] if v is not None)
                start += chunk
                total += chunk
        paths.append(path)
    write_expected(d, fmt, total, exp, paths, start, nonnull, ref=ref_d,
                   headers=len({tuple(LAKE_VERSIONS[f * len(LAKE_VERSIONS) // files]) for f in range(files)}))


def canonical(column, typ, reference):
    """The SQL of a column's values in one form for a fingerprint: numbers
    as doubles (an int widened to double, or a bigint, keeps its value),
    dates as dates, timestamps as microseconds since the epoch, strings as
    they are. A reference holds the text written; an output the typed
    value Spark wrote."""
    q = '"' + column.replace('"', '""') + '"'
    if typ in ("int", "bigint", "double"):
        return f"CAST({q} AS DOUBLE)"
    if typ == "date":
        return f"CAST({q} AS DATE)"
    if typ == "timestamp":
        return f"epoch_us(CAST({q} AS TIMESTAMPTZ))" if reference else f"epoch_us({q})"
    return f"CAST({q} AS VARCHAR)"


def value_fingerprints(files, columns, reference):
    """{column: [non-null values, sum of hash(value)]} over Parquet files
    (columns by name, case-insensitively; a file without a column reads it
    as null), in each column's expected type (canonical): equal
    fingerprints mean the same multiset of values per column, whatever
    the row order. The sum is a decimal string (DuckDB sums the 64-bit
    hashes exactly)."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET threads = 2")
    exprs = []
    for c, t in columns.items():
        q = '"' + c.replace('"', '""') + '"'
        exprs += [f"count({q})", f"CAST(sum(hash({canonical(c, t, reference)})) AS VARCHAR)"]
    row = con.execute(f"SELECT {', '.join(exprs)} FROM read_parquet(?, union_by_name = true)", [files]).fetchone()
    con.close()
    return {c: [row[2 * i], row[2 * i + 1]] for i, c in enumerate(columns)}


def write_expected(d, fmt, rows, columns, files, rows_per_file, nonnull, ref=None, headers=None):
    size = sum(os.path.getsize(p) for p in files)
    exp = {"format": fmt, "rows": rows, "columns": dict(sorted(columns.items())), "files": files,
           "bytes": size, "rows_per_file": rows_per_file, "nonnull": dict(sorted(nonnull.items()))}
    if headers is not None:
        exp["headers"] = headers  # distinct headers (JSON: sets of keys)
    if ref:
        refs = sorted(os.path.join(ref, f) for f in os.listdir(ref))
        exp["fingerprints"] = value_fingerprints(refs, exp["columns"], reference=True)
        counted = {c: fp[0] for c, fp in exp["fingerprints"].items()}
        if counted != exp["nonnull"]:
            raise SystemExit(f"gen.py: {d}: the reference's non-null counts {counted} are not the rows' {exp['nonnull']}")
    with open(d + ".expected.json", "w") as out:
        json.dump(exp, out, indent=1)


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
    ap.add_argument("--kinds", default="wide-drift,parquet-evolve",
                    help="comma-separated: wide-drift (CSV and JSON), parquet-evolve, dated-csv (at each --n), "
                         "lake (lake-csv and lake-json, --lake-files files of --lake-mb MB)")
    ap.add_argument("--lake-files", type=int, default=20)
    ap.add_argument("--lake-mb", type=int, default=50)
    args = ap.parse_args()
    args.root = os.path.abspath(args.root)
    os.makedirs(args.root, exist_ok=True)
    kinds = args.kinds.split(",")
    jobs = []
    for n in args.n:
        if "wide-drift" in kinds or "parquet-evolve" in kinds:
            # One stamp for both, as before they could be asked apart.
            jobs.append((f".stamp-{n}", {"scale": args.scale, "seed": args.seed, "v": 6},
                         lambda n=n: (gen_wide_drift(args.root, n, args.scale, args.seed),
                                      gen_parquet_evolve(args.root, n, args.scale, args.seed))))
        if "dated-csv" in kinds:
            jobs.append((f".stamp-dated-csv-{n}", {"scale": args.scale, "seed": args.seed, "v": 1},
                         lambda n=n: gen_dated_csv(args.root, n, args.scale, args.seed)))
    if "lake" in kinds:
        for fmt in ("csv", "json"):
            jobs.append((f".stamp-lake-{fmt}-{args.lake_files}", {"mb": args.lake_mb, "seed": args.seed, "v": 1},
                         lambda fmt=fmt: gen_lake(args.root, fmt, args.lake_files, args.lake_mb, args.seed)))
    for stamp, params, generate in jobs:
        stamp = os.path.join(args.root, stamp)
        want = json.dumps(params)
        if os.path.exists(stamp) and open(stamp).read() == want:
            continue
        generate()
        with open(stamp, "w") as out:
            out.write(want)
        print(f"generated {os.path.basename(stamp)[len('.stamp-'):]} under {args.root}", flush=True)


if __name__ == "__main__":
    main()
