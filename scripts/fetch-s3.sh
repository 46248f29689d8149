#!/usr/bin/env bash
# fetch-s3.sh: what the integration tests need for an S3 object store on
# this machine: Hadoop's S3A connector for Spark (hadoop-aws, matching the
# Hadoop 3.4.1 that Spark 4.0.1 ships, and the AWS SDK bundle it was built
# against) from Maven Central, checked by sha256, and moto's S3 server
# from PyPI in a virtualenv, every package at the version and with the
# sha256 that scripts/s3-requirements.txt pins (scripts/lock-s3.py writes
# it). Everything lands under .cache; a rerun does nothing. Prints two lines for the test harness:
#   SPARKMERGE_S3A_JARS=<directory of the two jars>
#   SPARKMERGE_MOTO_SERVER=<path of moto_server>
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

jars="$SPARKMERGE_CACHE/downloads/s3a"
venv="$SPARKMERGE_CACHE/s3-venv"
requirements="$(dirname "${BASH_SOURCE[0]}")/s3-requirements.txt"
maven=https://repo1.maven.org/maven2

# path sha256 for each jar.
artifacts=(
	"org/apache/hadoop/hadoop-aws/3.4.1/hadoop-aws-3.4.1.jar 01334a07e179cae2b7e251f24857f11e3759108c9d6a79dcbe362a4295227da2"
	"software/amazon/awssdk/bundle/2.24.6/bundle-2.24.6.jar 890bf9f2a80488f7a8aa8277d64d13a9ea3a3cdff8607ef3b63a878d8b467b41"
)

mkdir -p "$jars"
for a in "${artifacts[@]}"; do
	read -r path sum <<<"$a"
	file="$jars/$(basename "$path")"
	[ -f "$file" ] && [ "$(sha256sum "$file" | cut -d' ' -f1)" = "$sum" ] && continue
	command -v curl >/dev/null || apt_install curl ca-certificates
	log "downloading $(basename "$path") from Maven Central"
	curl -fsSL --retry 3 -o "$file.part" "$maven/$path"
	[ "$(sha256sum "$file.part" | cut -d' ' -f1)" = "$sum" ] || { rm -f "$file.part"; die "checksum mismatch for $maven/$path (want sha256 $sum)"; }
	mv "$file.part" "$file"
done

# The venv records the lock it was installed from; another lock, or a
# venv without moto, is built afresh.
lock="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ "$(cat "$venv/.lock" 2>/dev/null)" != "$lock" ] || ! "$venv/bin/python" -c "import moto" 2>/dev/null; then
	rm -rf "$venv"
	python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
	log "installing moto's S3 server in $venv (versions and hashes from $requirements)"
	"$venv/bin/pip" install --quiet --require-hashes --no-deps -r "$requirements"
	echo "$lock" >"$venv/.lock"
fi

echo "SPARKMERGE_S3A_JARS=$jars"
echo "SPARKMERGE_MOTO_SERVER=$venv/bin/moto_server"
