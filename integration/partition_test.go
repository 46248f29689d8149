//go:build integration

package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Partitioned trees (key=value directories) are merged file by file, each
// file with the partition values of its directories. Two oracles, both
// Spark's:
//
//   - a tree whose files agree on their columns merges to exactly what
//     Spark's read of the tree as one dataset gives (rows, columns, types);
//   - in any tree, each file's rows are Spark's read of that file alone,
//     with the partition values Spark's read of the tree gives it
//     (partitionReference).
//
// Every case runs on local files, on files only Spark sees in a mounted
// directory, and in an object store.

// treeRoot is where a tree's files are: local, or only where Spark sees.
type treeRoot struct {
	name, root string
}

// treeRoots writes files (paths below the tree's root) where the client
// and Spark see them, where only Spark sees them, and into the object
// store (skipped without one).
func treeRoots(t *testing.T, files map[string][]byte) []treeRoot {
	t.Helper()
	roots := []treeRoot{{"local", localFiles(t, files)}, {"cluster", clusterFiles(t, files)}}
	t.Run("upload to the object store", func(t *testing.T) {
		roots = append(roots, treeRoot{"object store", objectStoreFiles(t, files)})
	})
	return roots
}

// freshDir is a path in the shared work area that does not exist yet, for
// Spark to write.
func freshDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp(workDir(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readerOptionsSQL is reader options as a SQL OPTIONS list after path.
func readerOptionsSQL(root string, options map[string]string) string {
	out := []string{"path " + sparkmerge.QuoteString(root)}
	for _, k := range slices.Sorted(maps.Keys(options)) {
		out = append(out, sparkmerge.QuoteString(k)+" "+sparkmerge.QuoteString(options[k]))
	}
	return strings.Join(out, ", ")
}

// sparkOptions are the reader options sparkmerge reads a format with by
// default, for Spark's own reads of a tree.
func sparkOptions(format string) map[string]string {
	switch format {
	case "csv":
		return map[string]string{"header": "true", "inferSchema": "true", "mode": "FAILFAST"}
	case "json":
		return map[string]string{"mode": "FAILFAST"}
	}
	return map[string]string{"mergeSchema": "true"}
}

// sparkTreeRead is Spark's read of the tree at root as one dataset, read
// whole in one query, never written: the first oracle. withSource adds an
// empty provenance column for the schema of a merge with one (whose
// values the comparison skips).
func sparkTreeRead(t *testing.T, format, root string, withSource bool) *oracle {
	t.Helper()
	columns := "*"
	if withSource {
		columns = "*, CAST(NULL AS STRING) AS _source"
	}
	exec(t, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW sparkmerge_tree USING %s OPTIONS (%s)", format, readerOptionsSQL(root, sparkOptions(format))))
	defer exec(t, "DROP VIEW sparkmerge_tree") // the session serves other tests next
	return frameOracle(t, frame(t, testSessionOf(t), "SELECT "+columns+" FROM sparkmerge_tree"), "Spark's read of the tree")
}

// partitionReference is the second oracle (partitionOracle): each data
// file below root read alone by Spark, with the partition values of its
// directories as Spark's read of the tree types them.
func partitionReference(t *testing.T, c *spark.Client, format, root string, files []string) *oracle {
	t.Helper()
	o, err := partitionOracle(t, c, format, root, files, nil)
	if err != nil {
		t.Fatalf("Spark reading each file alone: %v", err)
	}
	return o
}

// treeFiles are the names of a tree's files, sorted.
func treeFiles(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// mergeTree merges the tree at root by strategy into a fresh output, with
// provenance, verified.
func mergeTree(t *testing.T, c *spark.Client, format, root string, strategy spark.Strategy, sparkInference bool) (*spark.Result, string) {
	t.Helper()
	return merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{root}, Format: format}}, Strategy: strategy,
		SparkInference: sparkInference, Policy: sparkmerge.Options{SourceColumn: "_source"}, Verify: true,
		Target: spark.Target{Path: freshDir(t, "merged-")}})
}

// DuckDB's test of union_by_name over a Hive-partitioned CSV tree
// (test/sql/copy/csv/parallel/parallel_csv_union_by_name.test, data in
// data/csv/union-by-name/part=a and part=b): part=a/test.csv has id,
// value, a; part=b/test.csv has id, value. DuckDB reads (1, value1, aaa,
// a) and (2, value2, NULL, b). Read as one dataset, Spark maps part=b's
// file by position under part=a's header (FAILFAST fails the merge,
// PERMISSIVE pads it); each file read alone, with its partition value from
// its path, gives DuckDB's rows.
func TestPartitionedCSVTreeWithDriftingHeaders(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"part=a/test.csv": "id,value,a\n1,value1,aaa\n",
		"part=b/test.csv": "id,value\n2,value2\n",
	})
	roots := treeRoots(t, files)
	reference := partitionReference(t, c, "csv", roots[0].root, treeFiles(files))
	for _, r := range roots {
		for _, strategy := range []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion} {
			t.Run(r.name+" "+strategy.String(), func(t *testing.T) {
				res, out := mergeTree(t, c, "", r.root, strategy, false)
				if res.RowsWritten != 2 {
					t.Errorf("wrote %d rows, want 2", res.RowsWritten)
				}
				got, err := readOutput(t, out, []string{"id", "value", "a", "part"}, "")
				if err != nil {
					t.Fatal(err)
				}
				diff(t, "columns", "struct<id:int,value:string,a:string,part:string,_source:string>", got.schema)
				diff(t, "rows", [][]any{row("1", "value1", "aaa", "a"), row("2", "value2", nil, "b")}, got.rows)
				reference.sameAsByName(t, c, roots[0].root, out, r.root)
			})
		}
	}
}

// treeCase is a partitioned tree: its files, below its root.
type treeCase struct {
	name   string
	format string
	files  map[string][]byte
	// written, when set, makes the files instead (Spark writes them, in
	// the case's own subtest).
	written func(t *testing.T) map[string][]byte
}

// filesOf is the case's files, written by Spark first for a case of
// Spark-written files.
func (tc treeCase) filesOf(t *testing.T) map[string][]byte {
	t.Helper()
	if tc.written != nil {
		return tc.written(t)
	}
	return tc.files
}

// Trees whose files agree on their columns: the merge is Spark's read of
// the tree, value for value. Their partition values are typed by Spark's
// inference over the whole tree: ints (01 is 1), a column of ints and text
// (01 stays "01"), dates, timestamps (escaped colons), longs, decimals,
// doubles, escaped text, and nulls (__HIVE_DEFAULT_PARTITION__).
func agreeingTrees() []treeCase {
	return []treeCase{
		{
			name:   "csv, nested ints with nulls and a column of ints and text",
			format: "csv",
			files: textFiles(map[string]string{
				"year=2024/month=01/tag=01/a.csv":                          "id,v\n1,x\n2,y\n",
				"year=2024/month=02/tag=x/b.csv":                           "id,v\n3,z\n",
				"year=2025/month=__HIVE_DEFAULT_PARTITION__/tag=007/c.csv": "id,v\n4,w\n",
			}),
		},
		{
			name:   "json, dates and escaped text",
			format: "json",
			files: textFiles(map[string]string{
				"day=2024-01-31/city=New%20York/a.json":            `{"id":1,"v":"x"}` + "\n",
				"day=2024-02-29/city=a%2Fb/b.json":                 `{"id":2,"v":"y"}` + "\n",
				"day=__HIVE_DEFAULT_PARTITION__/city=plain/c.json": `{"id":3,"v":"z"}` + "\n",
			}),
		},
		{
			name:   "parquet, timestamps, longs and decimals",
			format: "parquet",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"ts=2024-01-02 03%3A04%3A05/n=3000000000/big=12345678901234567890/a.parquet": parquetFile(t, "SELECT CAST(1 AS INT) AS id, 'x' AS v"),
					"ts=2024-06-30 23%3A59%3A59.5/n=7/big=1/b.parquet":                           parquetFile(t, "SELECT CAST(2 AS INT) AS id, 'y' AS v"),
				}
			},
		},
		{
			name:   "orc, doubles from ints and decimals",
			format: "orc",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"r=1.5/a.orc": orcFile(t, "zstd", "SELECT CAST(1 AS INT) AS id, 'x' AS v"),
					"r=2/b.orc":   orcFile(t, "zstd", "SELECT CAST(2 AS INT) AS id, 'y' AS v"),
				}
			},
		},
	}
}

func TestPartitionedTreesMergeAsSparkReadsThem(t *testing.T) {
	t.Parallel()
	for _, tc := range agreeingTrees() {
		t.Run(tc.name, func(t *testing.T) {
			// Trees in parallel, each on a session of its own.
			t.Parallel()
			c := newClient(t)
			files := tc.filesOf(t)
			roots := treeRoots(t, files)
			want := sparkTreeRead(t, tc.format, roots[0].root, true)
			reference := partitionReference(t, c, tc.format, roots[0].root, treeFiles(files))
			skipSource := func(col string) bool { return strings.HasPrefix(col, "_source ") }
			// Every root's output, compared with both in one query each
			// once all have merged (sameAsEach).
			var outs, byName []compared
			for _, r := range roots {
				runOnParentSession(t, r.name, func(t *testing.T) {
					_, out := mergeTree(t, c, tc.format, r.root, spark.StrategyAuto, false)
					outs = append(outs, compared{r.name, out, ""})
					byName = append(byName, compared{r.name, out, r.root})
				})
			}
			want.sameAsEach(t, c, outs, skipSource, "", false)
			reference.sameAsEach(t, c, byName, nil, roots[0].root, true)
		})
	}
}

// Trees whose files drift: headers and keys in another order, columns
// that come and go, types that widen across partitions, and partition
// values of mixed types. Each file's rows are Spark's read of it alone
// with its partition values as Spark types them over the tree.
func driftingTrees() []treeCase {
	return []treeCase{
		{
			name:   "csv headers drifting across nested partitions",
			format: "csv",
			files: textFiles(map[string]string{
				"year=2024/month=01/a.csv":                         "id,x\n1,10\n",
				"year=2024/month=02/b.csv":                         "x,id,y\n20,2,foo\n",
				"year=2024/month=02/c.csv":                         "y,id\nbar,3\n",
				"year=2025/month=__HIVE_DEFAULT_PARTITION__/d.csv": "ID,X\n4,40\n",
			}),
		},
		{
			name:   "csv types drifting across partitions of mixed types",
			format: "csv",
			files: textFiles(map[string]string{
				"k=1/a.csv":   "id,amount,when\n1,5,2024-01-01\n",
				"k=2.5/b.csv": "amount,id\n7.25,2\n",
				"k=x/c.csv":   "id,amount,when\n3,n/a,2024-01-03 10:00:00\n",
				"k=007/d.csv": "when,id\n2024-01-04,4\n",
			}),
		},
		{
			name:   "json keys drifting across date partitions",
			format: "json",
			files: textFiles(map[string]string{
				"day=2024-01-01/a.json": `{"id":1,"x":1}` + "\n" + `{"id":2,"x":2.5}` + "\n",
				"day=2024-01-02/b.json": `{"x":"text","id":3,"y":true}` + "\n",
				"day=2024-01-03/c.json": `{"id":4}` + "\n",
			}),
		},
		{
			name:   "parquet types drifting across partitions",
			format: "parquet",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"n=1/a.parquet": parquetFile(t, "SELECT CAST(1 AS INT) AS id, CAST(10 AS INT) AS x"),
					"n=2/b.parquet": parquetFile(t, "SELECT CAST(2 AS BIGINT) AS id, 'twenty' AS y"),
					"n=3/c.parquet": parquetFile(t, "SELECT CAST(3 AS INT) AS id, CAST(3.5 AS DOUBLE) AS x"),
				}
			},
		},
	}
}

func TestPartitionedTreesWithDrift(t *testing.T) {
	t.Parallel()
	for _, tc := range driftingTrees() {
		t.Run(tc.name, func(t *testing.T) {
			// Trees in parallel, each on a session of its own.
			t.Parallel()
			c := newClient(t)
			files := tc.filesOf(t)
			roots := treeRoots(t, files)
			reference := partitionReference(t, c, tc.format, roots[0].root, treeFiles(files))
			// Every output, compared with the reference in one query once
			// all have merged (sameAsEach).
			var outs []compared
			for _, r := range roots {
				runOnParentSession(t, r.name, func(t *testing.T) {
					_, out := mergeTree(t, c, tc.format, r.root, spark.StrategyAuto, false)
					outs = append(outs, compared{r.name, out, r.root})
				})
			}
			// The other read paths, on local files (the differential suite
			// runs them all on generated trees).
			runOnParentSession(t, "union", func(t *testing.T) {
				_, out := mergeTree(t, c, tc.format, roots[0].root, spark.StrategyUnion, false)
				outs = append(outs, compared{"union", out, roots[0].root})
			})
			runOnParentSession(t, "spark inference", func(t *testing.T) {
				_, out := mergeTree(t, c, tc.format, roots[0].root, spark.StrategyAuto, true)
				outs = append(outs, compared{"spark inference", out, roots[0].root})
			})
			reference.sameAsEach(t, c, outs, nil, roots[0].root, true)
		})
	}
}

// A partition column the files also hold: Spark's read of the tree puts
// the directory's value in the file's column (its type, its place). Where
// the file's values are its directory's, the merge is Spark's read; where
// one is not, Spark would drop it without a word, and the merge fails
// naming the file and the column.
func TestPartitionColumnInTheFiles(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	agreeing := []treeCase{
		{name: "json", format: "json", files: textFiles(map[string]string{
			"a=1/f.json": `{"a":1,"id":1}` + "\n" + `{"id":2}` + "\n",
			"a=2/f.json": `{"a":"2","id":3}` + "\n",
		})},
		// Last in the header: Spark's CSV read of the tree maps the
		// columns before it by position (a partition column earlier in
		// the header would shift them).
		{name: "csv", format: "csv", files: textFiles(map[string]string{
			"a=1/f.csv":  "id,a\n1,1\n",
			"a=02/f.csv": "id,a\n2,2\n",
		})},
	}
	for _, tc := range agreeing {
		t.Run(tc.name, func(t *testing.T) {
			roots := treeRoots(t, tc.files)
			want := sparkTreeRead(t, tc.format, roots[0].root, false)
			for _, r := range roots {
				t.Run(r.name, func(t *testing.T) {
					job := spark.Job{Sources: []spark.SourceSpec{{Paths: []string{r.root}, Format: tc.format}}, Verify: true}
					_, out := merge(t, c, job)
					want.sameAs(t, c, out, nil, "", "")
				})
			}
		})
	}
	t.Run("a value its directory does not have", func(t *testing.T) {
		files := textFiles(map[string]string{
			"a=1/f.json": `{"a":1,"id":1}` + "\n",
			"a=2/f.json": `{"a":5,"id":2}` + "\n",
		})
		for _, r := range treeRoots(t, files) {
			t.Run(r.name, func(t *testing.T) {
				out := freshDir(t, "merged-")
				_, err := c.Merge(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{r.root}}}, Target: spark.Target{Path: out}})
				for _, want := range []string{r.root + "/a=2/f.json: its column a holds 5 where its directory says a=2", "recursiveFileLookup=true"} {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("err = %v, want it to say %q", err, want)
					}
				}
				if _, statErr := os.Stat(out); r.name == "local" && !errors.Is(statErr, os.ErrNotExist) {
					t.Errorf("the failed merge left %s (%v)", out, statErr)
				}
			})
		}
	})
}

// A hint reaches the files of a partitioned tree that hold a partition
// column of their own (found in the field: such a file was read in its
// inferred types, so a column hinted decimal(10,2) came out double, and
// with a rescue column the merge failed): its values are read in the
// hint, checked like every other file's (2.555 would round), and
// rescued; the plan's types are the output's.
func TestHintsReachTreeFilesWithPartitionColumns(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	// (0.1234567890123456789 has more digits than a double: the rescue
	// keeps it as written only where the file is read in the hint.)
	files := textFiles(map[string]string{
		"b=x/a=1/f.csv": "id,amount,a\n1,4.99,1\n2,1.5,1\n6,0.1234567890123456789,1\n",
		"b=x/a=2/f.csv": "id,amount,a\n3,2.555,2\n4,abc,2\n",
		"b=y/a=3/g.csv": "id,amount\n5,7.25\n",
	})
	hints := map[string]sparkmerge.DataType{"amount": {Kind: sparkmerge.KindDecimal, Precision: 10, Scale: 2}}
	for _, r := range treeRoots(t, files) {
		t.Run(r.name, func(t *testing.T) {
			res, out := merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{r.root}}}, Verify: true,
				Policy: sparkmerge.Options{Hints: hints, Rescue: "_r"}})
			if !res.Verified {
				t.Error("not verified")
			}
			if got, want := strings.Join(schemaOf(t, c, out), ", "), "id int, amount decimal(10,2), a int, b string, _r string"; got != want {
				t.Errorf("merged as %s, want %s", got, want)
			}
			var got []string
			for _, row := range parquetRows(t, out, []string{"id", "amount", "a", "b", "_r"}, "CAST(`_0` AS INT)") {
				rescued := ""
				if row[4] != nil {
					var m map[string]string
					if err := json.Unmarshal([]byte(row[4].(string)), &m); err != nil {
						t.Fatal(err)
					}
					rescued = m["amount"]
				}
				got = append(got, fmt.Sprintf("%v %v %v %v %s", row[0], row[1], row[2], row[3], rescued))
			}
			want := []string{"1 4.99 1 x ", "2 1.50 1 x ", "3 <nil> 2 x 2.555", "4 <nil> 2 x abc", "5 7.25 3 y ", "6 <nil> 1 x 0.1234567890123456789"}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("merged rows (id amount a b rescued):\n got %q\nwant %q", got, want)
			}
			// Without the rescue column the value that would round fails
			// the merge, naming it and its file.
			_, err := c.Merge(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{r.root}}},
				Target: spark.Target{Path: freshDir(t, "merged-")}, Policy: sparkmerge.Options{Hints: hints}})
			// (Spark 3.5 cuts the error's text short in the file's name.)
			if err == nil || !strings.Contains(err.Error(), r.root) || !strings.Contains(err.Error(), "column amount: the value") {
				t.Errorf("err = %v, want one naming a value of column amount and its file", err)
			}
		})
	}
}

// A data file beside a tree's partition directories: Spark's read of the
// tree skips it without a word. The merge refuses the tree, naming it.
func TestPartitionedTreeRefusesStrayFiles(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{"day=1/a.csv": "id\n1\n", "day=2/b.csv": "id\n2\n", "stray.csv": "id\n3\n"})
	for _, r := range treeRoots(t, files) {
		t.Run(r.name, func(t *testing.T) {
			_, err := c.Plan(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{r.root}}}})
			var layout *spark.PartitionLayoutError
			if !errors.As(err, &layout) || len(layout.Outside) != 1 || layout.Outside[0] != r.root+"/stray.csv" {
				t.Errorf("err = %v, want the stray file refused", err)
			}
		})
	}
}

// The SQL `plan --emit sql` prints for a partitioned tree gives the
// merge's rows on Spark: each file's view reads it with the tree's root
// (basePath) and its partition columns typed in its schema, or, for a
// file with a column named as a partition column, the directory's value
// put in that column's place.
func TestCLIPlanEmitSQLPartitionedTree(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  [][]any
	}{
		{
			name:  "headers drifting across partitions",
			files: map[string]string{"part=a/test.csv": "id,value,a\n1,value1,aaa\n", "part=b/test.csv": "id,value\n2,value2\n"},
			want:  [][]any{row(int32(1), "value1", "aaa", "a", "part=a/test.csv"), row(int32(2), "value2", nil, "b", "part=b/test.csv")},
		},
		{
			name:  "a partition column in the files",
			files: map[string]string{"a=1/f.json": `{"a":1,"id":1}` + "\n" + `{"id":2}` + "\n", "a=2/f.json": `{"a":"2","id":3}` + "\n"},
			want:  [][]any{row(int32(1), int64(1), "a=1/f.json"), row(int32(1), int64(2), "a=1/f.json"), row(int32(2), int64(3), "a=2/f.json")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := workDir(t)
			writeFiles(t, dir, tt.files, treeFiles(textFiles(tt.files))...)
			code, stdout, stderr := cliRun(t, "plan", dir, "--source-column", "_source", "--emit", "sql")
			if code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			var got [][]any
			for _, v := range collectValues(t, runEmittedSQL(t, stdout, len(tt.files))) {
				v[len(v)-1] = strings.TrimPrefix(v[len(v)-1].(string), dir+"/")
				got = append(got, v)
			}
			sort.Slice(got, func(i, j int) bool { return fmt.Sprint(got[i]) < fmt.Sprint(got[j]) })
			diff(t, "rows", tt.want, got)
		})
	}
}
