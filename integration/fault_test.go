//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// leftovers lists what a merge left beside its output: staging directories.
func leftovers(t *testing.T, out string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".sparkmerge-*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

// An overwrite that fails during the write (a value that does not parse
// under FAILFAST, found while writing) leaves the old output as it was:
// the rows go to a staging directory first.
func TestFailedOverwriteKeepsOldData(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	good := writeFiles(t, dir, map[string]string{"good.csv": "id,v\n1,a\n2,b\n"}, "good.csv")
	out := filepath.Join(workDir(t), "out")
	merge(t, c, spark.Job{Sources: pathSources(good...), Target: spark.Target{Path: out}})
	before := parquetRows(t, out, []string{"id", "v"}, "id")

	// The schema says int; the last row does not parse as one.
	bad := writeFiles(t, dir, map[string]string{"bad.csv": "id,v\n3,c\nx,d\n"}, "bad.csv")
	_, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: bad, Schema: "id int, v string"}},
		Target: spark.Target{Path: out, Mode: "overwrite"}})
	if err == nil {
		t.Fatal("a value that does not parse under FAILFAST was written")
	}
	diff(t, "old output after a failed overwrite", before, parquetRows(t, out, []string{"id", "v"}, "id"))
	if l := leftovers(t, out); len(l) != 0 {
		t.Errorf("staging left behind: %v", l)
	}
	// A successful overwrite replaces it.
	merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: bad, Schema: "id int, v string"}}, ReaderOptions: map[string]string{"mode": "DROPMALFORMED"},
		Target: spark.Target{Path: out, Mode: "overwrite"}})
	diff(t, "new output", [][]any{row("3", "c")}, parquetRows(t, out, []string{"id", "v"}, "id"))
}

// Concurrent appends to one target, each with --verify: each counts only
// its own rows, per source, and the target ends with all of them.
func TestConcurrentAppendsVerifyTheirOwnRows(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	out := filepath.Join(workDir(t), "out")
	merge(t, c, spark.Job{Sources: pathSources(writeFiles(t, dir, map[string]string{"seed.csv": "id,v\n0,seed\n"}, "seed.csv")...),
		Policy: sparkmerge.Options{SourceColumn: "_source"}, Target: spark.Target{Path: out}})
	const writers = 3
	var wg sync.WaitGroup
	results := make([]*spark.Result, writers)
	errs := make([]error, writers)
	for w := range writers {
		var rows strings.Builder
		rows.WriteString("id,v\n")
		for i := range 100 * (w + 1) {
			fmt.Fprintf(&rows, "%d,w%d\n", 1000*(w+1)+i, w)
		}
		name := fmt.Sprintf("w%d.csv", w)
		paths := writeFiles(t, dir, map[string]string{name: rows.String()}, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w], errs[w] = c.Merge(context.Background(), spark.Job{Sources: pathSources(paths...), Verify: true,
				Policy: sparkmerge.Options{SourceColumn: "_source"}, Target: spark.Target{Path: out, Mode: "append"}})
		}()
	}
	wg.Wait()
	for w := range writers {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v", w, errs[w])
		}
		if want := int64(100 * (w + 1)); results[w].RowsWritten != want || !results[w].Verified {
			t.Errorf("writer %d: %d rows written, verified %v; want %d of its own", w, results[w].RowsWritten, results[w].Verified, want)
		}
	}
	rows := queryRows(t, "SELECT count(*) FROM parquet.`"+out+"`")
	diff(t, "rows in the target", [][]any{row(int64(1 + 100 + 200 + 300))}, rows)
}

// The Spark server killed during an overwrite: the merge fails as
// unreachable and the old output is intact, nothing staged left behind.
func TestServerKilledDuringOverwrite(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	// A short reattach limit: the merge fails once it is spent, and a
	// dead server answers no reattach.
	srv, c := ownSpark(t, localspark.Options{Mounts: []string{dir}},
		spark.ConnectOptions{KeepAlive: 10 * time.Second, KeepAliveTimeout: 5 * time.Second, ReattachFor: 10 * time.Second})
	ctx := testContext(t)
	in := filepath.Join(dir, "in")
	var b strings.Builder
	b.WriteString("id,v,w\n")
	for i := range 400000 {
		fmt.Fprintf(&b, "%d,value-%d,%d.5\n", i, i, i%97)
	}
	writeFiles(t, in, map[string]string{"big.csv": b.String(), "small.csv": "w,id\n1.5,1\n"}, "big.csv", "small.csv")
	out := filepath.Join(dir, "out")
	old := writeFiles(t, dir, map[string]string{"old.csv": "id,v,w\n7,old,0.5\n"}, "old.csv")
	if _, err := c.Merge(ctx, spark.Job{Sources: pathSources(old...), Target: spark.Target{Path: out}}); err != nil {
		t.Fatal(err)
	}

	kill := killer(t, srv)
	done := make(chan error, 1)
	go func() {
		_, err := c.Merge(ctx, spark.Job{Sources: pathSources(in), Target: spark.Target{Path: out, Mode: "overwrite"}})
		done <- err
	}()
	// Kill the server as soon as the write has begun in the staging
	// directory.
	deadline := time.Now().Add(2 * time.Minute)
	for len(leftovers(t, out)) == 0 || !hasTemporary(leftovers(t, out)) {
		if time.Now().After(deadline) {
			t.Fatal("the write never began")
		}
		select {
		case err := <-done:
			t.Fatalf("the merge ended before the server could be killed (err %v): make the input larger", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Killed, not stopped: a stop (SIGTERM) runs Spark's shutdown hook,
	// whose dying job could still write into the staging directory after
	// the merge had failed and removed it (seen at load 20).
	kill()
	select {
	case err := <-done:
		if !errors.Is(err, spark.ErrUnreachable) {
			t.Fatalf("the merge whose server was killed: err = %v, want spark.ErrUnreachable", err)
		}
		t.Logf("merge failed as it should: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the merge still waits 3 minutes after its server was killed")
	}
	// The old output, read by the client itself: one Parquet file with
	// the old row. Spark (the harness's) reads it back.
	diff(t, "old output", [][]any{row("7", "old", "0.5")}, parquetRows(t, out, []string{"id", "v", "w"}, "id"))
	if l := leftovers(t, out); len(l) != 0 {
		t.Errorf("staging left behind: %v", l)
	}
}

// waitForWrite polls until a write job into out, or into a staging
// directory beside it, has begun (Spark's _temporary directory is there),
// failing the test if the merge whose result done carries ends first.
func waitForWrite(t *testing.T, out string, done <-chan error) {
	t.Helper()
	for {
		if _, err := os.Stat(filepath.Join(out, "_temporary")); err == nil || hasTemporary(leftovers(t, out)) {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the merge ended (err %v) before its write could be seen running", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// gate holds a slow source's rows back until the test opens it: a
// system property of the server's JVM, set by a query (System.setProperty
// through reflect), that each row looks up (System.getProperty) before it
// sleeps. The harness's server runs its tasks in the driver's JVM (local
// mode), where the query that opens the gate runs too; where tasks ran in
// another JVM, the rows would sleep their whole time, as with no gate.
type gate struct{ key string }

func newGate(t *testing.T) *gate {
	t.Helper()
	g := &gate{key: "sparkmerge.test.gate." + uuid.NewString()}
	t.Cleanup(func() {
		queryRows(t, "SELECT reflect('java.lang.System', 'clearProperty', '"+g.key+"') FROM VALUES (1)")
	})
	return g
}

// shut is an SQL condition, true while the gate is shut (reflect gives
// an unset property as the text null); evaluated per row (reflect is not
// deterministic, so never folded).
func (g *gate) shut() string {
	return "reflect('java.lang.System', 'getProperty', '" + g.key + "') <> 'open'"
}

// open opens the gate. Its query runs on the driver, not in a task
// (a projection of an inline table is folded into a local relation as
// the query is planned, and Spark Connect returns a local relation's
// rows without a Spark job): the slow source may hold every task slot.
func (g *gate) open(t *testing.T) {
	t.Helper()
	queryRows(t, "SELECT reflect('java.lang.System', 'setProperty', '"+g.key+"', 'open') FROM VALUES (1)")
}

func hasTemporary(dirs []string) bool {
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "_temporary")); err == nil {
			return true
		}
	}
	return false
}

// A table overwrite that fails during the write leaves the old table and
// its rows; one that succeeds replaces them, leaving no staging table.
func TestFailedTableOverwriteKeepsOldTable(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	table := fmt.Sprintf("sm_overwrite_%d", os.Getpid())
	exec(t, "DROP TABLE IF EXISTS "+table, "CREATE TABLE "+table+" (id int, v string) USING parquet", "INSERT INTO "+table+" VALUES (1, 'old')")
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	dir := workDir(t)
	bad := writeFiles(t, dir, map[string]string{"bad.csv": "id,v\n3,c\nx,d\n"}, "bad.csv")
	_, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: bad, Schema: "id int, v string"}},
		Target: spark.Target{Table: table, Mode: "overwrite"}})
	if err == nil {
		t.Fatal("a value that does not parse under FAILFAST was written")
	}
	rows := queryRows(t, "SELECT id, v FROM "+table+" ORDER BY id")
	diff(t, "old table after a failed overwrite", [][]any{row(int32(1), "old")}, rows)

	res, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: bad, Schema: "id int, v string"}}, Verify: true,
		ReaderOptions: map[string]string{"mode": "DROPMALFORMED"}, Target: spark.Target{Table: table, Mode: "overwrite"}})
	if err != nil || !res.Verified || res.RowsWritten != 1 {
		t.Fatalf("overwrite: %v, %+v", err, res)
	}
	exec(t, "REFRESH TABLE "+table) // this session read the old table
	rows = queryRows(t, "SELECT id, v FROM "+table+" ORDER BY id")
	diff(t, "new table", [][]any{row(int32(3), "c")}, rows)
	tables := queryRows(t, "SHOW TABLES LIKE '"+table+"__sparkmerge_*'")
	if len(tables) != 0 {
		t.Errorf("staging tables left: %v", tables)
	}
}

// An append to a path the client cannot rename (only the cluster sees it)
// is written in place; --verify counts the files this run's write job
// made, not the target's growth: the rows already there, and the
// partition directories, do not count, and per source with provenance.
func TestClusterAppendVerifiesItsOwnFiles(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	host, dir := sparktest.ClusterDir(t)
	putFiles(t, host, textFiles(map[string]string{
		"in/a.csv": "id,v,k\n1,x,p\n2,y,q\n",
		"in/b.csv": "k,id\np,3\n",
		"in/c.csv": "id,k\n4,q\n5,q\n6,p\n",
	}))
	out := dir + "/out"
	policy := sparkmerge.Options{SourceColumn: "_source"}
	merge(t, c, spark.Job{Sources: pathSources(dir + "/in/a.csv"), Policy: policy, Target: spark.Target{Path: out, PartitionBy: []string{"k"}}})
	for round := 1; round <= 2; round++ {
		res, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(dir + "/in"), Policy: policy, Verify: true,
			Target: spark.Target{Path: out, Mode: "append", PartitionBy: []string{"k"}}})
		if err != nil {
			t.Fatalf("append %d: %v", round, err)
		}
		if res.RowsWritten != 6 || !res.Verified {
			t.Errorf("append %d: %d rows written, verified %v; want this run's 6", round, res.RowsWritten, res.Verified)
		}
	}
	rows := queryRows(t, "SELECT count(*), count(DISTINCT _source) FROM parquet.`"+out+"`")
	diff(t, "rows in the target", [][]any{row(int64(2+6+6), int64(3))}, rows)

	// Another writer adds files while a slow append runs (into a
	// partition directory of its own, as Spark's commit protocol does not
	// allow two jobs writing one directory): this run's rows can no longer
	// be told from the target's growth, and --verify must say so rather
	// than pass or blame the merge. The append's one task sleeps a second
	// a row until the other writer is done (its gate open), 40 s at most.
	view := "slowcluster_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	g := newGate(t)
	exec(t, "CREATE OR REPLACE GLOBAL TEMP VIEW "+view+" AS SELECT CAST(id AS INT) AS id, CAST(id % 2 AS STRING) AS k, CAST(reflect('java.lang.Thread', 'sleep', CASE WHEN "+g.shut()+" THEN CAST(1000 AS BIGINT) ELSE CAST(0 AS BIGINT) END) AS STRING) AS v FROM range(0, 40, 1, 1)")
	t.Cleanup(func() { exec(t, "DROP VIEW IF EXISTS global_temp."+view) })
	done := make(chan error, 1)
	go func() {
		_, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Table: "global_temp." + view}}, Verify: true,
			Target: spark.Target{Path: out, Mode: "append", PartitionBy: []string{"k"}}})
		done <- err
	}()
	// Once the write job has begun (its _temporary directory is there),
	// its one slow task runs until the gate opens (at most about 40 s:
	// with a fixed 16 s, a loaded run's other writer finished after the
	// merge had listed its files).
	waitForWrite(t, filepath.Join(host, "out"), done)
	exec(t, "INSERT OVERWRITE DIRECTORY '"+out+"/k=9' USING parquet SELECT 99 AS id, 'other' AS v")
	var err error
	select {
	case err = <-done:
		t.Fatalf("the merge ended (err %v) before the other writer's file went in: the test proves nothing; make the source slower", err)
	default:
		g.open(t)
		err = <-done
	}
	var verr *spark.VerifyError
	if err == nil || errors.As(err, &verr) || !strings.Contains(err.Error(), "another writer appended meanwhile") {
		t.Errorf("a verified append with another writer's files appearing: err = %v, want one saying another writer appended", err)
	}
	rows = queryRows(t, "SELECT count(*) FROM parquet.`"+out+"`")
	diff(t, "rows in the target", [][]any{row(int64(14 + 40 + 1))}, rows)
}

// A verified append to an existing table counts this run's rows, whoever
// else appends meanwhile: the rows go to a staging table first, counted
// there, then appended. Here another session inserts a row while the
// merge writes a slow source (a view taking about 16 s to read, until the
// other session's row is in: its gate).
func TestTableAppendVerifiesItsOwnRows(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	view, table := "slowappend_"+id, "appended_"+id
	g := newGate(t)
	exec(t, "CREATE OR REPLACE GLOBAL TEMP VIEW "+view+" AS SELECT id, CAST(reflect('java.lang.Thread', 'sleep', CASE WHEN "+g.shut()+" THEN CAST(800 AS BIGINT) ELSE CAST(0 AS BIGINT) END) AS STRING) AS slept FROM range(0, 20, 1, 1)",
		"CREATE TABLE "+table+" (id BIGINT, slept STRING) USING parquet",
		"INSERT INTO "+table+" VALUES (-1, 'old')")
	t.Cleanup(func() { exec(t, "DROP VIEW IF EXISTS global_temp."+view, "DROP TABLE IF EXISTS "+table) })
	done := make(chan struct{})
	var res *spark.Result
	var err error
	go func() {
		defer close(done)
		res, err = c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Table: "global_temp." + view}}, Verify: true,
			Target: spark.Target{Table: table, Mode: "append"}})
	}()
	// The table's files lie where the client cannot look: planned and
	// counted after a few seconds, while the view takes about 16 s.
	time.Sleep(6 * time.Second)
	exec(t, "INSERT INTO "+table+" VALUES (-2, 'meanwhile')")
	select {
	case <-done:
		t.Fatal("the merge ended before the other session's row went in: the test proves nothing")
	default:
	}
	g.open(t)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsWritten != 20 || !res.Verified {
		t.Errorf("%d rows written, verified %v; want this run's 20", res.RowsWritten, res.Verified)
	}
	rows := queryRows(t, "SELECT count(*), min(id) FROM "+table)
	diff(t, "rows in the table", [][]any{row(int64(22), int64(-2))}, rows)
	rows = queryRows(t, "SHOW TABLES LIKE '"+table+"__sparkmerge*'")
	diff(t, "staging tables left", [][]any{}, rows)
}

// On storage the client cannot rename (a path only the cluster mounts),
// an overwrite is staged too: the rows are written and counted beside the
// target, then copied over it. A merge that fails leaves the old rows; a
// successful one replaces them, verified, and leaves no rows in staging.
// (The first overwrite replaces an empty directory: written in place.)
func TestClusterOverwriteKeepsOldDataOnFailure(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	host, dir := sparktest.ClusterDir(t)
	putFiles(t, host, textFiles(map[string]string{
		"good.csv": "id,v\n1,a\n2,b\n",
		"bad.csv":  "id,v\n3,c\nx,d\n",
	}))
	out := dir + "/out"
	bad := []spark.SourceSpec{{Paths: []string{dir + "/bad.csv"}, Schema: "id int, v string"}}
	// A failed write to a new path leaves an empty directory there, which
	// the client cannot remove: both errors say what to do.
	_, err := c.Merge(context.Background(), spark.Job{Sources: bad, Target: spark.Target{Path: out, Format: "csv"}})
	if err == nil || !strings.Contains(err.Error(), "a rerun needs the overwrite mode") {
		t.Errorf("a failed write to a new cluster path: err = %v, want a note on the directory left", err)
	}
	_, err = c.Merge(context.Background(), spark.Job{Sources: pathSources(dir + "/good.csv"), Target: spark.Target{Path: out, Format: "csv"}})
	var exists *spark.TargetExistsError
	if !errors.As(err, &exists) || !exists.NoData {
		t.Errorf("rerun onto the directory left: err = %v, want a TargetExistsError without data", err)
	}
	merge(t, c, spark.Job{Sources: pathSources(dir + "/good.csv"), Target: spark.Target{Path: out, Format: "csv", Mode: "overwrite"}})
	read := func() [][]any {
		rows := queryRows(t, "SELECT _c0, _c1 FROM csv.`"+out+"` ORDER BY _c0")
		return rows
	}
	// A header-less read: the header line is a row too.
	before := read()
	diff(t, "old output", [][]any{row("1", "a"), row("2", "b"), row("id", "v")}, before)

	if _, err := c.Merge(context.Background(), spark.Job{Sources: bad, Target: spark.Target{Path: out, Format: "csv", Mode: "overwrite"}}); err == nil {
		t.Fatal("a value that does not parse under FAILFAST was written")
	}
	diff(t, "old output after a failed overwrite", before, read())

	res, err := c.Merge(context.Background(), spark.Job{Sources: bad, Verify: true, ReaderOptions: map[string]string{"mode": "DROPMALFORMED"},
		Target: spark.Target{Path: out, Format: "csv", Mode: "overwrite"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsWritten != 1 || !res.Verified {
		t.Errorf("%d rows written, verified %v; want 1", res.RowsWritten, res.Verified)
	}
	diff(t, "new output", [][]any{row("3", "c"), row("id", "v")}, read())
	staging, err := filepath.Glob(filepath.Join(host, ".out.sparkmerge-*-*"))
	if err != nil || len(staging) != 2 {
		t.Fatalf("staging directories = %v (%v), want the two runs' (emptied)", staging, err)
	}
	// The record of the last copy, cleared once it was done.
	_, rows := query(t, "SELECT count(*) FROM text.`"+dir+"/.out.sparkmerge-copying`")
	diff(t, "lines of the copy's record", [][]any{row(int64(0))}, rows)
	for _, s := range staging {
		rows := queryRows(t, "SELECT count(*) FROM parquet.`"+dir+"/"+filepath.Base(s)+"`")
		diff(t, "rows left in "+filepath.Base(s), [][]any{row(int64(0))}, rows)
	}
}
