#!/usr/bin/env bash
# spark-local.sh start|stop|status [--port N]
#
# Runs the same Spark Connect server as the image, as a plain host process
# (no Docker): local[2], bound to 127.0.0.1:PORT (default 15002), UI off,
# with Delta Lake and Iceberg where the Spark line has them (tables of the
# catalog iceberg under .cache/spark-local/iceberg-warehouse).
# Needs Java 17 (installed with apt when missing). Pidfile and log live in
# .cache/spark-local/. "stop" stops only a server this script started.
#
# Environment: SPARK_DRIVER_MEMORY (default 1g), SPARK_CONNECT_PORT (default
# 15002, --port wins), SPARKMERGE_SPARK_TIMEOUT (readiness timeout, default 180s).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { echo "usage: $0 start|stop|status [--port N]" >&2; exit 2; }

[ $# -ge 1 ] || usage
action=$1
shift
port=${SPARK_CONNECT_PORT:-15002}
while [ $# -gt 0 ]; do
	case $1 in
	--port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
	--port=*) port=${1#--port=}; shift ;;
	*) usage ;;
	esac
done
[[ $port =~ ^[0-9]+$ ]] || die "--port $port: not a number"

state="$SPARKMERGE_CACHE/spark-local"
pidfile="$state/spark-$port.pid"
logfile="$state/spark-$port.log"
timeout=${SPARKMERGE_SPARK_TIMEOUT:-180}

# ours: true when the pidfile names a live Spark Connect server.
ours() {
	[ -f "$pidfile" ] || return 1
	local pid
	pid=$(cat "$pidfile")
	kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$SPARK_CONNECT_CLASS"
}

ready() { grep -q "Spark Connect server started at: 127.0.0.1:$port" "$logfile" 2>/dev/null && port_open "$port"; }

print_remote() { echo "export SPARK_REMOTE=sc://127.0.0.1:$port"; }

# java17: sets JAVA_HOME to a Java >= 17, installing openjdk-17 if needed.
java17() {
	local v
	if command -v java >/dev/null; then
		v=$(java -version 2>&1 | awk -F'"' '/version/ { split($2, a, "."); print a[1]; exit }')
		if [ "${v:-0}" -ge 17 ] 2>/dev/null; then return 0; fi
	fi
	apt_install openjdk-17-jre-headless
	export JAVA_HOME="/usr/lib/jvm/java-17-openjdk-$(dpkg --print-architecture)"
	[ -x "$JAVA_HOME/bin/java" ] || die "no java in $JAVA_HOME after installing openjdk-17-jre-headless"
}

start() {
	if ours; then
		log "Spark Connect already running (pid $(cat "$pidfile"), log $logfile)"
		print_remote
		return 0
	fi
	rm -f "$pidfile"
	if port_open "$port"; then
		die "127.0.0.1:$port is in use by a process this script did not start: choose another --port"
	fi
	local spark_home formats
	spark_home=$("$SPARKMERGE_REPO/scripts/fetch-spark.sh")
	# Delta Lake and Iceberg, where this Spark line has them: their jars
	# go to the server with --jars, leaving the fetched Spark as it is.
	formats=$("$SPARKMERGE_REPO/scripts/fetch-table-formats.sh")
	java17
	mkdir -p "$state"
	: >"$logfile"
	log "starting Spark Connect $SPARK_VERSION on 127.0.0.1:$port (log: $logfile)"
	# The same server as the image runs: one definition of its settings.
	# It runs in $state, where Spark keeps its warehouse (spark-warehouse/,
	# relative to the working directory), not in the caller's checkout.
	(cd "$state" && SPARK_HOME="$spark_home" SPARK_CONNECT_PORT="$port" SPARKMERGE_TABLE_FORMAT_JARS="$formats" exec setsid "$SPARKMERGE_REPO/scripts/start-connect.sh") \
		>>"$logfile" 2>&1 </dev/null &
	echo $! >"$pidfile"
	local began=$SECONDS
	alive_or_ready() {
		ready && return 0
		kill -0 "$(cat "$pidfile")" 2>/dev/null || { tail -n 30 "$logfile" >&2; die "Spark exited during start: see $logfile"; }
		return 1
	}
	if ! wait_for "$timeout" "Spark Connect on 127.0.0.1:$port" alive_or_ready; then
		tail -n 30 "$logfile" >&2
		stop
		die "Spark Connect did not become ready in ${timeout}s: see $logfile"
	fi
	log "Spark Connect ready on 127.0.0.1:$port after $((SECONDS - began))s (pid $(cat "$pidfile"))"
	print_remote
}

stop() {
	if ! ours; then
		rm -f "$pidfile"
		log "no Spark Connect started by this script on port $port"
		return 0
	fi
	local pid
	pid=$(cat "$pidfile")
	log "stopping Spark Connect (pid $pid, port $port)"
	kill "$pid"
	if ! wait_for 30 "pid $pid to exit" eval "! kill -0 $pid 2>/dev/null"; then
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
}

status() {
	if ours; then
		if ready; then
			log "Spark Connect running on 127.0.0.1:$port (pid $(cat "$pidfile"))"
			print_remote
			return 0
		fi
		log "Spark Connect starting on 127.0.0.1:$port (pid $(cat "$pidfile")), not ready yet"
		return 1
	fi
	log "no Spark Connect started by this script on port $port"
	return 3
}

case $action in
start) start ;;
stop) stop ;;
status) status ;;
*) usage ;;
esac
