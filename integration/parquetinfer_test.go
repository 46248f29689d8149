//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// parquetFixtures copies the pyarrow-written files of
// sparkmerge/spark/testdata/parquet into a directory Spark sees.
func parquetFixtures(t *testing.T, names ...string) []string {
	t.Helper()
	dir := workDir(t)
	var paths []string
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("..", "sparkmerge", "spark", "testdata", "parquet", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o666); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// sparkWrittenParquet has Spark write a small Parquet file (whose footer
// carries Spark's own schema) and returns its path.
func sparkWrittenParquet(t *testing.T, c *spark.Client) string {
	t.Helper()
	csv := writeFiles(t, workDir(t), map[string]string{"src.csv": "id,price,note\n1,2.5,x\n2,,y\n"}, "src.csv")
	_, out := merge(t, c, spark.Job{Sources: pathSources(csv...), Target: spark.Target{Format: "parquet"}})
	parts, err := filepath.Glob(filepath.Join(out, "*.parquet"))
	if err != nil || len(parts) != 1 {
		t.Fatalf("Spark's output %s: %v, %v", out, parts, err)
	}
	return parts[0]
}

// TestLocalParquetInferenceMatchesSpark plans Parquet files with schemas
// read from their footers on the client and with Spark's, on the real
// server. Every read's schema must be the same.
func TestLocalParquetInferenceMatchesSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	cases := []struct {
		name  string
		local bool
	}{
		{"primitives.parquet", true},
		{"decimals-as-integers.parquet", true},
		{"required.parquet", true},
		{"int96.parquet", true},
		{"nested.parquet", false}, // nested columns from pyarrow: left to Spark
		{"day-1.parquet", true},
		{"null-typed.parquet", true}, // Parquet's Null logical type: an int
	}
	var names []string
	for _, tc := range cases {
		names = append(names, tc.name)
	}
	paths := append(parquetFixtures(t, names...), sparkWrittenParquet(t, c))
	local, remote := planBothWays(t, c, spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion})
	if len(local.Reads) != len(paths) || len(remote.Reads) != len(paths) {
		t.Fatalf("reads: %d local, %d remote, want %d", len(local.Reads), len(remote.Reads), len(paths))
	}
	for i, p := range paths {
		l, r := local.Reads[i], remote.Reads[i]
		if l.Paths[0] != p || r.Paths[0] != p {
			t.Fatalf("read %d is %s / %s, want %s", i, l.Paths[0], r.Paths[0], p)
		}
		wantLocal := i == len(cases) || cases[i].local // the last is Spark's file
		if l.InferredLocally != wantLocal {
			t.Errorf("%s: inferred locally = %v, want %v", filepath.Base(p), l.InferredLocally, wantLocal)
		}
		if r.InferredLocally {
			t.Errorf("%s: inferred locally under SparkInference", filepath.Base(p))
		}
		if !l.Schema.Equal(r.Schema) {
			t.Errorf("%s:\nclient %s\nSpark  %s", filepath.Base(p), l.Schema, r.Schema)
		}
	}
	if !strings.Contains(local.Reads[0].Schema.String(), "ts_us_local timestamp_ntz") {
		t.Errorf("primitives.parquet: %s, want ts_us_local as timestamp_ntz", local.Reads[0].Schema)
	}
}

// Files Spark cannot read are left to it: the plan fails with Spark's
// error, the same with and without client inference.
func TestLocalParquetInferenceLeavesErrorsToSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, name := range []string{"time-of-day.parquet", "nanos.parquet", "case-duplicates.parquet"} {
		path := parquetFixtures(t, name)
		var msgs []string
		for _, sparkInference := range []bool{false, true} {
			_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(path...), SparkInference: sparkInference})
			if err == nil {
				t.Fatalf("%s (Spark inference %v): planned without error", name, sparkInference)
			}
			msgs = append(msgs, err.Error())
		}
		if msgs[0] != msgs[1] {
			t.Errorf("%s: errors differ:\nclient inference: %s\nSpark inference:  %s", name, msgs[0], msgs[1])
		}
	}
}

// The session's settings steer the conversion: with
// spark.sql.parquet.inferTimestampNTZ.enabled=false a timestamp without
// time zone is a timestamp, and the client reads that setting.
func TestLocalParquetInferenceFollowsSessionSettings(t *testing.T) {
	t.Parallel()
	c, err := spark.Connect(context.Background(), requireSpark(t), spark.ConnectOptions{
		UserAgent: "sparkmerge-integration",
		Conf:      map[string]string{"spark.sql.parquet.inferTimestampNTZ.enabled": "false"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	paths := parquetFixtures(t, "primitives.parquet")
	localPlan, remotePlan := planBothWays(t, c, spark.Job{Sources: pathSources(paths...)})
	local, remote := localPlan.Reads[0], remotePlan.Reads[0]
	if got := local.Schema.String(); !local.InferredLocally || !strings.Contains(got, "ts_us_local timestamp,") {
		t.Errorf("inferred locally %v, schema %s: want ts_us_local as timestamp", local.InferredLocally, got)
	}
	if !remote.Schema.Equal(local.Schema) {
		t.Errorf("client %s\nSpark  %s", local.Schema, remote.Schema)
	}

	// A setting the server refuses fails the connection, naming it.
	_, err = spark.Connect(context.Background(), requireSpark(t), spark.ConnectOptions{Conf: map[string]string{"spark.sql.warehouse.dir": "/tmp/elsewhere"}})
	if err == nil || !strings.Contains(err.Error(), "spark.sql.warehouse.dir") {
		t.Errorf("static setting: %v, want an error naming it", err)
	}
}

// auto reads Parquet files together when their shared columns agree in
// name and type, and the merge keeps every row and value.
func TestLocalParquetGroups(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	paths := parquetFixtures(t, "day-1.parquet", "day-2.parquet", "day-3.parquet", "day-4.parquet")
	p, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(paths...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Reads {
		if !r.InferredLocally {
			t.Errorf("%v: not inferred locally", r.Paths)
		}
	}
	diff(t, "reads", []string{
		"day-1.parquet+day-2.parquet: id bigint, x double, y string",
		"day-3.parquet: id int, x double",
		"day-4.parquet: ID bigint, x double",
	}, describeReads(p))
	// Spark's own merge of the grouped files gives the same schema.
	theirs, err := c.Schemas(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: p.Reads[0].Paths, Format: "parquet", Options: map[string]string{"mergeSchema": "true"}}}, SparkInference: true})
	if err != nil {
		t.Fatal(err)
	}
	if !theirs[0].Schema.Equal(p.Reads[0].Schema) {
		t.Errorf("group: client %s, Spark %s", p.Reads[0].Schema, theirs[0].Schema)
	}

	_, out := merge(t, c, spark.Job{Sources: pathSources(paths...)})
	diff(t, "schema", []string{"id bigint", "x double", "y string"}, schemaOf(t, c, out))
	rows := parquetRows(t, out, []string{"id", "x", "y"}, "id")
	var got []string
	for _, r := range rows {
		var cells []string
		for _, v := range r {
			if v == nil {
				cells = append(cells, "null")
			} else {
				cells = append(cells, v.(string))
			}
		}
		got = append(got, strings.Join(cells, " "))
	}
	sort.Strings(got)
	diff(t, "rows", []string{"1 0.5 null", "2 1.5 b", "3 2.5 null", "4 3.5 null"}, got)
}

// TestParquetNullTypedColumnsTakeTheOthersType merges the files pandas
// writes with Parquet's Null logical type (a column of None, and the
// object columns of an empty frame, INT32 (Null), which Spark reads as
// int) beside a file that types them: the columns take its types, a
// boolean and a timestamp, and hold nulls where Spark reads nulls. They
// were int evidence (found in the field): the boolean became a string,
// and the timestamp failed the merge.
func TestParquetNullTypedColumnsTakeTheOthersType(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	var files []string
	for _, name := range []string{"allnone.parquet", "emptyday.parquet", "typed.parquet"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pandas", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o666); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	// Spark reading each file alone: the null-typed columns are ints,
	// every value null.
	diff(t, "Spark's schema of allnone.parquet", []string{"id bigint", "paid int"}, schemaOf(t, c, files[0]))
	diff(t, "Spark's schema of emptyday.parquet", []string{"id bigint", "paid int", "paid_at int"}, schemaOf(t, c, files[1]))
	diff(t, "Spark's values of allnone.parquet", [][]any{row(int64(2), int64(0))}, queryRows(t, "SELECT count(1), count(paid) FROM parquet.`"+files[0]+"`"))
	res, out := merge(t, c, spark.Job{Sources: pathSources(files...), Policy: sparkmerge.Options{SourceColumn: "_source"}, Verify: true})
	if res.RowsWritten != 3 {
		t.Errorf("%d rows written, want 3", res.RowsWritten)
	}
	diff(t, "schema", []string{"id bigint", "paid boolean", "paid_at timestamp", "_source string"}, schemaOf(t, c, out))
	typed := queryRows(t, "SELECT CAST(paid_at AS string) FROM parquet.`"+files[2]+"`")[0][0]
	diff(t, "rows", [][]any{
		row("1", nil, nil, files[0]),
		row("2", nil, nil, files[0]),
		row("3", "true", typed, files[2]),
	}, parquetRows(t, out, []string{"id", "paid", "paid_at", "_source"}, "`_0`"))
}
