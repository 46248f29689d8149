//go:build integration

package integration

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// selectionFiles are a CSV and a JSON-lines file whose rows, once a's are
// filtered (amount > 0) and the scratch columns dropped, repeat across
// and within the files.
var selectionFiles = map[string]string{
	"a.csv": "id,name,_tmp,amount\n1,ann,x,10\n2,bob,y,-5\n3,cy,z,7\n3,cy,w,7\n",
	"b.json": `{"id":3,"name":"cy","amount":7,"debug":"q"}` + "\n" +
		`{"id":4,"name":"dee","amount":0,"debug":"r"}` + "\n",
}

// TestSelectionWhereDistinct merges with --exclude (a pattern and a
// name), a per-source where and --distinct, on local files (client typing,
// so positional scans where they apply) and with Spark's inference, and on
// files only the server sees: the rows written are exactly the distinct
// rows the filter keeps, over the selected columns, and --verify holds.
func TestSelectionWhereDistinct(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	local := writeFiles(t, workDir(t), selectionFiles, "a.csv", "b.json")
	want := [][]any{row("1", "ann", "10"), row("3", "cy", "7"), row("4", "dee", "0")}
	run := func(t *testing.T, paths []string, sparkInference bool) {
		job := spark.Job{
			Sources: []spark.SourceSpec{{Paths: paths[:1], Where: "amount > 0"}, {Paths: paths[1:]}},
			Policy: sparkmerge.Options{
				Exclude:  []string{"_tmp*", "debug"},
				Distinct: true,
			},
			Verify:         true,
			SparkInference: sparkInference,
		}
		res, out := merge(t, c, job)
		diff(t, "schema", []string{"id bigint", "name string", "amount bigint"}, schemaOf(t, c, out))
		diff(t, "rows", want, parquetRows(t, out, []string{"id", "name", "amount"}, "`_0`"))
		if !res.Verified || res.RowsWritten != 3 || res.RowsDistinct != 3 {
			t.Errorf("verified %v, rows written %d, distinct %d; want verified, 3, 3", res.Verified, res.RowsWritten, res.RowsDistinct)
		}
		var read int64
		for _, r := range res.RowsRead {
			read += r.Rows
		}
		if read != 5 { // 3 of a.csv pass the filter, 2 of b.json
			t.Errorf("rows read %d, want 5 (%v)", read, res.RowsRead)
		}
	}
	t.Run("local", func(t *testing.T) { run(t, local, false) })
	t.Run("spark inference", func(t *testing.T) { run(t, local, true) })
	t.Run("cluster", func(t *testing.T) {
		host, dir := sparktest.ClusterDir(t)
		writeFiles(t, host, selectionFiles, "a.csv", "b.json")
		run(t, []string{dir + "/a.csv", dir + "/b.json"}, false)
	})

	// Without --distinct every row stays: UNION ALL.
	job := spark.Job{Sources: []spark.SourceSpec{{Paths: local[:1], Where: "amount > 0"}, {Paths: local[1:]}},
		Policy: sparkmerge.Options{Columns: []string{"id", "name"}}, Verify: true}
	res, out := merge(t, c, job)
	diff(t, "rows without distinct", [][]any{row("1", "ann"), row("3", "cy"), row("3", "cy"), row("3", "cy"), row("4", "dee")},
		parquetRows(t, out, []string{"id", "name"}, ""))
	if !res.Verified {
		t.Error("not verified")
	}
}

// TestWhereIsCheckedBySpark: a where that is not one expression, or that
// names a column a file lacks, fails the plan before any row is read,
// naming the source; it never runs as SQL text.
func TestWhereIsCheckedBySpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	paths := writeFiles(t, workDir(t), selectionFiles, "a.csv")
	for _, where := range []string{
		"amount > 0) OR (1 = 1",
		"amount > 0; DROP TABLE x",
		"amount > 0 UNION SELECT 1",
		"no_such_column > 0",
	} {
		_, err := c.Plan(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: paths, Where: where}}})
		var se *spark.SparkError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "where "+`"`+where+`"`) || !strings.Contains(err.Error(), "a.csv") {
			t.Errorf("where %q: err = %v, want Spark's error naming the where and a.csv", where, err)
		}
	}
	// A job file's where reaches Spark too, through the CLI.
	dir := workDir(t)
	jobFile := filepath.Join(dir, "job.yaml")
	os.WriteFile(jobFile, []byte("sources:\n  - path: "+paths[0]+"\n    where: \"amount > 0) OR (1 = 1\"\ntarget:\n  path: "+filepath.Join(dir, "out")+"\n"), 0o644)
	code, _, stderr := cliRun(t, "merge", "-f", jobFile)
	if code == 0 || !strings.Contains(stderr, "where") {
		t.Errorf("CLI: exit %d, want a failure naming the where; stderr:\n%s", code, stderr)
	}
}

// zipFiles are CSV files of zip codes written with leading zeros, which
// Spark's inference types int (0042 becomes 42).
var zipFiles = map[string]string{
	"z1.csv": "id,zip\n1,0042\n2,12345\n",
	"z2.csv": "id,zip,city\n3,0007,Oslo\n4,00501,Holtsville\n",
	"z3.csv": "zip,id\n09999,5\n,6\n",
}

// TestHintKeepsLeadingZeros: --hint zip=string reads every file's zip as
// the text written (Spark's reader, no number in between), through
// positional scans (client typing), through per-file reads (Spark's
// inference), and on files only the server sees; without the hint the
// zeros are gone, as Spark's inference has it.
func TestHintKeepsLeadingZeros(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, zipFiles, "z1.csv", "z2.csv", "z3.csv")
	want := [][]any{row("1", "0042"), row("2", "12345"), row("3", "0007"), row("4", "00501"), row("5", "09999"), row("6", nil)}
	hints := map[string]sparkmerge.DataType{"ZIP": {Kind: sparkmerge.KindString}}
	run := func(t *testing.T, paths []string, sparkInference bool) {
		res, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Policy: sparkmerge.Options{Hints: hints}, Verify: true, SparkInference: sparkInference})
		diff(t, "rows", want, parquetRows(t, out, []string{"id", "zip"}, "CAST(`_0` AS INT)"))
		diff(t, "schema", []string{"id int", "zip string", "city string"}, schemaOf(t, c, out))
		diff(t, "hinted", []string{"zip"}, res.Plan.Hinted)
		if !sparkInference && res.Scans != 1 {
			t.Errorf("%d scans, want 1 positional scan of the 3 files", res.Scans)
		}
	}
	t.Run("local", func(t *testing.T) { run(t, paths, false) })
	t.Run("spark inference", func(t *testing.T) { run(t, paths, true) })
	t.Run("cluster", func(t *testing.T) {
		host, sdir := sparktest.ClusterDir(t)
		writeFiles(t, host, zipFiles, "z1.csv", "z2.csv", "z3.csv")
		run(t, []string{sdir + "/z1.csv", sdir + "/z2.csv", sdir + "/z3.csv"}, false)
	})
	// Without the hint: Spark's inference, ints.
	_, out := merge(t, c, spark.Job{Sources: pathSources(paths...)})
	diff(t, "rows without the hint", [][]any{row("1", "42"), row("2", "12345"), row("3", "7"), row("4", "501"), row("5", "9999"), row("6", nil)},
		parquetRows(t, out, []string{"id", "zip"}, "CAST(`_0` AS INT)"))
}

// TestHintNarrowingIsChecked: a typed value (Parquet's) cast to a
// narrower hinted type is checked value by value, as a widening that may
// round is: one the cast would change (a decimal rounded, a double past
// float's range, a timestamp's time, a fraction truncated) fails the
// merge naming it, or with --rescue is kept aside; values it keeps pass
// (found in the field: 123456.7891 hinted decimal(12,2) came out
// 123456.79, a double Infinity, a timestamp's time gone, verify passing).
func TestHintNarrowingIsChecked(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	pq := filepath.Join(dir, "pq")
	exec(t, "INSERT OVERWRITE DIRECTORY '"+pq+"' USING parquet SELECT id, CAST(x AS decimal(10,4)) AS x, f, n, ts FROM VALUES "+
		"(1, 12.5000BD, 0.1D, 2.0D, TIMESTAMP'2024-03-10 00:00:00'), "+
		"(2, 123456.7891BD, 1.7976931348623157E308D, 2.5D, TIMESTAMP'2024-03-10 01:30:45') "+
		"AS t(id, x, f, n, ts)")
	hints := map[string]sparkmerge.DataType{
		"x":  {Kind: sparkmerge.KindDecimal, Precision: 12, Scale: 2},
		"f":  {Kind: sparkmerge.KindFloat},
		"n":  {Kind: sparkmerge.KindInt},
		"ts": {Kind: sparkmerge.KindDate},
	}
	for column, want := range map[string]string{"x": "the value 123456.7891 of " + pq, "f": "the value 1.7976931348623157E308 of " + pq, "n": "the value 2.5 of " + pq, "ts": "the value 2024-03-10 01:30:45 of " + pq} {
		one := map[string]sparkmerge.DataType{column: hints[column]}
		_, err := c.Merge(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{pq}, Format: "parquet"}},
			Policy: sparkmerge.Options{Hints: one}, Target: spark.Target{Path: filepath.Join(dir, "out-"+column)}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "column "+column) {
			t.Errorf("%s: err = %v, want one naming %q", column, err, want)
		}
	}
	out := spark.Target{Path: filepath.Join(dir, "rescued"), Mode: "overwrite"}
	res, err := c.Merge(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{pq}, Format: "parquet"}},
		Policy: sparkmerge.Options{Hints: hints, Rescue: "_rescued"}, Target: out, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified {
		t.Error("not verified")
	}
	// (The rescued values' file is the directory's part file.)
	rows := queryRows(t, "SELECT id, CAST(x AS string), CAST(f AS string), n, CAST(ts AS string), "+
		"replace(_rescued, '"+pq+"/part-', 'PART-') FROM parquet.`"+out.Path+"` ORDER BY id")
	diff(t, "values kept, and those a cast would change kept aside", [][]any{
		row(int32(1), "12.50", "0.1", int32(2), "2024-03-10", nil),
		row(int32(2), nil, nil, nil, nil, `{"x":"123456.7891","f":"1.7976931348623157E308","n":"2.5","ts":"2024-03-10 01:30:45","_file_path":"PART-`+partName(t, pq)+`"}`),
	}, rows)
}

// partName is the name, after "part-", of the one part file of Parquet
// directory dir that holds rows.
func partName(t *testing.T, dir string) string {
	t.Helper()
	rows := queryRows(t, "SELECT DISTINCT _metadata.file_name FROM parquet.`"+dir+"` WHERE id = 2")
	name, _ := rows[0][0].(string)
	return strings.TrimPrefix(name, "part-")
}

// TestHintFailureNamesTheValue: without --rescue, a value a hinted column
// cannot take fails the merge naming the value and its file, for a CSV
// file (Spark's reader fails) and a Parquet file (the plan's cast fails).
func TestHintFailureNamesTheValue(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{"a.csv": "id,amount\n1,10\n2,12x\n"}, "a.csv")
	_, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(paths...), Policy: sparkmerge.Options{Hints: map[string]sparkmerge.DataType{"amount": {Kind: sparkmerge.KindInt}}},
		Target: spark.Target{Path: filepath.Join(dir, "out")}})
	var hv *spark.HintValueError
	if !errors.As(err, &hv) || hv.Value != "12x" || hv.Source != paths[0] || hv.Column != "amount" {
		t.Errorf("CSV: err = %v, want a HintValueError naming 12x in %s", err, paths[0])
	}
	pq := filepath.Join(dir, "pq")
	exec(t, "INSERT OVERWRITE DIRECTORY '"+pq+"' USING parquet SELECT * FROM VALUES (1, '10'), (2, '12x') AS t(id, amount)")
	_, err = c.Merge(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{pq}, Format: "parquet"}},
		Policy: sparkmerge.Options{Hints: map[string]sparkmerge.DataType{"amount": {Kind: sparkmerge.KindInt}}}, Target: spark.Target{Path: filepath.Join(dir, "out2")}})
	if err == nil || !strings.Contains(err.Error(), "the value 12x of "+pq) || !strings.Contains(err.Error(), "amount") {
		t.Errorf("Parquet: err = %v, want one naming 12x, its source and the column", err)
	}
}
