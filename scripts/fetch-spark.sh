#!/usr/bin/env bash
# fetch-spark.sh: downloads the pyspark sdist of $SPARK_VERSION (default the
# main version; see scripts/lib.sh) from PyPI (pip download), checks its
# sha256 and unpacks it under .cache; for Spark 3.5, whose sdist lacks the
# Connect server, adds the server jar from Maven Central, checked by its
# sha256 too. Prints SPARK_HOME on stdout.
# Idempotent: does nothing when the tree is already there.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

downloads="$SPARKMERGE_CACHE/downloads"
sdist="$downloads/pyspark-${SPARK_VERSION}.tar.gz"
tree="$SPARKMERGE_CACHE/pyspark-${SPARK_VERSION}"

spark_tree_ok() {
	[ -x "$SPARKMERGE_SPARK_HOME/bin/spark-submit" ] && [ -f "$SPARKMERGE_SPARK_HOME/jars/$SPARK_CONNECT_JAR" ]
}

sha_ok() {
	[ -f "$sdist" ] && [ "$(sha256sum "$sdist" | cut -d' ' -f1)" = "$PYSPARK_SHA256" ]
}

# fetch_connect_jar DIR: puts the Connect server jar of this Spark (one
# pyspark does not ship) from Maven Central into DIR, checked by sha256.
# The published jar is shaded: it carries its own gRPC and protobuf, as
# spark-submit --packages would fetch it.
fetch_connect_jar() {
	local cached="$downloads/$SPARK_CONNECT_JAR"
	local url="https://repo1.maven.org/maven2/org/apache/spark/spark-connect_${SPARK_SCALA_VERSION}/${SPARK_VERSION}/$SPARK_CONNECT_JAR"
	if ! [ -f "$cached" ] || [ "$(sha256sum "$cached" | cut -d' ' -f1)" != "$SPARK_CONNECT_JAR_SHA256" ]; then
		command -v curl >/dev/null || apt_install curl ca-certificates
		log "downloading $SPARK_CONNECT_JAR from Maven Central"
		curl -fsSL --retry 3 -o "$cached.part" "$url" || die "download $url failed"
		[ "$(sha256sum "$cached.part" | cut -d' ' -f1)" = "$SPARK_CONNECT_JAR_SHA256" ] ||
			{ rm -f "$cached.part"; die "checksum mismatch for $url (want sha256 $SPARK_CONNECT_JAR_SHA256)"; }
		mv "$cached.part" "$cached"
	fi
	cp "$cached" "$1/"
}

if ! spark_tree_ok; then
	mkdir -p "$downloads"
	if ! sha_ok; then
		rm -f "$sdist"
		pip=()
		if command -v pip3 >/dev/null; then pip=(pip3)
		elif command -v pip >/dev/null; then pip=(pip)
		else
			apt_install python3-pip
			pip=(pip3)
		fi
		log "downloading pyspark==${SPARK_VERSION} sdist (300-460 MB)"
		# pip prepares the sdist's metadata (with setuptools from PyPI) but
		# installs nothing; the checksum below pins the bytes.
		"${pip[@]}" download --quiet --no-deps --no-binary :all: --dest "$downloads" "pyspark==${SPARK_VERSION}"
		sha_ok || die "checksum mismatch for $sdist (want sha256 $PYSPARK_SHA256): delete it and rerun"
	fi
	log "unpacking $sdist"
	tmp="$SPARKMERGE_CACHE/.pyspark-unpack.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "$sdist" -C "$tmp"
	[ -d "$tmp/pyspark-${SPARK_VERSION}/deps/jars" ] || die "unexpected sdist layout: no pyspark-${SPARK_VERSION}/deps/jars in $sdist"
	if [ "$SPARK_CONNECT_JAR_SHA256" != - ]; then
		fetch_connect_jar "$tmp/pyspark-${SPARK_VERSION}/deps/jars"
	fi
	chmod +x "$tmp/pyspark-${SPARK_VERSION}"/deps/bin/* "$tmp/pyspark-${SPARK_VERSION}"/deps/sbin/*
	rm -rf "$tree"
	mv "$tmp/pyspark-${SPARK_VERSION}" "$tree"
	spark_tree_ok || die "unpacked Spark in $tree lacks bin/spark-submit or jars/$SPARK_CONNECT_JAR"
fi

echo "$SPARKMERGE_SPARK_HOME"
