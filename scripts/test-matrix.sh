#!/usr/bin/env bash
# test-matrix.sh: the version matrix's subset of the integration suite on
# one Spark version ($SPARK_VERSION, a version scripts/lib.sh pins or its
# major.minor), or on each of $SPARKMERGE_MATRIX_VERSIONS in turn (default:
# the newest pinned patch of every line, see matrix_versions). Set-up is
# included, as in scripts/test.sh: the Docker engine, that version's
# Spark, its image and its S3 object store, each cached under .cache.
# scripts/test.sh runs it after the whole suite, one version at a time
# (docs/testing.md, "The matrix in make test").
#
# The subset covers every read path (client typing, Spark inference,
# positional scans, files only the server sees, in a mounted directory and
# in an object store), every strategy, every write target, the recorded
# inference schemas and the differential suite's generated corpora, each
# merge compared value for value with that Spark reading each file alone
# (docs/testing.md, "Spark versions"). The main version runs the whole
# suite instead (scripts/test.sh).
#
# Each version gets a server of its own, started by the test binary from
# that version's image: a SPARK_REMOTE or a shared server of the caller's
# is not used (it runs another version). Under CI=true a server that
# cannot start fails the version (sparktest.Main), never skips it.
#
# Prints the slowest tests and one timing line per version, and fails a
# version that takes longer than its budget. Environment:
# SPARKMERGE_TEST_TIMEOUT (go test -timeout, default 40m),
# SPARKMERGE_TEST_PARALLEL (go test -parallel, default 3, as in
# scripts/test.sh), SPARKMERGE_DIFF_CORPORA (differential corpora per
# shape, default 2), SPARKMERGE_MATRIX_BUDGET (seconds per version, set-up
# included; 0: no budget; default below), SPARKMERGE_GO_TEST_FLAGS (more
# go test flags, e.g. -v), SPARKMERGE_MATRIX_DRY_RUN (set: print each
# version and its image, one a line, and run nothing).
set -euo pipefail
given=${SPARK_VERSION:-} # lib.sh sets the main version when none is given
# Each version runs its own image and server: not an image, a server or a
# shared server's environment meant for another version (scripts/test.sh
# exports the shared server's SPARKTEST_SHARED_* for its own step).
unset SPARKMERGE_SPARK_IMAGE SPARK_REMOTE SPARKTEST_SHARED_REMOTE SPARKTEST_SHARED_WORK_ROOT \
	SPARKTEST_SHARED_CLUSTER_ROOT SPARKTEST_SHARED_MOUNTS SPARKTEST_SHARED_OBJECT_STORE SPARKTEST_SHARED_NO_OBJECT_STORE
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

# A version's budget in seconds, its image and downloads cached (the
# first run of a version also downloads 0.6-1.1 GB and builds its image):
# 1,500 s, the integration step's; measured 712-1,056 s per version on
# the shared 2-core machine at load 8-31 (docs/testing.md, "The matrix in
# make test").
budget=${SPARKMERGE_MATRIX_BUDGET:-1500}

# The matrix's tests, by read path:
#   client typing            TestLocal*InferenceMatchesSpark, TestInferGoldenIsSparks
#   Spark inference          TestDifferentialReadPaths (auto --spark-inference), TestTypeDrift
#   positional scans         TestCSVBatchesMatchReadsOneByOne, TestJSONBatchesMatchReadsOneByOne,
#                            TestCSVBatchParsesQuotedValuesAsSparkDoes
#   Spark typing together    TestCSVTypedTogetherAsAlone, TestJSONTypedTogetherAsAlone (each file as alone),
#                            TestPlanCountsItsSparkRequests (a few Spark requests, not one per file),
#                            TestCSVTypedTogetherPastTheSplit, TestJSONTypedTogetherPastTheSplit (files
#                            past the split), TestSplitSensitiveCSVFileFollowsTheSessionsSplit (client
#                            typing of a year after a timestamp follows the session's split)
#   files only Spark sees    TestDifferentialReadPaths (a mounted directory, an S3 bucket), TestObjectStoreFileChangedAfterPlanning
#   strategies               TestDifferentialReadPaths and TestOneResultWhateverThePath (auto, union), TestTypeDrift (multipath)
#   write targets            TestPartitionedWrite, TestTableAppendEvolve, TestDataFramesInAndOut, TestCLIMergeToView
#   widening                 TestWideningParityWithSpark
#   the version command      TestCLIVersionNamesTheServer
#   table formats            TestLakehouse* (Delta Lake and Iceberg tables: create, append with --evolve,
#                            widening, overwrite, a failed write, a Delta path), on each line whose image
#                            carries them (scripts/lib.sh SPARKMERGE_TABLE_FORMAT_PINS); under CI=true a
#                            line with pins whose server lacks them fails, never skips
matrix_tests='^(TestLocalCSVInferenceMatchesSpark|TestLocalJSONInferenceMatchesSpark|TestLocalParquetInferenceMatchesSpark|TestLocalORCInferenceMatchesSpark|TestInferGoldenIsSparks|TestDifferentialReadPaths|TestTypeDrift|TestCSVBatchesMatchReadsOneByOne|TestCSVBatchParsesQuotedValuesAsSparkDoes|TestJSONBatchesMatchReadsOneByOne|TestObjectStoreFileChangedAfterPlanning|TestOneResultWhateverThePath|TestPartitionedWrite|TestTableAppendEvolve|TestDataFramesInAndOut|TestCLIMergeToView|TestWideningParityWithSpark|TestCLIVersionNamesTheServer|TestCSVTypedTogetherAsAlone|TestJSONTypedTogetherAsAlone|TestPlanCountsItsSparkRequests|TestCSVTypedTogetherPastTheSplit|TestCSVTypedByHeaderAsAlone|TestJSONTypedTogetherPastTheSplit|TestSplitSensitiveCSVFileFollowsTheSessionsSplit|TestLakehouseAppendEvolveVerify|TestLakehouseWidening|TestLakehouseOverwriteAndFailure|TestLakehouseDeltaPath|TestColumnWithoutValuesTakesTheOthersType|TestMisreadFilesAreNamedWithTheirOption|TestNullTokensAreNamed|TestPandasNanosecondTimestampsAreNamed|TestCSVValueOverLinesIsNamedWithMultiLine|TestHintedTextIsNeverRoundedSilently|TestHintedStringsAreNeverRoundedSilently|TestHintsReachTreeFilesWithPartitionColumns|TestCLIKeptSessionMergesAsANewOne|TestFilesSparkReadsAreCheckedForUTF8|TestSplitFilesTypedByHeaderAreCheckedForUTF8)$'

# Spark's defaults for code generation (whole-stage code, compiled with
# a fallback to interpreted), set back on the matrix's servers.
compiled_conf='spark.sql.codegen.wholeStage=true spark.sql.codegen.factoryMode=FALLBACK'

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

dry_run=${SPARKMERGE_MATRIX_DRY_RUN:-}
[ -n "$dry_run" ] || "$SPARKMERGE_REPO/scripts/docker-engine.sh"
# go test -json of each version, kept as scripts/test.sh keeps its steps'.
results="$SPARKMERGE_REPO/out/test-results"
bin=$(mktemp -d "${TMPDIR:-/tmp}/sparkmerge-matrix.XXXXXX")
mkdir -p "$results"
[ -n "$dry_run" ] || go build -o "$bin/testreport" ./scripts/testreport
timings=()
trap 'rm -rf "$bin"; for t in "${timings[@]}"; do log "  $t"; done' EXIT
for v in $versions; do
	start=$SECONDS rc=0
	v=$(resolve_spark_version "$v")
	(
		export SPARK_VERSION=$v
		# lib.sh's, of the version sourced above: each version its own.
		unset SPARKMERGE_SPARK_IMAGE
		. "$SPARKMERGE_REPO/scripts/lib.sh"
		if [ -n "$dry_run" ]; then
			echo "$SPARK_VERSION $SPARKMERGE_SPARK_IMAGE"
			exit 0
		fi
		step "image $SPARK_VERSION" "$SPARKMERGE_REPO/scripts/build-image.sh"
		step "fetch-s3 $SPARK_VERSION" export_s3_store
		log "matrix on Spark $SPARK_VERSION ($SPARKMERGE_SPARK_IMAGE)"
		# Spark's default code generation, which the main suite's server
		# switches off to save CPU (sparktest): the matrix runs what users run.
		TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE="$SPARKMERGE_SPARK_IMAGE" \
			SPARKTEST_SPARK_CONF="$compiled_conf ${SPARKTEST_SPARK_CONF:-}" \
			go test -json -tags integration -count=1 -p 1 -parallel "${SPARKMERGE_TEST_PARALLEL:-3}" \
			-timeout "${SPARKMERGE_TEST_TIMEOUT:-40m}" ${SPARKMERGE_GO_TEST_FLAGS:-} -run "$matrix_tests" ./integration/ |
			"$bin/testreport" -top 5 -save "$results/matrix-$SPARK_VERSION.json"
	) || rc=$?
	took=$((SECONDS - start))
	if [ $rc -eq 0 ] && [ "$budget" -gt 0 ] && [ $took -gt "$budget" ]; then
		log "the matrix on Spark $v took ${took}s, over its budget of ${budget}s: see the slowest tests above"
		rc=1
	fi
	timings+=("$(printf 'matrix %-7s %5ss%s' "$v" $took "$([ $rc -eq 0 ] || echo ' FAILED')")")
	[ $rc -eq 0 ] || exit $rc
done
log "matrix passed on: $versions"
