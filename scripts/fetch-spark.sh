#!/usr/bin/env bash
# fetch-spark.sh: downloads the pinned pyspark sdist from PyPI (pip download),
# checks its sha256 and unpacks it under .cache. Prints SPARK_HOME on stdout.
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
		log "downloading pyspark==${SPARK_VERSION} sdist (about 430 MB)"
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
	chmod +x "$tmp/pyspark-${SPARK_VERSION}"/deps/bin/* "$tmp/pyspark-${SPARK_VERSION}"/deps/sbin/*
	rm -rf "$tree"
	mv "$tmp/pyspark-${SPARK_VERSION}" "$tree"
	spark_tree_ok || die "unpacked Spark in $tree lacks bin/spark-submit or jars/$SPARK_CONNECT_JAR"
fi

echo "$SPARKMERGE_SPARK_HOME"
