//go:build integration

package integration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// otherMachine is the owner column of a run on another machine: its
// process cannot be looked up from here, only its lease tells.
const otherMachine = "host=elsewhere boot=another-machine pidns=1 pid=4242 start=1"

// insertPending appends to STATE table a pending row of run runID for
// file c.csv of landing into target, recorded by the Spark server ago
// before now (a Spark interval, "0 SECONDS" for now).
func insertPending(t *testing.T, table, runID, landing, target, ago string) {
	t.Helper()
	// The write jobs of the target's files, as the run found them.
	files, _ := filepath.Glob(filepath.Join(target, "part-*"))
	var jobs []string
	for _, f := range files {
		if m := writeJob.FindStringSubmatch(filepath.Base(f)); m != nil && !slices.Contains(jobs, m[1]) {
			jobs = append(jobs, m[1])
		}
	}
	slices.Sort(jobs)
	exec(t, fmt.Sprintf("INSERT INTO %s SELECT %s, 36, current_timestamp(), %s, 1, current_timestamp() - INTERVAL %s, 'pending', '', %s, %s, %s, current_timestamp() - INTERVAL %s",
		table, sparkmerge.QuoteString(landing+"/c.csv"), sparkmerge.QuoteString(runID), ago, sparkmerge.QuoteString(strings.Join(jobs, ",")),
		sparkmerge.QuoteString(target), sparkmerge.QuoteString(otherMachine), ago))
}

var writeJob = regexp.MustCompile(`^part-\d+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)

// TestIncrementalRunningRunIsNotRecovered: a run that finds pending files
// of another run of its STATE tells a running run from a stopped one
// (found in the field: a run started while another wrote took its pending
// files for a stopped run's and merged them again, duplicating them, both
// exiting 0). A run on another machine that renewed its lease lately is
// running: the run refuses, naming it, and leaves target and STATE
// untouched. One whose lease has ended is stopped: recovered (its rows are
// not in the target: abandoned, merged again). And a run whose pending
// files arrive while this run records its own (two runs started
// together) makes this run record its own abandoned and stop before it
// writes a row.
func TestIncrementalRunningRunIsNotRecovered(t *testing.T) {
	t.Parallel()
	for _, tc := range []string{"running elsewhere", "stopped elsewhere", "started together"} {
		t.Run(tc, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			dir := workDir(t)
			landing, out := filepath.Join(dir, "landing"), filepath.Join(dir, "out")
			table := lakehouseTable(t, "spark_catalog", "lake")
			state := "table:" + table
			writeFiles(t, landing, nightOne, "a.csv", "b.csv")
			job := spark.Job{
				Sources:     []spark.SourceSpec{{Paths: []string{landing}}},
				Policy:      sparkmerge.Options{SourceColumn: "_source", Hints: map[string]sparkmerge.DataType{"zip": {Kind: sparkmerge.KindString}}},
				Target:      spark.Target{Path: out, Evolve: true},
				Incremental: &spark.Incremental{State: state},
			}
			if _, err := c.Merge(testContext(t), job); err != nil {
				t.Fatalf("night 1: %v", err)
			}
			writeFiles(t, landing, nightTwo, "c.csv")
			switch tc {
			case "running elsewhere":
				insertPending(t, table, "other-run", landing, out, "0 SECONDS")
			case "stopped elsewhere":
				insertPending(t, table, "other-run", landing, out, "11 MINUTES")
			case "started together":
				job.Incremental = &spark.Incremental{State: state, Fault: func(step string) error {
					if step == "recording" {
						insertPending(t, table, "other-run", landing, out, "0 SECONDS")
					}
					return nil
				}}
			}
			res, err := c.Merge(testContext(t), job)
			target := queryRows(t, "SELECT CAST(id AS STRING), regexp_extract(_source, '[^/]+$', 0) FROM parquet.`"+out+"` ORDER BY id")
			var merged []string
			for _, r := range stateRows(t, state) {
				merged = append(merged, r.file)
			}
			if tc == "stopped elsewhere" {
				if err != nil {
					t.Fatalf("night 2: %v", err)
				}
				if rec := res.Incremental.Recovered; rec == nil || rec.RunID != "other-run" || rec.Files != 1 || rec.Landed {
					t.Errorf("recovered %+v, want other-run's 1 file, not landed", rec)
				}
				diff(t, "target", [][]any{row("1", "a.csv"), row("2", "a.csv"), row("3", "b.csv"), row("4", "c.csv")}, target)
				diff(t, "files STATE records merged", []string{"a.csv", "b.csv", "c.csv"}, merged)
				return
			}
			var running *spark.RunningRunError
			if !errors.As(err, &running) || running.RunID != "other-run" || running.Together != (tc == "started together") || running.Host != "elsewhere" {
				t.Fatalf("night 2: err = %v, want other-run refused as running (together %v)", err, tc == "started together")
			}
			t.Logf("night 2: %v", err)
			for _, want := range []string{"other-run", "may still be running", "Wait for that run to end", "lease"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			diff(t, "target", [][]any{row("1", "a.csv"), row("2", "a.csv"), row("3", "b.csv")}, target)
			diff(t, "files STATE records merged", []string{"a.csv", "b.csv"}, merged)
			abandoned := queryRows(t, "SELECT regexp_extract(path, '[^/]+$', 0) FROM "+table+" WHERE status = 'abandoned'")
			if tc == "started together" {
				diff(t, "files STATE records abandoned", [][]any{row("c.csv")}, abandoned)
			} else if len(abandoned) != 0 {
				t.Errorf("STATE records %v abandoned, want nothing", abandoned)
			}
		})
	}
}

// TestIncrementalStateOfAnotherTarget: STATE records the target of its
// runs, and a run into another target refuses it, naming both (found in
// the field: two jobs sharing a STATE, one recovered the other's stopped
// run by looking at its own target, recorded it merged, and a file was
// never merged). A STATE written before STATE recorded targets (a path,
// or a table, which gains the new columns) is read as this target's: its
// merged file is left out, and the documented query still lists the
// files merged.
func TestIncrementalStateOfAnotherTarget(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"path", "table"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			dir := workDir(t)
			landing, out := filepath.Join(dir, "landing"), filepath.Join(dir, "out")
			writeFiles(t, landing, nightOne, "a.csv", "b.csv")
			// The STATE of an earlier sparkmerge: a.csv merged.
			legacy := fmt.Sprintf("SELECT %s AS path, CAST(%d AS BIGINT) AS size, timestamp_millis(%d) AS modified, 'old-run' AS run_id, CAST(2 AS BIGINT) AS rows, current_timestamp() AS merged_at, 'merged' AS status, '' AS write_job, '' AS jobs_before",
				sparkmerge.QuoteString(landing+"/a.csv"), len(nightOne["a.csv"]), mtime(t, landing, "a.csv"))
			state := filepath.Join(dir, "state")
			if where == "path" {
				exec(t, "INSERT OVERWRITE DIRECTORY "+sparkmerge.QuoteString(state)+" USING parquet "+legacy)
			} else {
				table := lakehouseTable(t, "spark_catalog", "lake")
				exec(t, "CREATE TABLE "+table+" USING parquet AS "+legacy)
				state = "table:" + table
			}
			job := spark.Job{
				Sources:     []spark.SourceSpec{{Paths: []string{landing}}},
				Policy:      sparkmerge.Options{SourceColumn: "_source", Hints: map[string]sparkmerge.DataType{"zip": {Kind: sparkmerge.KindString}}},
				Target:      spark.Target{Path: out},
				Incremental: &spark.Incremental{State: state},
			}
			res, err := c.Merge(testContext(t), job)
			if err != nil {
				t.Fatalf("a run over the older STATE: %v", err)
			}
			diff(t, "files merged", []string{landing + "/b.csv"}, res.Incremental.Merged)
			var merged []string
			for _, r := range stateRows(t, state) {
				merged = append(merged, r.file)
			}
			diff(t, "files STATE records merged", []string{"a.csv", "b.csv"}, merged)

			// Another job, its own landing directory and target, the same STATE.
			other := filepath.Join(dir, "other")
			writeFiles(t, filepath.Join(other, "landing"), nightTwo, "c.csv")
			job2 := spark.Job{
				Sources:     []spark.SourceSpec{{Paths: []string{filepath.Join(other, "landing")}}},
				Target:      spark.Target{Path: filepath.Join(other, "out")},
				Incremental: &spark.Incremental{State: state},
			}
			_, err = c.Merge(testContext(t), job2)
			if err == nil || !strings.Contains(err.Error(), "one STATE keeps the files of one target") ||
				!strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), filepath.Join(other, "out")) {
				t.Fatalf("the other job: err = %v, want STATE refused, naming both targets", err)
			}
			t.Logf("the other job: %v", err)
			if res, err := c.Merge(testContext(t), job); err != nil || !res.Incremental.NothingNew {
				t.Errorf("the next run: %v, %+v; want nothing new", err, res)
			}
		})
	}
}

// TestIncrementalRunRenewsItsLease: a run renews its lease while it
// writes (an alive row of its own every fifth of the lease, at least a
// second apart), so that a run on another machine does not take it for
// stopped however long it writes; its renewals are no file STATE records.
func TestIncrementalRunRenewsItsLease(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	landing, out, state := filepath.Join(dir, "landing"), filepath.Join(dir, "out"), filepath.Join(dir, "state")
	writeFiles(t, landing, nightOne, "a.csv", "b.csv")
	renewals := 0
	job := spark.Job{
		Sources: []spark.SourceSpec{{Paths: []string{landing}}},
		Target:  spark.Target{Path: out},
		Incremental: &spark.Incremental{State: state, Lease: 2 * time.Second, Fault: func(step string) error {
			if step == "pending" {
				// A write that takes a while.
				time.Sleep(3 * time.Second)
				n := queryRows(t, "SELECT count(1) FROM parquet.`"+state+"` WHERE status = 'alive'")
				renewals = int(n[0][0].(int64))
			}
			return nil
		}},
	}
	res, err := c.Merge(testContext(t), job)
	if err != nil || !res.Incremental.Recorded {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if renewals < 1 {
		t.Errorf("%d renewals of the lease in 3 s of a 2 s lease, want at least 1", renewals)
	}
	var merged []string
	for _, r := range stateRows(t, state) {
		merged = append(merged, r.file)
	}
	diff(t, "files STATE records merged", []string{"a.csv", "b.csv"}, merged)
	if res, err := c.Merge(testContext(t), job); err != nil || !res.Incremental.NothingNew || res.Incremental.Recovered != nil {
		t.Errorf("the next run: %v, %+v; want nothing new, nothing to recover", err, res)
	}
}

// TestIncrementalLostStateIsRefused: a run whose STATE does not exist,
// into a target that already holds rows, refuses and writes nothing (found
// in the field: a STATE path spelled otherwise one night merged the whole
// landing directory a second time, every row twice); with NewState it
// appends every listed file, and the next run of that STATE finds nothing
// new. A target that does not exist yet, or holds no row, starts a STATE
// without it. A path target and a Delta table.
func TestIncrementalLostStateIsRefused(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"path", "delta table"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			dir := workDir(t)
			landing := filepath.Join(dir, "landing")
			writeFiles(t, landing, nightOne, "a.csv", "b.csv")
			target := spark.Target{Path: filepath.Join(dir, "out")}
			count := func() int64 {
				q := "SELECT count(*) FROM parquet." + backquote(target.Path)
				if target.Table != "" {
					q = "SELECT count(*) FROM " + target.Table
				}
				return queryRows(t, q)[0][0].(int64)
			}
			if where == "delta table" {
				target = spark.Target{Table: lakehouseTable(t, "spark_catalog", "lost"), Format: "delta"}
				exec(t, "CREATE TABLE "+target.Table+" (id INT, zip STRING, amount STRING) USING delta")
			}
			run := func(state string, newState bool) (*spark.Result, error) {
				return c.Merge(testContext(t), spark.Job{
					Sources:     []spark.SourceSpec{{Paths: []string{landing}}},
					Policy:      sparkmerge.Options{Hints: map[string]sparkmerge.DataType{"zip": {Kind: sparkmerge.KindString}}},
					Target:      target,
					Verify:      true,
					Incremental: &spark.Incremental{State: state, NewState: newState},
				})
			}
			// The first STATE: the target does not exist yet (or is an
			// empty table), so no NewState is needed.
			if _, err := run(filepath.Join(dir, "state"), false); err != nil {
				t.Fatalf("the first run: %v", err)
			}
			rows := count()
			if rows == 0 {
				t.Fatal("the first run wrote no row")
			}
			lost := filepath.Join(dir, "state-lost")
			_, err := run(lost, false)
			if err == nil || !strings.Contains(err.Error(), "STATE "+lost+" holds no file") || !strings.Contains(err.Error(), "already holds rows") ||
				!strings.Contains(err.Error(), "Incremental.NewState") {
				t.Fatalf("a new STATE into a target with rows: err = %v, want it refused, naming STATE, the target and NewState", err)
			}
			if got := count(); got != rows {
				t.Errorf("the refused run changed the target: %d rows, had %d", got, rows)
			}
			if _, err := os.Stat(lost); !os.IsNotExist(err) {
				t.Errorf("the refused run wrote STATE %s (%v)", lost, err)
			}
			res, err := run(lost, true)
			if err != nil {
				t.Fatalf("NewState: %v", err)
			}
			if got := count(); got != 2*rows || len(res.Incremental.Merged) != 2 {
				t.Errorf("NewState: %d rows (had %d), %d files merged; want every file appended again", got, rows, len(res.Incremental.Merged))
			}
			res, err = run(lost, false)
			if err != nil || !res.Incremental.NothingNew {
				t.Errorf("the next run of the new STATE: %v, nothing new: %v", err, res != nil && res.Incremental.NothingNew)
			}
		})
	}
}
