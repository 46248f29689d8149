#!/usr/bin/env python3
"""DuckDB on one machine: read every file with union_by_name and COPY to Parquet.

  duckdb_driver.py --format csv|json|parquet --out FILE.parquet --files LISTFILE
"""
import argparse

import duckdb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--files", required=True)
    args = ap.parse_args()
    files = [line.strip() for line in open(args.files) if line.strip()]
    lit = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
    reader = {
        "csv": "read_csv($files, union_by_name = true, header = true)",
        "json": "read_json($files, union_by_name = true, format = 'newline_delimited')",
        "parquet": "read_parquet($files, union_by_name = true)",
    }[args.format]
    con = duckdb.connect()
    out = args.out.replace("'", "''")
    con.execute(f"COPY (SELECT * FROM {reader.replace('$files', lit)}) TO '{out}' (FORMAT parquet)")


if __name__ == "__main__":
    main()
