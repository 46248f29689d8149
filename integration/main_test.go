//go:build integration

// Package integration runs sparkmerge against a real Spark Connect server:
// SPARK_REMOTE when set, else the project's image started once for the whole
// run through testcontainers-go (see sparktest). Without either the tests
// skip with the reason, except under CI=true, where a Spark that cannot
// start fails the run.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

// testdataRoot is the absolute path of ./testdata, which the container
// sees at the same path.
var testdataRoot string

func TestMain(m *testing.M) {
	var err error
	if testdataRoot, err = filepath.Abs("testdata"); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	// The sessions the CLI's runs keep for the next run (see
	// cmd/sparkmerge's sessionPool) in a pool of this run's own, not the
	// user's: the tests' runs take each other's sessions, as a user's do.
	pool, err := os.MkdirTemp("", "sparkmerge-sessions-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	os.Setenv("SPARKMERGE_SESSION_POOL", pool)
	code := sparktest.Main(m, testdataRoot)
	os.RemoveAll(pool)
	os.Exit(code)
}

// testContext ends a minute before the test binary's -timeout would stop
// it (never, without one), for calls that may wait long: one that still
// waits then fails the test with its own error and output. No call has a
// shorter limit of its own without a reason: a slow machine makes the
// suite slower, not red.
func testContext(t *testing.T) context.Context {
	t.Helper()
	d, ok := t.Deadline()
	if !ok {
		return context.Background()
	}
	ctx, cancel := context.WithDeadline(context.Background(), d.Add(-time.Minute))
	t.Cleanup(cancel)
	return ctx
}

// requireSpark skips the test, with the reason, when there is no Spark.
func requireSpark(t *testing.T) string {
	t.Helper()
	return sparktest.Remote(t)
}

// workDir returns a fresh directory that Spark sees at the same path.
func workDir(t *testing.T) string {
	t.Helper()
	return sparktest.WorkDir(t)
}
