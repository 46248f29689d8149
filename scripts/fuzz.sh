#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the module for a while each (their seed
# inputs also run with the unit tests). A failing input is written under the
# package's testdata/fuzz: commit it with the fix, and it runs as a seed.
#
#   scripts/fuzz.sh [TIME]     TIME per target, default 10s (go test -fuzztime)
#
# Environment: SPARKMERGE_TEST_PACKAGES (packages, default ./...).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

time=${1:-10s}
go list -f '{{.Dir}}' ${SPARKMERGE_TEST_PACKAGES:-./...} | while read -r dir; do
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		log "fuzz $target for $time"
		# Minimizing each new input may take a minute by default: the
		# time is for finding inputs.
		(cd "$dir" && go test -run '^$' -fuzz "^$target\$" -fuzztime "$time" -fuzzminimizetime 2s .)
	done
done
