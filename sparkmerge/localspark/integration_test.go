//go:build integration

package localspark_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/testcontainers/testcontainers-go"

	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

// TestStartServesSparkConnect starts the harness's image (sparktest.Image) with a mounted temp dir and runs SQL through
// spark-connect-go, including a read of a file from the mount.
// It needs TESTCONTAINERS_RYUK_DISABLED=true and a docker engine; without an
// engine it skips, except under CI=true.
func TestStartServesSparkConnect(t *testing.T) {
	if os.Getenv("CI") != "true" {
		testcontainers.SkipIfProviderIsNotHealthy(t)
	}
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") != "true" {
		t.Fatal("set TESTCONTAINERS_RYUK_DISABLED=true: the ryuk image cannot be pulled here")
	}
	dir := t.TempDir()
	csv := filepath.Join(dir, "people.csv")
	if err := os.WriteFile(csv, []byte("id,name\n1,Alice\n2,Bob\n3,Charlie\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var logs sparktest.LogBuffer
	began := time.Now()
	srv, err := localspark.Start(t.Context(), localspark.Options{
		Image:  sparktest.Image(),
		Mounts: []string{dir},
		Log:    &logs,
		// The harness's settings for a short-lived server (half the
		// CPU of Spark's defaults to start): what Start does with any
		// settings is what this test proves; TestCLILocal starts the
		// product's --local server with Spark's defaults.
		Conf: sparktest.OwnServerConf(nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	testcontainers.CleanupContainer(t, srv.Container())
	t.Logf("%s ready at %s after %s", srv.Image(), srv.Remote(), time.Since(began).Round(100*time.Millisecond))
	if srv.Port() == 15002 {
		t.Errorf("picked port 15002, which the default dev server uses")
	}

	session, err := sql.NewSessionBuilder().Remote(srv.Remote()).Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer session.Stop()

	df, err := session.Sql(t.Context(), "SELECT 1 AS one")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := df.Collect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].At(0) != int32(1) {
		t.Errorf("SELECT 1 returned %v, want one row [1]", rows)
	}

	// The mount is at the same absolute path inside the container.
	df, err = session.Sql(t.Context(), "SELECT _c1 FROM csv.`"+csv+"` WHERE _c0 = '3'")
	if err != nil {
		t.Fatal(err)
	}
	rows, err = df.Collect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].At(0) != "Charlie" {
		t.Errorf("reading %s through the mount returned %v, want [Charlie]", csv, rows)
	}

	if !strings.Contains(logs.String(), localspark.ReadyLogLine) {
		t.Errorf("Options.Log did not receive the line %q", localspark.ReadyLogLine)
	}
	checkLogLevels(t, srv, csv)

	// The project's image carries the class archive of the server's start
	// (scripts/build-image.sh), and the server's JVM (pid 1) maps it: an
	// archive the JVM refused (its jars changed) would not be mapped.
	archive := srv.ClassArchive()
	if archive == "" {
		if strings.HasPrefix(srv.Image(), "sparkmerge/") {
			t.Errorf("%s has no class archive (label %s): rebuild it with scripts/build-image.sh", srv.Image(), localspark.ClassArchiveLabel)
		}
		return
	}
	code, out, err := srv.Container().Exec(t.Context(), []string{"grep", "-c", archive, "/proc/1/maps"})
	if err != nil {
		t.Fatal(err)
	}
	maps, _ := io.ReadAll(out)
	if code != 0 {
		t.Errorf("the server's JVM did not map its class archive %s (grep exit %d: %s); its log:\n%s", archive, code, maps, srv.LogTail(40))
	}
}

// checkLogLevels checks the server's log level: errors still show in its
// log, a request's at ERROR (the schema of a read of a missing file) and a
// query's that failed as it ran (a SELECT of it), the jobs' INFO lines do
// not (the read of csv ran several), and the ready line does (localspark's
// log configuration).
func checkLogLevels(t *testing.T, srv *localspark.Server, csv string) {
	t.Helper()
	session, err := sql.NewSessionBuilder().Remote(srv.Remote()).Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer session.Stop()
	missing := csv + ".missing"
	df, err := session.Read().Format("csv").Load(missing)
	if err == nil {
		_, err = df.Schema(t.Context())
	}
	if err == nil {
		t.Fatalf("the schema of %s, which does not exist, did not fail", missing)
	}
	if _, err := session.Sql(t.Context(), "SELECT * FROM csv.`"+missing+"`"); err == nil {
		t.Fatalf("reading %s, which does not exist, did not fail", missing)
	}
	// The container's whole log as Docker keeps it, polled: an error is
	// logged as the client gets it, and Docker may show it a little later.
	var requestError, queryError, readyLine bool
	var info []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		requestError, queryError, readyLine, info = false, false, false, nil
		for _, line := range strings.Split(srv.LogTail(100000), "\n") {
			switch {
			case strings.Contains(line, " ERROR ErrorUtils: Spark Connect RPC error during: analyze"):
				requestError = true
			case strings.Contains(line, " INFO ErrorUtils: Spark Connect error during: execute"):
				queryError = true
			case strings.Contains(line, localspark.ReadyLogLine):
				readyLine = true
			case strings.Contains(line, " INFO ") && !strings.Contains(line, " INFO SparkConnectServer: "):
				info = append(info, line)
			}
		}
		if requestError && queryError || time.Now().After(deadline) {
			break
		}
	}
	if !requestError || !queryError {
		t.Errorf("the server's log lacks the error of a request (%v) or of a query (%v) reading %s; its log:\n%s", requestError, queryError, missing, srv.LogTail(60))
	}
	if !readyLine {
		t.Errorf("the server's log has no line %q", localspark.ReadyLogLine)
	}
	if len(info) > 0 {
		t.Errorf("the server logs at INFO: %d lines, the first %q", len(info), info[0])
	}
}

// TestStartMissingLocalImage checks that a missing local build fails fast
// with the hint to build it, instead of trying a registry.
func TestStartMissingLocalImage(t *testing.T) {
	if os.Getenv("CI") != "true" {
		testcontainers.SkipIfProviderIsNotHealthy(t)
	}
	began := time.Now()
	_, err := localspark.Start(t.Context(), localspark.Options{Image: "sparkmerge/spark-connect:no-such-build"})
	var nf *localspark.ImageNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Start with a missing local image: err = %v, want *ImageNotFoundError", err)
	}
	if nf.Image != "sparkmerge/spark-connect:no-such-build" {
		t.Errorf("ImageNotFoundError.Image = %q", nf.Image)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("Start took %s to report a missing image, want it at once", d)
	}
}
