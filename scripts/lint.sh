#!/usr/bin/env bash
# lint.sh: the static checks of the whole module (`make lint`, and the
# first step of scripts/test.sh), each run even when one before failed:
#   gofmt -l     every .go file, whatever its build tags;
#   go vet       with the integration tag, then the packages' files that
#                tag leaves out, without it;
#   staticcheck  likewise;
#   gocyclo      no function of sparkmerge/spark or cmd over 25 (the
#                executor and the CLI read as named steps: issue 39);
#   deadcode     no unreachable function, tests and the integration tag
#                included; Example functions, which go test runs, excepted.
# The tools are pinned below and installed on first use with
# `go install pkg@version` (the Go module proxy) into
# .cache/tools/<tool>-<version>/ (git-ignored), then reused: a warm run
# takes about half a minute.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SPARKMERGE_REPO"

command -v go >/dev/null || die "go is not installed: install Go $(awk '/^go / { print $2 }' go.mod) or newer (https://go.dev/doc/install)"

staticcheck_pkg=honnef.co/go/tools/cmd/staticcheck@v0.8.2
gocyclo_pkg=github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0
deadcode_pkg=golang.org/x/tools/cmd/deadcode@v0.53.0
max_cyclomatic=25

# tool PKG@VERSION: the path of that command, installed first if missing
# (into a directory of its own, then moved into place, so that two
# checkouts sharing .cache never see half a binary).
tool() {
	local pkg=${1%@*} version=${1##*@} name dir tmp
	name=$(basename "$pkg")
	dir="$SPARKMERGE_REPO/.cache/tools/$name-$version"
	if [ ! -x "$dir/$name" ]; then
		log "installing $pkg@$version into .cache/tools"
		mkdir -p "$dir"
		tmp=$(mktemp -d "$dir/.install.XXXXXX")
		GOBIN="$tmp" go install "$pkg@$version"
		mv -f "$tmp/$name" "$dir/$name"
		rm -rf "$tmp"
	fi
	echo "$dir/$name"
}

# untagged: the packages with files the integration tag leaves out.
untagged=$(go list -tags integration -f '{{if .IgnoredGoFiles}}{{.ImportPath}}{{end}}' ./...)

# Each check returns at its first failing command: set -e does not apply
# inside a function called as `step ... || ...`.
gofmt_clean() {
	local bad
	bad=$(go list -e -tags integration -f '{{.Dir}}' ./... | while read -r d; do gofmt -l "$d"/*.go; done) || return 1
	[ -z "$bad" ] || { log "gofmt needed on:"; printf '  %s\n' $bad >&2; return 1; }
}
vet() {
	go vet -tags integration ./... || return 1
	[ -z "$untagged" ] || go vet $untagged
}
staticcheck() {
	local bin
	bin=$(tool "$staticcheck_pkg") || return 1
	"$bin" -tags integration ./... || return 1
	[ -z "$untagged" ] || "$bin" $untagged
}
cyclomatic() {
	local bin over
	bin=$(tool "$gocyclo_pkg") || return 1
	# gocyclo exits 1 when it lists a function: the list decides.
	over=$("$bin" -over "$max_cyclomatic" sparkmerge/spark cmd) || [ -n "$over" ] || return 1
	[ -z "$over" ] || { log "functions over a cyclomatic complexity of $max_cyclomatic (split them into named steps):"; printf '%s\n' "$over" >&2; return 1; }
}
dead() {
	local bin found
	bin=$(tool "$deadcode_pkg") || return 1
	found=$("$bin" -tags integration -test ./...) || return 1
	found=$(printf '%s\n' "$found" | grep -v -e '^$' -e ': unreachable func: Example' || true)
	[ -z "$found" ] || { log "unreachable code (remove it):"; printf '%s\n' "$found" >&2; return 1; }
}

failed=()
for check in gofmt_clean vet staticcheck cyclomatic dead; do
	step "$check" "$check" || failed+=("$check")
done
[ ${#failed[@]} -eq 0 ] || die "lint failed: ${failed[*]}"
