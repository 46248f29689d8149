# shellcheck shell=bash
# Shared settings and helpers for the sparkmerge scripts. Source it:
#   . "$(dirname "$0")/lib.sh"
# Everything heavy is cached under $SPARKMERGE_CACHE (default: <repo>/.cache,
# git-ignored) so a second run is fast.

SPARKMERGE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Pinned Spark: pyspark's sdist from PyPI carries every Spark jar (including
# spark-connect_2.13) and bin/spark-submit. The checksum pins the exact bytes.
SPARK_VERSION=4.0.1
PYSPARK_SHA256=9d1f22d994f60369228397e3479003ffe2dd736ba79165003246ff7bd48e2c73
SPARK_CONNECT_JAR="spark-connect_2.13-${SPARK_VERSION}.jar"

SPARKMERGE_CACHE=${SPARKMERGE_CACHE:-$SPARKMERGE_REPO/.cache}
SPARKMERGE_DEFAULT_IMAGE="sparkmerge/spark-connect:${SPARK_VERSION}"
SPARKMERGE_SPARK_IMAGE=${SPARKMERGE_SPARK_IMAGE:-$SPARKMERGE_DEFAULT_IMAGE}
SPARK_CONNECT_CLASS=org.apache.spark.sql.connect.service.SparkConnectServer

# SPARK_HOME of the fetched Spark (scripts/fetch-spark.sh creates it).
SPARKMERGE_SPARK_HOME="$SPARKMERGE_CACHE/pyspark-${SPARK_VERSION}/deps"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# as_root CMD...: runs CMD as root (directly when already root, else via sudo).
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# apt_install PKG...: installs the packages that are not installed yet.
_sparkmerge_apt_updated=
apt_install() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null || die "need packages ${missing[*]} but apt-get is missing: install them by hand"
	if [ -z "$_sparkmerge_apt_updated" ]; then
		log "apt-get update"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		_sparkmerge_apt_updated=1
	fi
	log "apt-get install ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# export_s3_store: provides the integration tests' S3 object store (moto
# and Hadoop's S3A jars, scripts/fetch-s3.sh) and exports the variables
# that name it (SPARKMERGE_S3A_JARS, SPARKMERGE_MOTO_SERVER).
export_s3_store() {
	local vars
	vars=$("$SPARKMERGE_REPO/scripts/fetch-s3.sh") || return 1
	eval "$(printf '%s\n' "$vars" | sed 's/^/export /')"
}

# port_open PORT [HOST]: true when HOST:PORT accepts a TCP connection.
port_open() {
	(exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# wait_for TIMEOUT_SECONDS WHAT CMD...: polls CMD once a second until it
# succeeds; fails after the timeout.
wait_for() {
	local timeout=$1 what=$2 start=$SECONDS
	shift 2
	until "$@"; do
		if [ $((SECONDS - start)) -ge "$timeout" ]; then
			log "timed out after ${timeout}s waiting for $what"
			return 1
		fi
		sleep 1
	done
}

# wait_for_port PORT TIMEOUT_SECONDS [HOST]
wait_for_port() {
	wait_for "$2" "${3:-127.0.0.1}:$1 to accept connections" port_open "$1" "${3:-127.0.0.1}"
}

# step NAME CMD...: runs CMD and prints how long it took (for cold/warm timings).
step() {
	local name=$1 start=$SECONDS rc=0
	shift
	log "step $name: start"
	"$@" || rc=$?
	log "step $name: $( [ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)" ) in $((SECONDS - start))s"
	return $rc
}

# build_sparkmerge OUT: builds the CLI to OUT with its version and source
# revision stamped (-ldflags -X): the Go toolchain stamps VCS data only when
# -buildvcs is on, and this machine's GOFLAGS may turn it off.
build_sparkmerge() {
	local out=$1 rev ver
	rev=$(git -C "$SPARKMERGE_REPO" rev-parse HEAD 2>/dev/null || echo unknown)
	ver=$(git -C "$SPARKMERGE_REPO" describe --tags --always 2>/dev/null || echo dev)
	if [ "$rev" != unknown ] && [ -n "$(git -C "$SPARKMERGE_REPO" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		rev="$rev-dirty"
	fi
	(cd "$SPARKMERGE_REPO" && go build -ldflags "-X main.version=$ver -X main.revision=$rev" -o "$out" ./cmd/sparkmerge)
}
