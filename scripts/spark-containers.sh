#!/usr/bin/env bash
# spark-containers.sh list|clean
#
# Lists, or removes, the Spark Connect containers that sparkmerge started
# through testcontainers-go (label io.sparkmerge.role=spark-connect). Tests
# and the CLI stop their containers themselves; this is for leftovers of a
# run that was killed hard (the testcontainers reaper is disabled here).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

filter=label=io.sparkmerge.role=spark-connect
case ${1:-list} in
list)
	docker ps -a --filter "$filter" --format 'table {{.ID}}\t{{.Image}}\t{{.Status}}\t{{.CreatedAt}}'
	;;
clean)
	ids=$(docker ps -aq --filter "$filter")
	if [ -z "$ids" ]; then
		log "no sparkmerge Spark containers"
		exit 0
	fi
	log "removing $(echo "$ids" | wc -l) sparkmerge Spark container(s)"
	# shellcheck disable=SC2086
	docker rm -f $ids >/dev/null
	;;
*)
	echo "usage: $0 list|clean" >&2
	exit 2
	;;
esac
