#!/usr/bin/env bash
# fetch-table-formats.sh: downloads the table format jars of
# $SPARK_VERSION's line (Delta Lake and Iceberg; scripts/lib.sh
# SPARKMERGE_TABLE_FORMAT_PINS) from Maven Central into .cache, checks
# each by its sha256, and prints the directory holding them; prints
# nothing for a Spark line without table formats.
# Idempotent: files already there with the right checksum are kept.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pins=$(table_format_pins)
[ -n "$pins" ] || exit 0
dir="$SPARKMERGE_CACHE/downloads/table-formats-${SPARK_VERSION%.*}"
maven=https://repo1.maven.org/maven2
mkdir -p "$dir"
while read -r _ _ path sum; do
	file="$dir/$(basename "$path")"
	[ -f "$file" ] && [ "$(sha256sum "$file" | cut -d' ' -f1)" = "$sum" ] && continue
	command -v curl >/dev/null || apt_install curl ca-certificates
	log "downloading $(basename "$path") from Maven Central"
	curl -fsSL --retry 3 -o "$file.part" "$maven/$path" || die "download $maven/$path failed"
	[ "$(sha256sum "$file.part" | cut -d' ' -f1)" = "$sum" ] || { rm -f "$file.part"; die "checksum mismatch for $maven/$path (want sha256 $sum)"; }
	mv "$file.part" "$file"
done <<<"$pins"
# Only the pinned jars: a pin changed leaves no older jar on the classpath.
find "$dir" -maxdepth 1 -name '*.jar' $(while read -r _ _ path _; do printf '! -name %s ' "$(basename "$path")"; done <<<"$pins") -delete
echo "$dir"
