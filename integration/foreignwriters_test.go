//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// pyarrowFiles are the files of testdata/pyarrow/set (see gen.py there),
// by name below set/.
func pyarrowFiles(t *testing.T, set string) map[string][]byte {
	t.Helper()
	root := filepath.Join("testdata", "pyarrow", set)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[set+"/"+e.Name()] = data
	}
	return files
}

// placed runs each of test's subtests on the files of set, written where
// the client reads them too ("local") and where only the server sees them
// ("cluster", which needs the harness's own container).
func placed(t *testing.T, set string, test func(t *testing.T, dir string, names []string)) {
	files := pyarrowFiles(t, set)
	var names []string
	for name := range files {
		names = append(names, strings.TrimPrefix(name, set+"/"))
	}
	sort.Strings(names)
	for _, where := range []string{"local", "cluster"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			var dir string
			if where == "local" {
				dir = localFiles(t, files)
			} else {
				dir = clusterFiles(t, files)
			}
			test(t, dir+"/"+set, names)
		})
	}
}

// A file with a column named _metadata (a struct with a file_path field;
// a string, in another case; Parquet and ORC, as pyarrow writes them)
// among others: every merged row keeps its own file as its provenance,
// with auto and multipath, in the merge and in the SQL of the plan, and
// Verify counts the rows of the plan's files. Each file's rows are
// Spark's of the file read alone. Found in the field: the column hid
// Spark's _metadata, whose file_path named each row's file in a load of
// many files; the rows got the data's "files", or NULL, and Verify passed.
func TestMetadataColumnKeepsEachRowsFile(t *testing.T) {
	t.Parallel()
	for _, set := range []struct{ name, format string }{
		{"metadata-struct", "parquet"},
		{"metadata-string", "parquet"},
		{"metadata-orc", "orc"},
	} {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			placed(t, set.name, func(t *testing.T, dir string, names []string) {
				c := newClient(t)
				strategies := []spark.Strategy{spark.StrategyAuto, spark.StrategyMultipath}
				var files []string
				for _, name := range names {
					files = append(files, dir+"/"+name)
				}
				// Each file's columns, asked once for both strategies.
				columns := fileColumns(t, set.format, files)
				// Both strategies' merges, then every file's rows of each
				// compared with the file read alone, and each output's
				// rows that name no file of the merge counted, in one
				// query (see sameRowsAsAloneSQL).
				var results []*spark.Result
				var checks []string
				for i, strategy := range strategies {
					res, out := merge(t, c, spark.Job{
						Sources:  pathSources(dir),
						Strategy: strategy,
						Policy:   sparkmerge.Options{SourceColumn: "_source"},
						Verify:   true,
					})
					results = append(results, res)
					for j, file := range files {
						checks = append(checks, sameRowsAsAloneSQL(i, j, set.format, file, columns[j], out))
					}
					checks = append(checks, fmt.Sprintf("SELECT %d, -1, count(*), 0, 0, 0 FROM parquet.`%s` WHERE _source IS NULL OR _source NOT IN ('%s')", i, out, strings.Join(files, "', '")))
				}
				counts := map[[2]int64][]any{}
				for _, r := range queryRows(t, strings.Join(checks, " UNION ALL ")) {
					counts[[2]int64{int64(r[0].(int32)), int64(r[1].(int32))}] = r[2:]
				}
				for i, strategy := range strategies {
					res := results[i]
					var want []spark.SourceRows
					wantSQL := map[string]int64{}
					for j, file := range files {
						n := sameRowsAsAloneCounts(t, counts[[2]int64{int64(i), int64(j)}], fmt.Sprintf("%v, %s", strategy, names[j]))
						want = append(want, spark.SourceRows{Source: file, Rows: n})
						wantSQL[file] = n
					}
					diff(t, fmt.Sprintf("%v: rows read per source", strategy), want, res.RowsRead)
					if strays := counts[[2]int64{int64(i), -1}]; len(strays) == 0 || strays[0] != int64(0) {
						t.Errorf("%v: %v rows name no file of the merge", strategy, strays)
					}
					sql, err := res.Planned.SQL()
					if err != nil {
						t.Fatal(err)
					}
					gotSQL := map[string]int64{}
					for _, r := range queryRows(t, sql) {
						s, _ := r[len(r)-1].(string)
						gotSQL[s]++
					}
					diff(t, fmt.Sprintf("%v: rows per _source of the plan's SQL", strategy), wantSQL, gotSQL)
				}
			})
		})
	}
}

// fileColumns are the columns of each file (format) as Spark reads it
// alone, quoted and listed for a SELECT.
func fileColumns(t *testing.T, format string, files []string) []string {
	t.Helper()
	var lists []string
	for _, file := range files {
		cols, _ := query(t, "SELECT * FROM "+format+".`"+file+"` LIMIT 0")
		for i, col := range cols {
			cols[i] = "`" + col + "`"
		}
		lists = append(lists, strings.Join(cols, ", "))
	}
	return lists
}

// sameRowsAsAloneSQL is a query of one row (i, j, the merged rows of out
// whose _source is file, the rows of file read alone (format) in its
// columns list, how many merged rows are not the file's and how many of
// the file's not merged, as EXCEPT ALL counts them both ways): the rows of
// both sides counted by their values in one aggregate, where two EXCEPT
// ALLs and two counts cost Spark four jobs. UNION ALL coerces the two
// sides' types as EXCEPT ALL does, and its grouping takes NULLs as equal.
func sameRowsAsAloneSQL(i, j int, format, file, list, out string) string {
	merged := "SELECT " + list + ", 1 AS `m_`, 0 AS `a_` FROM parquet.`" + out + "` WHERE _source = '" + file + "'"
	alone := "SELECT " + list + ", 0, 1 FROM " + format + ".`" + file + "`"
	return fmt.Sprintf("SELECT %d, %d, coalesce(sum(m), 0), coalesce(sum(a), 0), coalesce(sum(greatest(m - a, 0)), 0), coalesce(sum(greatest(a - m, 0)), 0) FROM (SELECT sum(`m_`) AS m, sum(`a_`) AS a FROM (%s UNION ALL %s) GROUP BY %s)",
		i, j, merged, alone, list)
}

// sameRowsAsAloneCounts checks a row of sameRowsAsAloneSQL's counts (from
// its third cell on): the merged rows of the file are the file's read
// alone. It returns how many there are.
func sameRowsAsAloneCounts(t *testing.T, counts []any, what string) int64 {
	t.Helper()
	if len(counts) != 4 {
		t.Errorf("%s: no counts (%v)", what, counts)
		return -1
	}
	if counts[0] != counts[1] || counts[2] != int64(0) || counts[3] != int64(0) {
		t.Errorf("%s: %v merged rows, %v rows of the file alone; %v merged rows not the file's, %v of the file's not merged", what, counts[0], counts[1], counts[2], counts[3])
	}
	n, _ := counts[1].(int64)
	return n
}

// Parquet files named as Impala (*_data.0.parq) and others (.pq, Hive's
// extension-less 000000_0) write them, beside a .parquet file: every one
// is read, with and without the format given (an extension-less file
// needs it), and none is skipped as of another format. Found in the
// field: the .parq and .pq files were skipped, their rows lost.
func TestParquetFilesOfOtherNamesAreRead(t *testing.T) {
	t.Parallel()
	for _, set := range []struct {
		name    string
		formats []string
		want    [][]any
	}{
		{"parq", []string{"", "parquet"}, [][]any{row(int64(1), "part-0.parquet"), row(int64(2), "abc_data.0.parq"), row(int64(3), "c.pq")}},
		{"parq-noext", []string{"parquet"}, [][]any{row(int64(1), "part-0.parquet"), row(int64(2), "abc_data.0.parq"), row(int64(4), "000000_0")}},
	} {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			placed(t, set.name, func(t *testing.T, dir string, _ []string) {
				c := newClient(t)
				for _, format := range set.formats {
					res, out := merge(t, c, spark.Job{
						Sources: pathSources(dir),
						Format:  format,
						Policy:  sparkmerge.Options{SourceColumn: "_source"},
						Verify:  true,
					})
					if len(res.Planned.Skipped) != 0 {
						t.Errorf("format %q: skipped %v", format, res.Planned.Skipped)
					}
					got := queryRows(t, "SELECT id, substring_index(_source, '/', -1) FROM parquet.`"+out+"` ORDER BY id")
					diff(t, fmt.Sprintf("format %q: rows", format), set.want, got)
				}
			})
		})
	}
}

// A dataset directory with Parquet summary files (_common_metadata and
// _metadata, as pyarrow's write_metadata and Dask write them) is read as
// Spark reads it: its data file's rows, the summary files no data and
// not named. Found in the field: where only the server saw it, it was
// refused ("cannot tell the format").
func TestParquetSummaryFilesAreNoData(t *testing.T) {
	t.Parallel()
	placed(t, "summary", func(t *testing.T, dir string, _ []string) {
		c := newClient(t)
		oracle := queryRows(t, "SELECT count(*) FROM parquet.`"+dir+"`")
		for _, format := range []string{"", "parquet"} {
			res, _ := merge(t, c, spark.Job{Sources: pathSources(dir), Format: format, Verify: true})
			var read []string
			for _, r := range res.Planned.Reads {
				read = append(read, r.Paths...)
			}
			diff(t, fmt.Sprintf("format %q: files read", format), []string{dir + "/part-0.parquet"}, read)
			if res.RowsWritten != oracle[0][0] || len(res.Planned.Empty) != 0 || len(res.Planned.Skipped) != 0 {
				t.Errorf("format %q: %d rows written (Spark reads %v); empty %v, skipped %v", format, res.RowsWritten, oracle[0][0], res.Planned.Empty, res.Planned.Skipped)
			}
		}
	})
}
