#!/usr/bin/env bash
# test-matrix.sh: the version matrix's subset of the integration suite on
# one Spark version ($SPARK_VERSION, a version scripts/lib.sh pins or its
# major.minor), or on each of $SPARKMERGE_MATRIX_VERSIONS in turn (default:
# the newest pinned patch of every line, see matrix_versions). Set-up is
# included, as in scripts/test.sh: the Docker engine, that version's
# Spark, its image and its S3 object store.
#
# The subset covers every read path (client typing, Spark inference,
# positional scans, files only the server sees, in a mounted directory and
# in an object store), every strategy, every write target, the recorded
# inference schemas and the differential suite's generated corpora, each
# merge compared value for value with that Spark reading each file alone
# (docs/testing.md, "Spark versions"). The main version runs the whole
# suite instead (scripts/test.sh).
#
# Prints one timing line per version. Environment: SPARKMERGE_TEST_TIMEOUT
# (go test -timeout, default 40m), SPARKMERGE_DIFF_CORPORA (differential
# corpora per shape, default 3), SPARKMERGE_GO_TEST_FLAGS (more go test
# flags, e.g. -v).
set -euo pipefail
given=${SPARK_VERSION:-} # lib.sh sets the main version when none is given
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

# The matrix's tests, by read path:
#   client typing            TestLocal*InferenceMatchesSpark, TestInferGoldenIsSparks
#   Spark inference          TestDifferentialReadPaths (auto --spark-inference), TestTypeDrift
#   positional scans         TestCSVBatchesMatchReadsOneByOne, TestJSONBatchesMatchReadsOneByOne
#   files only Spark sees    TestDifferentialReadPaths (a mounted directory, an S3 bucket), TestObjectStoreFileChangedAfterPlanning
#   strategies               TestDifferentialReadPaths and TestOneResultWhateverThePath (auto, union), TestTypeDrift (multipath)
#   write targets            TestPartitionedWrite, TestTableAppendEvolve, TestDataFramesInAndOut, TestCLIMergeToView
#   widening                 TestWideningParityWithSpark
#   the version command      TestCLIVersionNamesTheServer
matrix_tests='^(TestLocalCSVInferenceMatchesSpark|TestLocalJSONInferenceMatchesSpark|TestLocalParquetInferenceMatchesSpark|TestLocalORCInferenceMatchesSpark|TestInferGoldenIsSparks|TestDifferentialReadPaths|TestTypeDrift|TestCSVBatchesMatchReadsOneByOne|TestJSONBatchesMatchReadsOneByOne|TestObjectStoreFileChangedAfterPlanning|TestOneResultWhateverThePath|TestPartitionedWrite|TestTableAppendEvolve|TestDataFramesInAndOut|TestCLIMergeToView|TestWideningParityWithSpark|TestCLIVersionNamesTheServer)$'

# matrix_versions: the newest pinned patch of each major.minor.
matrix_versions() {
	spark_versions | awk -F. '{ line = $1 "." $2; last[line] = $0; if (!(line in seen)) { seen[line] = 1; order[++n] = line } }
		END { for (i = 1; i <= n; i++) print last[order[i]] }'
}

if [ -n "$given" ]; then
	versions=$SPARK_VERSION
else
	versions=${SPARKMERGE_MATRIX_VERSIONS:-$(matrix_versions | tr '\n' ' ')}
fi

"$SPARKMERGE_REPO/scripts/docker-engine.sh"
timings=()
trap 'for t in "${timings[@]}"; do log "  $t"; done' EXIT
for v in $versions; do
	start=$SECONDS rc=0
	(
		export SPARK_VERSION=$v
		. "$SPARKMERGE_REPO/scripts/lib.sh"
		step "image $SPARK_VERSION" "$SPARKMERGE_REPO/scripts/build-image.sh"
		step "fetch-s3 $SPARK_VERSION" export_s3_store
		log "matrix on Spark $SPARK_VERSION ($SPARKMERGE_SPARK_IMAGE)"
		TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE="$SPARKMERGE_SPARK_IMAGE" \
			go test -tags integration -count=1 -p 1 -timeout "${SPARKMERGE_TEST_TIMEOUT:-40m}" \
			${SPARKMERGE_GO_TEST_FLAGS:-} -run "$matrix_tests" ./integration/
	) || rc=$?
	timings+=("$(printf 'Spark %-7s %5ss%s' "$v" $((SECONDS - start)) "$([ $rc -eq 0 ] || echo ' FAILED')")")
	[ $rc -eq 0 ] || exit $rc
done
log "matrix passed on: $versions"
