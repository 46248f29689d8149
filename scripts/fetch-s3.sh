#!/usr/bin/env bash
# fetch-s3.sh: what the integration tests need for an S3 object store on
# this machine: Hadoop's S3A connector for Spark (hadoop-aws of the Hadoop
# that $SPARK_VERSION ships, scripts/lib.sh, and the AWS SDK bundle that
# Hadoop was built against) from Maven Central, checked by sha256, and
# moto's S3 server from PyPI in a virtualenv, every package at the version
# and with the sha256 that scripts/s3-requirements.txt pins
# (scripts/lock-s3.py writes it). Everything lands under .cache; a rerun
# does nothing. Prints two lines for the test harness:
#   SPARKMERGE_S3A_JARS=<directory of the two jars>
#   SPARKMERGE_MOTO_SERVER=<path of moto_server>
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

jars="$SPARKMERGE_CACHE/downloads/s3a-hadoop-$SPARK_HADOOP_VERSION"
# A venv's scripts name the path it was made at: made at the cache's real
# path, it serves every checkout that shares .cache through a link, after
# the checkout that made it is gone (one made through a worktree's link
# stopped answering S3 requests mid-run when that worktree was removed).
mkdir -p "$SPARKMERGE_CACHE"
venv="$(cd "$SPARKMERGE_CACHE" && pwd -P)/s3-venv"
requirements="$(dirname "${BASH_SOURCE[0]}")/s3-requirements.txt"
maven=https://repo1.maven.org/maven2

# path sha256 for each jar: hadoop-aws must be the Hadoop of Spark's own
# jars (another one fails to load), with the SDK bundle its pom names
# (hadoop-project's aws-java-sdk.version, 1.x, or aws-java-sdk-v2.version)
# and, from Hadoop 3.4.2, the S3 analytics accelerator it loads when it
# lists a bucket (amazon-s3-analyticsaccelerator-s3.version).
case $SPARK_HADOOP_VERSION in
3.3.4) artifacts=(
	"org/apache/hadoop/hadoop-aws/3.3.4/hadoop-aws-3.3.4.jar 53f9ae03c681a30a50aa17524bd9790ab596b28481858e54efd989a826ed3a4a"
	"com/amazonaws/aws-java-sdk-bundle/1.12.262/aws-java-sdk-bundle-1.12.262.jar 873fe7cf495126619997bec21c44de5d992544aea7e632fdc77adb1a0915bae5"
) ;;
3.4.1) artifacts=(
	"org/apache/hadoop/hadoop-aws/3.4.1/hadoop-aws-3.4.1.jar 01334a07e179cae2b7e251f24857f11e3759108c9d6a79dcbe362a4295227da2"
	"software/amazon/awssdk/bundle/2.24.6/bundle-2.24.6.jar 890bf9f2a80488f7a8aa8277d64d13a9ea3a3cdff8607ef3b63a878d8b467b41"
) ;;
3.4.2) artifacts=(
	"org/apache/hadoop/hadoop-aws/3.4.2/hadoop-aws-3.4.2.jar d2d24e6b715b5656b9d238bf13b6682a07e2004dd36aad74a73aeb854319f4d9"
	"software/amazon/awssdk/bundle/2.29.52/bundle-2.29.52.jar 62638f33045690c6bc5e496b54b0b2e89a9ad38cbedacdf6e017fea6bc85f55c"
	"software/amazon/s3/analyticsaccelerator/analyticsaccelerator-s3/1.2.1/analyticsaccelerator-s3-1.2.1.jar 11029552e37408e41e689b20150f4b372e0b4f232de321ccafd0fcf443cdfb5a"
) ;;
3.5.0) artifacts=(
	"org/apache/hadoop/hadoop-aws/3.5.0/hadoop-aws-3.5.0.jar 66bd9eefb938b1a1657487324b63c13df2d8b17164a1dd24e0ef37b905bc5baa"
	"software/amazon/awssdk/bundle/2.35.4/bundle-2.35.4.jar db4b55f24ad1b4e70f17eb1717a4de76a8dadc5a27d764be7c44ff67b2c1c677"
	"software/amazon/s3/analyticsaccelerator/analyticsaccelerator-s3/1.3.1/analyticsaccelerator-s3-1.3.1.jar 4959a9747cbb479c73c3ffbcd479bee5b014f8b2880994585a8693fb9d24675e"
) ;;
*) die "no S3A connector pinned for Hadoop $SPARK_HADOOP_VERSION (Spark $SPARK_VERSION): add its jars here" ;;
esac

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
# So is one whose server script names another interpreter than its own.
shebang=$(head -n 1 "$venv/bin/moto_server" 2>/dev/null || true)
if [ "$(cat "$venv/.lock" 2>/dev/null)" != "$lock" ] || ! "$venv/bin/python" -c "import moto" 2>/dev/null ||
	[ "${shebang#"#!$venv/bin/python"}" = "$shebang" ]; then
	rm -rf "$venv"
	python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
	log "installing moto's S3 server in $venv (versions and hashes from $requirements)"
	"$venv/bin/pip" install --quiet --require-hashes --no-deps -r "$requirements"
	echo "$lock" >"$venv/.lock"
fi

echo "SPARKMERGE_S3A_JARS=$jars"
echo "SPARKMERGE_MOTO_SERVER=$venv/bin/moto_server"
