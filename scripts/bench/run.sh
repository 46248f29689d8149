#!/usr/bin/env bash
# Benchmark sparkmerge against PySpark (Spark Connect) and DuckDB on drifting
# corpora, side by side, and write the run's report to
# .cache/bench/benchmarks-full.md and its plot to docs/bench.png (--quick:
# both under .cache/bench-quick). docs/benchmarks.md is written by hand from
# such reports (see its "How to run").
#
#   scripts/bench/run.sh [--quick] [-- extra bench.py flags]
#
# Needs a Spark Connect server that shares this machine's filesystem
# (default sc://127.0.0.1:15002; set BENCH_REMOTE to change it; start one with
# `make spark-up`). Not part of CI. Everything it generates lives under
# .cache/bench (--quick: .cache/bench-quick; corpora, outputs, raw results)
# and .cache/bench-venv. The full run's corpora are the issue's size (about
# 200 MB at N=200); --quick's are 0.08 of that.
#
# Environment: BENCH_REMOTE, BENCH_NS (e.g. 10,200), BENCH_REPS, BENCH_NAME
# (a report of its own: benchmarks-NAME.md, results-NAME.jsonl and
# docs/bench-NAME.png, e.g. BENCH_NAME=floor for a run of a few contenders
# with "-- --only ..."),
# BENCH_REPS_LARGE (repetitions at N >= 1000, default BENCH_REPS), BENCH_SCALE,
# BENCH_TIMEOUT (seconds per run), BENCH_KINDS (gen.py's --kinds, default
# wide-drift,parquet-evolve; dated-csv and lake add issue 34's corpora, run
# with "-- --corpora dated-csv,..."; the lakes are meant for --server-root).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here="$repo/scripts/bench"
cache="$repo/.cache"
venv="$cache/bench-venv"
root="$cache/bench"

quick=0
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--) shift; extra=("$@"); break ;;
	-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown flag $1 (use --quick, or -- FLAGS for bench.py)" >&2; exit 2 ;;
	esac
	shift
done

remote=${BENCH_REMOTE:-sc://127.0.0.1:15002}
if [ "$quick" = 1 ]; then
	mode=quick ns=${BENCH_NS:-10,50} reps=${BENCH_REPS:-1} rpc=10 analysis=50 discovery=50 timeout=${BENCH_TIMEOUT:-300}
	scale=${BENCH_SCALE:-0.08} root="$cache/bench-quick"
else
	mode=full ns=${BENCH_NS:-10,200,2000} reps=${BENCH_REPS:-3} rpc=200 analysis=2000 discovery=200 timeout=${BENCH_TIMEOUT:-600}
	scale=${BENCH_SCALE:-1.0}
fi

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# A venv that sees the system's packages (pyspark-client and pyarrow are often
# there already) and adds what is missing; idempotent.
if ! "$venv/bin/python" -c 'import duckdb, matplotlib, pyarrow, pyspark.sql.connect.session' 2>/dev/null; then
	log "setting up $venv"
	python3 -m venv --system-site-packages "$venv"
	"$venv/bin/pip" install -q duckdb matplotlib pyarrow pandas 'pyspark-client==4.0.1'
fi
py="$venv/bin/python"

hostport=${remote#sc://}
hostport=${hostport%%/*}
if ! (exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}") 2>/dev/null; then
	echo "run.sh: no Spark Connect server at $remote: start one with 'make spark-up' or set BENCH_REMOTE" >&2
	exit 1
fi

# A private binary: another session rebuilding bin/ must not swap the
# contender in the middle of a run.
log "building $root/bin/sparkmerge"
(cd "$repo" && go build -o "$root/bin/sparkmerge" ./cmd/sparkmerge)
export BENCH_SPARKMERGE="$root/bin/sparkmerge"

log "generating corpora (N=$ns, scale $scale) under $root/corpora"
"$py" "$here/gen.py" --root "$root/corpora" --n "$ns" --scale "$scale" --kinds "${BENCH_KINDS:-wide-drift,parquet-evolve}"

results="$root/results-${BENCH_NAME:-$mode}.jsonl"
rm -f "$results"
log "running ($mode: N=$ns, $reps repetitions) -> $results"
"$py" "$here/bench.py" --root "$root" --ns "$ns" --reps "$reps" --timeout "$timeout" --remote "$remote" \
	--results "$results" --rpc-count "$rpc" --analysis "$analysis" --discovery "$discovery" --reps-large "${BENCH_REPS_LARGE:-$reps}" "${extra[@]}"

# The report goes beside the results; the plot of a full run goes into
# docs/ (docs/benchmarks.md shows bench.png, bench-floor.png and
# bench-remote.png), a quick run's beside its report.
suffix=""
if [ -n "${BENCH_NAME:-}" ]; then
	suffix="-$BENCH_NAME"
fi
md="$root/benchmarks-${BENCH_NAME:-$mode}.md"
png="$repo/docs/bench$suffix.png"
if [ "$quick" = 1 ]; then
	png="$root/bench$suffix.png"
fi
log "writing $md and $png"
"$py" "$here/report.py" --results "$results" --mode "$mode" --command "$([ -n "${BENCH_NAME:-}" ] && echo "BENCH_NAME=$BENCH_NAME ")scripts/bench/run.sh$([ "$quick" = 1 ] && echo ' --quick')${extra[*]:+ -- ${extra[*]}}" \
	--md "$md" --png "$png"
