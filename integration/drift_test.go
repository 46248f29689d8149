//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Type drift across Parquet files: int/double/string, two decimals, date and
// timestamp. Widening keeps every value: numbers and strings meet as string,
// decimals keep the integer digits and the larger scale, a date becomes a
// timestamp at midnight.
func TestTypeDrift(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	p1, p2, p3 := filepath.Join(dir, "p1"), filepath.Join(dir, "p2"), filepath.Join(dir, "p3")
	exec(t,
		"INSERT OVERWRITE DIRECTORY '"+p1+"' USING parquet SELECT 1 AS id, 7 AS n, 7 AS code, CAST(12345678.12 AS decimal(10,2)) AS amount, DATE'2024-01-02' AS at",
		"INSERT OVERWRITE DIRECTORY '"+p2+"' USING parquet SELECT 2 AS id, 2.5D AS n, 8 AS code, CAST(12345678.1234 AS decimal(12,4)) AS amount, TIMESTAMP'2024-01-03 04:05:06' AS at",
		"INSERT OVERWRITE DIRECTORY '"+p3+"' USING parquet SELECT 3 AS id, 9 AS n, 'A-9' AS code, CAST(NULL AS decimal(10,2)) AS amount, CAST(NULL AS date) AS at",
	)
	sources := []spark.SourceSpec{
		{Paths: []string{p1}, Format: "parquet"},
		{Paths: []string{p2}, Format: "parquet"},
		{Paths: []string{p3}, Format: "parquet"},
	}
	res, out := merge(t, c, spark.Job{Sources: sources, Strategy: spark.StrategyUnion})
	diff(t, "schema", []string{"id int", "n double", "code string", "amount decimal(12,4)", "at timestamp"}, schemaOf(t, c, out))
	rows := queryRows(t, "SELECT id, CAST(n AS string), code, CAST(amount AS string), CAST(at AS string) FROM parquet.`"+out+"` ORDER BY id")
	diff(t, "rows", [][]any{
		row(int32(1), "7.0", "7", "12345678.1200", "2024-01-02 00:00:00"),
		row(int32(2), "2.5", "8", "12345678.1234", "2024-01-03 04:05:06"),
		row(int32(3), "9.0", "A-9", nil, nil),
	}, rows)
	widened := map[string]string{}
	for i := range res.Plan.Sources {
		for _, w := range res.Plan.Diagnostics(i).Widened {
			widened[fmt.Sprintf("%d.%s", i+1, w.Column)] = w.From.String() + "->" + w.To.String()
		}
	}
	diff(t, "widened columns", map[string]string{
		"1.n": "int->double", "1.amount": "decimal(10,2)->decimal(12,4)", "1.at": "date->timestamp",
		"3.n": "int->double", "3.amount": "decimal(10,2)->decimal(12,4)", "3.at": "date->timestamp",
	}, widened)

	// auto first tries one read with mergeSchema; Spark refuses int +
	// double, so it falls back to the three files and gives the same table.
	res, out = merge(t, c, spark.Job{Sources: sources, Strategy: spark.StrategyAuto})
	if len(res.Reads) != 3 {
		t.Errorf("auto over conflicting parquet files: %d reads, want 3 (the trial read refused)", len(res.Reads))
	}
	diff(t, "auto schema", []string{"id int", "n double", "code string", "amount decimal(12,4)", "at timestamp"}, schemaOf(t, c, out))

	// Parquet's own mergeSchema refuses int + double: the multipath strategy
	// says so with Spark's error class instead of guessing.
	_, err := c.Merge(context.Background(), spark.Job{Sources: sources, Strategy: spark.StrategyMultipath, Target: spark.Target{Path: filepath.Join(workDir(t), "out")}})
	var se *spark.SparkError
	if !errors.As(err, &se) {
		t.Fatalf("multipath over int+double parquet: err = %v, want a Spark error", err)
	}
	t.Logf("multipath refused with %s: %.200s", se.ErrorClass, err)

	// strict: every conflicting column is listed with each source's type.
	_, err = c.Plan(context.Background(), spark.Job{Sources: sources, Strategy: spark.StrategyUnion, Policy: sparkmerge.Options{Types: sparkmerge.TypesStrict}})
	if !errors.Is(err, sparkmerge.ErrSchemaConflict) {
		t.Fatalf("strict: err = %v, want ErrSchemaConflict", err)
	}
	for _, want := range []string{"n", "code", "amount", "at", "decimal(12,4)", "string"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("strict error does not mention %q: %v", want, err)
		}
	}
}

// Nested drift: struct fields added on each side, also inside an array of
// structs and a map's struct values. Missing nested fields become nulls; a
// null struct stays null.
func TestNestedDrift(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{
		"a.json": `{"id":1,"s":{"a":1},"items":[{"sku":"x1","qty":2}],"m":{"k":{"p":1}}}
{"id":2,"s":null,"items":[],"m":{}}
`,
		"b.json": `{"id":3,"s":{"a":5,"b":"q"},"items":[{"sku":"y1","note":"gift"}],"m":{"k":{"p":2,"r":"z"}}}
`,
	}, "a.json", "b.json")
	_, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion})
	// JSON inference sorts each file's fields by name.
	diff(t, "schema", []string{
		"id bigint",
		"items array<struct<qty:bigint,sku:string,note:string>>",
		"m struct<k:struct<p:bigint,r:string>>",
		"s struct<a:bigint,b:string>",
	}, schemaOf(t, c, out))
	rows := queryRows(t, "SELECT id, to_json(s), to_json(items), to_json(m), s IS NULL FROM parquet.`"+out+"` ORDER BY id")
	diff(t, "rows", [][]any{
		row(int64(1), `{"a":1}`, `[{"qty":2,"sku":"x1"}]`, `{"k":{"p":1}}`, false),
		row(int64(2), nil, `[]`, `{}`, true),
		row(int64(3), `{"a":5,"b":"q"}`, `[{"sku":"y1","note":"gift"}]`, `{"k":{"p":2,"r":"z"}}`, false),
	}, rows)
}

// Case drift: Name, NAME and name are one column, spelled as first seen.
func TestCaseDrift(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{
		"a.csv": "ID,Name\n1,Ann\n",
		"b.csv": "id,NAME,Extra\n2,Bo,x\n",
		"c.csv": "name,id\nCy,3\n",
	}, "a.csv", "b.csv", "c.csv")
	_, out := merge(t, c, spark.Job{Sources: pathSources(paths...)})
	diff(t, "schema", []string{"ID int", "Name string", "Extra string"}, schemaOf(t, c, out))
	diff(t, "rows", [][]any{row("1", "Ann", nil), row("2", "Bo", "x"), row("3", "Cy", nil)},
		parquetRows(t, out, []string{"ID", "Name", "Extra"}, "ID"))
}

// 600 sources in one merge: far more than a left-deep union chain survives
// (~500); the balanced UNION ALL tree keeps every row.
func TestSixHundredSources(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("600 sources take a while")
	}
	c := newClient(t)
	dir := workDir(t)
	const n = 600
	var sources []spark.SourceSpec
	for i := 0; i < n; i++ {
		// Three drifting shapes, so the union has work to do.
		var content string
		switch i % 3 {
		case 0:
			content = fmt.Sprintf("id,v\n%d,%d\n%d,%d\n", 2*i, i, 2*i+1, i)
		case 1:
			content = fmt.Sprintf("v,id,w\n%d,%d,x\n%d,%d,y\n", i, 2*i, i, 2*i+1)
		default:
			content = fmt.Sprintf("id,w\n%d,z\n%d,z\n", 2*i, 2*i+1)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%03d.csv", i))
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, spark.SourceSpec{Paths: []string{p}})
	}
	// Verifying would read all 600 files once more; the auto merge below
	// verifies, and the aggregates here check every row.
	res, out := merge(t, c, spark.Job{Sources: sources, Strategy: spark.StrategyUnion, Parallelism: 16})
	if len(res.Reads) != n {
		t.Errorf("%d reads, want %d", len(res.Reads), n)
	}
	if res.RowsWritten != 2*n {
		t.Errorf("rows written = %d, want %d", res.RowsWritten, 2*n)
	}
	rows := queryRows(t, "SELECT count(DISTINCT id), min(id), max(id), count(v), count(w) FROM parquet.`"+out+"`")
	diff(t, "aggregates", [][]any{row(int64(2*n), int32(0), int32(2*n-1), int64(800), int64(800))}, rows)
	// The 600 reads run as one positional CSV scan: 400 files of width 2
	// and 200 of width 3 together.
	if res.Scans != 1 {
		t.Errorf("%d scans, want 1", res.Scans)
	}
	// 600 tiny inputs are coalesced into a few files, not 600: 8.
	if parts, _ := filepath.Glob(filepath.Join(out, "part-*")); len(parts) != 8 {
		t.Errorf("%d output files, want 8 (600 small inputs coalesced)", len(parts))
	}
	t.Logf("600 sources: schemas in %s, whole merge in %s", res.Discovery, res.Elapsed)

	// auto reads the three shapes in three multi-path loads.
	res, out = merge(t, c, spark.Job{Sources: sources, Strategy: spark.StrategyAuto, Verify: true, Policy: sparkmerge.Options{SourceColumn: "_file"}})
	if len(res.Reads) != 3 || res.RowsWritten != 2*n || !res.Verified {
		t.Errorf("auto: %d reads, %d rows (verified %v); want 3 reads, %d rows", len(res.Reads), res.RowsWritten, res.Verified, 2*n)
	}
	rows = queryRows(t, "SELECT count(DISTINCT _file), min(_file) FROM parquet.`"+out+"`")
	diff(t, "provenance from each file", [][]any{row(int64(n), filepath.Join(dir, "f000.csv"))}, rows)
}

// Writes with partitionBy: one directory per value, every row kept.
func TestPartitionedWrite(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	out := filepath.Join(workDir(t), "tides")
	res, _ := merge(t, c, spark.Job{
		Sources: pathSources(filepath.Join(testdataRoot, "tides")),
		Target:  spark.Target{Path: out, PartitionBy: []string{"Date"}, Options: map[string]string{"compression": "zstd"}},
	})
	if res.RowsWritten != 12 {
		t.Errorf("rows written = %d, want 12", res.RowsWritten)
	}
	for _, day := range []string{"2020-01-27", "2020-01-28", "2020-01-29"} {
		if _, err := os.Stat(filepath.Join(out, "Date="+day)); err != nil {
			t.Errorf("partition directory for %s: %v", day, err)
		}
	}
	rows := queryRows(t, "SELECT CAST(Date AS string), count(*) FROM parquet.`"+out+"` GROUP BY Date ORDER BY Date")
	diff(t, "rows per partition", [][]any{row("2020-01-27", int64(4)), row("2020-01-28", int64(4)), row("2020-01-29", int64(4))}, rows)
}

// Appending to a table aligns to its schema; new columns fail with their
// names, or are added first with Evolve.
func TestTableAppendEvolve(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	table := fmt.Sprintf("sm_evolve_%d", os.Getpid())
	exec(t,
		"DROP TABLE IF EXISTS "+table,
		"CREATE TABLE "+table+" (id int, name string) USING parquet",
		"INSERT INTO "+table+" VALUES (1, 'old')",
	)
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{"new.csv": "name,id,score\nnew,2,9.5\n"}, "new.csv")
	job := spark.Job{Sources: pathSources(paths...), Target: spark.Target{Table: table, Mode: "append"}}

	_, err := c.Merge(context.Background(), job)
	if !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "score") {
		t.Fatalf("append with a new column: err = %v, want a schema conflict naming score", err)
	}

	job.Target.Evolve = true
	res, _ := merge(t, c, job)
	if res.RowsWritten != 1 {
		t.Errorf("rows written = %d, want 1", res.RowsWritten)
	}
	rows := queryRows(t, "SELECT id, name, score FROM "+table+" ORDER BY id")
	diff(t, "table rows", [][]any{row(int32(1), "old", nil), row(int32(2), "new", 9.5)}, rows)
}

// Provenance of files read together: each row names its own file exactly as
// on disk, even with spaces, '+' and '%' in the name.
func TestProvenanceOfMultiFileRead(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := filepath.Join(workDir(t), "my dir")
	paths := writeFiles(t, dir, map[string]string{
		"a b+c.csv": "id,v\n1,x\n",
		"d%e.csv":   "id,v\n2,y\n",
	}, "a b+c.csv", "d%e.csv")
	res, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Policy: sparkmerge.Options{SourceColumn: "_source"}, Verify: true})
	if len(res.Reads) != 1 {
		t.Fatalf("%d reads, want one read over both files (same header)", len(res.Reads))
	}
	diff(t, "rows", [][]any{row("1", "x", paths[0]), row("2", "y", paths[1])}, parquetRows(t, out, []string{"id", "v", "_source"}, "id"))
}

// auto reads Parquet files that Spark can merge in one load, and JSON
// files with keys that differ only in case one by one (Spark's JSON
// inference would keep both spellings as two columns).
func TestAutoTrialReads(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	p1, p2 := filepath.Join(dir, "day1"), filepath.Join(dir, "day2")
	exec(t,
		"INSERT OVERWRITE DIRECTORY '"+p1+"' USING parquet SELECT 1 AS id, 'a' AS name",
		"INSERT OVERWRITE DIRECTORY '"+p2+"' USING parquet SELECT 2 AS id, 'b' AS name, 9.5D AS score",
	)
	res, out := merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{p1}, Format: "parquet"}, {Paths: []string{p2}, Format: "parquet"}}, Verify: true})
	if len(res.Reads) != 1 {
		t.Errorf("mergeable parquet: %d reads, want 1", len(res.Reads))
	}
	diff(t, "parquet rows", [][]any{row("1", "a", nil), row("2", "b", "9.5")}, parquetRows(t, out, []string{"id", "name", "score"}, "id"))

	paths := writeFiles(t, dir, map[string]string{
		"a.json": `{"Id":1,"Name":"x"}` + "\n",
		"b.json": `{"id":2,"name":"y","extra":true}` + "\n",
	}, "a.json", "b.json")
	res, out = merge(t, c, spark.Job{Sources: pathSources(paths...), Verify: true})
	if len(res.Reads) != 2 {
		t.Errorf("JSON with case drift: %d reads, want the 2 files on their own", len(res.Reads))
	}
	diff(t, "json schema", []string{"Id bigint", "Name string", "extra boolean"}, schemaOf(t, c, out))
	diff(t, "json rows", [][]any{row("1", "x", nil), row("2", "y", "true")}, parquetRows(t, out, []string{"Id", "Name", "extra"}, "Id"))

	// Files that spell their shared keys alike are read together, the
	// others alone: c agrees with b, not with a.
	more := writeFiles(t, dir, map[string]string{"c.json": `{"id":3,"score":1.5}` + "\n"}, "c.json")
	res, out = merge(t, c, spark.Job{Sources: pathSources(append(paths, more...)...), Verify: true})
	var sizes []int
	for _, r := range res.Reads {
		sizes = append(sizes, len(r.Sources))
	}
	diff(t, "JSON reads (files per read)", []int{1, 2}, sizes)
	diff(t, "json rows", [][]any{row("1", "x", nil, nil), row("2", "y", "true", nil), row("3", nil, nil, "1.5")},
		parquetRows(t, out, []string{"Id", "Name", "extra", "score"}, "Id"))
}

// Appending to a path dataset aligns to its schema as a table append does:
// a drifted source is cast to the dataset's types (it reads back as one
// dataset, not PARQUET_COLUMN_DATA_TYPE_MISMATCH), a new column is an
// error naming it, or with Evolve is written into new files that read back
// by name; a CSV dataset refuses new columns.
func TestPathAppendAligns(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	first := writeFiles(t, dir, map[string]string{"day1.csv": "id,amount\n1,10\n"}, "day1.csv")
	second := writeFiles(t, dir, map[string]string{"day2.csv": "amount,id\n2.5,2\n"}, "day2.csv")              // amount double, id int
	third := writeFiles(t, dir, map[string]string{"day3.csv": "id,amount,note\n3000000000,7,n\n"}, "day3.csv") // id bigint, a new column
	out := filepath.Join(workDir(t), "out")
	merge(t, c, spark.Job{Sources: pathSources(first...), Target: spark.Target{Path: out}})
	// amount is an int in the dataset: 2.5 cannot be cast to it exactly.
	_, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(second...), Target: spark.Target{Path: out, Mode: "append"}})
	if !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "amount") {
		t.Fatalf("append of a double into an int column: err = %v, want a schema conflict naming amount", err)
	}
	// A fitting source is cast to the dataset's types and order.
	fits := writeFiles(t, dir, map[string]string{"day2b.csv": "amount,id\n20,2\n"}, "day2b.csv")
	res, _ := merge(t, c, spark.Job{Sources: pathSources(fits...), Verify: true, Target: spark.Target{Path: out, Mode: "append"}})
	if res.RowsWritten != 1 || !res.Verified {
		t.Errorf("append: %d rows, verified %v", res.RowsWritten, res.Verified)
	}
	_, err = c.Merge(context.Background(), spark.Job{Sources: pathSources(third...), Target: spark.Target{Path: out, Mode: "append"}})
	if !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "note") {
		t.Fatalf("append with a new column: err = %v, want a conflict naming note", err)
	}
	evolving := writeFiles(t, dir, map[string]string{"day3b.csv": "id,amount,note\n3,7,n\n"}, "day3b.csv")
	merge(t, c, spark.Job{Sources: pathSources(evolving...), Target: spark.Target{Path: out, Mode: "append", Evolve: true}})
	schemas, err := c.Schemas(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Name: "dataset", Paths: []string{out}, Format: "parquet"}}})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "dataset schema", "id int, amount int, note string", schemas[0].Schema.String())
	rows := queryRows(t, "SELECT id, amount, note FROM parquet.`"+out+"` WITH (mergeSchema 'true') ORDER BY id")
	diff(t, "dataset rows", [][]any{row(int32(1), int32(10), nil), row(int32(2), int32(20), nil), row(int32(3), int32(7), "n")}, rows)

	csvOut := filepath.Join(workDir(t), "csvout")
	merge(t, c, spark.Job{Sources: pathSources(first...), Target: spark.Target{Path: csvOut, Format: "csv"}})
	_, err = c.Merge(context.Background(), spark.Job{Sources: pathSources(evolving...), Target: spark.Target{Path: csvOut, Format: "csv", Mode: "append", Evolve: true}})
	if err == nil || !strings.Contains(err.Error(), "CSV dataset cannot gain columns") {
		t.Errorf("CSV append with a new column: err = %v", err)
	}
}
