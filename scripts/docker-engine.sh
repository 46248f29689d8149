#!/usr/bin/env bash
# docker-engine.sh: makes sure a Docker engine answers. When none does, it
# installs docker.io from Debian (if dockerd is missing) and starts dockerd in
# the background (log and pidfile under .cache/docker). Idempotent.
#
# sparkmerge only runs containers with host networking, never on a bridge.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state="$SPARKMERGE_CACHE/docker"
pidfile="$state/dockerd.pid"
logfile="$state/dockerd.log"
timeout=${SPARKMERGE_DOCKER_TIMEOUT:-60}

engine_up() { docker info >/dev/null 2>&1; }

if command -v docker >/dev/null && engine_up; then
	log "docker engine answers"
	exit 0
fi

command -v dockerd >/dev/null || apt_install docker.io
command -v docker >/dev/null || die "docker client missing after installing docker.io"

# dockerd_starting: the pidfile names a live dockerd. After a reboot the
# pidfile outlives its process, and its number may since belong to another
# (a shell, here): waiting on that would time out with nothing starting.
dockerd_starting() {
	[ -f "$pidfile" ] && [ "$(ps -p "$(cat "$pidfile")" -o comm= 2>/dev/null)" = dockerd ]
}

if dockerd_starting; then
	log "dockerd (pid $(cat "$pidfile")) is starting; waiting"
	wait_for "$timeout" "docker info" engine_up || die "dockerd runs but does not answer: see $logfile"
	exit 0
fi
# A stale pidfile makes dockerd refuse to start ("pid file found").
as_root rm -f "$pidfile"

mkdir -p "$state"
# start_dockerd FLAGS...: starts dockerd detached; true once docker info answers.
start_dockerd() {
	log "starting dockerd $* (log: $logfile)"
	# setsid: dockerd must outlive this script and the job that called it.
	as_root setsid dockerd --pidfile "$pidfile" "$@" >>"$logfile" 2>&1 </dev/null &
	if wait_for "$timeout" "docker info" engine_up; then
		return 0
	fi
	if [ -f "$pidfile" ]; then
		as_root kill "$(cat "$pidfile")" 2>/dev/null || true
		sleep 2
	fi
	return 1
}

# The defaults work on Debian 12 hosts and in this sandbox. Where iptables is
# not usable the engine still serves host-network containers without it.
# (--bridge=none is not an option: testcontainers-go then creates its own
# bridge network and attaches containers to it, which host mode forbids.)
start_dockerd ||
	start_dockerd --iptables=false --ip-masq=false ||
	{ tail -n 30 "$logfile" >&2; die "dockerd did not start: see $logfile"; }
log "docker engine answers (dockerd pid $(cat "$pidfile"))"
