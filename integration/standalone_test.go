//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/spark"
	"github.com/testcontainers/testcontainers-go"
)

// A smoke set on a Spark standalone cluster (a master and a worker JVM,
// the Connect server's driver submitting to the master), so that executors
// run in a process of their own: the header-shift case from files the
// client reads and from files only the cluster sees, verified, and a
// drifting JSON merge compared with the local server's output.
func TestStandaloneClusterSmoke(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	hidden, err := os.MkdirTemp("", "sparktest-standalone-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hidden)
	os.Chmod(hidden, 0o777)
	const inside = "/sparkmerge-standalone-data"
	srv, c := ownSpark(t, localspark.Options{Standalone: true, Mounts: []string{dir}, Volumes: map[string]string{hidden: inside}}, spark.ConnectOptions{})
	ctx := testContext(t)

	files := map[string]string{"x.csv": "a,b,c\n1,2,3\n", "y.csv": "c,a,b\n30,10,20\n"}
	writeFiles(t, dir, files, "x.csv", "y.csv")
	writeFiles(t, hidden, files, "x.csv", "y.csv")
	for _, src := range []string{dir + "/*.csv", inside} {
		out := filepath.Join(dir, "out-"+filepath.Base(src))
		res, err := c.Merge(ctx, spark.Job{Sources: pathSources(src), Format: "csv", Verify: true, Target: spark.Target{Path: out}})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if !res.Verified || res.RowsWritten != 2 {
			t.Errorf("%s: %d rows, verified %v", src, res.RowsWritten, res.Verified)
		}
		diff(t, src, [][]any{row("1", "2", "3"), row("10", "20", "30")}, parquetRows(t, out, []string{"a", "b", "c"}, "a"))
	}

	jsonFiles := map[string]string{"a.json": "{\"id\":1,\"v\":1}\n", "b.json": "{\"ID\":2,\"v\":2.5,\"w\":\"x\"}\n", "c.json": "{\"id\":3,\"w\":\"y\"}\n"}
	paths := writeFiles(t, dir, jsonFiles, "a.json", "b.json", "c.json")
	job := spark.Job{Sources: pathSources(paths...), Policy: sparkmerge.Options{SourceColumn: "_source"}, Verify: true}
	job.Target.Path = filepath.Join(dir, "json-standalone")
	if _, err := c.Merge(ctx, job); err != nil {
		t.Fatal(err)
	}
	_, onLocal := merge(t, newClient(t), spark.Job{Sources: pathSources(paths...), Policy: sparkmerge.Options{SourceColumn: "_source"}})
	newOracle(onLocal).sameAs(t, newClient(t), job.Target.Path, nil, "", "")

	// The worker's line is read from the container's whole log as Docker
	// keeps it, not from a streaming consumer: testcontainers' log
	// producer stopped mid-run under CI's load (the buffer ended at the
	// server's start, minutes before the merges), and the test failed
	// with executors running.
	const launched = "Asked to launch executor"
	var l string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		l = containerLog(t, srv.Container())
		if strings.Contains(l, launched) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(l, launched) {
		t.Errorf("no executor launched by the worker; log tail:\n%s", l[max(0, len(l)-3000):])
	}
}

// containerLog returns everything ctr has written to stdout and stderr.
func containerLog(t *testing.T, ctr testcontainers.Container) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log, err := localspark.ContainerLog(ctx, ctr.GetContainerID())
	if err != nil {
		t.Fatal(err)
	}
	return log
}
