#!/usr/bin/env python3
"""What the seed articles do with PySpark over Spark Connect.

  pyspark_driver.py --remote sc://... --mode reduce|multiread --format csv|json|parquet
                    --out DIR --files LISTFILE

reduce:    one DataFrame per file, folded left-deep with
           unionByName(allowMissingColumns=True), written as Parquet.
multiread: one multi-path read (spark.read.json(paths),
           spark.read.option("mergeSchema", "true").parquet(paths), or for CSV
           spark.read.csv(paths, header=True, inferSchema=True)), written as
           Parquet.
floor-infer / floor-schema: the no-drift floor (issue 14): one read of the
           corpus' floor directory (the same rows in the same number of
           files, without drift), with Spark's inference (CSV header +
           inferSchema, JSON, Parquet mergeSchema) or with the schema given
           (--schema DDL), written as Parquet. --files then names the floor
           directory.
transfer: issue 11's floor of typing files only the server sees on the
           client: Spark sends the bytes sparkmerge fetches to type them
           (binaryFile, as Arrow: CSV and JSON files whole, a Parquet
           file's last 64 KiB, an upper bound of its footer), nothing typed
           or written. --files then names the corpus directory.
--conf sets session confs, e.g. spark.sql.ansi.enabled=false, under which
Spark's union widening makes int + string a string instead of a bigint
cast that fails on the first non-numeric value.
"""
import argparse
import json
import time
from functools import reduce

from pyspark.sql import SparkSession


def read_one(spark, fmt, paths):
    if fmt == "csv":
        return spark.read.csv(paths, header=True, inferSchema=True)
    if fmt == "json":
        return spark.read.json(paths)
    return spark.read.option("mergeSchema", "true").parquet(*paths) if isinstance(paths, list) else spark.read.parquet(paths)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remote", required=True)
    ap.add_argument("--mode", choices=["reduce", "multiread", "floor-infer", "floor-schema", "transfer"], required=True)
    ap.add_argument("--schema", default="", help="floor-schema: the floor's schema in DDL")
    ap.add_argument("--format", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--files", required=True)
    ap.add_argument("--conf", action="append", default=[], help="session conf key=value")
    ap.add_argument("--noop", action="store_true", help="floor: read and write nothing (Spark's noop format), to time the read alone")
    args = ap.parse_args()
    spark = SparkSession.builder.remote(args.remote).getOrCreate()
    if args.mode == "transfer":
        content = "content" if args.format != "parquet" else "substring(content, greatest(length - 65535, 1), 65536)"
        start = time.monotonic()
        table = spark.read.format("binaryFile").load(args.files).selectExpr("path", "length", content).toArrow()
        # Timed from the request: the process's own start (Python and
        # pyspark's import, about 1 s) is no part of a transfer.
        print(json.dumps({"transfer_s": time.monotonic() - start, "files": table.num_rows, "bytes": table.nbytes}))
        return
    if args.mode.startswith("floor-"):
        reader = spark.read
        if args.mode == "floor-schema":
            reader = reader.schema(args.schema)
        if args.format == "csv":
            df = reader.option("header", True).option("inferSchema", args.mode == "floor-infer").csv(args.files)
        elif args.format == "json":
            df = reader.json(args.files)
        else:
            df = reader.option("mergeSchema", args.mode == "floor-infer").parquet(args.files)
        if args.noop:
            df.write.format("noop").mode("overwrite").save()
        else:
            df.write.mode("overwrite").parquet(args.out)
        return
    files = [line.strip() for line in open(args.files) if line.strip()]
    for kv in args.conf:
        k, v = kv.split("=", 1)
        spark.conf.set(k, v)  # this session only
    if args.mode == "reduce":
        frames = [read_one(spark, args.format, p) for p in files]
        merged = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
    else:
        merged = read_one(spark, args.format, files)
    merged.write.mode("overwrite").parquet(args.out)


if __name__ == "__main__":
    main()
