// Package sparktest gives a test binary one Spark Connect server for all its
// tests: SPARK_REMOTE when set, else the project's image started once
// through [localspark], else none, and then the tests skip with the reason.
// Under CI=true a Spark that cannot start fails the run instead.
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
	remote      string
	noSpark     string
	workRoot    string
	clusterRoot string // on the host; Spark sees it at ClusterMount
	ownServer   bool
)

// ClusterMount is where the container sees [ClusterDir]'s directories: a
// path that does not exist on the host, so the client cannot read a byte
// of what lies there, as with cluster storage.
const ClusterMount = "/sparkmerge-cluster-data"

// Main finds or starts Spark, runs the tests and stops what it started.
// mounts are host directories the container sees at the same absolute
// paths (inputs and outputs of the tests). It returns the exit code.
func Main(m *testing.M, mounts ...string) int {
	var err error
	if workRoot, err = os.MkdirTemp("", "sparktest-"); err != nil {
		fmt.Fprintln(os.Stderr, "sparktest:", err)
		return 1
	}
	defer os.RemoveAll(workRoot)
	// Spark in a container writes as root; let it write here.
	os.Chmod(workRoot, 0o777)
	mounts = append(mounts, workRoot)
	if clusterRoot, err = os.MkdirTemp("", "sparktest-cluster-"); err != nil {
		fmt.Fprintln(os.Stderr, "sparktest:", err)
		return 1
	}
	defer os.RemoveAll(clusterRoot)
	os.Chmod(clusterRoot, 0o777)

	if r := os.Getenv("SPARK_REMOTE"); r != "" {
		remote = r
		return m.Run()
	}
	// The reaper image cannot be pulled everywhere; this process stops the
	// container itself, also on interrupt.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	image := Image()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := os.Stat(ClusterMount); err == nil {
		fmt.Fprintf(os.Stderr, "sparktest: %s exists on this machine, so files there would not be hidden from the client: remove it\n", ClusterMount)
		return 1
	}
	// The server ends a reattachable stream after this long and the client
	// must pick it up again (2 minutes by default, less behind some
	// proxies): short here, so every call of the suite that outlasts it
	// goes through a reattach.
	conf := map[string]string{"spark.connect.execute.reattachable.senderMaxStreamDuration": "5s"}
	store, noStore, err = startObjectStore(ctx)
	switch {
	case err != nil && os.Getenv("CI") == "true":
		fmt.Fprintf(os.Stderr, "sparktest: the S3 object store could not start and CI=true, failing: %v\n", err)
		return 1
	case err != nil:
		noStore = fmt.Sprintf("no object store: %v", err)
	case store != nil:
		defer store.stop()
		mounts = append(mounts, store.jars)
		for k, v := range store.conf() {
			conf[k] = v
		}
		fmt.Fprintf(os.Stderr, "sparktest: S3 object store (moto) at %s, bucket %s\n", store.endpoint, bucket)
	}
	if noStore != "" {
		fmt.Fprintln(os.Stderr, "sparktest:", noStore)
	}
	server, err := localspark.Start(ctx, localspark.Options{
		Image:   image,
		Mounts:  mounts,
		Volumes: map[string]string{clusterRoot: ClusterMount},
		Conf:    conf,
	})
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "sparktest: Spark could not start and CI=true, failing: %v\n", err)
			return 1
		}
		noSpark = fmt.Sprintf("no Spark: SPARK_REMOTE is unset and the container did not start: %v", err)
		fmt.Fprintln(os.Stderr, "sparktest:", noSpark)
		return m.Run()
	}
	remote = server.Remote()
	ownServer = true
	fmt.Fprintf(os.Stderr, "sparktest: Spark (%s) ready at %s in %s\n", image, remote, time.Since(start).Round(time.Millisecond))

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-signals; ok {
			server.Stop(context.Background())
			if store != nil {
				store.stop()
			}
			os.Exit(130)
		}
	}()
	defer func() {
		signal.Stop(signals)
		close(signals)
		if err := server.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "sparktest: stop Spark:", err)
		}
	}()
	return m.Run()
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
	if !ownServer {
		t.Skip("files only Spark sees need the harness's own container; SPARK_REMOTE is set")
	}
	dir, err := os.MkdirTemp(clusterRoot, "t-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	return dir, ClusterMount + "/" + filepath.Base(dir)
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
