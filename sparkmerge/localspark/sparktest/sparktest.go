// Package sparktest gives a test binary one Spark Connect server for all its
// tests: SPARK_REMOTE when set; else the server a whole run shares, named
// in the environment ([StartShared]; scripts/test.sh starts one for every
// package); else the project's image started once through [localspark];
// else none, and then the tests skip with the reason. Under CI=true a
// Spark that cannot start fails the run instead.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(sparktest.Main(m, mountDirs...)) }
//
// and call [Remote] at the top of each test that needs Spark, and [WorkDir]
// for directories both the test and Spark see at the same path.
package sparktest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark"
)

var (
	remote   string
	noSpark  string
	workRoot string
	// clusterRoot is on the host; Spark sees it at clusterSpark.
	clusterRoot  string
	clusterSpark string
	// mounted: the server sees workRoot and clusterRoot (its own
	// container, or a shared one), unlike a SPARK_REMOTE server.
	mounted bool
	// container is the server's Docker container (its own, or a shared
	// one's when the environment names it): "" for a SPARK_REMOTE server.
	container string
)

// ClusterMount is where the container sees [ClusterDir]'s directories: a
// path that does not exist on the host, so the client cannot read a byte
// of what lies there, as with cluster storage.
const ClusterMount = "/sparkmerge-cluster-data"

// The environment that hands a shared server ([StartShared]) to the test
// binaries of a run: scripts/test.sh starts one for every package.
const (
	// EnvSharedRemote is the shared server's Spark Connect address.
	EnvSharedRemote = "SPARKTEST_SHARED_REMOTE"
	// EnvSharedWorkRoot is a host directory the server sees at the same
	// path; each test binary makes its [WorkDir]s in a directory of it.
	EnvSharedWorkRoot = "SPARKTEST_SHARED_WORK_ROOT"
	// EnvSharedClusterRoot is the host directory the server sees at
	// [ClusterMount].
	EnvSharedClusterRoot = "SPARKTEST_SHARED_CLUSTER_ROOT"
	// EnvSharedMounts lists further host directories the server sees at
	// the same paths (separated by os.PathListSeparator): Main's mounts
	// must lie in one of them.
	EnvSharedMounts = "SPARKTEST_SHARED_MOUNTS"
	// EnvSharedObjectStore is the shared S3 object store's endpoint;
	// empty: there is none, for the reason in EnvSharedNoObjectStore.
	EnvSharedObjectStore   = "SPARKTEST_SHARED_OBJECT_STORE"
	EnvSharedNoObjectStore = "SPARKTEST_SHARED_NO_OBJECT_STORE"
	// EnvSharedContainer is the shared server's Docker container, whose
	// log [ServerLog] reads.
	EnvSharedContainer = "SPARKTEST_SHARED_CONTAINER"
)

// Main finds or starts Spark, runs the tests and stops what it started.
// mounts are host directories the container sees at the same absolute
// paths (inputs and outputs of the tests). It returns the exit code.
//
// The server is, in this order: SPARK_REMOTE's (nothing mounted, so
// [ClusterDir] and [ObjectStoreDir] skip); the shared server named by
// [EnvSharedRemote] (see [StartShared]), whose mounts must hold mounts;
// else a container of this test binary's own.
func Main(m *testing.M, mounts ...string) int {
	started := make(chan *Server, 1)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	stopOnSignal(cancel, started)
	if r := os.Getenv("SPARK_REMOTE"); r != "" {
		started <- nil
		return withDirs(os.TempDir(), os.TempDir(), func() int {
			remote = r
			return m.Run()
		})
	}
	if r := os.Getenv(EnvSharedRemote); r != "" {
		started <- nil
		return mainShared(m, r, mounts)
	}
	return withDirs(os.TempDir(), os.TempDir(), func() int { return mainOwn(ctx, m, mounts, started) })
}

// withDirs makes this test binary's work and cluster roots in the given
// directories, runs run and removes them.
func withDirs(work, cluster string, run func() int) int {
	var err error
	if workRoot, err = os.MkdirTemp(work, "sparktest-"); err != nil {
		fmt.Fprintln(os.Stderr, "sparktest:", err)
		return 1
	}
	defer os.RemoveAll(workRoot)
	// Spark in a container writes as root; let it write here.
	os.Chmod(workRoot, 0o777)
	if clusterRoot, err = os.MkdirTemp(cluster, "sparktest-cluster-"); err != nil {
		fmt.Fprintln(os.Stderr, "sparktest:", err)
		return 1
	}
	defer os.RemoveAll(clusterRoot)
	os.Chmod(clusterRoot, 0o777)
	return run()
}

// mainShared runs the tests against the shared server at r.
func mainShared(m *testing.M, r string, mounts []string) int {
	work, cluster := os.Getenv(EnvSharedWorkRoot), os.Getenv(EnvSharedClusterRoot)
	if work == "" || cluster == "" {
		fmt.Fprintf(os.Stderr, "sparktest: %s is set without %s and %s: start the shared server with scripts/test.sh\n", EnvSharedRemote, EnvSharedWorkRoot, EnvSharedClusterRoot)
		return 1
	}
	seen := append(filepath.SplitList(os.Getenv(EnvSharedMounts)), work)
	for _, m := range mounts {
		if !within(m, seen) {
			fmt.Fprintf(os.Stderr, "sparktest: the shared server at %s does not see %s (it sees %s): mount it there (scripts/testspark -mount) or unset %s\n",
				r, m, strings.Join(seen, ", "), EnvSharedRemote)
			return 1
		}
	}
	if endpoint := os.Getenv(EnvSharedObjectStore); endpoint != "" {
		store = &objectStore{endpoint: endpoint}
	} else {
		noStore = os.Getenv(EnvSharedNoObjectStore)
		if noStore == "" {
			noStore = "no object store: the shared server has none"
		}
	}
	container = os.Getenv(EnvSharedContainer)
	return withDirs(work, cluster, func() int {
		remote, mounted = r, true
		clusterSpark = ClusterMount + "/" + filepath.Base(clusterRoot)
		fmt.Fprintf(os.Stderr, "sparktest: shared Spark at %s\n", remote)
		return m.Run()
	})
}

// within reports whether path lies in one of dirs.
func within(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// mainOwn starts a server of this test binary's own and runs the tests.
// started receives it once the start has returned (see stopOnSignal).
func mainOwn(ctx context.Context, m *testing.M, mounts []string, started chan<- *Server) int {
	// The reaper image cannot be pulled everywhere; this process stops the
	// container itself, also on interrupt.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	srv, err := start(ctx, append(mounts, workRoot), clusterRoot)
	started <- srv
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "sparktest: Spark could not start and CI=true, failing: %v\n", err)
			return 1
		}
		noSpark = fmt.Sprintf("no Spark: SPARK_REMOTE is unset and the container did not start: %v", err)
		fmt.Fprintln(os.Stderr, "sparktest:", noSpark)
		return m.Run()
	}
	defer srv.Stop()
	store, noStore = srv.store, srv.noStore
	remote, mounted, clusterSpark = srv.Remote(), true, ClusterMount
	container = srv.Container().GetContainerID()
	return m.Run()
}

// startTimeout bounds the start of the harness's Spark: generous, since
// a loaded machine starts it slowly and a run that waits is better than
// one that fails.
const startTimeout = 10 * time.Minute

// stopOnSignal stops the servers of this test binary when the process is
// interrupted or terminated, then exits, so that no container outlives a
// cancelled run: the servers tests started ([StopWithTest]), and the
// harness's own: a start under way is cancelled (it removes what it made)
// and waited for; started receives the server once the start has
// returned (nil when it failed or there is none).
func stopOnSignal(cancelStart context.CancelFunc, started <-chan *Server) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-signals
		fmt.Fprintln(os.Stderr, "sparktest: interrupted, stopping Spark")
		testServersMu.Lock()
		for srv := range testServers {
			srv.Stop(context.Background())
		}
		testServersMu.Unlock()
		cancelStart()
		if srv := <-started; srv != nil {
			srv.Stop()
		}
		os.Exit(130)
	}()
}

var (
	testServersMu sync.Mutex
	testServers   = map[*localspark.Server]bool{} // see StopWithTest
)

// StopWithTest stops srv, a server a test started of its own, when the
// test ends, or when the run is interrupted or terminated first.
func StopWithTest(t testing.TB, srv *localspark.Server) {
	reapWhenGone(srv.Container().GetContainerID())
	testServersMu.Lock()
	testServers[srv] = true
	testServersMu.Unlock()
	t.Cleanup(func() {
		testServersMu.Lock()
		delete(testServers, srv)
		testServersMu.Unlock()
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("stop the test's Spark: %v", err)
		}
	})
}

// Server is a Spark Connect container and the S3 object store it reads,
// as the harness starts them.
type Server struct {
	*localspark.Server
	store   *objectStore
	noStore string // why there is no store, when there is none
	stop    sync.Once
}

// Stop stops the container and the object store. It is safe to call more
// than once and from several goroutines.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if err := s.Server.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "sparktest: stop Spark:", err)
		}
		if s.store != nil {
			s.store.stop()
		}
	})
}

// fairScheduler makes Spark's default scheduler pool share its task slots
// fairly between jobs; fairSchedulerFile is its name in the cluster
// directory.
const (
	fairScheduler = `<?xml version="1.0"?>
<allocations>
  <pool name="default">
    <schedulingMode>FAIR</schedulingMode>
    <weight>1</weight>
    <minShare>0</minShare>
  </pool>
</allocations>
`
	fairSchedulerFile = "fairscheduler.xml"
)

// driverMemory is the heap of the harness's server: every test of a run
// shares it, six at a time (two test binaries, three parallel tests
// each), with Delta's and Iceberg's catalogs loaded in every session.
// The default 1 GiB ran out in a CI run (Spark exits on an
// OutOfMemoryError, and every later test then failed as unreachable).
const driverMemory = "3g"

// icebergWarehouse is the directory of the cluster directory that holds
// the tables of the server's Iceberg catalog.
const icebergWarehouse = "iceberg-warehouse"

// start starts the object store (when its pieces are given) and Spark,
// on [Image], seeing mounts
// at their own paths and cluster at [ClusterMount]. Under CI=true an
// object store that cannot start is an error.
func start(ctx context.Context, mounts []string, cluster string) (*Server, error) {
	image := Image()
	began := time.Now()
	if _, err := os.Stat(ClusterMount); err == nil {
		return nil, fmt.Errorf("%s exists on this machine, so files there would not be hidden from the client: remove it", ClusterMount)
	}
	// The server ends a reattachable stream after this long and the client
	// must pick it up again (2 minutes by default, less behind some
	// proxies): short here, so every call of the suite that outlasts it
	// goes through a reattach.
	conf := map[string]string{"spark.connect.execute.reattachable.senderMaxStreamDuration": "5s"}
	// Execution progress every half second, not every 2 s (the default):
	// a write of a second or two then still streams its stages and tasks,
	// which the progress tests look for.
	conf["spark.connect.progress.reportInterval"] = "500ms"
	// An operation whose client has not reattached is dropped after 5
	// minutes by default (INVALID_HANDLE.OPERATION_ABANDONED): on a
	// starved machine (load 110 on 2 cores) a test client took longer, and
	// a slow machine must make the suite slower, not red.
	conf["spark.connect.execute.manager.detachedTimeout"] = "30min"
	// Tests run at once, from several test binaries: jobs share the task
	// slots (FAIR, also within the default pool) instead of a small job
	// waiting for every task of a big one submitted before it (FIFO).
	if err := os.WriteFile(filepath.Join(cluster, fairSchedulerFile), []byte(fairScheduler), 0o644); err != nil {
		return nil, err
	}
	conf["spark.scheduler.mode"] = "FAIR"
	// A Delta table's state (its log replayed) in 2 partitions, not Delta's
	// default 50: each a task that deserializes the plan and generates a
	// projection of Delta's actions, code generated whatever
	// spark.sql.codegen.factoryMode says. The suite's tables have a few
	// files each; the Delta tests took 40 % less of the server's CPU (115 s
	// against 69 s, docs/testing.md#where-the-time-goes).
	conf["spark.databricks.delta.snapshotPartitions"] = "2"
	conf["spark.scheduler.allocation.file"] = "file:" + ClusterMount + "/" + fairSchedulerFile
	maps.Copy(conf, interpreted())
	conf["spark.driver.extraJavaOptions"] = longLivedJVM
	if opts := os.Getenv(EnvJavaOptions); opts != "" {
		conf["spark.driver.extraJavaOptions"] += " " + opts
	}
	// Settings of the caller's, last (they win): an event log to see
	// where a run's time goes (docs/testing.md#time), say.
	extra, err := extraConf(os.Getenv(EnvExtraConf))
	if err != nil {
		return nil, err
	}
	maps.Copy(conf, extra)
	srv := &Server{}
	store, noStore, err := startObjectStore(ctx)
	switch {
	case err != nil && os.Getenv("CI") == "true":
		return nil, fmt.Errorf("the S3 object store could not start and CI=true: %w", err)
	case err != nil:
		srv.noStore = fmt.Sprintf("no object store: %v", err)
	case store != nil:
		srv.store = store
		mounts = append(mounts, store.jars)
		maps.Copy(conf, store.conf())
		fmt.Fprintf(os.Stderr, "sparktest: S3 object store (moto) at %s, bucket %s\n", store.endpoint, bucket)
	default:
		srv.noStore = noStore
	}
	if srv.noStore != "" {
		fmt.Fprintln(os.Stderr, "sparktest:", srv.noStore)
	}
	// The Iceberg catalog's tables (on an image that has Iceberg) in the
	// cluster directory, where a test can see their files.
	if err := os.MkdirAll(filepath.Join(cluster, icebergWarehouse), 0o777); err != nil {
		return nil, err
	}
	os.Chmod(filepath.Join(cluster, icebergWarehouse), 0o777)
	srv.Server, err = localspark.Start(ctx, localspark.Options{
		Image:            image,
		Mounts:           mounts,
		Volumes:          map[string]string{cluster: ClusterMount},
		Conf:             conf,
		IcebergWarehouse: ClusterMount + "/" + icebergWarehouse,
		StartupTimeout:   startTimeout,
		DriverMemory:     driverMemory,
	})
	if err != nil {
		if srv.store != nil {
			srv.store.stop()
		}
		return nil, err
	}
	reapWhenGone(srv.Container().GetContainerID())
	fmt.Fprintf(os.Stderr, "sparktest: Spark (%s) ready at %s in %s\n", image, srv.Remote(), time.Since(began).Round(time.Millisecond))
	return srv, nil
}

// interpreted are the settings that save the server's CPU: nothing
// compiled, every operator and expression interpreted. The suite's rows
// are few and its queries many, and the server spent a third of its CPU
// generating and compiling code (docs/testing.md#time): 21 % less of its
// CPU on the tests measured. Spark's default (code generation) is what
// users run: scripts/test-matrix.sh runs the matrix's subset with it on
// every other version (compiledConf), and
// TestMergeSwitchesCodeGenerationAndRestoresIt runs a merge's own switch
// on a session that compiles.
func interpreted() map[string]string {
	return map[string]string{
		"spark.sql.codegen.wholeStage":  "false",
		"spark.sql.codegen.factoryMode": "NO_CODEGEN",
	}
}

// longLivedJVM are the JVM options of the harness's server, which serves
// a whole run (docs/testing.md#where-the-time-goes): the serial garbage
// collector (no concurrent threads or G1's barriers on two cores), its
// whole heap from the start with a young generation of 1 GiB, and a
// metaspace that does not trigger full collections while Spark's classes
// load; C2 compiles a method after three times the calls and loops it
// would by default (its compiler thread took a fifth of the server's CPU,
// much of it on methods that were not hot for long), and inlines less
// deeply into what it compiles: the suite's many small queries run a
// broad, shallow mix of Spark's code, where a smaller C2 compilation
// saved more than its code lost (14-20 % of the server's CPU for the same
// tests, docs/testing.md#where-the-time-goes).
const longLivedJVM = "-XX:+UseSerialGC -Xms" + driverMemory + " -Xmn1g -XX:MetaspaceSize=256m" +
	" -XX:Tier4InvocationThreshold=15000 -XX:Tier4MinInvocationThreshold=1800" +
	" -XX:Tier4CompileThreshold=45000 -XX:Tier4BackEdgeThreshold=120000" +
	" -XX:MaxInlineLevel=6 -XX:FreqInlineSize=100 -XX:InlineSmallCode=1000" + directSpawn

// shortLivedJVM are the JVM options of a server a test starts of its
// own, which serves one test for a minute or two: the client compiler
// alone (C1, no C2), one garbage collector thread.
const shortLivedJVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" + directSpawn

// directSpawn starts a child process with vfork and one exec, not through
// the JDK's jspawnhelper (two execs): without Hadoop's native library its
// local file system runs chmod for every file and .crc it creates, about
// one process a file the tests write; the helper's exec was 1.5 % of the
// machine's busy CPU in a profile of the step (perf, 2026-12-07).
const directSpawn = " -Djdk.lang.Process.launchMechanism=VFORK"

// OwnServerConf is conf (nil: none) over the settings of a server a test
// starts of its own (localspark.Options.Conf): the harness's that save
// CPU (nothing compiled) and JVM options for a short life.
func OwnServerConf(conf map[string]string) map[string]string {
	out := interpreted()
	out["spark.driver.extraJavaOptions"] = shortLivedJVM
	out["spark.executor.extraJavaOptions"] = shortLivedJVM
	maps.Copy(out, conf)
	return out
}

// EnvExtraConf holds Spark settings for the harness's server, as
// "key=value" separated by white space, over its own: e.g.
// "spark.eventLog.enabled=true spark.eventLog.dir=file:/DIR" (a directory
// the server sees) to read afterwards which jobs a run made and how long
// they took.
const EnvExtraConf = "SPARKTEST_SPARK_CONF"

// EnvJavaOptions holds JVM options for the harness's server, after its
// own (longLivedJVM): e.g. a Java Flight Recorder profile of a whole run,
// "-XX:StartFlightRecording=filename=/DIR/run.jfr,settings=profile" (a
// directory the server sees), to read afterwards where its CPU went.
const EnvJavaOptions = "SPARKTEST_JAVA_OPTIONS"

// extraConf parses an [EnvExtraConf] value.
func extraConf(v string) (map[string]string, error) {
	conf := map[string]string{}
	for _, kv := range strings.Fields(v) {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: %q is not key=value", EnvExtraConf, kv)
		}
		conf[k] = val
	}
	return conf, nil
}

// Image is the image the harness runs, and tests that start a server of
// their own should: SPARKMERGE_SPARK_IMAGE names any image; else
// SPARK_VERSION picks the project's build of that Spark version
// ([localspark.ImageFor]; scripts/build-image.sh builds it), else
// [localspark.DefaultImage].
func Image() string {
	if image := os.Getenv("SPARKMERGE_SPARK_IMAGE"); image != "" {
		return image
	}
	return localspark.ImageFor(os.Getenv("SPARK_VERSION"))
}

// Remote returns the Spark Connect address, or skips the test with the
// reason there is none.
func Remote(t testing.TB) string {
	t.Helper()
	if noSpark != "" {
		t.Skip(noSpark)
	}
	if remote == "" {
		t.Fatal("sparktest.Remote called without sparktest.Main in TestMain")
	}
	return remote
}

// WorkDir returns a fresh directory that Spark sees at the same path.
func WorkDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(workRoot, "t-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	return dir
}

// ClusterDir returns a fresh directory that only Spark sees: host is where
// the test writes its files, spark the path Spark (and so sparkmerge) reads
// them at, which does not exist on this machine. It skips the test against
// a SPARK_REMOTE server, where the harness mounts nothing.
func ClusterDir(t testing.TB) (host, spark string) {
	t.Helper()
	Remote(t)
	if !mounted {
		t.Skip("files only Spark sees need the harness's own container; SPARK_REMOTE is set")
	}
	dir, err := os.MkdirTemp(clusterRoot, "t-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	return dir, clusterSpark + "/" + filepath.Base(dir)
}

// ServerLog returns the harness's server's log as Docker keeps it, the
// whole of it so far, for a test to find the lines its own requests made
// (those naming its own paths) as on a server of its own. ok is false
// where the harness has no container to read: a SPARK_REMOTE server, or a
// shared one whose environment does not name it ([EnvSharedContainer]).
func ServerLog(t testing.TB) (log string, ok bool) {
	t.Helper()
	Remote(t)
	if container == "" {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log, err := localspark.ContainerLog(ctx, container)
	if err != nil {
		t.Fatalf("read the harness's server's log: %v", err)
	}
	return log, true
}

// LogBuffer collects a container's log ([localspark.Options.Log]), written
// from another goroutine, for a test to read.
type LogBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
