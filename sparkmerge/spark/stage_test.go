package spark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
)

// How a merge stages its rows where the client cannot rename (cluster
// storage, tables), against sparkFake: the target keeps its rows until the
// merged ones are written and verified.

// stagingPath matches the hidden staging directory beside s3a://b/out.
var stagingPath = regexp.MustCompile(`^s3a://b/\.out\.sparkmerge-[0-9a-f-]{36}$`)

// oldRows are a target's rows before the merge.
var oldRows = sourceRows{"old": 4}

// An overwrite of a path on cluster storage writes the rows as Parquet
// beside the target, counts them there, copies them over the target with
// Spark (in the target's format) and empties the staging directory.
func TestMergeOverwritesRemotePathThroughStaging(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{Path: "s3a://b/out", Mode: "overwrite", Format: "csv", Files: 2}
	job.Verify = true
	f.putData(t, "s3a://b/out/part-00000-old.csv", oldRows)
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantVerified(t, res, 3)
	if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, "s3a://b/out")); diff != "" {
		t.Errorf("target rows (-want +got):\n%s", diff)
	}
	writes := f.writes()
	if len(writes) != 5 {
		t.Fatalf("%d writes, want staging, the copy's record, copy, the record cleared and emptying: %+v", len(writes), writes)
	}
	staging := writes[0].Path
	if !stagingPath.MatchString(staging) || writes[0].Format != "parquet" || writes[0].Mode != "errorifexists" {
		t.Errorf("first write %+v, want new Parquet beside the target", writes[0])
	}
	if r := writes[1]; r.Path != "s3a://b/.out.sparkmerge-copying" || r.Format != "text" || r.Mode != "overwrite" {
		t.Errorf("second write %+v, want the copy recorded beside the target before it", r)
	}
	copied := writes[2]
	if copied.Path != "s3a://b/out" || copied.Mode != "overwrite" || copied.Format != "csv" || copied.Options["header"] != "true" {
		t.Errorf("copy %+v, want an overwrite of the target as CSV with a header", copied)
	}
	co := pmsg(copied.input, "repartition")
	if co == nil || co.Get(field(co, "num_partitions")).Int() != 2 {
		t.Errorf("the copy is not coalesced into Target.Files: %v", copied.input)
	}
	if got := pstrs(dataSourceBelow(copied.input), "paths"); !slices.Equal(got, []string{staging}) {
		t.Errorf("the copy reads %v, want the staging directory", got)
	}
	if r := writes[3]; r.Path != "s3a://b/.out.sparkmerge-copying" || r.Format != "text" || r.Mode != "overwrite" || len(textOf(r.input)) != 0 {
		t.Errorf("fourth write %+v, want the record cleared after the copy", r)
	}
	if writes[4].Path != staging || writes[4].Mode != "overwrite" {
		t.Errorf("last write %+v, want the staging directory emptied", writes[4])
	}
	if n := f.storedRows(t, staging).total(); n != 0 {
		t.Errorf("the staging directory keeps %d rows", n)
	}
}

// A copy over the target that fails leaves the target's rows as they were
// and names where the merged rows are.
func TestMergeRemoteOverwriteCopyFails(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{Path: "s3a://b/out", Mode: "overwrite"}
	f.putData(t, "s3a://b/out/part-00000-old.parquet", oldRows)
	f.failOn("INTERNAL_ERROR", func(call sparkCall) bool {
		return call.what == "write" && writeOf(call.plan()).Path == "s3a://b/out"
	})
	_, err := c.Merge(context.Background(), job)
	wantSparkError(t, err, "INTERNAL_ERROR")
	staging := f.writes()[0].Path
	if !strings.Contains(err.Error(), "copy the merged rows over the target") || !strings.Contains(err.Error(), "they are in "+staging+" (Parquet)") {
		t.Errorf("error %q does not name the staging directory %s", err, staging)
	}
	if diff := cmp.Diff(oldRows, f.storedRows(t, "s3a://b/out")); diff != "" {
		t.Errorf("target rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, staging)); diff != "" {
		t.Errorf("staged rows (-want +got):\n%s", diff)
	}
}

// An overwrite of a path on cluster storage with nothing in it, and one
// of a bucket's root, are written in place.
func TestMergeRemoteOverwriteInPlace(t *testing.T) {
	for _, target := range []string{"s3a://b/out", "s3a://b/"} {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Path: target, Mode: "overwrite"}
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		if w := f.writes(); len(w) != 1 || w[0].Path != target || w[0].Mode != "overwrite" {
			t.Errorf("%s: writes %+v, want one overwrite in place", target, w)
		}
	}
}

// A verified append to cluster storage counts the files this run's write
// job made: the target's files are listed before and after, and only the
// new ones are counted, per source.
func TestMergeVerifiedAppendToRemotePath(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{Path: "s3a://b/out", Mode: "append"}
	job.Verify, job.Policy.SourceColumn = true, "_source"
	old := "s3a://b/out/part-00000-0b4a3c5d-1111-4222-8333-444455556666-c000.snappy.parquet"
	f.putData(t, old, oldRows)
	f.schemas["s3a://b/out"] = "id BIGINT, name STRING, amount DOUBLE, _source STRING"
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantVerified(t, res, 3)
	if diff := cmp.Diff(oldRows.add(sourceRows{paths[0]: 2, paths[1]: 1}), f.storedRows(t, "s3a://b/out")); diff != "" {
		t.Errorf("target rows (-want +got):\n%s", diff)
	}
	if n := len(f.recorded("list")); n != 2 {
		t.Errorf("%d listings, want the target's before and after the write", n)
	}
	// The rows written are counted in the new file alone, read with the
	// target as its base path, once: per source, their total the sum.
	for what, want := range map[string]int{"group": 1, "count": 0} {
		n := 0
		for _, call := range f.recorded(what) {
			// Any of the plan's reads: protobuf's Range, which
			// dataSources walks, visits fields in an order that differs
			// from binary to binary.
			for _, ds := range dataSources(pmsg(call.plan(), "root")) {
				paths := pstrs(ds, "paths")
				if len(paths) == 1 && strings.HasPrefix(paths[0], "s3a://b/out/part-") && paths[0] != old && pmap(ds, "options")["basePath"] == "s3a://b/out" {
					n++
				}
			}
		}
		if n != want {
			t.Errorf("%d %s requests of the new file alone, want %d", n, what, want)
		}
	}
}

// Files that two write jobs added during the run mean another writer
// appended meanwhile: which rows are this run's cannot be told.
func TestMergeVerifiedAppendWithAnotherWriter(t *testing.T) {
	c, f, _, job := mergeSetup(t)
	job.Target = Target{Path: "s3a://b/out", Mode: "append"}
	job.Verify = true
	f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
		if call.what != "write" {
			return sparkReply{}, false
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		err := f.write(writeOf(call.plan()))
		f.remote["s3a://b/out/part-00000-7a1b2c3d-1111-4222-8333-444455556666-c000.parquet"] = []byte(`{"other":1}`)
		return sparkReply{err: err}, true
	}
	_, err := c.Merge(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "verify: cannot tell this run's rows in \"s3a://b/out\": 2 write jobs added files") {
		t.Errorf("err = %v, want the other writer found", err)
	}
}

// A table other than Delta's or Iceberg's is overwritten through a staging
// table beside it: written and counted there, then the table's rows
// replaced by INSERT OVERWRITE TABLE, its columns by name in the table's
// order (the provenance column, which the merge adds last, where the
// table has it), and the staging table dropped. The table is never
// dropped or renamed, whatever its name's parts.
func TestMergeOverwritesTableThroughStaging(t *testing.T) {
	for _, table := range []string{"db.t", "spark_catalog.default.t"} {
		t.Run(table, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			job.Target = Target{Table: table, Mode: "overwrite", PartitionBy: []string{"name"}}
			job.Verify = true
			job.Policy.SourceColumn = "_source"
			f.tables[table] = &fakeTable{schema: "id BIGINT, _source STRING, amount DOUBLE, name STRING", rows: oldRows, partitionBy: []string{"name"}}
			res, err := c.Merge(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			wantVerified(t, res, 3)
			writes := f.writes()
			if len(writes) != 1 || writes[0].Mode != "errorifexists" || len(writes[0].PartitionBy) != 0 {
				t.Fatalf("writes %+v, want one new, unpartitioned staging table", writes)
			}
			staging := writes[0].Table
			if !strings.HasPrefix(staging, table+"__sparkmerge_") {
				t.Errorf("staging table %s, want one beside %s", staging, table)
			}
			want := []string{
				"INSERT OVERWRITE TABLE " + table + " SELECT `id`, `_source`, `amount`, `name` FROM " + staging,
				"DROP TABLE IF EXISTS " + staging,
			}
			if diff := cmp.Diff(want, f.statements()); diff != "" {
				t.Errorf("statements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.tableRows(table)); diff != "" {
				t.Errorf("table rows (-want +got):\n%s", diff)
			}
			if f.tableRows(staging) != nil {
				t.Errorf("staging table %s left", staging)
			}
		})
	}
}

// An overwrite keeps the table's columns: sources with columns it lacks
// are refused, naming them, before anything is written, unless Evolve
// adds them first (ALTER TABLE, then the staged overwrite).
func TestMergeTableOverwriteKeepsColumns(t *testing.T) {
	setup := func(t *testing.T) (*Client, *sparkFake, Job) {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "overwrite"}
		f.tables["db.t"] = &fakeTable{schema: "id BIGINT", rows: oldRows}
		return c, f, job
	}
	t.Run("refused", func(t *testing.T) {
		c, f, job := setup(t)
		_, err := c.Merge(context.Background(), job)
		var missing *sparkmerge.MissingColumnsError
		if !errors.As(err, &missing) || !strings.Contains(err.Error(), "overwrite table \"db.t\": sources have columns it lacks") ||
			!strings.Contains(err.Error(), `has "name"`) || !strings.Contains(err.Error(), `has "amount"`) {
			t.Fatalf("err = %v, want the columns the table lacks named", err)
		}
		if w := f.writes(); len(w) != 0 {
			t.Errorf("writes %+v, want none", w)
		}
		if diff := cmp.Diff(oldRows, f.tableRows("db.t")); diff != "" {
			t.Errorf("table rows (-want +got):\n%s", diff)
		}
	})
	t.Run("evolved", func(t *testing.T) {
		c, f, job := setup(t)
		job.Target.Evolve = true
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		got := f.statements()
		if len(got) != 3 || got[0] != "ALTER TABLE db.t ADD COLUMNS (`name` string, `amount` double)" || !strings.HasPrefix(got[1], "INSERT OVERWRITE TABLE db.t SELECT ") {
			t.Errorf("statements %q, want the columns added, then the overwrite", got)
		}
	})
}

// A table whose rows cannot be replaced keeps them, and the error names
// the staging table that holds the new ones; a session that overwrites
// partitions dynamically still has every partition replaced; a table that
// does not exist yet is written directly.
func TestMergeTableOverwriteEdges(t *testing.T) {
	const schema = "id BIGINT, name STRING, amount DOUBLE"
	t.Run("insert fails", func(t *testing.T) {
		c, f, paths, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "overwrite"}
		f.tables["db.t"] = &fakeTable{schema: schema, rows: oldRows}
		f.failOn("INSUFFICIENT_PERMISSIONS", func(call sparkCall) bool {
			return call.what == "sql" && strings.HasPrefix(statementOf(call.plan()), "INSERT OVERWRITE TABLE db.t ")
		})
		_, err := c.Merge(context.Background(), job)
		wantSparkError(t, err, "INSUFFICIENT_PERMISSIONS")
		staging := f.writes()[0].Table
		if !strings.Contains(err.Error(), "overwrite table db.t") || !strings.Contains(err.Error(), "the new rows are in "+staging) {
			t.Errorf("error %q does not name the staging table %s", err, staging)
		}
		if diff := cmp.Diff(oldRows, f.tableRows("db.t")); diff != "" {
			t.Errorf("table rows (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.tableRows(staging)); diff != "" {
			t.Errorf("staging rows (-want +got):\n%s", diff)
		}
		for _, stmt := range f.statements() {
			if strings.HasPrefix(stmt, "DROP TABLE") {
				t.Errorf("%s after the failed overwrite", stmt)
			}
		}
	})
	t.Run("dynamic partition overwrite", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "overwrite"}
		f.tables["db.t"] = &fakeTable{schema: schema, rows: oldRows}
		f.settings[partitionOverwriteKey] = "dynamic"
		var during string
		f.failOn("", func(call sparkCall) bool {
			if call.what == "sql" && strings.HasPrefix(statementOf(call.plan()), "INSERT OVERWRITE") {
				during = f.setting(partitionOverwriteKey)
			}
			return false
		})
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		if after := f.setting(partitionOverwriteKey); during != "STATIC" || after != "dynamic" {
			t.Errorf("%s during the overwrite %q, after %q; want STATIC, then dynamic again", partitionOverwriteKey, during, after)
		}
	})
	t.Run("new table", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "overwrite", PartitionBy: []string{"id"}}
		if _, err := c.Merge(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		// Created through its catalog, in one statement.
		w := f.writes()
		if len(w) != 1 || w[0].Table != "db.t" || w[0].Mode != "create" || !slices.Equal(w[0].PartitionBy, []string{"id"}) {
			t.Errorf("writes %+v, want one create of db.t partitioned by id", w)
		}
		if n := len(f.statements()); n != 0 {
			t.Errorf("%d statements for a new table", n)
		}
	})
	t.Run("verify fails", func(t *testing.T) {
		c, f, paths, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "overwrite"}
		job.Verify = true
		f.tables["db.t"] = &fakeTable{schema: schema, rows: oldRows}
		f.merged = sourceRows{paths[0]: 2}
		_, err := c.Merge(context.Background(), job)
		var verr *VerifyError
		if !errors.As(err, &verr) {
			t.Fatalf("err = %v, want a *VerifyError", err)
		}
		staging := f.writes()[0].Table
		if diff := cmp.Diff([]string{"DROP TABLE IF EXISTS " + staging}, f.statements()); diff != "" {
			t.Errorf("statements (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(oldRows, f.tableRows("db.t")); diff != "" {
			t.Errorf("table rows (-want +got):\n%s", diff)
		}
	})
}

// A verified append to a table is written to a staging table, counted
// there (a concurrent writer's rows are not among them), appended to the
// table by Spark and dropped.
func TestMergeVerifiedAppendToTable(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{Table: "db.t", Mode: "append", PartitionBy: []string{"id"}}
	job.Verify = true
	f.tables["db.t"] = &fakeTable{schema: "id BIGINT, name STRING, amount DOUBLE", rows: oldRows, partitionBy: []string{"id"}}
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	wantVerified(t, res, 3)
	writes := f.writes()
	if len(writes) != 2 {
		t.Fatalf("%d writes, want the staging table and the append", len(writes))
	}
	staging := writes[0].Table
	if !strings.HasPrefix(staging, "db.t__sparkmerge_") || writes[0].Mode != "errorifexists" || len(writes[0].PartitionBy) != 0 {
		t.Errorf("first write %+v, want a new, unpartitioned staging table", writes[0])
	}
	w := writes[1]
	if w.Table != "db.t" || w.Mode != "append" || !slices.Equal(w.PartitionBy, []string{"id"}) || pstr(pmsg(w.input, "read", "named_table"), "unparsed_identifier") != staging {
		t.Errorf("second write %+v, want the staging table appended to db.t, partitioned by id", w)
	}
	if diff := cmp.Diff([]string{"DROP TABLE IF EXISTS " + staging}, f.statements()); diff != "" {
		t.Errorf("statements (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(oldRows.add(sourceRows{paths[0]: 2, paths[1]: 1}), f.tableRows("db.t")); diff != "" {
		t.Errorf("table rows (-want +got):\n%s", diff)
	}
}

// Evolve adds the columns a table lacks before appending, by the
// statements of its evolution; a table format that cannot add them fails
// with Spark's error, and nothing is written.
func TestMergeEvolvesTable(t *testing.T) {
	setup := func(t *testing.T) (*Client, *sparkFake, Job) {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "append", Evolve: true}
		f.tables["db.t"] = &fakeTable{schema: "id BIGINT", rows: oldRows}
		return c, f, job
	}
	const alter = "ALTER TABLE db.t ADD COLUMNS (`name` string, `amount` double)"
	isStatement := func(call sparkCall) bool { return call.what == "sql" && statementOf(call.plan()) != "" }
	t.Run("added", func(t *testing.T) {
		c, f, job := setup(t)
		res, err := c.Merge(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{alter}, res.Table.Evolution.Statements()); diff != "" {
			t.Errorf("evolution (-want +got):\n%s", diff)
		}
		var order []string
		for _, call := range f.recorded("ExecutePlan") {
			if isStatement(call) || call.what == "write" {
				order = append(order, call.what)
			}
		}
		if diff := cmp.Diff([]string{alter}, f.statements()); diff != "" || !slices.Equal(order, []string{"sql", "write"}) {
			t.Errorf("commands %v, statements (-want +got):\n%s", order, diff)
		}
	})
	t.Run("refused", func(t *testing.T) {
		c, f, job := setup(t)
		f.failOn("UNSUPPORTED_FEATURE.TABLE_OPERATION", isStatement)
		_, err := c.Merge(context.Background(), job)
		wantSparkError(t, err, "UNSUPPORTED_FEATURE.TABLE_OPERATION")
		if !strings.Contains(err.Error(), "evolve table db.t ("+alter+")") {
			t.Errorf("error text %q", err)
		}
		if n := len(f.writes()); n != 0 {
			t.Errorf("%d writes after the table could not evolve", n)
		}
	})
}

// An append installed from a staging directory moves the data files into
// the target's own directories and refuses to replace a file.
func TestMoveFiles(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	for _, name := range []string{"part-1.parquet", "day=1/part-2.parquet", "_SUCCESS", ".part-1.parquet.crc"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(from, name)), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(from, name), []byte(name), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := moveFiles(from, to); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"part-1.parquet", "day=1/part-2.parquet"} {
		if got, err := os.ReadFile(filepath.Join(to, name)); err != nil || string(got) != name {
			t.Errorf("%s not moved: %q, %v", name, got, err)
		}
	}
	if got := dirNames(t, from); !slices.Equal(got, []string{".part-1.parquet.crc", "_SUCCESS", "day=1"}) {
		t.Errorf("left in the staging directory: %v, want the markers (and the emptied partition)", got)
	}
	if err := os.WriteFile(filepath.Join(from, "part-1.parquet"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := moveFiles(from, to); err == nil || !strings.Contains(err.Error(), "part-1.parquet exists already") {
		t.Errorf("moving onto an existing file: err = %v", err)
	}
}

// A staging table is named beside its table, inside its quotes.
func TestStagingTableName(t *testing.T) {
	for table, want := range map[string]*regexp.Regexp{
		"db.t":          regexp.MustCompile(`^db\.t__sparkmerge_[0-9a-f]{8}$`),
		"`my db`.`t t`": regexp.MustCompile("^`my db`" + `\.` + "`t t__sparkmerge_[0-9a-f]{8}`$"),
	} {
		a, b := stagingTableName(table), stagingTableName(table)
		if !want.MatchString(a) || a == b {
			t.Errorf("stagingTableName(%q) = %q then %q, want fresh names matching %s", table, a, b, want)
		}
	}
}

// Only Spark's file sources name their files by write job.
func TestIdentifiesWriteJobs(t *testing.T) {
	for format, want := range map[string]bool{"": true, "parquet": true, "CSV": true, "json": true, "delta": false, "iceberg": false} {
		if got := identifiesWriteJobs(format); got != want {
			t.Errorf("identifiesWriteJobs(%q) = %v, want %v", format, got, want)
		}
	}
}

// An append to cluster storage without Verify is written in place; the
// rows written are the target's count after it less its count before (none
// when the target does not exist yet).
func TestMergeAppendsToRemotePathInPlace(t *testing.T) {
	for _, existing := range []bool{false, true} {
		c, f, paths, job := mergeSetup(t)
		job.Target = Target{Path: "s3a://b/out", Mode: "append"}
		want := sourceRows{paths[0]: 2, paths[1]: 1}
		if existing {
			f.putData(t, "s3a://b/out/part-00000-old.parquet", oldRows)
			f.schemas["s3a://b/out"] = "id BIGINT, name STRING, amount DOUBLE"
			want = want.add(oldRows)
		}
		res, err := c.Merge(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if res.RowsWritten != 3 {
			t.Errorf("existing %v: %d rows written, want 3", existing, res.RowsWritten)
		}
		if diff := cmp.Diff(want, f.storedRows(t, "s3a://b/out")); diff != "" {
			t.Errorf("existing %v: target rows (-want +got):\n%s", existing, diff)
		}
		if w := f.writes(); len(w) != 1 || w[0].Path != "s3a://b/out" || w[0].Mode != "append" {
			t.Errorf("existing %v: writes %+v, want one append in place", existing, w)
		}
		if n := len(f.recorded("count")); n != 2 {
			t.Errorf("existing %v: %d counts of the target, want one before and one after", existing, n)
		}
	}
}

// A target that cannot be looked up for another reason than "not found"
// (no permission, a transient failure) is never taken for a missing one,
// which would be overwritten in place without staging: the merge stops
// with Spark's error, having written nothing, and the target keeps its
// rows.
func TestMergeOverwriteStopsWhenTheTargetCannotBeLookedUp(t *testing.T) {
	t.Run("table", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Table: "db.t", Mode: "overwrite"}
		f.tables["db.t"] = &fakeTable{schema: "id BIGINT", rows: oldRows}
		f.failOn("INSUFFICIENT_PERMISSIONS", func(call sparkCall) bool {
			return call.method == "AnalyzePlan" && pstr(pmsg(call.plan(), "root", "read", "named_table"), "unparsed_identifier") == "db.t"
		})
		_, err := c.Merge(context.Background(), job)
		wantSparkError(t, err, "INSUFFICIENT_PERMISSIONS")
		if w := f.writes(); len(w) != 0 {
			t.Errorf("writes %+v, want none", w)
		}
		if diff := cmp.Diff(oldRows, f.tableRows("db.t")); diff != "" {
			t.Errorf("table rows (-want +got):\n%s", diff)
		}
	})
	t.Run("remote path", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		job.Target = Target{Path: "s3a://b/out", Mode: "overwrite"}
		f.putData(t, "s3a://b/out/part-00000-old.parquet", oldRows)
		f.failOn("INTERNAL_ERROR", func(call sparkCall) bool { return call.what == "list" })
		_, err := c.Merge(context.Background(), job)
		wantSparkError(t, err, "INTERNAL_ERROR")
		if w := f.writes(); len(w) != 0 {
			t.Errorf("writes %+v, want none", w)
		}
		if diff := cmp.Diff(oldRows, f.storedRows(t, "s3a://b/out")); diff != "" {
			t.Errorf("target rows (-want +got):\n%s", diff)
		}
	})
}

// A copy over the target that fails (the server gone while copying) leaves
// its record beside the target: the next run writing the target completes
// the copy from the staged rows before its own merge, clears the record
// and empties the staging directory; a dry run refuses, saying to run the
// merge; a run after that finds nothing to complete.
func TestInterruptedRemoteOverwriteRollsForward(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{Path: "s3a://b/out", Mode: "overwrite"}
	f.putData(t, "s3a://b/out/part-00000-old.parquet", oldRows)
	f.failOn("INTERNAL_ERROR", func(call sparkCall) bool {
		return call.what == "write" && writeOf(call.plan()).Path == "s3a://b/out"
	})
	_, err := c.Merge(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), `the next sparkmerge run writing "s3a://b/out" completes the copy`) {
		t.Fatalf("err = %v, want the copy's failure saying the next run completes it", err)
	}
	f.hook = nil
	staging := f.writes()[0].Path
	staged := sourceRows{paths[0]: 2, paths[1]: 1}

	dry := job
	dry.DryRun = true
	_, err = c.Merge(context.Background(), dry)
	var interrupted *InterruptedOverwriteError
	if !errors.As(err, &interrupted) || interrupted.Staging != staging || interrupted.Rows != 3 || !strings.Contains(err.Error(), "run the merge without --dry-run") {
		t.Fatalf("dry run: err = %v, want an InterruptedOverwriteError naming %s and its 3 rows", err, staging)
	}

	// The next run appends other rows: the interrupted overwrite's come
	// first.
	f.read = sourceRows{paths[1]: 1}
	f.schemas["s3a://b/out"] = "id INT, name STRING, amount DOUBLE"
	next := job
	next.Sources = next.Sources[1:]
	next.Target.Mode = "append"
	before := len(f.writes())
	res, err := c.Merge(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&RolledForward{Target: `"s3a://b/out"`, Staging: staging, Rows: 3}, res.RolledForward); diff != "" {
		t.Errorf("rolled forward (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.Summary(), "first completed an interrupted overwrite of \"s3a://b/out\": copied its 3 staged rows from "+staging) {
		t.Errorf("summary %q does not say what was completed", res.Summary())
	}
	writes := f.writes()[before:]
	if len(writes) < 4 || writes[0].Path != "s3a://b/out" || writes[0].Mode != "overwrite" || writes[1].Path != "s3a://b/.out.sparkmerge-copying" || writes[2].Path != staging {
		t.Fatalf("writes %+v, want the copy, the record cleared and the staging emptied before the merge's own", writes)
	}
	if diff := cmp.Diff(staged.add(sourceRows{paths[1]: 1}), f.storedRows(t, "s3a://b/out")); diff != "" {
		t.Errorf("target rows (-want +got):\n%s", diff)
	}
	if n := f.storedRows(t, staging).total(); n != 0 {
		t.Errorf("the staging directory keeps %d rows", n)
	}
	res, err = c.Merge(context.Background(), next)
	if err != nil || res.RolledForward != nil {
		t.Errorf("a run after the roll-forward: err %v, rolled forward %+v; want nothing to complete", err, res.RolledForward)
	}
}

// A record whose staging directory no longer holds the files recorded is
// never copied: the run refuses, naming the staging directory and the
// record, and writes nothing.
func TestRollForwardRefusesStagedRowsThatChanged(t *testing.T) {
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{Path: "s3a://b/out", Mode: "overwrite"}
	f.putData(t, "s3a://b/out/part-00000-old.parquet", oldRows)
	f.failOn("INTERNAL_ERROR", func(call sparkCall) bool {
		return call.what == "write" && writeOf(call.plan()).Path == "s3a://b/out"
	})
	if _, err := c.Merge(context.Background(), job); err == nil {
		t.Fatal("the copy's failure was not reported")
	}
	f.hook = nil
	staging := f.writes()[0].Path
	f.putData(t, staging+"/part-00001-late.parquet", sourceRows{paths[0]: 5})
	before := len(f.writes())
	_, err := c.Merge(context.Background(), job)
	var interrupted *InterruptedOverwriteError
	if !errors.As(err, &interrupted) || !strings.Contains(err.Error(), "2 data files where 1 were recorded") || !strings.Contains(err.Error(), "s3a://b/.out.sparkmerge-copying") {
		t.Fatalf("err = %v, want a refusal naming the staging directory's files and the record", err)
	}
	if w := f.writes()[before:]; len(w) != 0 {
		t.Errorf("writes %+v after a refused roll-forward, want none", w)
	}
}
