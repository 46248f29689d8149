#!/usr/bin/env bash
# remote.sh: sparkmerge on the same corpora where the client reads them
# and where only the server does (a directory mounted into the Spark
# container alone), timed side by side, outputs compared.
#
#   scripts/bench/remote.sh LOCAL_ROOT REMOTE_ROOT [CORPUS...]
#
# LOCAL_ROOT holds gen.py's corpora where both the client and the server
# read them; REMOTE_ROOT is the same corpora's path on the server, absent
# on the client. SPARK_REMOTE names the server; SPARKMERGE is the binary.
# Prints one line per run: corpus, side, seconds, discovery seconds, rows;
# then whether both sides wrote the same rows (count, columns, non-null
# counts per column, types) by Spark's own reading.
set -euo pipefail
local_root=$1 remote_root=$2
shift 2
corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=(wide-drift-csv-200 wide-drift-json-200 parquet-evolve-200 wide-drift-csv-2000 wide-drift-json-2000 parquet-evolve-2000)
bin=${SPARKMERGE:-sparkmerge}
out_local=$(mktemp -d) # outputs where both sides see them
py=${PYTHON:-python3}
for c in "${corpora[@]}"; do
	for side in local remote; do
		root=$local_root
		[ "$side" = remote ] && root=$remote_root
		out="$local_root/.out-$c-$side"
		rm -rf "$out"
		start=$(date +%s.%N)
		json=$("$bin" merge "$root/$c" --out "$out" --mode overwrite -o json)
		end=$(date +%s.%N)
		printf '%s\t%s\t%.1f\t%s\n' "$c" "$side" "$(echo "$end - $start" | bc)" \
			"$(echo "$json" | "$py" -c 'import json,sys; d=json.load(sys.stdin); print("%.1f\t%d\t%d typed remotely in %d jobs\t%d scans" % (d.get("discovery_ns",0)/1e9, d.get("rows_written",-1), d.get("remote_typed",0), d.get("remote_fetch_jobs",0), d.get("scans",0)))')"
	done
	"$py" - "$local_root/.out-$c-local" "$local_root/.out-$c-remote" <<'PY'
import os, sys
from pyspark.sql import SparkSession, functions as F
s = SparkSession.builder.remote(os.environ.get("SPARK_REMOTE", "sc://localhost:15002")).getOrCreate()
def profile(p):
    df = s.read.parquet(p)
    row = df.agg(F.count(F.lit(1)).alias("rows"), *[F.count(F.col("`%s`" % c)).alias(c) for c in df.columns]).collect()[0]
    return df.schema.simpleString(), row.asDict()
a, b = profile(sys.argv[1]), profile(sys.argv[2])
print("  same output (schema, rows, non-null per column):", a == b)
PY
done
