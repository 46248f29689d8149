#!/usr/bin/env bash
# differential.sh: the long run of the differential suite
# (integration/differential_test.go): N seeded drifting corpora per shape
# (CSV, multiLine CSV, TSV, JSON lines, Parquet, ORC, partitioned CSV trees
# with drifting headers; default 30, CI runs 2), each merged by every read
# path (files the client reads, files only Spark sees, the object store,
# through symlinks) and compared cell by cell with Spark reading each file
# alone. Sets up what it needs, like scripts/test.sh.
#
#   scripts/differential.sh [N [FIRST]]
#
# FIRST is the first corpus's index (default 0): seeds from an index no
# earlier run reached are corpora never tried.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

corpora=${1:-30} first=${2:-0}
"$SPARKMERGE_REPO/scripts/docker-engine.sh"
if [ "$SPARKMERGE_SPARK_IMAGE" = "$SPARKMERGE_DEFAULT_IMAGE" ]; then
	"$SPARKMERGE_REPO/scripts/fetch-spark.sh"
	"$SPARKMERGE_REPO/scripts/build-image.sh"
fi
# The object store path (files in an S3 bucket), as in scripts/test.sh.
export_s3_store
log "differential suite: $corpora corpora per shape, from index $first"
cd integration
SPARKMERGE_DIFF_CORPORA=$corpora SPARKMERGE_DIFF_FIRST=$first TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE="$SPARKMERGE_SPARK_IMAGE" \
	go test -tags integration -count=1 -timeout 6h -run 'TestDifferentialReadPaths' -v . |
	grep --line-buffered -E '^(\s*--- (FAIL|PASS|SKIP)|ok|FAIL)|differential_test.go'
