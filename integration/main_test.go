//go:build integration

// Package integration runs sparkmerge against a real Spark Connect server:
// SPARK_REMOTE when set, else the project's image started once for the whole
// run through testcontainers-go. Without either the tests skip with the
// reason, except under CI=true, where a Spark that cannot start fails the run.
package integration

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/spark"
)

var (
	// remote is the Spark Connect address every test uses.
	remote string
	// noSpark says why there is no Spark, when there is none.
	noSpark string
	// workRoot is a directory that the client and the server see at the same
	// absolute path; tests write their inputs and outputs below it.
	workRoot string
	// testdataRoot is the absolute path of ./testdata, mounted likewise.
	testdataRoot string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	var err error
	if testdataRoot, err = filepath.Abs("testdata"); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	if workRoot, err = os.MkdirTemp("", "sparkmerge-it-"); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(workRoot)
	// Spark in the container writes as root; let the host clean up after it.
	os.Chmod(workRoot, 0o777)

	if r := os.Getenv("SPARK_REMOTE"); r != "" {
		remote = r
		fmt.Fprintf(os.Stderr, "integration: using SPARK_REMOTE=%s\n", spark.RedactRemote(r))
		return m.Run()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	image := os.Getenv("SPARKMERGE_SPARK_IMAGE")
	if image == "" {
		image = localspark.DefaultImage
	}
	start := time.Now()
	server, err := localspark.Start(ctx, localspark.Options{
		Image:  image,
		Mounts: []string{testdataRoot, workRoot},
	})
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "integration: Spark could not start and CI=true, failing: %v\n", err)
			return 1
		}
		noSpark = fmt.Sprintf("no Spark: SPARK_REMOTE is unset and the container did not start: %v", err)
		fmt.Fprintln(os.Stderr, "integration:", noSpark)
		return m.Run()
	}
	remote = server.Remote()
	fmt.Fprintf(os.Stderr, "integration: Spark (%s) ready at %s in %s\n", image, remote, time.Since(start).Round(time.Millisecond))

	// Stop the container on interrupt too: with the reaper disabled nothing
	// else would.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-signals; ok {
			server.Stop(context.Background())
			os.Exit(130)
		}
	}()
	defer func() {
		signal.Stop(signals)
		close(signals)
		if err := server.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "integration: stop Spark:", err)
		}
	}()
	return m.Run()
}

// requireSpark skips the test, with the reason, when there is no Spark.
func requireSpark(t *testing.T) string {
	t.Helper()
	if noSpark != "" {
		t.Skip(noSpark)
	}
	return remote
}

// workDir returns a fresh directory that Spark sees at the same path.
func workDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(workRoot, "t-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	return dir
}
