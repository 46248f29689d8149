//go:build integration

package integration

import (
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// nightlyJob is the README's nightly job file (the YAML block after "A
// nightly merge of a landing directory"), its paths replaced by landing,
// out and state: zip kept as text and amount a decimal by hints, values
// that do not fit rescued, the target evolved as columns arrive.
func nightlyJob(t *testing.T, landing, out, state string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(testdataRoot), "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "A nightly merge of a landing directory")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md shows no nightly job file")
	}
	for from, to := range map[string]string{"/landing/orders": landing, "/lake/orders": out, "/lake/_state/orders": state} {
		if !strings.Contains(block, from) {
			t.Fatalf("the README's nightly job file has no %s:\n%s", from, block)
		}
		block = strings.ReplaceAll(block, from+"\n", to+"\n")
		block = strings.ReplaceAll(block, from+" ", to+" ")
	}
	return block
}

// The landing directory, night by night.
var (
	nightOne = map[string]string{
		"a.csv": "id,zip,amount\n1,0042,10.50\n2,00501,abc\n",
		"b.csv": "id,zip,amount\n3,12345,7\n",
	}
	nightTwo = map[string]string{
		"c.csv": "id,zip,amount,city\n4,0007,3.25,Oslo\n",
		// b.csv rewritten: a row added.
		"b.csv": "id,zip,amount\n3,12345,7\n5,09999,1.5\n",
	}
)

// TestNightlyJobFileThreeNights runs the README's nightly job file on
// three nights over a landing directory that grows, through the CLI, on
// local files and on files only the cluster sees (its target and STATE
// there too): night 1 merges a.csv and b.csv; night 2 has c.csv new (with
// a column the target gains) and b.csv rewritten, which fails the run by
// default, naming b.csv and leaving target and STATE as they were, and
// with --incremental-changed remerge appends c.csv and b.csv's rows as
// they are now; night 3 finds nothing new and says so (exit 0, -o json
// nothing_new), the target untouched. After each night the target's rows
// (the leading zeros kept, "abc" rescued) and STATE's rows (file, size,
// modification time, rows, run) are checked exactly.
func TestNightlyJobFileThreeNights(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, host, spark string) {
		upstreamSession(t) // temporary views
		landing := filepath.Join(host, "landing")
		sparkLanding := spark + "/landing"
		out, state := spark+"/out", spark+"/state"
		job := filepath.Join(host, "nightly.yaml")
		if err := os.WriteFile(job, []byte(nightlyJob(t, sparkLanding, out, state)), 0o644); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, landing, nightOne, "a.csv", "b.csv")

		// A dry run says what night 1 would take and writes nothing.
		code, stdout, stderr := cliRun(t, "merge", "-f", job, "--dry-run", "-o", "json")
		validateJSON(t, "plan", stdout)
		if code != 0 || !strings.Contains(stdout, `"merged":["`+sparkLanding+`/a.csv","`+sparkLanding+`/b.csv"]`) {
			t.Errorf("dry run: exit %d, want a plan of a.csv and b.csv; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(host, "state")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dry run made STATE (%v)", err)
		}

		// Night 1.
		code, stdout, stderr = cliRun(t, "merge", "-f", job)
		if code != 0 {
			t.Fatalf("night 1: exit %d; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "incremental: 2 new files of 2 listed; 0 merged already") || !strings.Contains(stdout, "recorded 2 files merged in "+state) {
			t.Errorf("night 1: stdout does not say what it took and recorded:\n%s", stdout)
		}
		night1 := [][]any{
			row("1", "0042", "10.50", nil, nil, "a.csv"),
			row("2", "00501", nil, nil, "abc", "a.csv"),
			row("3", "12345", "7.00", nil, nil, "b.csv"),
		}
		diff(t, "night 1 target", night1, nightlyRows(t, out))
		st1 := stateRows(t, state)
		diff(t, "night 1 STATE", []stateLine{
			{"a.csv", int64(len(nightOne["a.csv"])), mtime(t, landing, "a.csv"), 2, "merged"},
			{"b.csv", int64(len(nightOne["b.csv"])), mtime(t, landing, "b.csv"), 1, "merged"},
		}, stateLines(st1))
		if runs := runIDs(st1); len(runs) != 1 {
			t.Errorf("night 1: %d run ids in STATE, want 1: %v", len(runs), runs)
		}

		// Night 2: c.csv lands, b.csv is rewritten.
		time.Sleep(10 * time.Millisecond)
		if err := os.WriteFile(filepath.Join(landing, "b.csv"), []byte(nightTwo["b.csv"]), 0o666); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, landing, nightTwo, "c.csv")
		code, _, stderr = cliRun(t, "merge", "-f", job)
		if code == 0 || !strings.Contains(stderr, sparkLanding+"/b.csv") || !strings.Contains(stderr, "--incremental-changed remerge") {
			t.Errorf("night 2 with b.csv changed: exit %d, want a failure naming b.csv and the option; stderr:\n%s", code, stderr)
		}
		diff(t, "target after the refused night 2", night1, nightlyRows(t, out))
		diff(t, "STATE after the refused night 2", stateLines(st1), stateLines(stateRows(t, state)))

		code, stdout, stderr = cliRun(t, "merge", "-f", job, "--incremental-changed", "remerge")
		if code != 0 {
			t.Fatalf("night 2: exit %d; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "incremental: 2 new files of 3 listed; 1 merged already") || !strings.Contains(stdout, "1 file changed since merged: "+sparkLanding+"/b.csv") {
			t.Errorf("night 2: stdout does not say what it took:\n%s", stdout)
		}
		night2 := [][]any{
			row("1", "0042", "10.50", nil, nil, "a.csv"),
			row("2", "00501", nil, nil, "abc", "a.csv"),
			row("3", "12345", "7.00", nil, nil, "b.csv"),
			row("3", "12345", "7.00", nil, nil, "b.csv"),
			row("4", "0007", "3.25", "Oslo", nil, "c.csv"),
			row("5", "09999", "1.50", nil, nil, "b.csv"),
		}
		diff(t, "night 2 target", night2, nightlyRows(t, out))
		st2 := stateRows(t, state)
		diff(t, "night 2 STATE", []stateLine{
			{"a.csv", int64(len(nightOne["a.csv"])), mtime(t, landing, "a.csv"), 2, "merged"},
			{"b.csv", int64(len(nightOne["b.csv"])), st1[1].modified, 1, "merged"},
			{"b.csv", int64(len(nightTwo["b.csv"])), mtime(t, landing, "b.csv"), 2, "merged"},
			{"c.csv", int64(len(nightTwo["c.csv"])), mtime(t, landing, "c.csv"), 1, "merged"},
		}, stateLines(st2))
		if runs := runIDs(st2); len(runs) != 2 {
			t.Errorf("night 2: %d run ids in STATE, want 2: %v", len(runs), runs)
		}

		// Night 3: nothing new.
		code, stdout, stderr = cliRun(t, "merge", "-f", job, "-o", "json")
		if code != 0 {
			t.Fatalf("night 3: exit %d; stderr:\n%s", code, stderr)
		}
		var res struct {
			RowsWritten int64 `json:"rows_written"`
			Incremental struct {
				NothingNew    bool     `json:"nothing_new"`
				Listed        int      `json:"listed"`
				AlreadyMerged int      `json:"already_merged"`
				Merged        []string `json:"merged"`
			} `json:"incremental"`
		}
		validateJSON(t, "merge", stdout)
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("night 3: -o json: %v\n%s", err, stdout)
		}
		if !res.Incremental.NothingNew || res.RowsWritten != 0 || res.Incremental.Listed != 3 || res.Incremental.AlreadyMerged != 3 || len(res.Incremental.Merged) != 0 {
			t.Errorf("night 3: %+v, want nothing new, 0 rows, 3 listed and merged already", res)
		}
		code, stdout, stderr = cliRun(t, "merge", "-f", job)
		if code != 0 || !strings.Contains(stdout, "nothing new: the 3 files listed are merged already") || !strings.Contains(stdout, "untouched") {
			t.Errorf("night 3 (text): exit %d, want 0 and nothing new said; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		diff(t, "night 3 target", night2, nightlyRows(t, out))
		diff(t, "night 3 STATE", stateLines(st2), stateLines(stateRows(t, state)))
	}
	localAndCluster(t, run)
}

// nightlyRows are the nightly target's rows: id, zip, amount, city, the
// rescued amount and the file's name, ordered.
func nightlyRows(t *testing.T, out string) [][]any {
	t.Helper()
	// Read as sparkmerge reads the target back: the files of night 1
	// lack city.
	view := "nightly_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	exec(t, "CREATE TEMPORARY VIEW "+view+" USING parquet OPTIONS (path '"+out+"', mergeSchema 'true')")
	defer exec(t, "DROP VIEW "+view)
	cols, _ := query(t, "SELECT * FROM "+view+" LIMIT 0")
	city := "CAST(NULL AS STRING)"
	if slices.Contains(cols, "city") {
		city = "city"
	}
	_, rows := query(t, "SELECT CAST(id AS STRING), zip, CAST(amount AS STRING), "+city+", get_json_object(_rescued, '$.amount'), regexp_extract(_source, '[^/]+$', 0) FROM "+view+" ORDER BY id, _source")
	return rows
}

// stateRow is a row of STATE as the test reads it.
type stateRow struct {
	file           string
	size, modified int64
	rows           int64
	status, runID  string
}

// stateLine is a STATE row without its run id.
type stateLine struct {
	File     string
	Size     int64
	Modified int64
	Rows     int64
	Status   string
}

// stateRows are the merged rows of STATE at a path, or of table:NAME.
func stateRows(t *testing.T, state string) []stateRow {
	t.Helper()
	from := "parquet.`" + state + "`"
	if name, ok := strings.CutPrefix(state, "table:"); ok {
		from = name
	}
	_, rows := query(t, "SELECT regexp_extract(path, '[^/]+$', 0), size, unix_millis(modified), rows, status, run_id FROM "+from+" WHERE status = 'merged' ORDER BY path, merged_at")
	var out []stateRow
	for _, r := range rows {
		out = append(out, stateRow{r[0].(string), r[1].(int64), r[2].(int64), r[3].(int64), r[4].(string), r[5].(string)})
	}
	return out
}

func stateLines(rows []stateRow) []stateLine {
	var out []stateLine
	for _, r := range rows {
		out = append(out, stateLine{r.file, r.size, r.modified, r.rows, r.status})
	}
	return out
}

func runIDs(rows []stateRow) map[string]bool {
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.runID] = true
	}
	return ids
}

// mtime is a file's modification time in Unix milliseconds.
func mtime(t *testing.T, dir, name string) int64 {
	t.Helper()
	info, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime().UnixMilli()
}

// TestIncrementalRunStoppedMidWayIsRecovered stops an incremental run at
// each step of its recording (the test seam Incremental.Fault, where a
// killed process would stop), on local files and on files only the
// cluster sees: stopped after STATE holds its files pending and before
// any row is written, the next run finds the target without them,
// records them abandoned and merges them again; stopped after the rows
// are in the target and before STATE says so, the next run finds its
// write job's files in the target, records them merged and merges only
// the file that landed since. Either way every row is in the target
// exactly once, and STATE records each file merged once.
func TestIncrementalRunStoppedMidWayIsRecovered(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"pending", "written"} {
		for _, where := range []string{"local", "cluster"} {
			t.Run(step+"/"+where, func(t *testing.T) {
				t.Parallel()
				c := newClient(t)
				host, sdir := workDir(t), ""
				if where == "cluster" {
					host, sdir = sparktest.ClusterDir(t)
				} else {
					sdir = host
				}
				landing := filepath.Join(host, "landing")
				writeFiles(t, landing, nightOne, "a.csv", "b.csv")
				out, state := sdir+"/out", sdir+"/state"
				job := spark.Job{
					Sources:     []spark.SourceSpec{{Paths: []string{sdir + "/landing"}}},
					Policy:      sparkmerge.Options{SourceColumn: "_source", Rescue: "_rescued", Hints: map[string]sparkmerge.DataType{"zip": {Kind: sparkmerge.KindString}}},
					Target:      spark.Target{Path: out, Evolve: true},
					Incremental: &spark.Incremental{State: state},
				}
				stopped := job
				stopped.Incremental = &spark.Incremental{State: state, Fault: func(at string) error {
					if at == step {
						return errStopped
					}
					return nil
				}}
				if _, err := c.Merge(testContext(t), stopped); !errors.Is(err, errStopped) {
					t.Fatalf("stopped run: err = %v, want it stopped at %s", err, step)
				}
				writeFiles(t, landing, nightTwo, "c.csv")
				res, err := c.Merge(testContext(t), job)
				if err != nil {
					t.Fatalf("next run: %v", err)
				}
				rec := res.Incremental.Recovered
				if rec == nil || rec.Files != 2 || rec.Landed != (step == "written") {
					t.Errorf("recovered %+v, want the stopped run's 2 files, landed %v", rec, step == "written")
				}
				wantMerged := []string{sdir + "/landing/a.csv", sdir + "/landing/b.csv", sdir + "/landing/c.csv"}
				if step == "written" {
					wantMerged = wantMerged[2:]
				}
				diff(t, "files the next run merged", wantMerged, res.Incremental.Merged)
				_, rows := query(t, "SELECT CAST(id AS STRING), regexp_extract(_source, '[^/]+$', 0) FROM parquet.`"+out+"` ORDER BY id")
				diff(t, "target", [][]any{row("1", "a.csv"), row("2", "a.csv"), row("3", "b.csv"), row("4", "c.csv")}, rows)
				var files []string
				for _, r := range stateRows(t, state) {
					files = append(files, r.file)
				}
				diff(t, "files STATE records merged", []string{"a.csv", "b.csv", "c.csv"}, files)
				// And a third run has nothing to do.
				res, err = c.Merge(testContext(t), job)
				if err != nil || !res.Incremental.NothingNew || res.Incremental.Recovered != nil {
					t.Errorf("third run: %v, %+v; want nothing new, nothing to recover", err, res)
				}
			})
		}
	}
}

var errStopped = errors.New("stopped by the test")

// TestIncrementalCLIKilledMidRun kills the CLI (SIGKILL) running the
// nightly job file as soon as STATE holds its files pending, wherever the
// run then is (writing the rows, installing them, recording them), on
// local files: the next run merges exactly what is not in the target,
// every row once, and STATE records each file merged once.
func TestIncrementalCLIKilledMidRun(t *testing.T) {
	t.Parallel()
	upstreamSession(t) // temporary views
	dir := workDir(t)
	landing, out, state := filepath.Join(dir, "landing"), filepath.Join(dir, "out"), filepath.Join(dir, "state")
	job := filepath.Join(dir, "nightly.yaml")
	if err := os.WriteFile(job, []byte(nightlyJob(t, landing, out, state)), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, landing, nightOne, "a.csv", "b.csv")
	cmd := osexec.CommandContext(testContext(t), cliBinary(t), "merge", "-f", job, "--remote", requireSpark(t))
	cmd.Env = append(os.Environ(), "SPARK_REMOTE=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	for !killed {
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before STATE held its files pending", err)
		case <-time.After(2 * time.Millisecond):
		}
		if files, _ := filepath.Glob(filepath.Join(state, "*.parquet")); len(files) > 0 {
			cmd.Process.Kill()
			killed = true
		}
	}
	<-exited
	code, stdout, stderr := cliRun(t, "merge", "-f", job)
	if code != 0 || !strings.Contains(stdout, "stopped before recording its 2 files merged") {
		t.Errorf("the recovering run: exit %d, want 0 and the killed run recovered; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("the recovering run:\n%s", stdout)
	code, stdout, stderr2 := cliRun(t, "merge", "-f", job)
	if code != 0 || !strings.Contains(stdout, "nothing new") {
		t.Errorf("the run after the recovering one: exit %d, want nothing new; stdout:\n%s\nstderr:\n%s\n(recovering run's stderr:\n%s)", code, stdout, stderr2, stderr)
	}
	diff(t, "target", [][]any{
		row("1", "0042", "10.50", nil, nil, "a.csv"),
		row("2", "00501", nil, nil, "abc", "a.csv"),
		row("3", "12345", "7.00", nil, nil, "b.csv"),
	}, nightlyRows(t, out))
	var files []string
	for _, r := range stateRows(t, state) {
		files = append(files, r.file)
	}
	diff(t, "files STATE records merged", []string{"a.csv", "b.csv"}, files)
}

// TestIncrementalTableRunStoppedMidWayIsRecovered is
// TestIncrementalRunStoppedMidWayIsRecovered for Delta and Iceberg table
// targets, with STATE a table too: the run's commit, tagged with its id,
// is in the table's history or not, and the next run records the stopped
// run's files merged or abandoned accordingly; every row is in the table
// once.
func TestIncrementalTableRunStoppedMidWayIsRecovered(t *testing.T) {
	t.Parallel()
	for _, f := range lakehouseFormats {
		for _, step := range []string{"pending", "written"} {
			t.Run(f.format+"/"+step, func(t *testing.T) {
				t.Parallel()
				requireTableFormat(t, f.format)
				c := newClient(t)
				table := lakehouseTable(t, f.catalog, "lake")
				state := "table:" + lakehouseTable(t, "spark_catalog", "lake")
				landing := filepath.Join(workDir(t), "landing")
				writeFiles(t, landing, nightOne, "a.csv", "b.csv")
				job := spark.Job{
					Sources:     []spark.SourceSpec{{Paths: []string{landing}}},
					Policy:      sparkmerge.Options{SourceColumn: "_source", Hints: map[string]sparkmerge.DataType{"zip": {Kind: sparkmerge.KindString}}},
					Target:      spark.Target{Table: table, Format: f.format, Evolve: true},
					Incremental: &spark.Incremental{State: state},
				}
				stopped := job
				stopped.Incremental = &spark.Incremental{State: state, Fault: func(at string) error {
					if at == step {
						return errStopped
					}
					return nil
				}}
				if _, err := c.Merge(testContext(t), stopped); !errors.Is(err, errStopped) {
					t.Fatalf("stopped run: err = %v, want it stopped at %s", err, step)
				}
				writeFiles(t, landing, nightTwo, "c.csv")
				res, err := c.Merge(testContext(t), job)
				if err != nil {
					t.Fatalf("next run: %v", err)
				}
				rec := res.Incremental.Recovered
				if rec == nil || rec.Files != 2 || rec.Landed != (step == "written") {
					t.Errorf("recovered %+v, want the stopped run's 2 files, landed %v", rec, step == "written")
				}
				_, rows := query(t, "SELECT CAST(id AS STRING), regexp_extract(_source, '[^/]+$', 0) FROM "+table+" ORDER BY id")
				diff(t, "target", [][]any{row("1", "a.csv"), row("2", "a.csv"), row("3", "b.csv"), row("4", "c.csv")}, rows)
				var files []string
				for _, r := range stateRows(t, state) {
					files = append(files, r.file)
				}
				diff(t, "files STATE records merged", []string{"a.csv", "b.csv", "c.csv"}, files)
			})
		}
	}
}

// TestIncrementalObjectStore: a landing prefix in the object store
// (s3a://), listed by Spark: each run merges the objects STATE lacks,
// their sizes and modification times as Spark's listing gives them, and
// a run with nothing new writes nothing.
func TestIncrementalObjectStore(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	put, uri := sparktest.ObjectStoreDir(t)
	put("a.csv", []byte(nightOne["a.csv"]))
	put("b.csv", []byte(nightOne["b.csv"]))
	dir := workDir(t)
	out, state := filepath.Join(dir, "out"), filepath.Join(dir, "state")
	job := spark.Job{
		Sources:     []spark.SourceSpec{{Paths: []string{uri}}},
		Policy:      sparkmerge.Options{SourceColumn: "_source", Hints: map[string]sparkmerge.DataType{"zip": {Kind: sparkmerge.KindString}}},
		Target:      spark.Target{Path: out, Evolve: true},
		Incremental: &spark.Incremental{State: state},
		Verify:      true,
	}
	res, err := c.Merge(testContext(t), job)
	if err != nil {
		t.Fatalf("night 1: %v", err)
	}
	diff(t, "night 1 merged", []string{uri + "/a.csv", uri + "/b.csv"}, res.Incremental.Merged)
	st1 := stateRows(t, state)
	put("c.csv", []byte(nightTwo["c.csv"]))
	if res, err = c.Merge(testContext(t), job); err != nil {
		t.Fatalf("night 2: %v", err)
	}
	diff(t, "night 2 merged", []string{uri + "/c.csv"}, res.Incremental.Merged)
	if res, err = c.Merge(testContext(t), job); err != nil || !res.Incremental.NothingNew {
		t.Fatalf("night 3: %v, %+v; want nothing new", err, res)
	}
	_, rows := query(t, "SELECT CAST(id AS STRING), zip, regexp_extract(_source, '[^/]+$', 0) FROM parquet.`"+out+"` ORDER BY id")
	diff(t, "target", [][]any{row("1", "0042", "a.csv"), row("2", "00501", "a.csv"), row("3", "12345", "b.csv"), row("4", "0007", "c.csv")}, rows)
	st := stateRows(t, state)
	diff(t, "STATE", []stateLine{
		{"a.csv", int64(len(nightOne["a.csv"])), st1[0].modified, 2, "merged"},
		{"b.csv", int64(len(nightOne["b.csv"])), st1[1].modified, 1, "merged"},
		{"c.csv", int64(len(nightTwo["c.csv"])), st[2].modified, 1, "merged"},
	}, stateLines(st))
	for _, r := range st {
		if r.modified < time.Now().Add(-time.Hour).UnixMilli() {
			t.Errorf("%s: modified %d, want the upload's time as Spark lists it", r.file, r.modified)
		}
	}
}

// TestIncrementalEmptyDrop: a night whose only new file is empty (0
// bytes) reads and writes no row, records the file with 0 rows, and the
// next night takes it for merged; on local files and files only the
// cluster sees.
func TestIncrementalEmptyDrop(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, host, sdir string) {
		c := newClient(t)
		writeFiles(t, filepath.Join(host, "landing"), map[string]string{"a.csv": nightOne["a.csv"], "empty.csv": ""}, "a.csv")
		out, state := sdir+"/out", sdir+"/state"
		job := spark.Job{Sources: []spark.SourceSpec{{Paths: []string{sdir + "/landing"}}}, Target: spark.Target{Path: out}, Incremental: &spark.Incremental{State: state}}
		if _, err := c.Merge(testContext(t), job); err != nil {
			t.Fatalf("night 1: %v", err)
		}
		writeFiles(t, filepath.Join(host, "landing"), map[string]string{"empty.csv": ""}, "empty.csv")
		res, err := c.Merge(testContext(t), job)
		if err != nil || !res.Incremental.NothingNew || !res.Incremental.Recorded || res.RowsWritten != 0 {
			t.Fatalf("night 2: %v, %+v; want nothing new to read, the empty file recorded", err, res.Incremental)
		}
		diff(t, "night 2 merged", []string{sdir + "/landing/empty.csv"}, res.Incremental.Merged)
		res, err = c.Merge(testContext(t), job)
		if err != nil || !res.Incremental.NothingNew || res.Incremental.AlreadyMerged != 2 || len(res.Incremental.Merged) != 0 {
			t.Fatalf("night 3: %v, %+v; want nothing new, 2 merged already", err, res.Incremental)
		}
		diff(t, "STATE", []stateLine{
			{"a.csv", int64(len(nightOne["a.csv"])), mtime(t, filepath.Join(host, "landing"), "a.csv"), 2, "merged"},
			{"empty.csv", 0, stateRows(t, state)[1].modified, 0, "merged"},
		}, stateLines(stateRows(t, state)))
		_, rows := query(t, "SELECT count(1) FROM parquet.`"+out+"`")
		diff(t, "target rows", [][]any{{int64(2)}}, rows)
	}
	localAndCluster(t, run)
}

// localAndCluster runs run in parallel subtests on a directory the client
// sees (local: host and Spark's path are one) and on one only the cluster
// sees (host is where the test writes, sdir where Spark reads).
func localAndCluster(t *testing.T, run func(t *testing.T, host, sdir string)) {
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		dir := workDir(t)
		run(t, dir, dir)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		host, sdir := sparktest.ClusterDir(t)
		run(t, host, sdir)
	})
}

// TestIncrementalLandingEmptied: a quiet night after the merged files
// were moved out of the landing directory is nothing new (exit 0, -o json
// nothing_new), whether the source is the directory, now empty, or a
// pattern that matches nothing; it failed with exit 1 (found in the
// field). A merge that is not incremental still fails on the empty
// directory.
func TestIncrementalLandingEmptied(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, host, sdir string) {
		landing := filepath.Join(host, "landing")
		writeFiles(t, landing, map[string]string{"a.csv": nightOne["a.csv"]}, "a.csv")
		out, state := sdir+"/out", sdir+"/state"
		night := func(source string, extra ...string) (int, string, string) {
			return cliRun(t, append([]string{"merge", source, "--out", out, "--incremental", state, "--progress", "never"}, extra...)...)
		}
		if code, _, stderr := night(sdir + "/landing"); code != 0 {
			t.Fatalf("night 1: exit %d: %s", code, stderr)
		}
		if err := os.Rename(filepath.Join(landing, "a.csv"), filepath.Join(host, "a.csv.done")); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := night(sdir+"/landing", "-o", "json")
		if code != 0 {
			t.Fatalf("night 2, the landing directory empty: exit %d: %s", code, stderr)
		}
		var res struct {
			Incremental struct {
				NothingNew bool     `json:"nothing_new"`
				Listed     int      `json:"listed"`
				Unlisted   []string `json:"unlisted"`
			} `json:"incremental"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("night 2: -o json: %v\n%s", err, stdout)
		}
		if !res.Incremental.NothingNew || res.Incremental.Listed != 0 || len(res.Incremental.Unlisted) != 1 {
			t.Errorf("night 2: %+v, want nothing new, no file listed, the landing directory named", res.Incremental)
		}
		code, stdout, stderr = night(sdir + "/landing/*.csv")
		if code != 0 || !strings.Contains(stdout, "incremental: nothing new") {
			t.Errorf("night 3, a pattern that matches nothing: exit %d\n%s\n%s", code, stdout, stderr)
		}
		_, rows := query(t, "SELECT count(1) FROM parquet.`"+out+"`")
		diff(t, "target rows", [][]any{{int64(2)}}, rows)
		code, _, stderr = cliRun(t, "merge", sdir+"/landing", "--out", sdir+"/out2", "--progress", "never")
		if code != 1 || !strings.Contains(stderr, "landing") {
			t.Errorf("not incremental: exit %d: %s; want exit 1 naming the directory", code, stderr)
		}
	}
	localAndCluster(t, run)
}
