#!/usr/bin/env bash
# session-warmth.sh: times one merge in a new Spark Connect session per run
# against the same merge in one shared session (given as session_id), runs
# interleaved. Spark 4.0 compiles a merge's generated code again for every
# session (each has its own class loader on the executors), so the shared
# session's runs show what that costs (docs/benchmarks.md).
#
# Usage: scripts/bench/session-warmth.sh DIR FORMAT REMOTE [RUNS]
#   e.g. scripts/bench/session-warmth.sh .cache/bench/corpora/wide-drift-csv-200 csv sc://127.0.0.1:15012
# Prints each run's wall time; with the server's UI on (spark.ui.port 4050
# by default, SPARK_UI to change it) also its write stage's wall and CPU.
# Environment: SPARKMERGE (the binary, default .cache/bench/bin/sparkmerge).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 DIR FORMAT REMOTE [RUNS]" >&2; exit 2; }
dir=$1 format=$2 remote=${3%/} runs=${4:-3}
bin=${SPARKMERGE:-.cache/bench/bin/sparkmerge}
ui=${SPARK_UI:-http://127.0.0.1:4050}
session=$(python3 -c 'import uuid; print(uuid.uuid4())')

stage() {
	curl -sf "$ui/api/v1/applications" >/dev/null 2>&1 || return 0
	python3 - "$ui" <<'PY'
import datetime, json, sys, urllib.request
ui = sys.argv[1]
app = json.load(urllib.request.urlopen(ui + "/api/v1/applications"))[0]["id"]
t = lambda s: datetime.datetime.strptime(s[:23], "%Y-%m-%dT%H:%M:%S.%f")
for s in json.load(urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/stages")):
    if s["numTasks"] >= 4 and "completionTime" in s:
        wall = (t(s["completionTime"]) - t(s["submissionTime"])).total_seconds()
        print(f"  write stage {wall:.2f} s, tasks' CPU {s['executorCpuTime'] / 1e9:.2f} s", end="")
        break
PY
}
run() {
	local label=$1 url=$2 start end
	start=$(date +%s.%N)
	"$bin" merge --remote "$url" --format "$format" --out-format noop "$dir" >/dev/null
	end=$(date +%s.%N)
	printf '%-12s %6.2f s' "$label" "$(python3 -c "print($end - $start)")"
	stage
	echo
}
run warm-up "$remote/;session_id=$session"
for _ in $(seq "$runs"); do
	run new "$remote"
	run shared "$remote/;session_id=$session"
done
