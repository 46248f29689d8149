//go:build integration

package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The case-sensitive cases of unionByName in Spark's
// DataFrameSetOperationsSuite, with spark.sql.caseSensitive=true:
// SPARK-29358 (a,c with a,B,C gives a,c,B,C) and SPARK-32376 (struct
// fields a and A are two fields), merged with Policy.CaseSensitive from
// files the client reads and files only the cluster sees, with either
// inference, on a session left at Spark's default. Each merge must be
// Spark's unionByName(allowMissingColumns) of the files read alone, with
// the names the suite asserts, and leave the session's setting as it was.
func TestCaseSensitiveMergeIsUnionByName(t *testing.T) {
	t.Parallel()
	// Spark's answers are read where the suite asks them: in a
	// case-sensitive session, of this test alone. The merges run on
	// sessions at Spark's default.
	oracle := upstreamSession(t)
	exec(t, "SET spark.sql.caseSensitive=true")
	type merge struct {
		files []string
		// want is the merged type as the suite asserts it.
		want string
	}
	cases := []struct {
		name   string
		format string
		files  map[string][]byte
		merges []merge
	}{
		{"SPARK-29358 csv", "csv", textFiles(map[string]string{"df1.csv": "a,c\n1,2\n", "df2.csv": "a,B,C\n3,4,5\n"}), []merge{
			{[]string{"df1.csv", "df2.csv"}, "struct<a:int,c:int,B:int,C:int>"},
			{[]string{"df2.csv", "df1.csv"}, "struct<a:int,B:int,C:int,c:int>"},
		}},
		{"SPARK-29358 parquet", "parquet", map[string][]byte{
			"df1.parquet": parquetFile(t, "SELECT 1 AS a, 2 AS c"),
			"df2.parquet": parquetFile(t, "SELECT 3 AS a, 4 AS B, 5 AS C"),
		}, []merge{
			{[]string{"df1.parquet", "df2.parquet"}, "struct<a:int,c:int,B:int,C:int>"},
			{[]string{"df2.parquet", "df1.parquet"}, "struct<a:int,B:int,C:int,c:int>"},
		}},
		{"SPARK-32376 nested", "parquet", map[string][]byte{
			// UnionClass1a, UnionClass1c and UnionClass1b of the suite.
			"df1.parquet": parquetFile(t, "SELECT 0 AS id, named_struct('a', 0, 'b', 1L, 'nested', named_struct('a', 1, 'c', '2')) AS a"),
			"df2.parquet": parquetFile(t, "SELECT 1 AS id, named_struct('a', 1, 'b', 2L, 'nested', named_struct('A', 2, 'b', 3L)) AS a"),
			"df3.parquet": parquetFile(t, "SELECT 2 AS id, named_struct('a', 2, 'b', 3L, 'nested', named_struct('a', 4, 'b', 5L)) AS a"),
		}, []merge{
			{[]string{"df1.parquet", "df2.parquet"}, "struct<id:int,a:struct<a:int,b:bigint,nested:struct<a:int,c:string,A:int,b:bigint>>>"},
			{[]string{"df2.parquet", "df1.parquet"}, "struct<id:int,a:struct<a:int,b:bigint,nested:struct<A:int,b:bigint,a:int,c:string>>>"},
			{[]string{"df2.parquet", "df3.parquet"}, "struct<id:int,a:struct<a:int,b:bigint,nested:struct<A:int,b:bigint,a:int>>>"},
		}},
	}
	for _, tc := range cases {
		dirs := map[string]string{"local": localFiles(t, tc.files), "cluster": clusterFiles(t, tc.files)}
		// Spark's answer for each merge, asked once (of the local copies)
		// and held to by all four merges of it: the files where only the
		// cluster sees them are the same bytes, and the inference side
		// does not change what Spark reads them as.
		unions := make([]unionOnce, len(tc.merges))
		for _, where := range []string{"local", "cluster"} {
			for _, sparkInference := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/sparkInference=%v", tc.name, where, sparkInference), func(t *testing.T) {
					t.Parallel()
					c := newClient(t)
					for i, m := range tc.merges {
						var paths []string
						for _, f := range m.files {
							paths = append(paths, dirs[where]+"/"+f)
						}
						out := filepath.Join(workDir(t), "out")
						_, err := c.Merge(context.Background(), spark.Job{
							Sources:        pathSources(paths...),
							Policy:         sparkmerge.Options{CaseSensitive: true},
							SparkInference: sparkInference,
							Target:         spark.Target{Path: out},
							Verify:         true,
						})
						if err != nil {
							t.Fatalf("case-sensitive merge of %v: %v", m.files, err)
						}
						rows := queryRows(t, "SET spark.sql.caseSensitive")
						diff(t, "the session's spark.sql.caseSensitive after the merge", [][]any{{"spark.sql.caseSensitive", "false"}}, rows)

						wantType, wantRows := unions[i].of(t, func() (string, []string) {
							var union sql.DataFrame
							for _, f := range m.files {
								df := readAlone(t, oracle, tc.format, dirs["local"]+"/"+f)
								if union == nil {
									union = df
								} else {
									union = union.UnionByNameWithMissingColumns(context.Background(), df)
								}
							}
							return typeAndJSONRows(t, union)
						})
						if wantType != m.want {
							t.Fatalf("Spark's unionByName of %v is %s, the suite's %s: the test's files are not the suite's", m.files, wantType, m.want)
						}
						gotType, gotRows := typeAndJSONRows(t, readAlone(t, oracle, "parquet", out))
						diff(t, fmt.Sprintf("type of %v merged", m.files), wantType, gotType)
						diff(t, fmt.Sprintf("rows of %v merged", m.files), wantRows, gotRows)
					}
				})
			}
		}
	}
}

// unionOnce is Spark's unionByName of a merge's files, as type and rows,
// asked of Spark by the first subtest that needs it; the others wait for
// it. A failed first asking fails that subtest and leaves the answer
// unset, for the next to ask again.
type unionOnce struct {
	mu   sync.Mutex
	done bool
	typ  string
	rows []string
}

func (u *unionOnce) of(t *testing.T, ask func() (string, []string)) (string, []string) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.done {
		u.typ, u.rows = ask() // t.Fatal inside leaves done false
		u.done = true
	}
	return u.typ, u.rows
}

// readAlone is Spark's read of one file, with sparkmerge's defaults for
// CSV (a header, types inferred).
func readAlone(t *testing.T, s sql.SparkSession, format, path string) sql.DataFrame {
	t.Helper()
	r := s.Read().Format(format)
	if format == "csv" {
		r = r.Option("header", "true").Option("inferSchema", "true")
	}
	df, err := r.Load(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return df
}

// typeAndJSONRows are a frame's row type (typeof of its columns as one
// struct: names and types, nested ones too) and its rows as JSON objects,
// nulls written, sorted.
func typeAndJSONRows(t *testing.T, df sql.DataFrame) (string, []string) {
	t.Helper()
	sel, err := df.SelectExpr(context.Background(), "typeof(struct(*))", "to_json(struct(*), map('ignoreNullFields', 'false'))")
	if err != nil {
		t.Fatal(err)
	}
	rows := collectValues(t, sel)
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	typ, _ := rows[0][0].(string)
	var out []string
	for _, r := range rows {
		s, _ := r[1].(string)
		out = append(out, s)
	}
	sort.Strings(out)
	return typ, out
}

// The CLI's --case-sensitive, with --verify and --show, on the first case
// above: the rows written and shown are Spark's, under the suite's names.
func TestCLICaseSensitiveMerge(t *testing.T) {
	t.Parallel()
	dir := localFiles(t, textFiles(map[string]string{"df1.csv": "a,c\n1,2\n", "df2.csv": "a,B,C\n3,4,5\n"}))
	code, stdout, stderr := cliRun(t, "merge", dir+"/df1.csv", dir+"/df2.csv", "--case-sensitive",
		"--out", filepath.Join(workDir(t), "out"), "--verify", "--show", "5")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	columns, rows := parseShow(t, stdout)
	diff(t, "columns shown", []string{"a", "c", "B", "C"}, columns)
	sortRows(rows)
	diff(t, "rows shown", [][]string{{"1", "2", "NULL", "NULL"}, {"3", "NULL", "4", "5"}}, rows)
}
