// Package localspark starts a Spark Connect server in a container for tests
// and demos, through testcontainers-go.
//
// # The image
//
// [DefaultImage] is the project's own image of [MainSparkVersion], built
// without any registry by scripts/build-image.sh (a debootstrapped Debian
// with Java 17 and the pinned Spark under /opt/spark); [ImageFor] names the
// build of another pinned version (SPARK_VERSION=3.5.7 make image). They
// cannot be pulled: when one is missing, [Start] fails with an
// [*ImageNotFoundError] that says how to build it. Any image with Spark 3.5
// or later and its Connect server under /opt/spark works the same, e.g.
// the official apache/spark:4.0.1, because [Start] passes the full
// spark-submit command line instead of relying on the image's entrypoint.
//
// # Networking and files
//
// The container uses host networking: the server binds 127.0.0.1 on the
// chosen port, so [Server.Remote] is an ordinary sc://127.0.0.1:PORT address
// and no bridge network is involved. Host directories listed in
// [Options.Mounts] are bind-mounted at the same absolute path, so a path
// means the same thing to the test and to Spark.
//
// # The server's log
//
// [Start] puts a log4j2 configuration in the container and points the
// server's JVM at it (spark.driver.defaultJavaOptions, beside the class
// archive; a caller's own value of that setting replaces both): warnings
// and errors, with their stack traces, and [ReadyLogLine], which Start
// waits for, instead of Spark's INFO lines for every job, stage, task
// and file read. A standalone cluster's master and worker keep Spark's
// default. Spark's spark.log.level setting ([Options.Conf], "INFO") gives
// the server's other loggers Spark's level back once it has started.
//
// # Ryuk
//
// testcontainers-go normally starts its "ryuk" reaper container, whose image
// would have to be pulled. Callers must set TESTCONTAINERS_RYUK_DISABLED=true
// in the environment (this package never reads the environment) and stop the
// server themselves: [Server.Stop], or testcontainers.CleanupContainer with
// [Server.Container] in tests.
//
// # Example
//
//	srv, err := localspark.Start(ctx, localspark.Options{Mounts: []string{dir}})
//	if err != nil {
//		return err
//	}
//	defer srv.Stop(context.Background())
//	session, err := sql.NewSessionBuilder().Remote(srv.Remote()).Build(ctx)
package localspark
