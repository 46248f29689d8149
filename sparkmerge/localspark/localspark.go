package localspark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// MainSparkVersion is the Spark version the project tests most: the whole
// integration suite runs on it, and other versions run a matrix subset
// (docs/testing.md). scripts/lib.sh names the same version
// (SPARKMERGE_MAIN_SPARK_VERSION) with the checksums of every pinned one.
const MainSparkVersion = "4.0.1"

// DefaultImage is the image [Start] runs when [Options.Image] is empty: the
// project's local build of [MainSparkVersion] made by scripts/build-image.sh.
const DefaultImage = imageRepository + ":" + MainSparkVersion

// imageRepository is where scripts/build-image.sh tags its builds, one tag
// per Spark version.
const imageRepository = "sparkmerge/spark-connect"

// ImageFor is the project's local build of Spark sparkVersion, as
// scripts/build-image.sh tags it (SPARK_VERSION=3.5.7 make image builds
// "sparkmerge/spark-connect:3.5.7"); "" means [DefaultImage]. It names
// the image only: [Start] says how to build one that is missing.
func ImageFor(sparkVersion string) string {
	if sparkVersion == "" {
		return DefaultImage
	}
	return imageRepository + ":" + sparkVersion
}

// DefaultDriverMemory is the driver heap used when [Options.DriverMemory] is
// empty.
const DefaultDriverMemory = "1g"

// DefaultStartupTimeout bounds the start when [Options.StartupTimeout] is zero.
const DefaultStartupTimeout = 3 * time.Minute

// ReadyLogLine is the server log line that tells the server accepts sessions.
const ReadyLogLine = "Spark Connect server started"

// serverClass is the main class of the Spark Connect server.
const serverClass = "org.apache.spark.sql.connect.service.SparkConnectServer"

// sparkSubmit is where every supported image keeps spark-submit.
const sparkSubmit = "/opt/spark/bin/spark-submit"

// TableFormatsLabel is the image label in which scripts/build-image.sh
// lists the table formats whose jars the image carries among Spark's
// own, as "delta=4.0.1,iceberg=1.10.1" ("" or absent: none). [Start]
// configures their catalogs (see [TableFormatConf]).
const TableFormatsLabel = "io.sparkmerge.table-formats"

// ClassArchiveLabel is the image label in which scripts/build-image.sh
// names the class archive (AppCDS) it dumped from the server's start on
// that image: [Start] has the server's JVM map it instead of loading
// those classes again (-XX:SharedArchiveFile), about half the CPU of a
// start. The JVM ignores an archive that does not match its jars.
const ClassArchiveLabel = "io.sparkmerge.class-archive"

// driverJavaOptions returns conf with the driver's JVM told to read
// [logConfig] at logConfigPath and, unless archive is "", to map that class
// archive, and the archive so named: as spark.driver.defaultJavaOptions,
// which Spark puts before spark.driver.extraJavaOptions, so a caller's JVM
// options still apply. Where conf sets that option itself, conf is
// returned as it is, with no archive.
func driverJavaOptions(conf map[string]string, archive string) (map[string]string, string) {
	if _, set := conf[defaultJavaOptionsKey]; set {
		return conf, ""
	}
	out := maps.Clone(conf)
	if out == nil {
		out = map[string]string{}
	}
	opts := logConfigOption + logConfigPath
	if archive != "" {
		opts += " " + classArchiveOption + archive
	}
	out[defaultJavaOptionsKey] = opts
	return out, archive
}

const (
	defaultJavaOptionsKey = "spark.driver.defaultJavaOptions"
	classArchiveOption    = "-XX:SharedArchiveFile="
	logConfigOption       = "-Dlog4j2.configurationFile="
)

// logConfigPath is where [Start] puts [logConfig] in the container.
const logConfigPath = "/opt/sparkmerge/localspark-log4j2.properties"

// logConfig is the log4j2 configuration of the server's JVM (the driver;
// a standalone cluster's master and worker keep Spark's): warnings and
// errors, with their stack traces, every error the server returns to a
// client (Spark logs a query's that failed as it ran at INFO), and
// [ReadyLogLine], which [Start] waits for. Spark's default logs at INFO
// every job, stage, task, block and file read, with an abbreviation of
// the Spark Connect plan in each job's lines: tens of thousands of lines
// a test, which the JVM formats and the container engine carries and
// stores (docs/testing.md, "Where the time goes"). FileStreamSink's
// warning that a path has no streaming metadata directory, logged with a
// stack trace whenever a read's path does not exist (the error the read
// then fails with is logged too), is left out; its class moved in Spark
// 4.1. Spark's spark.log.level (Options.Conf) sets the root level, which
// the loggers not named here follow, once the server's SparkContext has
// started: "INFO" gives Spark's default back.
const logConfig = `# The log of a Spark Connect server started by sparkmerge/localspark.
rootLogger.level = warn
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# "Spark Connect server started at: ...": the server accepts sessions.
logger.ready.name = org.apache.spark.sql.connect.service.SparkConnectServer
logger.ready.level = info
# Every error the server returns to a client, with its stack trace: at
# ERROR a request's, at INFO a query's that failed as it ran.
logger.errors.name = org.apache.spark.sql.connect.utils.ErrorUtils
logger.errors.level = info
# "Assume no metadata directory": a path read that does not exist.
logger.metadata.name = org.apache.spark.sql.execution.streaming.FileStreamSink
logger.metadata.level = error
logger.metadata41.name = org.apache.spark.sql.execution.streaming.sinks.FileStreamSink
logger.metadata41.level = error
# As Spark's own defaults.
logger.jetty.name = org.sparkproject.jetty.util.component.AbstractLifeCycle
logger.jetty.level = error
logger.parquet.name = org.apache.parquet.CorruptStatistics
logger.parquet.level = error
logger.parquet2.name = parquet.CorruptStatistics
logger.parquet2.level = error
`

// IcebergCatalog is the name of the Iceberg catalog [Start] configures on
// an image that carries Iceberg: a Hadoop catalog, whose tables are
// iceberg.db.table.
const IcebergCatalog = "iceberg"

// DefaultIcebergWarehouse is the Iceberg catalog's warehouse directory
// inside the container when [Options.IcebergWarehouse] is empty: beside
// Spark's own spark-warehouse in the image's working directory.
const DefaultIcebergWarehouse = "/opt/spark/iceberg-warehouse"

// RoleLabel is the container label (with value "spark-connect") that marks
// containers started by [Start], so scripts can find leftovers.
const RoleLabel = "io.sparkmerge.role"

// Options configures [Start]. The zero value starts [DefaultImage] on a free
// loopback port with [DefaultDriverMemory].
type Options struct {
	// Image is the container image; empty means DefaultImage.
	Image string
	// Port is the Spark Connect port on 127.0.0.1; 0 picks a free one.
	Port int
	// Mounts are absolute host directories bind-mounted read-write at the
	// same path inside the container.
	Mounts []string
	// Volumes are host directories bind-mounted read-write at another
	// path inside the container (host path -> container path): files that
	// only Spark sees, as on cluster storage.
	Volumes map[string]string
	// Standalone runs a Spark standalone cluster in the container: a
	// master and a worker JVM, with the Connect server's driver submitting
	// to the master, so that executors run in processes of their own (the
	// worker's), apart from the driver, as on a real cluster.
	Standalone bool
	// DriverMemory is the driver heap (spark-submit --driver-memory); empty
	// means DefaultDriverMemory.
	DriverMemory string
	// Conf holds extra Spark settings passed as --conf key=value; they
	// win over the table formats' settings too.
	Conf map[string]string
	// IcebergWarehouse is the directory, as the container sees it, that
	// holds the tables of the Iceberg catalog when the image carries
	// Iceberg; empty means DefaultIcebergWarehouse. A directory mounted
	// from the host (see Volumes) lets a test see the tables' files.
	IcebergWarehouse string
	// StartupTimeout bounds image checks, container start and readiness;
	// zero means DefaultStartupTimeout.
	StartupTimeout time.Duration
	// Log, when set, receives the container's log output (stdout and
	// stderr), written from another goroutine until the server stops.
	Log io.Writer
}

// ImageNotFoundError reports that the image is not present in the Docker
// engine and Start will not pull it.
type ImageNotFoundError struct {
	Image string
}

// Error says which image is missing and how to get it.
func (e *ImageNotFoundError) Error() string {
	build := "scripts/build-image.sh"
	if v, ok := strings.CutPrefix(e.Image, imageRepository+":"); ok && v != MainSparkVersion {
		build = "SPARK_VERSION=" + v + " scripts/build-image.sh (a version scripts/lib.sh pins)"
	}
	return fmt.Sprintf("image %q is not in the docker engine: build it with %s "+
		"(or set another image, e.g. apache/spark:%s, and docker pull it)", e.Image, build, MainSparkVersion)
}

// Server is a running Spark Connect container.
type Server struct {
	ctr     testcontainers.Container
	port    int
	image   string
	archive string
}

// Remote returns the Spark Connect address, "sc://127.0.0.1:PORT".
func (s *Server) Remote() string {
	return "sc://127.0.0.1:" + strconv.Itoa(s.port)
}

// Port returns the Spark Connect port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// Image returns the image the server runs.
func (s *Server) Image() string { return s.image }

// ClassArchive returns the path in the container of the class archive the
// server's JVM was told to map ([ClassArchiveLabel]), or "" for none.
func (s *Server) ClassArchive() string { return s.archive }

// ParseTableFormats reads a [TableFormatsLabel] value,
// "delta=4.0.1,iceberg=1.10.1", into the formats and their versions.
// Entries without "=" name a format of unknown version ("").
func ParseTableFormats(label string) map[string]string {
	formats := map[string]string{}
	for _, entry := range strings.Split(label, ",") {
		name, version, _ := strings.Cut(strings.TrimSpace(entry), "=")
		if name != "" {
			formats[strings.ToLower(name)] = version
		}
	}
	return formats
}

// TableFormatConf is the server's settings for the table formats it
// carries (see [ParseTableFormats]), as scripts/start-connect.sh gives
// them: Delta Lake's catalog as spark_catalog (so that its tables live
// beside Spark's own, as on Databricks) and its SQL extension; Iceberg's
// SQL extension and an Iceberg catalog named [IcebergCatalog], a Hadoop
// catalog under warehouse. Both extensions are one setting, in that order.
func TableFormatConf(formats map[string]string, warehouse string) map[string]string {
	conf := map[string]string{}
	var extensions []string
	if _, ok := formats["delta"]; ok {
		extensions = append(extensions, "io.delta.sql.DeltaSparkSessionExtension")
		conf["spark.sql.catalog.spark_catalog"] = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
	}
	if _, ok := formats["iceberg"]; ok {
		extensions = append(extensions, "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
		prefix := "spark.sql.catalog." + IcebergCatalog
		conf[prefix] = "org.apache.iceberg.spark.SparkCatalog"
		conf[prefix+".type"] = "hadoop"
		conf[prefix+".warehouse"] = warehouse
	}
	if len(extensions) > 0 {
		conf["spark.sql.extensions"] = strings.Join(extensions, ",")
	}
	return conf
}

// Container returns the underlying container, e.g. for
// testcontainers.CleanupContainer.
func (s *Server) Container() testcontainers.Container { return s.ctr }

// LogTail returns the last n lines of the server's log, also once it has
// exited (until it is stopped): why it exited, say.
func (s *Server) LogTail(n int) string { return logTail(s.ctr, n) }

// Stop stops and removes the container. It is safe to call more than once.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil || s.ctr == nil {
		return nil
	}
	if err := testcontainers.TerminateContainer(s.ctr, testcontainers.StopContext(ctx)); err != nil {
		return fmt.Errorf("stop spark connect container: %w", err)
	}
	return nil
}

// withDefaults returns opts with the zero fields filled and checks the rest.
// It does not pick the port.
func withDefaults(opts Options) (Options, error) {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	if opts.DriverMemory == "" {
		opts.DriverMemory = DefaultDriverMemory
	}
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = DefaultStartupTimeout
	}
	if opts.IcebergWarehouse == "" {
		opts.IcebergWarehouse = DefaultIcebergWarehouse
	} else if !filepath.IsAbs(opts.IcebergWarehouse) {
		return opts, fmt.Errorf("iceberg warehouse %q: not an absolute path in the container", opts.IcebergWarehouse)
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return opts, fmt.Errorf("spark connect port %d: out of range 0-65535", opts.Port)
	}
	mounts := make([]string, 0, len(opts.Mounts))
	for _, m := range opts.Mounts {
		if !filepath.IsAbs(m) {
			return opts, fmt.Errorf("mount %q: not an absolute path (it is mounted at the same path in the container)", m)
		}
		if strings.Contains(m, ":") {
			return opts, fmt.Errorf("mount %q: paths with ':' cannot be bind-mounted", m)
		}
		mounts = append(mounts, filepath.Clean(m))
	}
	opts.Mounts = mounts
	for host, inside := range opts.Volumes {
		if !filepath.IsAbs(host) || !filepath.IsAbs(inside) {
			return opts, fmt.Errorf("volume %q -> %q: both paths must be absolute", host, inside)
		}
		if strings.Contains(host, ":") || strings.Contains(inside, ":") {
			return opts, fmt.Errorf("volume %q -> %q: paths with ':' cannot be bind-mounted", host, inside)
		}
	}
	return opts, nil
}

// command is the container command: spark-submit running the Spark Connect
// server in the foreground, bound to 127.0.0.1:port, with the settings of
// the table formats the image carries.
func command(opts Options, port int, formats map[string]string) []string {
	cmd := []string{
		sparkSubmit,
		"--class", serverClass,
		"--master", "local[2]",
		"--driver-memory", opts.DriverMemory,
	}
	conf := map[string]string{
		"spark.connect.grpc.binding.address":  "127.0.0.1",
		"spark.connect.grpc.binding.port":     strconv.Itoa(port),
		"spark.ui.enabled":                    "false",
		"spark.sql.shuffle.partitions":        "4",
		"spark.log.structuredLogging.enabled": "false",
		"spark.driver.host":                   "127.0.0.1",
		"spark.driver.bindAddress":            "127.0.0.1",
	}
	maps.Copy(conf, TableFormatConf(formats, opts.IcebergWarehouse))
	maps.Copy(conf, opts.Conf)
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		cmd = append(cmd, "--conf", k+"="+conf[k])
	}
	return append(cmd, "spark-internal")
}

// binds maps each mount to the same path inside the container.
func binds(mounts []string) []string {
	b := make([]string, len(mounts))
	for i, m := range mounts {
		b[i] = m + ":" + m
	}
	return b
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portInUse reports whether something accepts connections on 127.0.0.1:port.
func portInUse(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Start starts a Spark Connect server container with host networking and
// waits until it logs [ReadyLogLine]. The caller must stop it with
// [Server.Stop]. A missing image is pulled, except local builds
// ([DefaultImage] and other "sparkmerge/" images), which give an
// [*ImageNotFoundError].
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, fmt.Errorf("start spark connect: %w", err)
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, fmt.Errorf("start spark connect: %w", err)
		}
	} else if portInUse(port) {
		return nil, fmt.Errorf("start spark connect: port 127.0.0.1:%d is already in use: choose another port or 0 for a free one", port)
	}

	ctx, cancel := context.WithTimeout(ctx, opts.StartupTimeout)
	defer cancel()

	labels, err := checkImage(ctx, opts.Image)
	if err != nil {
		return nil, fmt.Errorf("start spark connect: %w", err)
	}
	formats := ParseTableFormats(labels[TableFormatsLabel])
	var archive string
	opts.Conf, archive = driverJavaOptions(opts.Conf, labels[ClassArchiveLabel])

	req := testcontainers.ContainerRequest{
		Image: opts.Image,
		Cmd:   containerCommand(opts, port, formats),
		// A UTF-8 locale: without one the JVM names files in ASCII, and
		// Spark finds no file whose name is not (PATH_NOT_FOUND for é.csv).
		Env:    map[string]string{"SPARK_LOCAL_IP": "127.0.0.1", "LANG": "C.UTF-8"},
		Labels: map[string]string{RoleLabel: "spark-connect"},
		Files: []testcontainers.ContainerFile{{
			Reader:            strings.NewReader(logConfig),
			ContainerFilePath: logConfigPath,
			FileMode:          0o644,
		}},
		ConfigModifier: func(c *container.Config) {
			c.User = "0"
		},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = append(hc.Binds, binds(opts.Mounts)...)
			for _, host := range slices.Sorted(maps.Keys(opts.Volumes)) {
				hc.Binds = append(hc.Binds, host+":"+opts.Volumes[host])
			}
		},
		WaitingFor: wait.ForLog(ReadyLogLine).
			WithStartupTimeout(opts.StartupTimeout).
			WithPollInterval(500 * time.Millisecond),
	}
	if opts.Log != nil {
		req.LogConsumerCfg = &testcontainers.LogConsumerConfig{
			Consumers: []testcontainers.LogConsumer{writerConsumer{opts.Log}},
		}
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: req,
		Started:          true,
		// testcontainers narrates every step on stderr; errors are
		// returned instead, and the CLI prints its own progress.
		Logger: log.New(io.Discard, "", 0),
	})
	if err != nil {
		tail := logTail(ctr, 30)
		// Clean up with a fresh context: ctx may be the one that expired.
		stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer stopCancel()
		termErr := testcontainers.TerminateContainer(ctr, testcontainers.StopContext(stopCtx))
		err = fmt.Errorf("start spark connect container (image %q, port %d): %w", opts.Image, port, err)
		if tail != "" {
			err = fmt.Errorf("%w\nlast container log lines:\n%s", err, tail)
		}
		if termErr != nil {
			err = errors.Join(err, fmt.Errorf("remove failed container: %w", termErr))
		}
		return nil, err
	}
	return &Server{ctr: ctr, port: port, image: opts.Image, archive: archive}, nil
}

// checkImage returns the image's labels, and fails with
// *ImageNotFoundError when a local-only image is missing; other images are
// left to testcontainers to pull (and have no labels here: no table
// formats are configured on them).
func checkImage(ctx context.Context, image string) (map[string]string, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to docker (start one with scripts/docker-engine.sh): %w", err)
	}
	defer cli.Close()
	inspect, err := cli.ImageInspect(ctx, image)
	if err != nil {
		if !errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("inspect image %q (is the docker engine up? scripts/docker-engine.sh starts one): %w", image, err)
		}
		if localOnly(image) {
			return nil, &ImageNotFoundError{Image: image}
		}
		return nil, nil
	}
	if inspect.Config == nil {
		return nil, nil
	}
	return inspect.Config.Labels, nil
}

// logTail returns the last n lines of the container log, or "".
func logTail(ctr testcontainers.Container, n int) string {
	if ctr == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := ctr.Logs(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil && len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ContainerLog returns everything the container id (a server [Start]
// started, in this process or another) has written to stdout and stderr
// so far, as Docker keeps it.
func ContainerLog(ctx context.Context, id string) (string, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return "", fmt.Errorf("connect to docker: %w", err)
	}
	defer cli.Close()
	r, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", fmt.Errorf("read the log of container %s: %w", id, err)
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := stdcopy.StdCopy(&b, &b, r); err != nil {
		return "", fmt.Errorf("read the log of container %s: %w", id, err)
	}
	return b.String(), nil
}

// writerConsumer copies container log output to an io.Writer.
type writerConsumer struct{ w io.Writer }

func (c writerConsumer) Accept(l testcontainers.Log) {
	_, _ = c.w.Write(bytes.Clone(l.Content))
}

// localOnly reports whether image is a local build that no registry has:
// DefaultImage, ImageFor's, and anything else in the "sparkmerge/" namespace.
func localOnly(image string) bool {
	return image == DefaultImage || strings.HasPrefix(image, "sparkmerge/")
}

// containerCommand is the container's command: the Connect server alone,
// or (Standalone) a master and a worker started in the background first,
// and the server submitting to the master.
//
// The master binds a port the kernel picks (--port 0) and the script
// reads its URL from its log (Spark's own configuration: "Starting Spark
// master at spark://..." at INFO) before it starts the worker and the
// server:
// a port picked here and bound seconds later by a JVM could be taken in
// between by any of the machine's sockets (a CI run's master once
// never came up where the server looked for it, which gave up after
// 60 s), and a server started beside the master could look before it
// listens.
func containerCommand(opts Options, port int, formats map[string]string) []string {
	if !opts.Standalone {
		return command(opts, port, formats)
	}
	opts.Conf = maps.Clone(opts.Conf)
	if opts.Conf == nil {
		opts.Conf = map[string]string{}
	}
	opts.Conf["spark.executor.memory"] = "768m"
	opts.Conf["spark.cores.max"] = "2"
	cmd := command(opts, port, formats)
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		if a == "local[2]" {
			quoted[i] = `"$master"`
		}
	}
	class := filepath.Dir(sparkSubmit) + "/spark-class"
	// The daemons' small heaps are set for them alone: exported, the
	// variable would size the driver too. The master's log goes to the
	// container's too (tail), after the script has read its URL there.
	script := fmt.Sprintf(`log=/tmp/sparkmerge-master.log
SPARK_DAEMON_MEMORY=256m %[1]s org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 0 --webui-port 0 >"$log" 2>&1 &
pid=$!
master=
for _ in $(seq 1200); do
  master=$(grep -o 'spark://127\.0\.0\.1:[0-9]*' "$log" | head -n 1)
  if [ -n "$master" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
tail -n +1 -f "$log" >&2 &
if [ -z "$master" ]; then sleep 1; echo "the standalone master did not start (its log above)" >&2; exit 1; fi
SPARK_DAEMON_MEMORY=256m %[1]s org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --port 0 --webui-port 0 --cores 2 --memory 1g "$master" &
exec %[2]s`, class, strings.Join(quoted, " "))
	return []string{"bash", "-c", script}
}
