#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the module for a while each (their seed
# inputs also run with the unit tests). A failing input is written under the
# package's testdata/fuzz: commit it with the fix, and it runs as a seed.
#
#   scripts/fuzz.sh [BUDGET]   per target, default 250000x (go test -fuzztime:
#                              a count of inputs, or a duration such as 10s)
#
# The default is a count, not a duration: with a duration, Go before 1.27
# can fail a target with "context deadline exceeded" when the time runs out
# while a worker is mid-input (go.dev/issue/75804; no input written, not a
# finding). 250,000 inputs take 6-11 s per target here.
#
# Environment: SPARKMERGE_TEST_PACKAGES (packages, default ./...).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

time=${1:-250000x}
go list -f '{{.Dir}}' ${SPARKMERGE_TEST_PACKAGES:-./...} | while read -r dir; do
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		log "fuzz $target for $time"
		# Minimizing each new input may take a minute by default: the
		# time is for finding inputs.
		(cd "$dir" && go test -run '^$' -fuzz "^$target\$" -fuzztime "$time" -fuzzminimizetime 2s .)
	done
done
