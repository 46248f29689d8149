# Set-up is part of every target: each installs and starts what is missing
# (Docker engine, Spark, the local image) and caches downloads under .cache/.

PORT ?= 15002

.PHONY: build lint test test-matrix demo unit fuzz differential image spark-up spark-down spark-status clean-containers

## build: the CLI to bin/sparkmerge, its version and revision stamped
build:
	bash -c '. scripts/lib.sh && build_sparkmerge bin/sparkmerge'

## lint: gofmt, go vet, staticcheck, gocyclo (sparkmerge/spark and cmd under 25) and deadcode, the tools pinned and installed into .cache/tools on first use
lint:
	scripts/lint.sh

## test: lint, unit tests, integration tests against one shared Spark in a container, then the version matrix on Spark 3.5, 4.1 and 4.3
test:
	scripts/test.sh

## test-matrix: the version matrix's subset of the integration suite on SPARK_VERSION (e.g. 3.5), or on each supported version
test-matrix:
	scripts/test-matrix.sh

## demo: merge the bundled example data on Spark in a container
demo:
	scripts/demo.sh

## unit: hermetic unit tests only (no Spark, no Docker)
unit:
	go test ./...

## fuzz: every fuzz target for FUZZTIME each (default 250000x, i.e. inputs; `make test` runs only their seeds)
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## differential: the long differential run (N=30 corpora per shape; N=... to change, FIRST=... for seeds past earlier runs)
differential:
	scripts/differential.sh $(or $(N),30) $(or $(FIRST),0)

## image: start the Docker engine if needed and build the local Spark Connect image (of SPARK_VERSION, default the main version)
image:
	scripts/docker-engine.sh
	scripts/build-image.sh

## spark-up / spark-down / spark-status: Spark Connect as a host process on PORT
spark-up:
	scripts/spark-local.sh start --port $(PORT)

spark-down:
	scripts/spark-local.sh stop --port $(PORT)

spark-status:
	scripts/spark-local.sh status --port $(PORT)

## clean-containers: remove Spark containers left by a hard-killed test run
clean-containers:
	scripts/spark-containers.sh clean
