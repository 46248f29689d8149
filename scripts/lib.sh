# shellcheck shell=bash
# Shared settings and helpers for the sparkmerge scripts. Source it:
#   . "$(dirname "$0")/lib.sh"
# Everything heavy is cached under $SPARKMERGE_CACHE (default: <repo>/.cache,
# git-ignored) so a second run is fast.

SPARKMERGE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# log and die come first: resolving SPARK_VERSION below may die.
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The Spark versions the project runs, each pinned by checksum
# (docs/testing.md, "Spark versions"). pyspark's sdist from PyPI carries
# every Spark jar and bin/spark-submit; from 4.0 on its jars include the
# Connect server (spark-connect_2.13), while 3.5's do not: its server jar
# (spark-connect_2.12, shaded with its gRPC) comes from Maven Central. The
# newest 3.5 whose server jar Maven Central serves here is 3.5.7 (3.5.8 and
# 3.5.9 answer 404). Hadoop is the version in the sdist's jars, which
# chooses the S3A connector scripts/fetch-s3.sh provides.
#
#   version  pyspark sdist sha256                                              Connect jar sha256 ("-": in the sdist)                           Hadoop
SPARKMERGE_SPARK_PINS='
3.5.7 80e36514e0c5c126d35a26adf4f405cd4a69de96a8ea8a3c1e9a65fce2fb4eaa 15366e21273a874c760b51fa00743a2acb8fa78642cc35d7a076a3ade0c5eef6 3.3.4
4.0.1 9d1f22d994f60369228397e3479003ffe2dd736ba79165003246ff7bd48e2c73 - 3.4.1
4.0.5 a0d44b0e7faf0458ad83b7aa664e7ed8b96beed8a55d66ce3b0dfac2309dfca6 - 3.4.1
4.1.4 bcbd5e18690cf79d438e97210ad06fb8d451a251bb77becc2b0418868d2acd73 - 3.4.2
4.2.1 d79b7c8ee41e66a9202fe6f600ca90b931ca571ae9dbdf31c58d2672e5102da0 - 3.5.0
4.3.0 e8c517948eff7088a7aa07449aa8eafa4a15a8d50319de2525a6fd26622476c6 - 3.5.0
'
# The main version: the one the whole suite and `make image` use unless
# SPARK_VERSION names another (docs/testing.md says why this one).
SPARKMERGE_MAIN_SPARK_VERSION=4.0.1

# spark_versions: the pinned versions, one a line, oldest first.
spark_versions() { awk 'NF { print $1 }' <<<"$SPARKMERGE_SPARK_PINS"; }

# resolve_spark_version V: V itself when pinned; for a major.minor ("3.5")
# the newest pinned patch of it. Fails for a version not in the table.
resolve_spark_version() {
	local v=$1 found
	found=$(spark_versions | awk -v v="$v" '$1 == v || index($1, v ".") == 1 { f = $1 } END { print f }')
	[ -n "$found" ] || die "Spark $v is not one the project pins (scripts/lib.sh SPARKMERGE_SPARK_PINS has: $(spark_versions | tr '\n' ' '))"
	echo "$found"
}

SPARK_VERSION=$(resolve_spark_version "${SPARK_VERSION:-$SPARKMERGE_MAIN_SPARK_VERSION}") || return 1
read -r _ PYSPARK_SHA256 SPARK_CONNECT_JAR_SHA256 SPARK_HADOOP_VERSION < <(awk -v v="$SPARK_VERSION" '$1 == v' <<<"$SPARKMERGE_SPARK_PINS")
# Spark 3.x is built for Scala 2.12, 4.x for 2.13.
case $SPARK_VERSION in 3.*) SPARK_SCALA_VERSION=2.12 ;; *) SPARK_SCALA_VERSION=2.13 ;; esac
SPARK_CONNECT_JAR="spark-connect_${SPARK_SCALA_VERSION}-${SPARK_VERSION}.jar"
export SPARK_VERSION

SPARKMERGE_CACHE=${SPARKMERGE_CACHE:-$SPARKMERGE_REPO/.cache}

# The table formats each Spark line gets (docs/testing.md, "Table
# formats"): Delta Lake (delta-spark, with the delta-storage it needs; its
# antlr4-runtime is among Spark's own jars: 4.9.3 for Delta 3.3 on 3.5,
# 4.13.1 on 4.x) and Apache Iceberg's Spark runtime (one shaded jar),
# from Maven Central, each pinned by sha256 (Maven Central's .sha1 of
# each agreed). Delta 3.3 is built for Spark 3.5, 4.0.x for Spark 4.0,
# and Iceberg's runtime-3.5, -4.0 and -4.1 for theirs. Spark 4.1 gets
# Delta's artifact for it, delta-spark_4.1_2.13 4.3.1 (4.1.0 and 4.2.0
# call a class Spark 4.1 no longer has), with the Delta Kernel jars it
# needs and the one Kernel dependency Spark lacks, jackson-datatype-jdk8
# at Spark 4.1.4's Jackson version. Spark 4.2 gets delta-spark_4.2_2.13
# 4.4.0 and the same kind of companions (4.4.0's, with
# delta-kernel-unitycatalog, which delta-spark 4.4.0 names too) but no
# Iceberg: no runtime is built for 4.2. A line without rows here (4.3: no
# Delta or Iceberg release is built for it) gets neither, and its server
# no table format settings (scripts/start-connect.sh,
# sparkmerge/localspark).
#
#   line format  version  Maven Central path                                                                      sha256
SPARKMERGE_TABLE_FORMAT_PINS='
4.0 delta   4.0.1  io/delta/delta-spark_2.13/4.0.1/delta-spark_2.13-4.0.1.jar                                    a1e76860b19fe1e6b205a4ea7a9099a2f9575d39bb71d49b3e679b299d0efb91
4.0 delta   4.0.1  io/delta/delta-storage/4.0.1/delta-storage-4.0.1.jar                                          ecc42c5aaa51c423312d9e4e48aa4a12b34740bf2c37de0e8f279277ec3d12e4
4.0 iceberg 1.10.1 org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/1.10.1/iceberg-spark-runtime-4.0_2.13-1.10.1.jar 2192a0881ed0f5773b5a83a8820d2b0b2069beec203028643a1c338551007f09
3.5 delta   3.3.3  io/delta/delta-spark_2.12/3.3.3/delta-spark_2.12-3.3.3.jar                                    4912bf902a1c453aba3bd838ff212dedd357155212f9bb37a6b47d97f2827ebc
3.5 delta   3.3.3  io/delta/delta-storage/3.3.3/delta-storage-3.3.3.jar                                          45ad193053fd30cebe6d9ab1889873cde39b223a0f210e00ebee8b6642476901
3.5 iceberg 1.10.1 org/apache/iceberg/iceberg-spark-runtime-3.5_2.12/1.10.1/iceberg-spark-runtime-3.5_2.12-1.10.1.jar 39ea09e6c03550a300b9d9ab498949836d2d434e441da4c12a943a086e396940
4.1 delta   4.3.1  io/delta/delta-spark_4.1_2.13/4.3.1/delta-spark_4.1_2.13-4.3.1.jar                            ebf35a4383f0a653c3ee3c7882c0edcac2f846be31ac61af4b96ccfaaf36c171
4.1 delta   4.3.1  io/delta/delta-storage/4.3.1/delta-storage-4.3.1.jar                                          577c12c7e371be4c041714fb48e88ad86e3c3512beea2bdaffbe7a4debf79718
4.1 delta   4.3.1  io/delta/delta-kernel-api/4.3.1/delta-kernel-api-4.3.1.jar                                    b081b818d6f5686c7d6406588af72c9f8baf6765a41ada8197364aef90a260e8
4.1 delta   4.3.1  io/delta/delta-kernel-defaults/4.3.1/delta-kernel-defaults-4.3.1.jar                          27471cca7dd7a36289af2c8d52d2babb37e9e5a13cdaaea76730120f4c72e62f
4.1 delta   4.3.1  com/fasterxml/jackson/datatype/jackson-datatype-jdk8/2.21.2/jackson-datatype-jdk8-2.21.2.jar  e581bbf3fc5622d16b57366dd41e10fc56921fb202879de2ef487f87dd9b30e7
4.1 iceberg 1.11.0 org/apache/iceberg/iceberg-spark-runtime-4.1_2.13/1.11.0/iceberg-spark-runtime-4.1_2.13-1.11.0.jar d6ea6c5d099288daeb7d5a92061bd3d7d8f296492632b42378e5f2f0e3066242
4.2 delta   4.4.0  io/delta/delta-spark_4.2_2.13/4.4.0/delta-spark_4.2_2.13-4.4.0.jar                            27d4fd8b1f879535c573ed1c718177d6a27f24d3e626ba02e216369725721ead
4.2 delta   4.4.0  io/delta/delta-storage/4.4.0/delta-storage-4.4.0.jar                                          c46735481fa8e326b0957be02b4420cbcab4b325bb08009b7f2045a95133f1cc
4.2 delta   4.4.0  io/delta/delta-kernel-api/4.4.0/delta-kernel-api-4.4.0.jar                                    ee9b5a14ac3b7efdff4d61a58478fe8eb0e5a3fbca43889dca7290795fe79a11
4.2 delta   4.4.0  io/delta/delta-kernel-defaults/4.4.0/delta-kernel-defaults-4.4.0.jar                          225c975199e4718b38ee5b7e6da7f19e9585024262b2cec2656b32151a856b0b
4.2 delta   4.4.0  io/delta/delta-kernel-unitycatalog/4.4.0/delta-kernel-unitycatalog-4.4.0.jar                  cea22dfb4ac562b3cd27bf652697750e8336009d73fb06631363aaaad5345ffa
4.2 delta   4.4.0  com/fasterxml/jackson/datatype/jackson-datatype-jdk8/2.21.2/jackson-datatype-jdk8-2.21.2.jar  e581bbf3fc5622d16b57366dd41e10fc56921fb202879de2ef487f87dd9b30e7
'
# table_format_pins: the rows of SPARKMERGE_TABLE_FORMAT_PINS for
# $SPARK_VERSION's line (none for a line without table formats).
table_format_pins() { awk -v line="${SPARK_VERSION%.*}" '$1 == line { print $2, $3, $4, $5 }' <<<"$SPARKMERGE_TABLE_FORMAT_PINS"; }
# SPARKMERGE_TABLE_FORMATS: "delta=4.0.1,iceberg=1.10.1" for
# $SPARK_VERSION, or "" (the image's label io.sparkmerge.table-formats).
SPARKMERGE_TABLE_FORMATS=$(table_format_pins | awk '!seen[$1]++ { printf "%s%s=%s", sep, $1, $2; sep = "," }')
SPARKMERGE_DEFAULT_IMAGE="sparkmerge/spark-connect:${SPARK_VERSION}"
SPARKMERGE_SPARK_IMAGE=${SPARKMERGE_SPARK_IMAGE:-$SPARKMERGE_DEFAULT_IMAGE}
SPARK_CONNECT_CLASS=org.apache.spark.sql.connect.service.SparkConnectServer

# SPARK_HOME of the fetched Spark (scripts/fetch-spark.sh creates it).
SPARKMERGE_SPARK_HOME="$SPARKMERGE_CACHE/pyspark-${SPARK_VERSION}/deps"


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

# scaled_budget BUDGET BEFORE AFTER prints BUDGET (seconds) grown on a
# machine slower than the one it was set on: BEFORE and AFTER are the
# seconds scripts/cpuprobe took around the timed step, probe_reference
# what it took there (the median of quiet probes on the 2-core machine of
# the 560-585 s integration runs, 2026-12-07). The same code's
# integration step took 585-686 s there and 970 s in a CI run; two
# identical runs of the same tests a minute apart used 283 and 360
# CPU-seconds: a virtual machine's host, busy, slows every core by up to
# a half. So a slower machine makes a step slower, not red: the budget
# grows with the slower probe's ratio to the reference, by at most
# probe_most, and never shrinks; a slower suite on a machine of the
# reference's speed still fails (docs/testing.md#time).
probe_reference=0.65 probe_most=1.5
scaled_budget() {
	awk -v budget="$1" -v a="$2" -v b="$3" -v r="$probe_reference" -v m="$probe_most" 'BEGIN {
		s = (a > b ? a : b) / r
		if (s < 1) s = 1
		if (s > m) s = m
		printf "%d\n", budget * s
	}'
}
