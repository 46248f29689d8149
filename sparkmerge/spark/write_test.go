package spark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// Merges run end to end against sparkFake: client-side planning of real
// local files, the client's plans over gRPC, and what the target holds
// afterwards.

// csvSources writes two CSV files of drifting schemas into a new
// directory, modified an hour ago (settled, so typed on the client and
// read in one positional scan), and returns their paths and one source
// per file.
func csvSources(t *testing.T) ([]string, []SourceSpec) {
	t.Helper()
	dir := t.TempDir()
	files := [][2]string{{"a.csv", "id,name\n1,x\n2,y\n"}, {"b.csv", "id,amount\n3,1.5\n"}}
	var paths []string
	var specs []SourceSpec
	hourAgo := time.Now().Add(-time.Hour)
	for _, f := range files {
		p := filepath.Join(dir, f[0])
		if err := os.WriteFile(p, []byte(f[1]), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		specs = append(specs, SourceSpec{Paths: []string{p}})
	}
	return paths, specs
}

// mergeSetup is a client of a fake Spark, the two CSV sources (read: 2
// rows from the first, 1 from the second) and a target path beside no
// other file.
func mergeSetup(t *testing.T) (c *Client, f *sparkFake, paths []string, job Job) {
	t.Helper()
	c, f = sparkFakeClient(t)
	paths, specs := csvSources(t)
	f.read = sourceRows{paths[0]: 2, paths[1]: 1}
	return c, f, paths, Job{Sources: specs, Target: Target{Path: filepath.Join(t.TempDir(), "out")}}
}

// dirNames are the names in dir (none when it does not exist).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A merge to a new local path is written to a hidden staging directory
// beside it, counted there and renamed into place: the target holds every
// row read, and nothing else is left beside it.
func TestMergeToANewLocalPath(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	f.settings[parallelListingKey] = "32"
	ctx := context.Background()
	res, err := c.Merge(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	target := job.Target.Path
	if res.RowsWritten != 3 || res.Scans != 1 || res.Verified || res.Target.Path != target {
		t.Errorf("result: %d rows written in %d scans, verified %v, target %q; want 3 rows in 1 scan, not verified, %q", res.RowsWritten, res.Scans, res.Verified, res.Target.Path, target)
	}
	if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, target)); diff != "" {
		t.Errorf("target rows (-want +got):\n%s", diff)
	}
	if got := dirNames(t, filepath.Dir(target)); !slices.Equal(got, []string{"out"}) {
		t.Errorf("beside the target: %v, want only out (no staging left)", got)
	}
	writes := f.writes()
	if len(writes) != 1 {
		t.Fatalf("%d writes, want 1: %+v", len(writes), writes)
	}
	w := writes[0]
	if filepath.Dir(w.Path) != filepath.Dir(target) || !strings.HasPrefix(filepath.Base(w.Path), ".out.sparkmerge-") || w.Format != "parquet" || w.Mode != "errorifexists" {
		t.Errorf("write %+v, want parquet, errorifexists, to a hidden staging directory beside %s", w, target)
	}
	// The client asked Spark once whether it sees a probe file in a hidden
	// directory beside the target, before anything else: the files of a
	// read of it, an analysis (no Spark job), not a listing query. That
	// answer chose the staging directory, and told that neither the
	// target nor the record of an interrupted overwrite beside it exists
	// (the client finds neither in a directory the server shares), so
	// Spark was not asked to read them: no request failed.
	probes := f.recorded("input files")
	if len(probes) != 1 {
		t.Fatalf("%d input files analyses, want 1 (the probe)", len(probes))
	}
	probe := pstrs(dataSourceBelow(pmsg(probes[0].req, "input_files", "plan", "root")), "paths")[0]
	if rel, err := filepath.Rel(filepath.Dir(target), probe); err != nil || !strings.HasPrefix(rel, ".sparkmerge-probe.sparkmerge-") || strings.Count(rel, "/") != 1 {
		t.Errorf("the probe read %s, want a file in a hidden directory beside %s", probe, target)
	}
	if first := f.recorded("")[1]; first.what != "input files" {
		t.Errorf("first call after connecting: %s %s, want the probe", first.method, first.what)
	}
	for _, a := range f.recorded("schema read") {
		if p := pstrs(dataSourceBelow(pmsg(a.plan(), "root")), "paths"); len(p) == 1 && filepath.Dir(p[0]) == filepath.Dir(target) {
			t.Errorf("Spark was asked to read %s, which the client knows is absent", p[0])
		}
	}
	if failed := f.failures(); len(failed) != 0 {
		t.Errorf("requests failed: %q, want none", failed)
	}
	if lists := f.recorded("list"); len(lists) != 0 {
		t.Errorf("%d listing queries, want none (the probe is an analysis)", len(lists))
	}
	// The positional scan's listing setting was raised for the merge and
	// restored after it.
	if got := f.setting(parallelListingKey); got != "32" {
		t.Errorf("%s is %q after the merge, want it restored to 32", parallelListingKey, got)
	}
	if sets := f.recorded("set"); len(sets) != 2 {
		t.Errorf("%d session settings made, want the raise and the restore", len(sets))
	}
}

// Each read is projected onto the planned target columns, the reads
// combined by UNION ALL and coalesced into Target.Files files; every file
// is read with the schema discovered for it, so that Spark infers nothing
// again.
func TestMergeProjectsEveryReadOntoThePlan(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	// The first file's ids widen to double, a cast that may round: it is
	// checked value by value.
	f.schemas[paths[0]] = "id BIGINT, name STRING"
	f.schemas[paths[1]] = "id DOUBLE, amount DOUBLE"
	job.Strategy, job.SparkInference, job.Target.Files = StrategyUnion, true, 1
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Plan.Target.Names(); !slices.Equal(got, []string{"id", "name", "amount"}) {
		t.Errorf("target columns %v", got)
	}
	if n := len(f.recorded("schema read")); n != 2 {
		t.Errorf("%d analyses of reads, want one per source (the record of an interrupted overwrite and the target are absent beside a probe the server lists)", n)
	}
	writes := f.writes()
	if len(writes) != 1 {
		t.Fatalf("%d writes, want 1", len(writes))
	}
	co := pmsg(writes[0].input, "repartition")
	if co == nil || co.Get(field(co, "num_partitions")).Int() != 1 || co.Get(field(co, "shuffle")).Bool() {
		t.Fatalf("the merge is not coalesced into 1 file: %v", writes[0].input)
	}
	union := pmsg(co, "input", "set_op")
	if union == nil || !union.Get(field(union, "is_all")).Bool() || union.Get(field(union, "by_name")).Bool() {
		t.Fatalf("the reads are not combined by a positional UNION ALL: %v", pmsg(co, "input"))
	}
	for i, side := range []string{"left_input", "right_input"} {
		project := pmsg(union, side, "project")
		if project == nil {
			t.Fatalf("read %d is not projected: %v", i, pmsg(union, side))
		}
		sent := exprs(project, "expressions")
		if diff := cmp.Diff(res.Plan.SelectExprs(i), sent); diff != "" {
			t.Errorf("read %d's projection (-planned +sent):\n%s", i, diff)
		}
		if checked := strings.Contains(sent[0], "raise_error("); checked != (i == 0) {
			t.Errorf("read %d's id is checked: %v, want only the first file's (bigint to double): %s", i, checked, sent[0])
		}
		ds := pmsg(project, "input", "read", "data_source")
		if got := pstrs(ds, "paths"); pstr(ds, "format") != "csv" || !slices.Equal(got, []string{paths[i]}) {
			t.Errorf("read %d reads %s %v, want csv %s", i, pstr(ds, "format"), got, paths[i])
		}
		if got, want := pstr(ds, "schema"), res.Reads[i].Schema.String(); got != want {
			t.Errorf("read %d is sent with schema %q, want the discovered %q", i, got, want)
		}
		if opts := pmap(ds, "options"); opts["header"] != "true" || opts["enforceSchema"] != "false" {
			t.Errorf("read %d options %v, want the header checked against the schema", i, opts)
		}
	}
}

// Verify counts the rows read per source and the rows written in one
// query, after the write (not one before it and one after): per source
// with a provenance column, in total without.
func TestVerifyCountsReadAndWrittenInOneQuery(t *testing.T) {
	for _, col := range []string{"_source", ""} {
		c, f, _, job := mergeSetup(t)
		job.Verify, job.Policy.SourceColumn = true, col
		res, err := c.Merge(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		wantVerified(t, res, 3)
		queries := map[string]int{}
		for _, call := range f.recorded("group") {
			queries[strings.Join(exprs(pmsg(call.plan(), "root", "aggregate"), "grouping_expressions"), ", ")]++
		}
		queries["count"] = len(f.recorded("count"))
		want := map[string]int{"side, src": 1, "count": 0}
		if diff := cmp.Diff(want, queries); diff != "" {
			t.Errorf("provenance column %q: the merge's counts by grouping (-want +got):\n%s", col, diff)
		}
	}
}

// The rows a merge wrote to its own staging directory are counted by a
// read given the schema they were written with (the columns the count
// reads), so that Spark does not infer it: a Parquet read of no schema is
// analysed with a job reading every file's footer (mergeSchema). Other
// formats are left to Spark's inference. The rows counted are the same
// (the fake counts what is stored).
func TestVerifyReadsItsOwnRowsWithTheirSchema(t *testing.T) {
	for _, tt := range []struct {
		col, format, want string
	}{
		{"_source", "", "_source string"},
		{"", "", "id int"}, // no provenance column: the first column
		{"_source", "parquet", "_source string"},
		{"_source", "orc", ""}, // left to Spark's inference
		{"_source", "json", ""},
	} {
		c, f, _, job := mergeSetup(t)
		job.Verify, job.Policy.SourceColumn, job.Target.Format = true, tt.col, tt.format
		res, err := c.Merge(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		wantVerified(t, res, 3)
		var read []string
		for _, call := range f.recorded("group") {
			written := pmsg(call.plan(), "root", "aggregate", "input")
			for which(written, "rel_type") == "set_op" {
				written = pmsg(written, "set_op", "left_input")
			}
			ds := dataSourceBelow(written)
			read = append(read, pstr(ds, "schema"))
			if _, merged := pmap(ds, "options")["mergeSchema"]; merged && pstr(ds, "schema") != "" {
				t.Errorf("provenance %q, format %q: mergeSchema set with schema %q", tt.col, tt.format, pstr(ds, "schema"))
			}
		}
		if diff := cmp.Diff([]string{tt.want}, read); diff != "" {
			t.Errorf("provenance %q, format %q: the schema the rows written are read with (-want +got):\n%s", tt.col, tt.format, diff)
		}
	}
}

// Verify counts the rows read with the rows written only where the
// sources, read again after the write, hold what they held before it:
// files, written to a staging place or a path target (which overlaps no
// input); not for sources that are tables, queries or DataFrames (they
// may read the target), an incremental run (it records the rows read
// before it writes), a distinct merge (it counts the distinct rows
// before it writes) or a tagged commit (its history counts it).
func TestVerifyCountsReadWithWrittenOnlyWhereTheSourcesStayAsRead(t *testing.T) {
	install := func() error { return nil }
	files := []*Read{{Name: "a.csv", Paths: []string{"/in/a.csv"}}}
	tests := []struct {
		name    string
		verify  bool
		plan    sparkmerge.Plan
		run     *IncrementalRun
		reads   []*Read
		w       targetWrite
		counted bool
	}{
		{name: "files to a staged path", verify: true, reads: files, w: targetWrite{stage: staged{install: install}, written: Target{Path: "/.out-staging"}}, counted: true},
		{name: "files to a path written directly", verify: true, reads: files, w: targetWrite{written: Target{Path: "/out", Mode: "ignore"}}, counted: true},
		{name: "files to a staged table", verify: true, reads: files, w: targetWrite{stage: staged{install: install}, written: Target{Table: "staging"}}, counted: true},
		{name: "not verified", reads: files, w: targetWrite{stage: staged{install: install}, written: Target{Path: "/.out-staging"}}},
		{name: "files to a table written directly", verify: true, reads: files, w: targetWrite{written: Target{Table: "t"}}},
		{name: "a table source", verify: true, reads: append([]*Read{{Name: "t", Table: "t"}}, files...), w: targetWrite{stage: staged{install: install}, written: Target{Path: "/.out-staging"}}},
		{name: "a query source", verify: true, reads: []*Read{{Name: "q", Query: "SELECT 1"}}, w: targetWrite{written: Target{Path: "/out"}}},
		{name: "incremental", verify: true, run: &IncrementalRun{}, reads: files, w: targetWrite{stage: staged{install: install}, written: Target{Path: "/.out-staging"}}},
		{name: "distinct", verify: true, plan: sparkmerge.Plan{Distinct: true}, reads: files, w: targetWrite{stage: staged{install: install}, written: Target{Path: "/.out-staging"}}},
		{name: "a tagged commit", verify: true, reads: files, w: targetWrite{written: Target{Path: "/delta"}, tag: "run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			planned := &Planned{Plan: &tt.plan, Reads: tt.reads, Incremental: tt.run}
			if got := countsReadWithWritten(Job{Verify: tt.verify}, planned, &tt.w); got != tt.counted {
				t.Errorf("counted with the rows written: %v, want %v", got, tt.counted)
			}
		})
	}
}

// Verify counts the rows read per source and the rows written, and fails
// with a *VerifyError naming what differs; the target is then left as it
// was (the staged rows are removed).
func TestMergeVerify(t *testing.T) {
	tests := []struct {
		name         string
		sourceColumn string
		// written maps the sources' rows to what the write stores
		// (indexes into the sources).
		written map[int]int64
		want    *VerifyError // nil: verified
	}{
		{name: "every row written", written: map[int]int64{0: 2, 1: 1}},
		{name: "every row written, per source", sourceColumn: "_source", written: map[int]int64{0: 2, 1: 1}},
		{name: "a row lost", written: map[int]int64{0: 2}, want: &VerifyError{Read: 3, Written: 2, Mismatches: []string{"all sources: read 3, written 2"}}},
		{name: "a row lost, per source", sourceColumn: "_source", written: map[int]int64{0: 2}, want: &VerifyError{Read: 3, Written: 2, Mismatches: []string{"{1}: read 1, written 0"}}},
		{name: "rows of one source under another's name", sourceColumn: "_source", written: map[int]int64{0: 3}, want: &VerifyError{Read: 3, Written: 3, Mismatches: []string{"{0}: read 2, written 3", "{1}: read 1, written 0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			f.merged = sourceRows{}
			for i, n := range tt.written {
				f.merged[paths[i]] = n
			}
			job.Verify, job.Policy.SourceColumn = true, tt.sourceColumn
			res, err := c.Merge(context.Background(), job)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				want := []SourceRows{{Source: paths[0], Rows: 2}, {Source: paths[1], Rows: 1}}
				if diff := cmp.Diff(want, res.RowsRead); diff != "" || !res.Verified || res.RowsWritten != 3 {
					t.Errorf("verified %v, %d rows written, rows read (-want +got):\n%s", res.Verified, res.RowsWritten, diff)
				}
				return
			}
			var verr *VerifyError
			if !errors.As(err, &verr) {
				t.Fatalf("err = %v, want a *VerifyError", err)
			}
			for i := range tt.want.Mismatches {
				tt.want.Mismatches[i] = strings.NewReplacer("{0}", paths[0], "{1}", paths[1]).Replace(tt.want.Mismatches[i])
			}
			if diff := cmp.Diff(tt.want, verr); diff != "" {
				t.Errorf("VerifyError (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(err.Error(), "verify: 3 rows read but") || !strings.Contains(err.Error(), tt.want.Mismatches[0]) {
				t.Errorf("error text %q", err)
			}
			if res == nil || res.Verified || len(res.RowsRead) != 2 {
				t.Errorf("result %+v, want the counts reported, not verified", res)
			}
			if got := dirNames(t, filepath.Dir(job.Target.Path)); len(got) != 0 {
				t.Errorf("after a failed verify the target's directory holds %v, want nothing", got)
			}
		})
	}
}

// A target that exists fails the default mode before any source is read,
// with a *TargetExistsError; the ignore mode leaves it as it was.
func TestMergeToAnExistingTarget(t *testing.T) {
	t.Run("with data", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		f.putData(t, filepath.Join(job.Target.Path, "part-00000.parquet"), sourceRows{"old": 4})
		_, err := c.Merge(context.Background(), job)
		var exists *TargetExistsError
		if !errors.As(err, &exists) || exists.NoData || exists.Target != quoteName(job.Target.Path) {
			t.Fatalf("err = %#v, want a *TargetExistsError with data", err)
		}
		if !strings.Contains(err.Error(), "already exists: choose the mode overwrite, append or ignore") {
			t.Errorf("error text %q does not say what to do", err)
		}
		var calls []string
		for _, c := range f.recorded("") {
			calls = append(calls, c.what)
		}
		// The probe tells that the record of an interrupted overwrite is
		// absent; the target, which the client finds, is asked of Spark.
		if want := []string{"version", "input files", "schema read"}; !slices.Equal(calls, want) {
			t.Errorf("calls %q, want %q: the version, the probe beside the target, the target's analysis", calls, want)
		}
	})
	t.Run("an empty directory", func(t *testing.T) {
		c, _, _, job := mergeSetup(t)
		if err := os.Mkdir(job.Target.Path, 0o777); err != nil {
			t.Fatal(err)
		}
		_, err := c.Merge(context.Background(), job)
		var exists *TargetExistsError
		if !errors.As(err, &exists) || !exists.NoData {
			t.Fatalf("err = %v, want a *TargetExistsError without data", err)
		}
		if !strings.Contains(err.Error(), "without data files Spark reads") {
			t.Errorf("error text %q", err)
		}
	})
	t.Run("ignore", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		f.putData(t, filepath.Join(job.Target.Path, "part-00000.parquet"), sourceRows{"old": 4})
		job.Target.Mode = "ignore"
		res, err := c.Merge(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if res.RowsWritten != 0 {
			t.Errorf("%d rows written, want 0", res.RowsWritten)
		}
		if diff := cmp.Diff(sourceRows{"old": 4}, f.storedRows(t, job.Target.Path)); diff != "" {
			t.Errorf("target rows (-want +got):\n%s", diff)
		}
		if w := f.writes(); len(w) != 1 || w[0].Mode != "ignore" || w[0].Path != job.Target.Path {
			t.Errorf("writes %+v, want one in mode ignore to the target itself", w)
		}
	})
}

// An overwrite replaces the target's rows and an append adds to them,
// each installed from its staging directory once written.
func TestMergeOverwriteAndAppendLocalPath(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want func(paths []string) sourceRows
	}{
		{"overwrite", func(p []string) sourceRows { return sourceRows{p[0]: 2, p[1]: 1} }},
		{"append", func(p []string) sourceRows { return sourceRows{"old": 4, p[0]: 2, p[1]: 1} }},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			f.putData(t, filepath.Join(job.Target.Path, "part-00000-old.parquet"), sourceRows{"old": 4})
			f.schemas[job.Target.Path] = "id BIGINT, name STRING, amount DOUBLE"
			job.Target.Mode = tt.mode
			res, err := c.Merge(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if res.RowsWritten != 3 {
				t.Errorf("%d rows written, want 3", res.RowsWritten)
			}
			if diff := cmp.Diff(tt.want(paths), f.storedRows(t, job.Target.Path)); diff != "" {
				t.Errorf("target rows (-want +got):\n%s", diff)
			}
			if got := dirNames(t, filepath.Dir(job.Target.Path)); !slices.Equal(got, []string{"out"}) {
				t.Errorf("beside the target: %v, want only out", got)
			}
			if w := f.writes(); len(w) != 1 || w[0].Mode != "errorifexists" || w[0].Path == job.Target.Path {
				t.Errorf("writes %+v, want one to a new staging directory", w)
			}
		})
	}
}

// A dry run plans and reports, and reads and writes nothing.
func TestMergeDryRun(t *testing.T) {
	c, f, _, job := mergeSetup(t)
	job.DryRun = true
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsWritten != -1 || !strings.Contains(res.String(), "dry run: nothing read or written") {
		t.Errorf("dry run result: %d rows written, text %q", res.RowsWritten, res.String())
	}
	if n := len(f.recorded("ExecutePlan")); n != 0 {
		t.Errorf("a dry run executed %d plans", n)
	}
}

// A merge to Spark's noop format runs the whole merge and keeps nothing:
// one noop write, no staging, no count, and a result that says so.
func TestMergeNoopKeepsNoRows(t *testing.T) {
	c, f, _, job := mergeSetup(t)
	job.Target = Target{Format: "noop"}
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Discarded || res.RowsWritten != -1 || !strings.Contains(res.String(), "kept none (noop)") {
		t.Errorf("result: discarded %v, %d rows written, text %q", res.Discarded, res.RowsWritten, res.String())
	}
	writes := f.writes()
	if len(writes) != 1 || writes[0].Format != "noop" || writes[0].Path != "" || writes[0].Table != "" {
		t.Fatalf("writes %+v, want one noop write without a path or table", writes)
	}
	if n := len(f.recorded("ExecutePlan")); n != 1 {
		t.Errorf("%d plans executed, want the write alone (no count)", n)
	}
	job.Verify = true
	if _, err := c.Merge(context.Background(), job); err == nil || !strings.Contains(err.Error(), "noop format keeps no rows") {
		t.Errorf("noop with verify: %v, want a refusal", err)
	}
	job.Verify = false
	job.Target.Path = filepath.Join(t.TempDir(), "out")
	if _, err := c.Merge(context.Background(), job); err == nil || !strings.Contains(err.Error(), "give no path or table") {
		t.Errorf("noop with a path: %v, want a refusal", err)
	}
}

// MergePlanned runs the plan it is given, after checking the target again.
func TestMergePlanned(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	ctx := context.Background()
	planned, err := c.Plan(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.MergePlanned(ctx, job, planned)
	if err != nil {
		t.Fatal(err)
	}
	if res.Planned != planned || res.RowsWritten != 3 {
		t.Errorf("result of another plan, or %d rows written", res.RowsWritten)
	}
	if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, job.Target.Path)); diff != "" {
		t.Errorf("target rows (-want +got):\n%s", diff)
	}

	inside := job
	inside.Target.Path = filepath.Dir(paths[0])
	_, err = c.MergePlanned(ctx, inside, planned)
	var overlap *OverlapError
	if !errors.As(err, &overlap) {
		t.Errorf("a target among the inputs: err = %v, want an *OverlapError", err)
	}
	for _, bad := range []Target{{Path: "/x", Mode: "replace"}, {Path: "/x", Table: "db.t"}} {
		j := job
		j.Target = bad
		if _, err := c.MergePlanned(ctx, j, planned); err == nil || !strings.HasPrefix(err.Error(), "target: ") {
			t.Errorf("target %+v: err = %v, want it refused", bad, err)
		}
		if _, err := c.Merge(ctx, j); err == nil || !strings.HasPrefix(err.Error(), "target: ") {
			t.Errorf("Merge to %+v: err = %v, want it refused", bad, err)
		}
	}
}

// A Spark error keeps its class through the merge's error, which names
// the step and the target and says what to do for errors users meet.
func TestMergeSparkErrors(t *testing.T) {
	tests := []struct {
		name   string
		fail   string // the call that fails
		class  string
		remote bool // a target the client cannot stage
		// unverified: a merge without Verify, which counts the rows
		// written alone.
		unverified bool
		want       []string
		not        string
	}{
		{name: "exists", fail: "write", class: "PATH_ALREADY_EXISTS", want: []string{`write "`, "hint: the output exists"}},
		{name: "bad value", fail: "write", class: "FAILED_READ_FILE.NO_HINT", want: []string{"hint: Spark could not read that file", "mode=PERMISSIVE"}},
		{name: "bad record", fail: "write", class: "MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION", want: []string{"mode=DROPMALFORMED"}},
		{name: "other", fail: "write", class: "INTERNAL_ERROR", want: []string{"[INTERNAL_ERROR]"}, not: "hint"},
		{name: "direct write", fail: "write", class: "INTERNAL_ERROR", remote: true, want: []string{`note: Spark may have left an empty directory at "s3a://b/out"`}},
		// Verify counts the rows read with the rows written, in one query.
		{name: "count read", fail: "group", class: "FAILED_READ_FILE.NO_HINT", want: []string{"verify: count rows read and written in ", "hint: Spark could not read that file"}},
		{name: "count written", fail: "count", class: "INTERNAL_ERROR", unverified: true, want: []string{"count rows in "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f, _, job := mergeSetup(t)
			job.Verify = !tt.unverified
			if tt.remote {
				job.Target.Path = "s3a://b/out"
			}
			f.failOn(tt.class, func(call sparkCall) bool { return call.what == tt.fail })
			_, err := c.Merge(context.Background(), job)
			wantSparkError(t, err, tt.class)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.not != "" && strings.Contains(err.Error(), tt.not) {
				t.Errorf("error %q says %q", err, tt.not)
			}
			if !tt.remote {
				if got := dirNames(t, filepath.Dir(job.Target.Path)); len(got) != 0 {
					t.Errorf("after a failed merge the target's directory holds %v, want nothing", got)
				}
			}
		})
	}
}

// A caller that gives up during the write stops it on the server
// (Interrupt of that operation), and the rows staged so far are removed.
func TestMergeCancelledDuringTheWrite(t *testing.T) {
	c, f, _, job := mergeSetup(t)
	started := make(chan struct{})
	var once sync.Once
	f.hook = func(ctx context.Context, call sparkCall) (sparkReply, bool) {
		if call.what != "write" {
			return sparkReply{}, false
		}
		f.mu.Lock()
		err := f.write(writeOf(call.plan())) // the files written so far
		f.mu.Unlock()
		if err != nil {
			return sparkReply{err: err}, true
		}
		once.Do(func() { close(started) })
		<-ctx.Done()
		return sparkReply{err: ctx.Err()}, true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	_, err := c.Merge(ctx, job)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	write := f.recorded("write")
	interrupts := f.recorded("Interrupt")
	if len(write) != 1 || len(interrupts) != 1 {
		t.Fatalf("%d writes and %d interrupts, want 1 each", len(write), len(interrupts))
	}
	in := interrupts[0].req
	if got, want := pstr(in, "operation_id"), pstr(write[0].req, "operation_id"); got != want || got == "" {
		t.Errorf("interrupted operation %q, want the write's %q", got, want)
	}
	if got := dirNames(t, filepath.Dir(job.Target.Path)); len(got) != 0 {
		t.Errorf("after a cancelled merge the target's directory holds %v, want nothing", got)
	}
}

// ReadTarget shows the first rows of a written target, read back as it
// was written (a CSV target with its header, values spanning lines).
func TestReadTarget(t *testing.T) {
	c, f := sparkFakeClient(t)
	f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
		return sparkReply{cols: []string{"id", "name"}, rows: [][]any{{int64(1), "x"}, {int64(2), nil}}}, call.what == "limit"
	}
	ctx := context.Background()
	got, err := c.ReadTarget(ctx, Job{Target: Target{Path: "/lake/out", Format: "csv", Options: map[string]string{"sep": ";"}}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := Rows{Columns: []string{"id", "name"}, Values: [][]any{{int64(1), "x"}, {int64(2), nil}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	limit := pmsg(f.recorded("limit")[0].plan(), "root", "limit")
	if n := limit.Get(field(limit, "limit")).Int(); n != 5 {
		t.Errorf("limit %d, want 5", n)
	}
	ds := pmsg(limit, "input", "read", "data_source")
	wantOpts := map[string]string{"sep": ";", "header": "true", "multiLine": "true"}
	if diff := cmp.Diff(wantOpts, pmap(ds, "options")); diff != "" || pstr(ds, "format") != "csv" {
		t.Errorf("read back as %s, options (-want +got):\n%s", pstr(ds, "format"), diff)
	}

	if _, err := c.ReadTarget(ctx, Job{Target: Target{Table: "db.t"}}, 5); err != nil {
		t.Fatal(err)
	}
	limit = pmsg(f.recorded("limit")[1].plan(), "root", "limit")
	if got := pstr(pmsg(limit, "input", "read", "named_table"), "unparsed_identifier"); got != "db.t" {
		t.Errorf("table target read back from %q, want db.t", got)
	}
}

// Verify counts each source's rows as its read keeps them: under
// DROPMALFORMED a row is dropped only when its columns are parsed, so the
// count parses every column.
func TestVerifyCountsRowsAsTheReaderKeepsThem(t *testing.T) {
	for mode, parsed := range map[string]string{
		"FAILFAST":      "0 AS parsed",
		"DROPMALFORMED": "CASE WHEN rand() < 0 THEN NULL ELSE hash(*) END AS parsed",
	} {
		t.Run(mode, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			f.schemas[paths[0]] = "id INT, name STRING"
			f.schemas[paths[1]] = "id INT, amount DOUBLE"
			job.Strategy, job.SparkInference, job.Verify = StrategyUnion, true, true
			job.ReaderOptions = map[string]string{"mode": mode}
			if _, err := c.Merge(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			counts := f.recorded("group")
			if len(counts) == 0 {
				t.Fatal("no count of the rows read")
			}
			// The last: discovery's text read of the files groups too.
			// The rows written first (see countWithRead), then the reads.
			// Small files: counted in one task (countedRows).
			union := pmsg(counts[len(counts)-1].plan(), "root", "aggregate", "input", "repartition", "input", "set_op", "right_input", "set_op")
			for i, side := range []string{"left_input", "right_input"} {
				want := []string{"'read' AS side", sparkmerge.QuoteString(paths[i]) + " AS src", parsed}
				if diff := cmp.Diff(want, exprs(pmsg(union, side, "project"), "expressions")); diff != "" {
					t.Errorf("count of read %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestWriteHintNamesLocalFilesTheServerCannotSee: a file the client read
// and typed, which Spark does not find when it reads the rows (a remote
// server given this machine's paths), gets a hint that says so; a file
// missing here too does not.
func TestWriteHintNamesLocalFilesTheServerCannotSee(t *testing.T) {
	here := filepath.Join(t.TempDir(), "a b.csv")
	if err := os.WriteFile(here, []byte("id\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notFound := func(path string) error {
		return &connect.SparkError{ErrorClass: "PATH_NOT_FOUND", Parameters: map[string]string{"path": path},
			Message: "[PATH_NOT_FOUND] Path does not exist: " + path + ". SQLSTATE: 42K03"}
	}
	for _, path := range []string{"file:" + here, here} {
		err := writeHint(notFound(path), nil)
		if want := quoteName(here) + " is on this machine, but the Spark server does not see it"; !strings.Contains(err.Error(), want) {
			t.Errorf("writeHint(%s) = %v\nwant it to contain %q", path, err, want)
		}
		if errorClass(err) != "PATH_NOT_FOUND" {
			t.Errorf("writeHint(%s) lost the error class: %v", path, err)
		}
	}
	for _, path := range []string{"file:" + here + ".gone", "s3a://b/a.csv", ""} {
		if err := writeHint(notFound(path), nil); strings.Contains(err.Error(), "hint:") {
			t.Errorf("writeHint(%q) = %v, want no hint", path, err)
		}
	}
}

// Rows read per source are listed as the plan numbers the sources, not
// by name: source 10 after source 9.
func TestRowsReadInInputOrder(t *testing.T) {
	p := &Planned{Reads: []*Read{
		{Name: "/d/b.csv", Sources: []string{"/d/b.csv"}, Paths: []string{"/d/b.csv"}},
		{Name: "/d/x/ (2 csv files)", Sources: []string{"/d/x/9.csv", "/d/x/10.csv"}, Paths: []string{"/d/x/9.csv", "/d/x/10.csv"}},
		{Name: "/d/a.csv", Sources: []string{"/d/a.csv"}, Paths: []string{"/d/a.csv"}},
	}}
	counts := map[string]int64{"/d/a.csv": 1, "/d/b.csv": 2, "/d/x/10.csv": 3, "/d/x/9.csv": 4, "other": 5}
	want := []string{"/d/b.csv", "/d/x/9.csv", "/d/x/10.csv", "/d/a.csv", "other"}
	if diff := cmp.Diff(want, inInputOrder(p, counts)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// A case-sensitive merge sends every plan with spark.sql.caseSensitive=true
// (its target may hold columns apart by case alone, c and C, which Spark
// otherwise refuses as one column twice), reads its target back so, and
// gives the session its own value back after each: a session shared with
// other work resolves names as before. A case-insensitive merge never
// touches the setting; a session already case-sensitive is left alone; a
// server that refuses the setting fails the merge before any row is
// written, naming it.
func TestCaseSensitiveMergeResolvesNamesCaseSensitively(t *testing.T) {
	// during records the setting at every plan the fake receives.
	during := func(f *sparkFake) *[]string {
		var mu sync.Mutex
		seen := &[]string{}
		f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
			mu.Lock()
			defer mu.Unlock()
			*seen = append(*seen, call.what+": "+f.setting(caseSensitiveKey))
			return sparkReply{}, false
		}
		return seen
	}
	allAre := func(t *testing.T, seen []string, value string) {
		t.Helper()
		if len(seen) == 0 {
			t.Fatal("no plan sent")
		}
		for _, s := range seen {
			if !strings.HasSuffix(s, ": "+value) {
				t.Errorf("%s sent with %s=%q, want %q (all: %v)", strings.SplitN(s, ":", 2)[0], caseSensitiveKey, s[strings.Index(s, ": ")+2:], value, seen)
			}
		}
	}
	for _, before := range []string{"", "false"} {
		t.Run("session "+before, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			if before != "" {
				f.settings[caseSensitiveKey] = before
			}
			job.Policy.CaseSensitive = true
			job.Verify = true
			seen := during(f)
			res, err := c.Merge(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			wantVerified(t, res, 3)
			if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, job.Target.Path)); diff != "" {
				t.Errorf("target rows (-want +got):\n%s", diff)
			}
			allAre(t, *seen, "true")
			if got := f.setting(caseSensitiveKey); got != "false" {
				t.Errorf("%s after the merge %q, want false (Spark's default, or the session's)", caseSensitiveKey, got)
			}
			*seen = nil
			f.hook = nil
			seen = during(f)
			if _, err := c.ReadTarget(context.Background(), job, 5); err != nil && !strings.Contains(err.Error(), "FAKE_NO_ANSWER") {
				t.Fatal(err)
			}
			allAre(t, *seen, "true")
			if got := f.setting(caseSensitiveKey); got != "false" {
				t.Errorf("%s after reading the target %q, want false", caseSensitiveKey, got)
			}
		})
	}
	t.Run("case-insensitive merge", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		for _, call := range f.recorded("set") {
			for _, kv := range pairsOf(call) {
				if kv[0] == caseSensitiveKey {
					t.Errorf("a case-insensitive merge set %s=%s", kv[0], kv[1])
				}
			}
		}
	})
	t.Run("session already case-sensitive", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		f.settings[caseSensitiveKey] = "true"
		job.Policy.CaseSensitive = true
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		for _, call := range f.recorded("set") {
			for _, kv := range pairsOf(call) {
				if kv[0] == caseSensitiveKey {
					t.Errorf("set %s=%s in a session that has it true", kv[0], kv[1])
				}
			}
		}
		if got := f.setting(caseSensitiveKey); got != "true" {
			t.Errorf("%s after the merge %q, want true", caseSensitiveKey, got)
		}
	})
	t.Run("refused", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		f.static[caseSensitiveKey] = true
		job.Policy.CaseSensitive = true
		_, err := c.Merge(context.Background(), job)
		wantSparkError(t, err, "CANNOT_MODIFY_CONFIG")
		for _, want := range []string{caseSensitiveKey + "=true", "Options.CaseSensitive"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
		if w := f.writes(); len(w) != 0 {
			t.Errorf("wrote %+v after the refusal", w)
		}
	})
}

// pairsOf are the key-value pairs of a Config set call.
func pairsOf(call sparkCall) [][2]string {
	set := pmsg(pmsg(call.req, "operation"), "set")
	pairs := set.Get(field(set, "pairs")).List()
	var out [][2]string
	for i := range pairs.Len() {
		kv := pairs.Get(i).Message()
		out = append(out, [2]string{pstr(kv, "key"), pstr(kv, "value")})
	}
	return out
}

// Verify's count of a merge of small files (known sizes, 4 MiB or less in
// all) reads the rows written and the sources in one partition, so that
// its aggregate needs no shuffle: one Spark job, where adaptive execution
// ran the shuffle's map stage as a job of its own. Larger inputs, and
// inputs of unknown size (a table), keep Spark's partitions.
func TestVerifyCountsSmallInputsInOneTask(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Verify, job.Policy.SourceColumn = true, "_source"
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantVerified(t, res, 3)
	counts := 0
	for _, call := range f.recorded("group") {
		agg := pmsg(call.plan(), "root", "aggregate")
		if !slices.Equal(exprs(agg, "grouping_expressions"), []string{"side", "src"}) {
			continue
		}
		counts++
		in := pmsg(agg, "input", "repartition")
		if in == nil || in.Get(field(in, "num_partitions")).Int() != 1 || in.Get(field(in, "shuffle")).Bool() {
			t.Errorf("the count's rows are %v, want them coalesced into one partition without a shuffle", pmsg(agg, "input"))
		}
	}
	if counts != 1 {
		t.Errorf("%d counts of rows written with rows read, want 1", counts)
	}

	small := &Planned{Reads: []*Read{{Paths: paths[:1]}, {Paths: paths[1:]}}}
	if !small.countsInOneTask() {
		t.Error("two small local files are not counted in one task")
	}
	big := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(big, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, oneTaskCountBytes); err != nil { // sparse
		t.Fatal(err)
	}
	for name, p := range map[string]*Planned{
		"past the bound":    {Reads: []*Read{{Paths: []string{big}}, {Paths: paths[:1]}}},
		"a table":           {Reads: []*Read{{Paths: paths[:1]}, {Name: "t", Table: "t"}}},
		"a file not listed": {Reads: []*Read{{Paths: []string{"s3a://b/k/a.csv"}}}},
	} {
		if p.countsInOneTask() {
			t.Errorf("%s: counted in one task", name)
		}
	}
	if listed := (&Planned{Reads: []*Read{{Paths: []string{"s3a://b/k/a.csv"}, listed: true, listedSize: 100}}}); !listed.countsInOneTask() {
		t.Error("a small file only the server sees is not counted in one task")
	}
}

// A read that failed on a CSV record ending inside quotes (a value over
// several lines, read without multiLine) is named with multiLine; other
// malformed records keep the general hint.
func TestWriteHintNamesMultiLine(t *testing.T) {
	failed := func(record string) error {
		return &connect.SparkError{ErrorClass: "FAILED_READ_FILE.NO_HINT", Message: "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file a.csv. SQLSTATE: KD001\nCaused by: [MALFORMED_CSV_RECORD] Malformed CSV record: " + record + " SQLSTATE: KD000"}
	}
	for _, tc := range []struct {
		record string
		want   string
	}{
		{`1,"hello`, "multiLine=true"},
		{`world",10`, "multiLine=true"},
		{`1,"a ""b"" c`, "multiLine=true"},
		{`1,"a",2,3`, "mode=PERMISSIVE"},
		{`1,x`, "mode=PERMISSIVE"},
	} {
		err := writeHint(failed(tc.record), []*Read{{Format: "csv", Paths: []string{"a.csv"}, Options: map[string]string{"mode": "FAILFAST"}}})
		if !strings.Contains(err.Error(), "\n  hint: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a hint of %s", tc.record, err, tc.want)
		}
	}
}

// Rows whose provenance names no source of the plan fail Verify, though
// every count agrees: their file was told wrong (found in the field: a
// data column _metadata hid Spark's, and the rows were counted under the
// data's "files", the plan's own files with 0 rows, and verified).
func TestMergeVerifyRefusesRowsOfNoSource(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	f.read = sourceRows{paths[0]: 1, "fake-a": 1, paths[1]: 1}
	f.merged = sourceRows{paths[0]: 1, "fake-a": 1, paths[1]: 1}
	job.Verify, job.Policy.SourceColumn = true, "_source"
	_, err := c.Merge(context.Background(), job)
	var verr *VerifyError
	if !errors.As(err, &verr) {
		t.Fatalf("err = %v, want a *VerifyError", err)
	}
	want := []string{`"fake-a" is no source of the plan: read 1, written 1`}
	if diff := cmp.Diff(want, verr.Mismatches); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
}

// The hint to choose the reader option mode is given where it may help:
// a failed read of a CSV or JSON file under FAILFAST; never of a Parquet
// or ORC file, whose readers have no mode, nor of a read with mode
// PERMISSIVE or DROPMALFORMED already (found in the field).
func TestWriteHintOffersModeOnlyWhereItHelps(t *testing.T) {
	failed := func(file string) error {
		return &connect.SparkError{ErrorClass: "FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH", Message: "[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH] Error while reading file " + file + ". Data type mismatches when reading Parquet column . Expected Spark type bigint, actual Parquet type BINARY. SQLSTATE: KD001"}
	}
	read := func(format, path, mode string) *Read {
		r := &Read{Format: format, Paths: []string{path}, Options: map[string]string{}}
		if mode != "" {
			r.Options["mode"] = mode
		}
		return r
	}
	csv := read("csv", "/d/a b.csv", "FAILFAST")
	for _, tc := range []struct {
		name  string
		file  string
		reads []*Read
		want  bool
	}{
		{"a parquet file", "file:///d/p.parquet", []*Read{read("parquet", "/d/p.parquet", ""), csv}, false},
		{"a parquet file, mode given", "file:///d/p.parquet", []*Read{read("parquet", "/d/p.parquet", "PERMISSIVE")}, false},
		{"an orc file in a directory read whole", "file:/d/t/part-0.orc", []*Read{read("orc", "/d/t", "")}, false},
		{"a csv file", "file:///d/a%20b.csv", []*Read{read("parquet", "/d/p.parquet", ""), csv}, true},
		{"a csv file, mode permissive", "file:///d/a.csv", []*Read{read("csv", "/d/a.csv", "permissive")}, false},
		{"a json file, mode dropmalformed", "file:///d/a.json", []*Read{read("json", "/d/a.json", "DROPMALFORMED")}, false},
		{"a json file, default mode", "file:///d/a.json", []*Read{read("json", "/d/a.json", "")}, true},
		{"a file of no read, the plan's csv", "file:///elsewhere/x", []*Read{csv}, true},
		{"a file of no read, the plan's parquet", "file:///elsewhere/x", []*Read{read("parquet", "/d/p.parquet", "")}, false},
	} {
		err := writeHint(failed(tc.file), tc.reads)
		if got := strings.Contains(err.Error(), "mode=PERMISSIVE"); got != tc.want {
			t.Errorf("%s: %v\nhints mode=PERMISSIVE: %v, want %v", tc.name, err, got, tc.want)
		}
	}
}
