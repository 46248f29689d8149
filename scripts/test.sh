#!/usr/bin/env bash
# test.sh: every check and test, with set-up included (idempotent):
#   gofmt, go vet, unit tests (hermetic), a short run of every fuzz target,
#   then the Docker engine, Spark, the local image, an S3 object store (moto
#   from PyPI, Hadoop's S3A jars from Maven Central) and the integration
#   tests against Spark in a container.
# Prints one timing line per step and a summary.
#
# Environment: SPARK_VERSION (a Spark version scripts/lib.sh pins, or its
# major.minor; default the main version), SPARKMERGE_SPARK_IMAGE (default
# sparkmerge/spark-connect:<that version>;
# set e.g. apache/spark:4.0.1 where a registry is reachable: the local build
# is then skipped), SPARK_REMOTE (integration tests use that server instead),
# SPARKMERGE_TEST_TIMEOUT (go test -timeout for integration, default 45m),
# SPARKMERGE_TEST_PACKAGES (packages to test, default ./...),
# SPARKMERGE_FUZZTIME (inputs or time per fuzz target, default 250000x;
# 0 skips fuzzing; see scripts/fuzz.sh).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

command -v go >/dev/null || die "go is not installed: install Go $(awk '/^go / { print $2 }' go.mod) or newer (https://go.dev/doc/install)"

pkgs=${SPARKMERGE_TEST_PACKAGES:-./...}
timings=()
run_step() {
	local name=$1 start=$SECONDS rc=0
	step "$@" || rc=$?
	timings+=("$(printf '%-14s %4ss%s' "$name" $((SECONDS - start)) "$([ $rc -eq 0 ] || echo ' FAILED')")")
	return $rc
}
summary() {
	local t
	log "timings:"
	for t in "${timings[@]}"; do log "  $t"; done
}
trap summary EXIT

gofmt_clean() {
	local bad
	# Every .go file of the tested packages, whatever its build tags.
	bad=$(go list -e -tags integration -f '{{.Dir}}' $pkgs | while read -r d; do gofmt -l "$d"/*.go; done)
	[ -z "$bad" ] || { log "gofmt needed on:"; printf '  %s\n' $bad >&2; return 1; }
}
vet() { go vet $pkgs && go vet -tags integration $pkgs; }
unit() { go test -count=1 $pkgs; }
fuzz() {
	[ "${SPARKMERGE_FUZZTIME:-250000x}" != 0 ] || return 0
	"$SPARKMERGE_REPO/scripts/fuzz.sh" "${SPARKMERGE_FUZZTIME:-250000x}"
}
image() {
	if [ "$SPARKMERGE_SPARK_IMAGE" = "$SPARKMERGE_DEFAULT_IMAGE" ]; then
		"$SPARKMERGE_REPO/scripts/build-image.sh"
	elif ! docker image inspect "$SPARKMERGE_SPARK_IMAGE" >/dev/null 2>&1; then
		log "pulling $SPARKMERGE_SPARK_IMAGE"
		docker pull -q "$SPARKMERGE_SPARK_IMAGE"
	fi
}
integration() {
	# -p 1: one Spark at a time on a small machine.
	TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE="$SPARKMERGE_SPARK_IMAGE" \
		go test -tags integration -count=1 -p 1 -timeout "${SPARKMERGE_TEST_TIMEOUT:-45m}" $pkgs
}

run_step gofmt gofmt_clean
run_step vet vet
run_step unit unit
run_step fuzz fuzz
run_step docker-engine "$SPARKMERGE_REPO/scripts/docker-engine.sh"
if [ "$SPARKMERGE_SPARK_IMAGE" = "$SPARKMERGE_DEFAULT_IMAGE" ]; then
	run_step fetch-spark "$SPARKMERGE_REPO/scripts/fetch-spark.sh"
fi
run_step image image
run_step fetch-s3 export_s3_store
run_step integration integration
log "all tests passed"
