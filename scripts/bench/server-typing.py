#!/usr/bin/env python3
"""Issue 11: what typing CSV files on the server would cost, against
sending their bytes to the client, which types them.

  server-typing.py --remote sc://127.0.0.1:15002 --dir DIR [--reps 2]

DIR is a directory of CSV files as the server sees it. Times, on one
session, (1) Spark sending every file's bytes to the client as Arrow
(binaryFile, what sparkmerge's discovery fetches) and (2) one Spark job
that computes, per file and column, the classes of values that Spark's
CSV inference tells apart (integers by significant digits, fractions,
booleans, text, anything else), with each class's first line: what the
client would need instead of the bytes. The job is a sketch of that
summary, not a complete one (an exact one only adds checks), so its time
is a floor for typing on the server by SQL.
"""
import argparse
import time

from pyspark.sql import SparkSession

SUMMARY = r"""
WITH f AS (
  SELECT path, CAST(content AS STRING) AS text FROM files
), ff AS (
  SELECT path, text,
    is_valid_utf8(text) AND NOT (instr(text, '"') > 0 OR instr(text, '\\') > 0 OR instr(text, char(0)) > 0) AS plain,
    text RLIKE '[0-9]{16}' AS longnum,
    regexp_extract(text, '^(?:\r?\n)*([^\n]*)', 1) AS header
  FROM f
), lines AS (
  SELECT path, longnum, header, size(split(header, ',', -1)) AS width,
    posexplode(CASE WHEN plain THEN split(text, '\n', -1) ELSE array('') END) AS (lno, raw)
  FROM ff
), l2 AS (
  SELECT path, longnum, header, width, lno,
    CASE WHEN endswith(raw, '\r') THEN substr(raw, 1, length(raw) - 1) ELSE raw END AS l
  FROM lines
), l3 AS (
  SELECT path, longnum, header, width, lno,
    CASE WHEN l = '' THEN array('\u0001E')
         WHEN instr(l, '\r') > 0 OR l RLIKE '^[\\x00-\\x20]+$' THEN array('\u0001B')
         WHEN l = header THEN array('\u0001H')
         ELSE split(l, ',', -1) END AS vals
  FROM l2
), v AS (
  SELECT path, longnum, header, width, lno, size(vals) AS w, posexplode(vals) AS (col, v) FROM l3
), c AS (
  SELECT path, longnum, header, lno, col,
    CASE WHEN startswith(v, '\u0001') THEN v
         WHEN w != width THEN '\u0001W'
         WHEN v = '' THEN '\u0001E'
         WHEN v RLIKE '^[+-]?[0-9]+$' THEN concat('I', length(ltrim('0', regexp_replace(v, '^[+-]', ''))))
         WHEN v RLIKE '^[+-]?[0-9]+[.][0-9]+$' THEN 'F'
         WHEN ascii(v) BETWEEN 48 AND 57 OR ascii(v) IN (43, 45) THEN 'U'
         WHEN NOT (ascii(v) BETWEEN 65 AND 90 OR ascii(v) BETWEEN 97 AND 122) THEN 'U'
         WHEN lower(v) IN ('true', 'false') THEN 'B'
         WHEN startswith(v, 'NaN') OR startswith(v, 'Inf') THEN 'U'
         WHEN v RLIKE '^T([^A-Za-z]|$)' THEN 'U'
         WHEN length(v) != octet_length(v) AND length(v) IN (4, 5) THEN concat('X', v)
         ELSE 'T'
    END AS k
  FROM v
)
SELECT path, first(longnum) AS longnum, first(header) AS header, collect_list(struct(col, k, first_line)) AS classes
FROM (SELECT path, first(longnum) AS longnum, first(header) AS header, col, k, min(lno) AS first_line
      FROM c GROUP BY path, col, k)
GROUP BY path
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remote", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    spark = SparkSession.builder.remote(args.remote).getOrCreate()
    files = spark.read.format("binaryFile").load(args.dir)
    files.createOrReplaceTempView("files")
    for rep in range(args.reps):
        start = time.monotonic()
        table = files.selectExpr("path", "length", "content").toArrow()
        sent = time.monotonic() - start
        start = time.monotonic()
        rows = spark.sql(SUMMARY).collect()
        summarised = time.monotonic() - start
        classes = sum(len(r["classes"]) for r in rows)
        print(f"rep {rep}: bytes to the client {sent:.2f} s ({table.num_rows} files, {table.nbytes / 1e6:.0f} MB); "
              f"classes on the server {summarised:.2f} s ({len(rows)} files, {classes} classes)", flush=True)


if __name__ == "__main__":
    main()
