#!/usr/bin/env bash
# demo.sh: merges the bundled example data on Spark in a local container.
# Sets up what is missing first (Docker engine, Spark, the local image);
# idempotent. Output goes to $SPARKMERGE_DEMO_OUT (default out/demo).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

command -v go >/dev/null || die "go is not installed: install Go $(awk '/^go / { print $2 }' go.mod) or newer (https://go.dev/doc/install)"
step docker-engine scripts/docker-engine.sh
if [ "$SPARKMERGE_SPARK_IMAGE" = "$SPARKMERGE_DEFAULT_IMAGE" ]; then
	step fetch-spark scripts/fetch-spark.sh >/dev/null
	step image scripts/build-image.sh
elif ! docker image inspect "$SPARKMERGE_SPARK_IMAGE" >/dev/null 2>&1; then
	step image docker pull -q "$SPARKMERGE_SPARK_IMAGE"
fi

out=${SPARKMERGE_DEMO_OUT:-$SPARKMERGE_REPO/out/demo}
mkdir -p "$(dirname "$out")"
export TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE
# The tide readings of seed 002: the second file drops Region and adds
# ReadingId and TideNumber. --local starts Spark in a container for this one
# command, with the inputs and the output mounted at the same paths.
build_sparkmerge "$SPARKMERGE_REPO/bin/sparkmerge"
step merge "$SPARKMERGE_REPO/bin/sparkmerge" merge --local \
	integration/testdata/tides \
	--out "$out" --mode overwrite \
	--source-column _source --verify --show 20
