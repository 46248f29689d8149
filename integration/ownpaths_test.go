//go:build integration

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// pinnedDirs are directories as a test found them: their names, and a
// modification time set far in the past, which any entry made or removed
// in them (a probe, even one removed at once) sets to now.
type pinnedDirs map[string][]string

var pinnedTime = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

func pinDirs(t *testing.T, dirs ...string) pinnedDirs {
	t.Helper()
	p := pinnedDirs{}
	for _, d := range dirs {
		if err := os.Chtimes(d, pinnedTime, pinnedTime); err != nil {
			t.Fatal(err)
		}
		p[d] = entryNames(t, d)
	}
	return p
}

func entryNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// unchanged fails t unless every pinned directory is as it was: the same
// names, and no entry made or removed since.
func (p pinnedDirs) unchanged(t *testing.T, what string) {
	t.Helper()
	for d, names := range p {
		if got := entryNames(t, d); !slices.Equal(got, names) {
			t.Errorf("%s: %s holds %q, was %q", what, d, got, names)
		}
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !info.ModTime().Equal(pinnedTime) {
			t.Errorf("%s: %s was written to (modified %v): an entry was made or removed there", what, d, info.ModTime())
		}
	}
}

// A plan or dry run, through the CLI, leaves the user's directories
// exactly as they were: no probe appears beside the target, in the
// nearest directory above a target whose parent does not exist yet, or
// in the working directory of relative paths, not even for a moment (the
// directories' modification times are those set before). And each
// answers as the merge would: an append to the existing target plans
// its column the sources lack as null, new targets the sources' columns.
func TestPlanLeavesTheDirectoriesAsTheyWere(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	writeFiles(t, dir, map[string]string{"in/a.csv": "id,v\n1,x\n", "in/b.csv": "v,id\ny,2\n", "old.csv": "id,v,z\n0,o,zz\n"}, "in/a.csv", "in/b.csv", "old.csv")
	out := filepath.Join(dir, "out")
	if code, _, stderr := cliRunIn(t, dir, "merge", "old.csv", "--out", out); code != 0 {
		t.Fatalf("the existing target: exit %d, stderr %s", code, stderr)
	}
	pinned := pinDirs(t, dir, filepath.Join(dir, "in"), out)
	// The CLI's dry run plans (Client.Plan): an existing target of
	// errorifexists is the merge's to refuse.
	type planned struct {
		NullColumns []struct {
			Name string `json:"name"`
		} `json:"null_columns"`
		Plan struct {
			Target []struct {
				Name string `json:"name"`
			} `json:"target"`
		} `json:"plan"`
	}
	for _, run := range []struct {
		args  []string
		nulls []string // the target's columns planned as null
	}{
		{args: []string{"merge", "in", "--out", out, "--mode", "append", "--dry-run"}, nulls: []string{"z"}},
		{args: []string{"merge", "in", "--out", "out", "--mode", "append", "--dry-run"}, nulls: []string{"z"}},
		{args: []string{"merge", "in", "--out", "new/day=1/out", "--mode", "append", "--dry-run"}},
		{args: []string{"merge", "in", "--out", filepath.Join(dir, "new2", "out"), "--dry-run"}},
		{args: []string{"merge", "in", "--out", "out3", "--mode", "append", "--incremental", filepath.Join(dir, "state"), "--dry-run"}},
		{args: []string{"plan", "in"}},
	} {
		what := strings.Join(run.args, " ")
		code, stdout, stderr := cliRunIn(t, dir, append(run.args, "-o", "json")...)
		var p planned
		if err := json.Unmarshal([]byte(stdout), &p); code != 0 || err != nil {
			t.Fatalf("%s: exit %d, %v, stdout %s, stderr %s", what, code, err, stdout, stderr)
		}
		var nulls, fields []string
		for _, c := range p.NullColumns {
			nulls = append(nulls, c.Name)
		}
		for _, f := range p.Plan.Target {
			fields = append(fields, f.Name)
		}
		if !slices.Equal(nulls, run.nulls) || !slices.Contains(fields, "id") || !slices.Contains(fields, "v") {
			t.Errorf("%s: null columns %q, columns %q; want %q null, id and v", what, nulls, fields, run.nulls)
		}
		pinned.unchanged(t, what)
	}
}

// A merge to a local target whose parent does not exist yet asks Spark
// nothing that fails (the server's log shows no failed read of a path of
// the test's): the nearest directory the client has shows by the probe
// that client and server share it, and it lacks the next name on the
// way. A dry run, which writes no probe, asks Spark: its failed analysis
// of the target is in the log, as the merges' would be, and it comes
// after theirs, so the log is read once it shows. The log is the
// harness's server's, whose lines naming the test's own directory are
// the test's (every path its merges read or write lies there); against a
// server whose log the harness cannot read (SPARK_REMOTE), a server of
// the test's own.
func TestTargetUnderMissingParentWithoutFailedAnalysis(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	var c *spark.Client
	serverLog := func() string {
		l, _ := sparktest.ServerLog(t)
		return l
	}
	if _, ok := sparktest.ServerLog(t); ok {
		c = newClient(t)
	} else {
		var srv *localspark.Server
		srv, c = ownSpark(t, localspark.Options{Mounts: []string{dir}}, spark.ConnectOptions{})
		serverLog = func() string { return containerLog(t, srv.Container()) }
	}
	ctx := testContext(t)
	paths := writeFiles(t, dir, map[string]string{"a.csv": "id,v\n1,x\n", "b.json": "{\"id\":2,\"w\":1.5}\n"}, "a.csv", "b.json")
	for _, mode := range []string{"errorifexists", "append", "overwrite", "ignore"} {
		out := filepath.Join(dir, "new-"+mode, "day=1", "out")
		res, err := c.Merge(ctx, spark.Job{Sources: pathSources(paths...), Verify: true, Target: spark.Target{Path: out, Mode: mode}})
		if err != nil {
			t.Fatalf("mode %s: %v", mode, err)
		}
		if !res.Verified || res.RowsWritten != 2 {
			t.Errorf("mode %s: %d rows written, verified %v; want 2", mode, res.RowsWritten, res.Verified)
		}
		diff(t, "mode "+mode, [][]any{row("1", "x", nil), row("2", nil, "1.5")}, parquetRows(t, out, []string{"id", "v", "w"}, "id"))
	}

	planned := filepath.Join(dir, "planned", "day=1", "out")
	if _, err := c.Merge(ctx, spark.Job{Sources: pathSources(paths...), DryRun: true, Target: spark.Target{Path: planned, Mode: "append"}}); err != nil {
		t.Fatal(err)
	}
	var failed []string
	namesPlanned := func(l string) bool { return strings.Contains(l, planned) }
	for deadline := time.Now().Add(time.Minute); !slices.ContainsFunc(failed, namesPlanned) && time.Now().Before(deadline); time.Sleep(time.Second) {
		failed = nil
		for _, l := range pathNotFound(serverLog()) {
			if strings.Contains(l, dir+"/") {
				failed = append(failed, l)
			}
		}
	}
	if !slices.ContainsFunc(failed, namesPlanned) {
		t.Errorf("the dry run's analysis of %s is not in the server's log (%q): the log does not show failed analyses", planned, failed)
	}
	var merges []string
	for _, l := range failed {
		if !strings.Contains(l, filepath.Join(dir, "planned")+"/") {
			merges = append(merges, l)
		}
	}
	if len(merges) != 0 {
		t.Errorf("the merges' failed analyses in the server's log:\n%s", strings.Join(merges, "\n"))
	}
}

// pathNotFound are the lines of a server's log that report a read of a
// path that does not exist.
func pathNotFound(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "PATH_NOT_FOUND") {
			out = append(out, l)
		}
	}
	return out
}
