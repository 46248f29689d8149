#!/usr/bin/env bash
# record-spark-schemas.sh: asks Spark for the schema of every file of the
# inference corpus (sparkmerge/spark/internal/infer/testdata/spark), each
# read alone, and records the answers in the corpus' golden file
# (schemas-MAJOR.MINOR.json). The unit tests of package infer hold the
# client's inference to it; the integration suite checks that it still is
# Spark's answer.
#
#   scripts/record-spark-schemas.sh        # the project's Spark container
#   SPARK_VERSION=4.1 scripts/record-spark-schemas.sh   # that version's (schemas-4.1.json)
#   SPARK_REMOTE=sc://host:15002 scripts/record-spark-schemas.sh
#
# Run it after adding a file to the corpus or moving to another Spark.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # resolves and exports SPARK_VERSION
cd "$SPARKMERGE_REPO/integration"
if [ -z "${SPARK_REMOTE:-}" ] && [ "$SPARKMERGE_SPARK_IMAGE" = "$SPARKMERGE_DEFAULT_IMAGE" ]; then
	"$SPARKMERGE_REPO/scripts/build-image.sh"
fi
export TESTCONTAINERS_RYUK_DISABLED=true SPARKMERGE_SPARK_IMAGE
go test -tags integration -count=1 -run '^TestInferGoldenIsSparks$' . -args -update-infer-golden -test.v
