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
# Table formats: where the Delta Lake and Iceberg jars are (in Spark's own
# jars/, as the image has them, or in SPARKMERGE_TABLE_FORMAT_JARS, added
# with --jars, as scripts/spark-local.sh passes them), the server gets
# their settings: Delta's catalog as spark_catalog, both formats' SQL
# extensions, and an Iceberg catalog named iceberg (a Hadoop catalog
# under SPARKMERGE_ICEBERG_WAREHOUSE, default ./iceberg-warehouse beside
# Spark's own ./spark-warehouse). sparkmerge/localspark gives the same.
#
# Environment: SPARK_HOME (default /opt/spark), SPARK_MASTER (local[2]),
# SPARK_DRIVER_MEMORY (1g), SPARK_CONNECT_PORT (15002),
# SPARKMERGE_TABLE_FORMAT_JARS, SPARKMERGE_ICEBERG_WAREHOUSE.
set -euo pipefail
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	exec "$@"
fi
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
spark_home=${SPARK_HOME:-/opt/spark}

formats=()
jars_dir=${SPARKMERGE_TABLE_FORMAT_JARS:-$spark_home/jars}
if [ -n "${SPARKMERGE_TABLE_FORMAT_JARS:-}" ]; then
	jars=$(find "$jars_dir" -maxdepth 1 -name '*.jar' | sort | paste -sd, -)
	[ -z "$jars" ] || formats+=(--jars "$jars")
fi
extensions=()
if compgen -G "$jars_dir/delta-spark_*.jar" >/dev/null; then
	extensions+=(io.delta.sql.DeltaSparkSessionExtension)
	formats+=(--conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog)
fi
if compgen -G "$jars_dir/iceberg-spark-runtime-*.jar" >/dev/null; then
	extensions+=(org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions)
	warehouse=${SPARKMERGE_ICEBERG_WAREHOUSE:-$PWD/iceberg-warehouse}
	formats+=(
		--conf spark.sql.catalog.iceberg=org.apache.iceberg.spark.SparkCatalog
		--conf spark.sql.catalog.iceberg.type=hadoop
		--conf "spark.sql.catalog.iceberg.warehouse=$warehouse"
	)
fi
# The class archive of the server's start that scripts/build-image.sh adds
# to the image (AppCDS): mapped instead of loading those classes again.
archive=${SPARKMERGE_CLASS_ARCHIVE:-/opt/sparkmerge/spark-connect.jsa}
if [ -f "$archive" ]; then
	formats+=(--conf "spark.driver.defaultJavaOptions=-XX:SharedArchiveFile=$archive")
fi
if [ ${#extensions[@]} -gt 0 ]; then
	formats+=(--conf "spark.sql.extensions=$(IFS=,; echo "${extensions[*]}")")
fi
exec "$spark_home/bin/spark-submit" \
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
	${formats[@]+"${formats[@]}"} \
	"$@" \
	spark-internal
