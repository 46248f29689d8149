//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The tests in this file cover the error cases of issue 4 through the
// library API: each error names the source or column, says what to do, and
// keeps Spark's error class where Spark reported one.

// etClient connects to the harness's Spark.
func etClient(t *testing.T) *spark.Client {
	t.Helper()
	r := requireSpark(t)
	c, err := connectPatiently(t, testContext(t), r, spark.ConnectOptions{UserAgent: "sparkmerge-it", Session: testSessionOf(t)})
	if err != nil {
		t.Fatalf("connect to %s: %v", spark.RedactRemote(r), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// etWrite writes content to dir/name and returns the path.
func etWrite(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// etJob is a merge of path sources into dir/out.
func etJob(dir string, paths ...string) spark.Job {
	job := spark.Job{Target: spark.Target{Path: filepath.Join(dir, "out")}}
	for _, p := range paths {
		job.Sources = append(job.Sources, spark.SourceSpec{Paths: []string{p}})
	}
	return job
}

func etMerge(t *testing.T, c *spark.Client, job spark.Job) (*spark.Result, error) {
	t.Helper()
	return c.Merge(testContext(t), job)
}

// etRows reads the merged output back.
func etRows(t *testing.T, c *spark.Client, target spark.Target) spark.Rows {
	t.Helper()
	rows, err := c.ReadTarget(testContext(t), spark.Job{Target: target}, 1000)
	if err != nil {
		t.Fatalf("read back %s: %v", target.Path, err)
	}
	return rows
}

// etClass is the Spark error class err carries, or "".
func etClass(err error) string {
	var se *spark.SparkError
	if errors.As(err, &se) {
		return se.ErrorClass
	}
	return ""
}

// etWantError fails unless err is set and its message holds every want.
func etWantError(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("merge succeeded, want an error mentioning %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
}

// etByColumn turns rows into one map per row, column name -> value, sorted
// by the given key column's text.
func etByColumn(rows spark.Rows, key string) []map[string]any {
	out := make([]map[string]any, len(rows.Values))
	for i, v := range rows.Values {
		m := map[string]any{}
		for j, c := range rows.Columns {
			m[c] = v[j]
		}
		out[i] = m
	}
	slices.SortFunc(out, func(a, b map[string]any) int {
		return strings.Compare(fmt.Sprint(a[key]), fmt.Sprint(b[key]))
	})
	return out
}

func TestErrorMissingPath(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	ok := etWrite(t, dir, "ok.csv", "a,b\n1,x\n")
	missing := filepath.Join(dir, "nope.csv")
	_, err := etMerge(t, c, etJob(dir, ok, missing))
	etWantError(t, err, missing, "hint:", "check the path")
	if got := etClass(err); got != "PATH_NOT_FOUND" {
		t.Errorf("error class = %q, want PATH_NOT_FOUND; err: %v", got, err)
	}
	// A glob that matches nothing is missing too.
	_, err = etMerge(t, c, etJob(dir, filepath.Join(dir, "nothing-*.csv")))
	etWantError(t, err, "nothing-*.csv")
	if got := etClass(err); got != "PATH_NOT_FOUND" {
		t.Errorf("glob: error class = %q, want PATH_NOT_FOUND; err: %v", got, err)
	}
	assertNoOutput(t, dir)
}

// TestErrorFilesOnlyTheClientSees: files on the client's machine that the
// server cannot see (a remote server given local paths) are typed by the
// client, and Spark finds them missing only when it reads the rows: the
// error says the two do not share the filesystem and what to do, for
// the write and for --verify's count alike.
func TestErrorFilesOnlyTheClientSees(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	out := workDir(t)
	here := t.TempDir() // not mounted into the Spark container
	a := etWrite(t, here, "a.csv", "id,name\n1,x\n")
	b := etWrite(t, here, "b.csv", "name,id,pincode\ny,2,560001\n")
	for _, verify := range []bool{false, true} {
		job := etJob(out, a, b)
		job.Verify = verify
		_, err := etMerge(t, c, job)
		if err == nil && os.Getenv("SPARK_REMOTE") != "" {
			t.Skipf("the server at SPARK_REMOTE sees %s, so it shares this machine's files", here)
		}
		etWantError(t, err, "is on this machine, but the Spark server does not see it", "mounted on it", "s3a://")
		if !strings.Contains(err.Error(), a) && !strings.Contains(err.Error(), b) {
			t.Errorf("the error names neither source file: %v", err)
		}
		if got := etClass(err); got != "PATH_NOT_FOUND" {
			t.Errorf("verify=%v: error class = %q, want PATH_NOT_FOUND; err: %v", verify, got, err)
		}
		assertNoOutput(t, out)
	}
	// Files the plan leaves to Spark (its inference asked), the JSON
	// file's nesting measured first: the error names the source and
	// says the same while planning.
	j := etWrite(t, here, "c.json", `{"id":3,"Name":"z"}`+"\n")
	for _, paths := range [][]string{{a, b}, {j}} {
		job := etJob(out, paths...)
		job.SparkInference = true
		_, err := c.Plan(testContext(t), job)
		if err == nil && os.Getenv("SPARK_REMOTE") != "" {
			t.Skipf("the server at SPARK_REMOTE sees %s, so it shares this machine's files", here)
		}
		etWantError(t, err, "read source", "is on this machine, but the Spark server does not see it", "mounted on it")
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.Contains(err.Error(), p) }) {
			t.Errorf("plan of %v: the error names no source file: %v", paths, err)
		}
	}
}

func assertNoOutput(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed merge left output behind (stat: %v)", err)
	}
}

func TestErrorEmptyDirectory(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o777); err != nil {
		t.Fatal(err)
	}
	ok := etWrite(t, dir, "ok.csv", "a,b\n1,x\n")
	_, err := etMerge(t, c, etJob(dir, ok, empty))
	etWantError(t, err, empty, "empty", "remove it")
	assertNoOutput(t, dir)

	// A directory that only holds Spark's marker files has no data either;
	// Spark says so with its own error class.
	markers := filepath.Join(dir, "markers")
	os.Mkdir(markers, 0o777)
	etWrite(t, markers, "_SUCCESS", "")
	job := etJob(dir, ok, markers)
	job.Sources[1].Format = "csv"
	_, err = etMerge(t, c, job)
	etWantError(t, err, markers, "hint:")
	if got := etClass(err); got != "UNABLE_TO_INFER_SCHEMA" {
		t.Errorf("markers only: error class = %q, want UNABLE_TO_INFER_SCHEMA; err: %v", got, err)
	}
}

func TestErrorMalformedRows(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	csv := etWrite(t, dir, "bad.csv", "a,b\n1,x\nnotanumber,y\n3,z\n")
	json := etWrite(t, dir, "bad.json", "{\"a\": 1}\n{\"a\":\n{\"a\": 3}\n")

	for _, verify := range []bool{false, true} {
		// With verify, the rows are first counted, which meets the bad row.
		t.Run(fmt.Sprintf("csv FAILFAST by default verify=%v", verify), func(t *testing.T) {
			job := etJob(workDir(t), csv)
			job.Sources[0].Schema = "a int, b string"
			job.Verify = verify
			_, err := etMerge(t, c, job)
			etWantError(t, err, csv, "FAILFAST", "mode=PERMISSIVE")
			if etClass(err) == "" {
				t.Errorf("Spark's error class was lost: %v", err)
			}
		})
	}
	t.Run("csv PERMISSIVE keeps the row", func(t *testing.T) {
		job := etJob(workDir(t), csv)
		job.Sources[0].Schema = "a int, b string"
		job.ReaderOptions = map[string]string{"mode": "PERMISSIVE"}
		job.Verify = true
		res, err := etMerge(t, c, job)
		if err != nil {
			t.Fatal(err)
		}
		if res.RowsWritten != 3 {
			t.Errorf("rows written = %d, want 3 (the malformed row kept, its value null)", res.RowsWritten)
		}
		want := []map[string]any{
			{"a": int32(1), "b": "x"},
			{"a": int32(3), "b": "z"},
			{"a": nil, "b": "y"},
		}
		if diff := cmp.Diff(want, etByColumn(etRows(t, c, job.Target), "a")); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
	t.Run("json FAILFAST by default", func(t *testing.T) {
		job := etJob(workDir(t), json)
		_, err := etMerge(t, c, job)
		etWantError(t, err, json, "PERMISSIVE")
		if got := etClass(err); !strings.HasPrefix(got, "MALFORMED_RECORD_IN_PARSING") {
			t.Errorf("error class = %q, want MALFORMED_RECORD_IN_PARSING*; err: %v", got, err)
		}
	})
	t.Run("json PERMISSIVE keeps the row", func(t *testing.T) {
		job := etJob(workDir(t), json)
		job.Sources[0].Options = map[string]string{"mode": "PERMISSIVE"}
		job.Verify = true
		res, err := etMerge(t, c, job)
		if err != nil {
			t.Fatal(err)
		}
		if res.RowsWritten != 3 {
			t.Errorf("rows written = %d, want 3", res.RowsWritten)
		}
		rows := etRows(t, c, job.Target)
		if !slices.Contains(rows.Columns, "_corrupt_record") {
			t.Errorf("columns %v: want _corrupt_record, which holds the malformed line", rows.Columns)
		}
	})
}

// TestDuplicateColumnsInOneSource: two columns of one source with the same
// name (or the same up to case) must never silently lose a value or leave
// the column they share with other sources: the merge fails naming the file
// and the column (Spark itself would rename CSV columns to id0, id1).
func TestDuplicateColumnsInOneSource(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	tests := []struct {
		name, file, content string
		column              string
		values              []string // every value must survive
	}{
		{"csv same name", "dup.csv", "id,id\n1,2\n", "id", []string{"1", "2"}},
		{"csv differing case", "dupcase.csv", "a,A\n1,2\n", "a", []string{"1", "2"}},
		{"json differing case", "dupcase.json", "{\"a\": 1, \"A\": 2}\n", "a", []string{"1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := workDir(t)
			p := etWrite(t, dir, tt.file, tt.content)
			job := etJob(dir, p)
			_, err := etMerge(t, c, job)
			if err != nil {
				var dup *sparkmerge.DuplicateColumnError
				var header *spark.DuplicateHeaderError
				if !errors.As(err, &dup) && !errors.As(err, &header) && etClass(err) == "" {
					t.Errorf("error is neither a DuplicateColumnError nor a Spark error with a class: %v", err)
				}
				etWantError(t, err, p, "`"+tt.column+"`")
				t.Logf("refused: %v", err)
				return
			}
			t.Errorf("merge of %s succeeded; want a refusal naming `%s`", tt.file, tt.column)
			rows := etRows(t, c, job.Target)
			if len(rows.Values) != 1 {
				t.Fatalf("got %d rows, want 1", len(rows.Values))
			}
			var got []string
			for _, v := range rows.Values[0] {
				got = append(got, fmt.Sprint(v))
			}
			for _, v := range tt.values {
				if !slices.Contains(got, v) {
					t.Errorf("value %s was dropped: columns %v, row %v", v, rows.Columns, got)
				}
			}
			t.Logf("kept: columns %v, row %v", rows.Columns, got)
		})
	}
}

// TestStrangeColumnNames: dots, spaces, backticks and non-ASCII letters in
// names are columns like any other; values land in their columns.
func TestStrangeColumnNames(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	one := etWrite(t, dir, "one.csv", "a.b,c d,e`f,é\n1,x,true,ü\n")
	two := etWrite(t, dir, "two.csv", "é,a.b,new col,`\nñ,2,z,tick\n")
	job := etJob(dir, one, two)
	job.Verify = true
	job.Policy.SourceColumn = "_source"
	if _, err := etMerge(t, c, job); err != nil {
		t.Fatal(err)
	}
	rows := etRows(t, c, job.Target)
	if diff := cmp.Diff([]string{"a.b", "c d", "e`f", "é", "new col", "`", "_source"}, rows.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := []map[string]any{
		{"a.b": int32(1), "c d": "x", "e`f": true, "é": "ü", "new col": nil, "`": nil, "_source": one},
		{"a.b": int32(2), "c d": nil, "e`f": nil, "é": "ñ", "new col": "z", "`": "tick", "_source": two},
	}
	if diff := cmp.Diff(want, etByColumn(rows, "a.b")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestErrorStrictTypeConflict(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	ints := etWrite(t, dir, "ints.csv", "a,b\n1,x\n")
	strs := etWrite(t, dir, "strs.csv", "a,b\nfoo,y\n")
	job := etJob(dir, ints, strs)
	job.Policy.Types = sparkmerge.TypesStrict
	_, err := etMerge(t, c, job)
	if !errors.Is(err, sparkmerge.ErrSchemaConflict) {
		t.Fatalf("err = %v, want ErrSchemaConflict", err)
	}
	var tc *sparkmerge.TypeConflictError
	if !errors.As(err, &tc) || len(tc.Conflicts) != 1 || tc.Conflicts[0].Column != "a" {
		t.Fatalf("err = %#v, want one TypeConflictError for column a", err)
	}
	etWantError(t, err, `"a"`, "int in "+fmt.Sprintf("%q", ints), "string in "+fmt.Sprintf("%q", strs), "Options.Types = TypesWiden")
	assertNoOutput(t, dir)
}

func TestErrorUnknownTable(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	ok := etWrite(t, dir, "ok.csv", "a\n1\n")
	job := etJob(dir, ok)
	job.Sources = append(job.Sources, spark.SourceSpec{Table: "nope_db_sparkmerge.nope"})
	_, err := etMerge(t, c, job)
	etWantError(t, err, "nope_db_sparkmerge.nope", "hint:", "table name")
	if got := etClass(err); got != "TABLE_OR_VIEW_NOT_FOUND" {
		t.Errorf("error class = %q, want TABLE_OR_VIEW_NOT_FOUND; err: %v", got, err)
	}
	assertNoOutput(t, dir)
}

func TestErrorOutputExists(t *testing.T) {
	t.Parallel()
	c := etClient(t)
	dir := workDir(t)
	in := etWrite(t, dir, "in.csv", "a\n1\n2\n")
	job := etJob(dir, in)
	if _, err := etMerge(t, c, job); err != nil {
		t.Fatal(err)
	}
	_, err := etMerge(t, c, job)
	etWantError(t, err, job.Target.Path, "Target.Mode", "overwrite", "append")
	// Found before any source is read.
	var exists *spark.TargetExistsError
	if !errors.As(err, &exists) {
		t.Errorf("err = %v, want *spark.TargetExistsError", err)
	}
	if n := len(etRows(t, c, job.Target).Values); n != 2 {
		t.Errorf("the refused merge changed the output: %d rows, want 2", n)
	}
	job.Target.Mode = "overwrite"
	if res, err := etMerge(t, c, job); err != nil || res.RowsWritten != 2 {
		t.Errorf("overwrite: %v rows, err %v; want 2 rows", res, err)
	}
}

func TestErrorUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = spark.Connect(ctx, "sc://"+addr+"/;token=sekret==", spark.ConnectOptions{})
	if !errors.Is(err, spark.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s to give up on a closed port", d)
	}
	etWantError(t, err, addr, "check the connection string")
	if strings.Contains(err.Error(), "sekret") {
		t.Errorf("the token leaked: %v", err)
	}
}
