#!/usr/bin/env python3
"""Server-side analysis time of a union of many inputs, by plan shape.

  analysis_driver.py --remote sc://... --shape left-deep|balanced --files LISTFILE

left-deep: reduce(unionByName(allowMissingColumns=True)) as the seed
articles do; balanced: the same unions as a balanced binary tree (the shape
sparkmerge's union strategy sends). Prints one JSON line with the client-side
build time and the AnalyzePlan round trip (df.schema), which is where Spark
resolves the plan.
"""
import argparse
import json
import time
from functools import reduce

from pyspark.sql import SparkSession


def balanced(frames):
    while len(frames) > 1:
        nxt = [frames[i].unionByName(frames[i + 1], allowMissingColumns=True) for i in range(0, len(frames) - 1, 2)]
        if len(frames) % 2:
            nxt.append(frames[-1])
        frames = nxt
    return frames[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--remote", required=True)
    ap.add_argument("--shape", choices=["left-deep", "balanced"], required=True)
    ap.add_argument("--files", required=True)
    args = ap.parse_args()
    files = [line.strip() for line in open(args.files) if line.strip()]
    spark = SparkSession.builder.remote(args.remote).getOrCreate()
    spark.range(1).schema  # warm the session
    t0 = time.monotonic()
    frames = [spark.read.parquet(p) for p in files]
    if args.shape == "left-deep":
        df = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
    else:
        df = balanced(frames)
    t1 = time.monotonic()
    schema = df.schema
    t2 = time.monotonic()
    print(json.dumps({"inputs": len(files), "build_s": round(t1 - t0, 3), "analyze_s": round(t2 - t1, 3), "columns": len(schema.fields)}))


if __name__ == "__main__":
    main()
