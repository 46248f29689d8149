//go:build integration

// Package integration runs sparkmerge against a real Spark Connect server:
// SPARK_REMOTE when set, else the project's image started once for the whole
// run through testcontainers-go (see sparktest). Without either the tests
// skip with the reason, except under CI=true, where a Spark that cannot
// start fails the run.
package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	os.Exit(sparktest.Main(m, testdataRoot))
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
