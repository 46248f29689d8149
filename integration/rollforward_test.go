//go:build integration

package integration

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The Spark server killed while it copies an overwrite's staged rows over
// a path only the cluster sees (Spark's overwrite has deleted the old
// rows, the new ones are not committed): the target holds no rows, the
// merged ones only in the staging directory. The next run writing the
// target, on a new server, completes the copy first: the target then holds
// exactly the staged rows, value for value, with the next run's own rows
// appended, and the staging directory no rows.
func TestServerKilledDuringOverwriteCopyRollsForward(t *testing.T) {
	t.Parallel()
	host, dir := sparktest.ClusterDir(t)
	var b strings.Builder
	b.WriteString("id,v,w\n")
	// Enough rows for a copy of a few hundred milliseconds on a quiet
	// machine: the kill comes within a millisecond of the copy's start.
	const rows = 200_000
	for i := range rows {
		fmt.Fprintf(&b, "%d,value-%d,%d.5\n", i, i, i%97)
	}
	putFiles(t, host, textFiles(map[string]string{
		"in/big.csv": b.String(),
		"old.csv":    "id,v,w\n-7,old,0.5\n",
		"next.csv":   "id,v,w\n-1,next,1.5\n",
	}))
	mounts := localspark.Options{Volumes: map[string]string{host: dir}}
	srv, c := ownSpark(t, mounts, spark.ConnectOptions{KeepAlive: 10 * time.Second, KeepAliveTimeout: 5 * time.Second, ReattachFor: 10 * time.Second})
	ctx := testContext(t)
	out := dir + "/out"
	if _, err := c.Merge(ctx, spark.Job{Sources: pathSources(dir + "/old.csv"), Target: spark.Target{Path: out}}); err != nil {
		t.Fatal(err)
	}

	// Kill the server once its copy has begun: the staged rows complete
	// (their _SUCCESS marker), the target's old file deleted and the
	// copy's job writing (its _temporary directory), nothing committed.
	// The poll looks every millisecond and kills the server's process
	// itself (the docker command took longer than a copy of fewer rows).
	kill := killer(t, srv)
	done := make(chan error, 1)
	go func() {
		_, err := c.Merge(ctx, spark.Job{Sources: pathSources(dir + "/in/big.csv"),
			Target: spark.Target{Path: out, Mode: "overwrite", Files: 1}})
		done <- err
	}()
	hostOut := filepath.Join(host, "out")
	for !copying(t, hostOut) {
		select {
		case err := <-done:
			t.Fatalf("the merge ended (err %v) before its copy could be seen running", err)
		case <-time.After(time.Millisecond):
		}
	}
	kill()
	if files := committedFiles(t, hostOut); len(files) != 0 {
		t.Fatalf("the copy committed %v before the server was killed: the test proves nothing; give it more rows", files)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the merge succeeded although its server was killed")
		}
		t.Logf("merge failed as it should: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the merge still waits 3 minutes after its server was killed")
	}
	staging := leftovers(t, hostOut)
	var staged []string
	for _, s := range staging {
		if !strings.HasSuffix(s, "-copying") {
			staged = append(staged, s)
		}
	}
	if len(staged) != 1 {
		t.Fatalf("staging directories %v, want the killed run's one", staging)
	}

	// The next run, on another server (the harness's, which sees the
	// same directory at the same path), appends a row.
	c2 := newClient(t)
	res, err := c2.Merge(ctx, spark.Job{Sources: pathSources(dir + "/next.csv"), Verify: true, Target: spark.Target{Path: out, Mode: "append"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.RolledForward; f == nil || f.Rows != rows || f.Staging != dir+"/"+filepath.Base(staged[0]) {
		t.Errorf("rolled forward %+v, want the %d rows staged in %s", f, rows, staged[0])
	}
	if res.RowsWritten != 1 || !res.Verified {
		t.Errorf("the next run wrote %d rows, verified %v; want its own 1", res.RowsWritten, res.Verified)
	}
	// Value for value: the target is the big file's rows and the next
	// run's, nothing else (the old row was overwritten).
	target := "SELECT CAST(id AS BIGINT) AS id, v, CAST(w AS DOUBLE) AS w FROM parquet.`" + out + "`"
	want := "SELECT CAST(_c0 AS BIGINT) AS id, _c1 AS v, CAST(_c2 AS DOUBLE) AS w FROM csv.`" + dir + "/in/big.csv` WHERE _c0 <> 'id' UNION ALL SELECT -1, 'next', 1.5"
	// In one query, each side read once: every distinct row's count in
	// the target and in want, which gives the target's rows and, summed
	// over the rows, what EXCEPT ALL would leave either way (Spark
	// rewrites EXCEPT ALL as such a count, so NULLs and doubles compare
	// alike), where two EXCEPT ALL queries and a count read the target
	// three times and the big file twice.
	got := queryRows(t, "SELECT sum(nt), sum(greatest(nt - nw, 0)), sum(greatest(nw - nt, 0)) FROM (SELECT count_if(side = 0) AS nt, count_if(side = 1) AS nw FROM ("+
		"SELECT *, 0 AS side FROM ("+target+") UNION ALL SELECT *, 1 AS side FROM ("+want+")) GROUP BY id, v, w)")
	diff(t, "target rows, rows only in the target, rows missing from it", [][]any{row(int64(rows+1), int64(0), int64(0))}, got)
	got = queryRows(t, "SELECT count(*) FROM parquet.`"+dir+"/"+filepath.Base(staged[0])+"`")
	diff(t, "rows left in the staging directory", [][]any{row(int64(0))}, got)

	// Nothing left to complete: a third run appends only its own row.
	res, err = c2.Merge(ctx, spark.Job{Sources: pathSources(dir + "/next.csv"), Target: spark.Target{Path: out, Mode: "append"}})
	if err != nil || res.RolledForward != nil {
		t.Errorf("a run after the roll-forward: err %v, rolled forward %+v; want nothing to complete", err, res.RolledForward)
	}
	got = queryRows(t, "SELECT count(*) FROM parquet.`"+out+"`")
	diff(t, "target rows after a third run", [][]any{row(int64(rows + 2))}, got)
}

// killer returns a function that kills srv's process at once, the
// container's first (a signal from the host, where the test runs as the
// container's user), else by the docker command, and waits until the
// container has stopped.
func killer(t *testing.T, srv *localspark.Server) func() {
	t.Helper()
	id := srv.Container().GetContainerID()
	state, err := srv.Container().State(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if state.Pid <= 0 || syscall.Kill(state.Pid, syscall.SIGKILL) != nil {
			if out, err := osexec.Command("docker", "kill", id).CombinedOutput(); err != nil {
				t.Fatalf("docker kill: %v: %s", err, out)
			}
		}
		for {
			st, err := srv.Container().State(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			if !st.Running {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// copying reports whether Spark's copy over out has begun: its old files
// deleted and a write job's _temporary directory there.
func copying(t *testing.T, out string) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(out, "_temporary")); err != nil {
		return false
	}
	return len(committedFiles(t, out)) == 0
}

// committedFiles are the data files directly in out.
func committedFiles(t *testing.T, out string) []string {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "part-") {
			files = append(files, e.Name())
		}
	}
	return files
}
