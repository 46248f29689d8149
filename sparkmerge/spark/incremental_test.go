package spark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStateOf(t *testing.T) {
	rows := []stateRow{
		{path: "/l/a.csv", size: 10, runID: "r1", status: statePending, mergedAt: 1},
		{path: "/l/a.csv", size: 10, runID: "r1", status: stateMerged, mergedAt: 2},
		{path: "/l/b.csv", size: 5, runID: "r1", status: statePending, mergedAt: 1},
		{path: "/l/b.csv", size: 5, runID: "r1", status: stateMerged, mergedAt: 2},
		// b.csv re-merged later: the latest record wins.
		{path: "/l/b.csv", size: 7, runID: "r2", status: stateMerged, mergedAt: 5},
		// A run abandoned: resolved, not merged.
		{path: "/l/c.csv", size: 3, runID: "r3", status: statePending, mergedAt: 6},
		{path: "/l/c.csv", size: 3, runID: "r3", status: stateAbandoned, mergedAt: 7},
		// A run that stopped: pending.
		{path: "/l/d.csv", size: 4, runID: "r4", status: statePending, mergedAt: 8},
	}
	merged, pending := stateOf(rows)
	got := map[string]int64{}
	for p, r := range merged {
		got[p] = r.size
	}
	if d := cmp.Diff(map[string]int64{"/l/a.csv": 10, "/l/b.csv": 7}, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
	if len(pending) != 1 || len(pending["r4"]) != 1 || pending["r4"][0].path != "/l/d.csv" {
		t.Errorf("pending = %+v, want r4's d.csv", pending)
	}
}

func TestSelectNew(t *testing.T) {
	merged := map[string]stateRow{
		"/l/a.csv": {path: "/l/a.csv", size: 10, modified: 100, runID: "r1"},
		"/l/b.csv": {path: "/l/b.csv", size: 5, modified: 100, runID: "r1"},
	}
	files := []incrementalFile{
		{path: "/l/a.csv", size: 10, modified: 100}, // unchanged
		{path: "/l/b.csv", size: 5, modified: 200},  // touched
		{path: "/l/c.csv", size: 1, modified: 300},  // new
	}
	paths := func(fs []incrementalFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.path)
		}
		return out
	}
	for _, tc := range []struct {
		policy  ChangedFiles
		picked  []string
		already int
		changed []string
	}{
		{ChangedRemerge, []string{"/l/b.csv", "/l/c.csv"}, 1, []string{"/l/b.csv"}},
		{ChangedSkip, []string{"/l/c.csv"}, 2, []string{"/l/b.csv"}},
	} {
		picked, already, changed, err := selectNew("/s", files, merged, tc.policy)
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		if d := cmp.Diff(tc.picked, paths(picked)); d != "" {
			t.Errorf("%s: picked (-want +got):\n%s", tc.policy, d)
		}
		if already != tc.already || !cmp.Equal(changed, tc.changed) {
			t.Errorf("%s: already %d, changed %v; want %d, %v", tc.policy, already, changed, tc.already, tc.changed)
		}
	}
	_, _, _, err := selectNew("/s", files, merged, ChangedError)
	var ce *ChangedFileError
	if !errors.As(err, &ce) || ce.Path != "/l/b.csv" || ce.RunID != "r1" || !strings.Contains(err.Error(), "(Incremental.Changed = remerge: ") || !strings.Contains(err.Error(), "(Incremental.Changed = skip)") {
		t.Errorf("error policy: err = %v, want a ChangedFileError naming /l/b.csv, run r1 and the option", err)
	}
	// A size change alone is a change.
	_, _, _, err = selectNew("/s", []incrementalFile{{path: "/l/a.csv", size: 11, modified: 100}}, merged, ChangedError)
	if !errors.As(err, &ce) {
		t.Errorf("size changed: err = %v, want a ChangedFileError", err)
	}
}

func TestLandedJob(t *testing.T) {
	const (
		j1 = "11111111-1111-1111-1111-111111111111"
		j2 = "22222222-2222-2222-2222-222222222222"
		j3 = "33333333-3333-3333-3333-333333333333"
	)
	file := func(job string, n string) string { return "/out/part-0000" + n + "-" + job + "-c000.snappy.parquet" }
	for _, tc := range []struct {
		name    string
		before  string
		now     []string
		want    string
		wantErr string
	}{
		{"nothing written", j1, []string{file(j1, "0")}, "", ""},
		{"written", j1, []string{file(j1, "0"), file(j2, "0"), file(j2, "1")}, j2, ""},
		{"into an empty target", "", []string{file(j2, "0")}, j2, ""},
		{"two writers", j1, []string{file(j1, "0"), file(j2, "0"), file(j3, "0")}, "", "2 write jobs"},
		{"a file of no write job", j1, []string{file(j1, "0"), "/out/mine.parquet"}, "", "no Spark write job made"},
	} {
		now := map[string]bool{}
		for _, f := range tc.now {
			now[f] = true
		}
		got, err := landedJob("/out", "r", tc.before, now)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestParseChangedFiles(t *testing.T) {
	for s, want := range map[string]ChangedFiles{"error": ChangedError, "Remerge": ChangedRemerge, " skip ": ChangedSkip} {
		if got, err := ParseChangedFiles(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParseChangedFiles("again"); err == nil {
		t.Error(`"again": no error`)
	}
}

func TestCheckIncremental(t *testing.T) {
	job := func(mode, state, out string) Job {
		return Job{Sources: []SourceSpec{{Paths: []string{"/land"}}}, Target: Target{Path: out, Mode: mode}, Incremental: &Incremental{State: state}}
	}
	got, err := checkIncremental(job("", "/state", "/out"))
	if err != nil || got.Target.Mode != "append" {
		t.Errorf("no mode: %v, mode %q; want append", err, got.Target.Mode)
	}
	for _, tc := range []struct {
		job  Job
		want string
	}{
		{job("overwrite", "/state", "/out"), "the mode overwrite would not keep"},
		{job("errorifexists", "/state", "/out"), "use the mode append"},
		{job("append", "", "/out"), "give STATE"},
		{job("append", "/out/state", "/out"), "overlap"},
		{job("append", "/land/state", "/out"), "lies among the source"},
		{Job{Target: Target{Table: "t"}, Incremental: &Incremental{State: "table:t"}}, "is the target table"},
	} {
		if _, err := checkIncremental(tc.job); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one saying %q", tc.job.Target, err, tc.want)
		}
	}
}

func TestJobsBeforeIsInOneRow(t *testing.T) {
	run := &IncrementalRun{RunID: "r", files: []incrementalFile{{path: "/a"}, {path: "/b"}, {path: "/c"}}}
	rows := run.rows(statePending, nil, "", "j1,j2")
	carried := 0
	for _, r := range rows {
		if r.jobsBefore != "" {
			carried++
		}
	}
	// Read back in any order.
	rows[0], rows[2] = rows[2], rows[0]
	if carried != 1 || jobsBefore(rows) != "j1,j2" {
		t.Errorf("%d rows carry the jobs, read back %q; want 1, j1,j2", carried, jobsBefore(rows))
	}
}

// A source that lists no file (an empty directory, a pattern that
// matches nothing, here or only on the server) is left out of an
// incremental run's listing, named, and the others are listed (found in
// the field: a landing directory emptied after its files were merged
// failed every quiet night). Any other merge fails on it as before.
func TestIncrementalSourcesThatListNoFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "landing")
	if err := os.Mkdir(empty, 0o777); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "full")
	if err := os.Mkdir(full, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "a.csv"), []byte("id\n1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	c, _ := newFakeClient()
	specs := []SourceSpec{{Paths: []string{empty}}, {Paths: []string{filepath.Join(empty, "*.csv")}}, {Paths: []string{"s3a://b/landing/*.csv"}}, {Paths: []string{full}}}
	var unlisted []string
	out, _, _, _, _, err := c.expandSources(context.Background(), specs, "", nil, nil, &unlisted)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]SourceSpec{{Paths: []string{filepath.Join(full, "a.csv")}}}, out); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{specs[0].Paths[0], specs[1].Paths[0], specs[2].Paths[0]}, unlisted); diff != "" {
		t.Errorf("unlisted (-want +got):\n%s", diff)
	}
	for _, spec := range specs[:3] {
		if _, _, _, _, _, err := c.expandSources(context.Background(), []SourceSpec{spec}, "", nil, nil, nil); err == nil {
			t.Errorf("%s: listed no file and no error outside an incremental run", spec.Paths[0])
		}
	}
}
