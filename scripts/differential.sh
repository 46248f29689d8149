#!/usr/bin/env bash
# differential.sh: the long run of the differential suite
# (integration/differential_test.go): N seeded drifting corpora per shape
# (CSV, multiLine CSV, TSV, JSON lines, Parquet; default 30, CI runs 3),
# each merged by every read path and compared cell by cell with Spark
# reading each file alone. Sets up what it needs, like scripts/test.sh.
#
#   scripts/differential.sh [N]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

corpora=${1:-30}
"$SPARKMERGE_REPO/scripts/docker-engine.sh"
if [ "$SPARKMERGE_SPARK_IMAGE" = "$SPARKMERGE_DEFAULT_IMAGE" ]; then
	"$SPARKMERGE_REPO/scripts/fetch-spark.sh"
	"$SPARKMERGE_REPO/scripts/build-image.sh"
fi
log "differential suite: $corpora corpora per shape"
cd integration
SPARKMERGE_DIFF_CORPORA=$corpora TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE="$SPARKMERGE_SPARK_IMAGE" \
	go test -tags integration -count=1 -timeout 6h -run 'TestDifferentialReadPaths' -v . |
	grep -E '^(\s*--- (FAIL|PASS)|ok|FAIL)|differential_test.go'
