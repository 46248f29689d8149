#!/bin/bash
# start-connect.sh: runs the Spark Connect server in the foreground with the
# project's settings for a small machine. It is the local image's entrypoint
# (/opt/sparkmerge/start-connect.sh) and what scripts/spark-local.sh runs on
# the host, so both serve the same Spark. (sparkmerge/localspark passes the
# same settings as a full command line, so that apache/spark works too.)
#
# Without arguments, or with only options such as "--conf k=v", it starts
# the server; with a command (the Go harness passes a full spark-submit
# line) it execs that command.
# Environment: SPARK_HOME (default /opt/spark), SPARK_MASTER (local[2]),
# SPARK_DRIVER_MEMORY (1g), SPARK_CONNECT_PORT (15002).
set -euo pipefail
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	exec "$@"
fi
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
exec "${SPARK_HOME:-/opt/spark}/bin/spark-submit" \
	--class org.apache.spark.sql.connect.service.SparkConnectServer \
	--master "${SPARK_MASTER:-local[2]}" \
	--driver-memory "${SPARK_DRIVER_MEMORY:-1g}" \
	--conf spark.connect.grpc.binding.address=127.0.0.1 \
	--conf "spark.connect.grpc.binding.port=${SPARK_CONNECT_PORT:-15002}" \
	--conf spark.ui.enabled=false \
	--conf spark.sql.shuffle.partitions=4 \
	--conf spark.log.structuredLogging.enabled=false \
	--conf spark.driver.host=127.0.0.1 \
	--conf spark.driver.bindAddress=127.0.0.1 \
	"$@" \
	spark-internal
