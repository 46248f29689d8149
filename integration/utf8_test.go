//go:build integration

package integration

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// Spark's CSV reader passes a byte that is not UTF-8 to the output as
// U+FFFD, without an error (a Latin-1 "M\xfcnchen" is written
// "M\uFFFDnchen"), and its JSON reader fails on such a record saying only
// that it is malformed. The client refuses such a file when it types it
// whole; here Spark types every file, by every way that leaves a file to
// it: Job.SparkInference, reader options the client's rules refuse
// (multiLine), a gzip file, a JSON file alone and typed together with
// another, the multipath strategy; local (the client reads them through)
// and only on the server (Spark does). Every such file must be refused before the
// merge, naming the file and the encoding to give; given the encoding,
// the value must come through as Spark reads it alone (München), and a
// UTF-8 file with the same text must merge as it is, not be refused.
func TestFilesSparkReadsAreCheckedForUTF8(t *testing.T) {
	t.Parallel()
	latin := "id,city\n1,Paris\n2,M\xfcnchen\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(latin))
	zw.Close()
	files := map[string][]byte{
		"latin.csv":       []byte(latin),
		"gz/latin.csv.gz": gz.Bytes(),
		"latin.json":      []byte("{\"id\":1,\"city\":\"Paris\"}\n{\"id\":2,\"city\":\"M\xfcnchen\"}\n"),
		"utf8.csv":        []byte("id,city\n1,Paris\n2,München\n"),
		"utf8.json":       []byte("{\"id\":3,\"city\":\"München\"}\n"),
	}
	dirs := map[string]string{"local": localFiles(t, files), "only on the server": clusterFiles(t, files)}
	for _, where := range []string{"local", "only on the server"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			dir := dirs[where]
			for _, tc := range []struct {
				name string
				file string
				job  func(paths []spark.SourceSpec) spark.Job
				with string // the UTF-8 file beside it, utf8.csv if ""
			}{
				{"Spark's inference", "latin.csv", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }, ""},
				{"options the client leaves to Spark", "latin.csv", func(s []spark.SourceSpec) spark.Job {
					return spark.Job{Sources: s, ReaderOptions: map[string]string{"multiLine": "true"}}
				}, ""},
				{"gzip", "gz/latin.csv.gz", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }, ""},
				{"JSON", "latin.json", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }, ""},
				// (Two JSON files: typed together, in one inference
				// whose read checks each line.)
				{"JSON typed together", "latin.json", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }, "utf8.json"},
				{"multipath", "latin.csv", func(s []spark.SourceSpec) spark.Job {
					return spark.Job{Sources: s, Strategy: spark.StrategyMultipath}
				}, ""},
			} {
				path, with := dir+"/"+tc.file, dir+"/utf8.csv"
				if tc.with != "" {
					with = dir + "/" + tc.with
				}
				_, err := c.Plan(testContext(t), tc.job(pathSources(path, with)))
				// (A multipath read of both files is one source of two
				// files: its file is named.)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", path)) || !strings.Contains(err.Error(), "is not UTF-8") || !strings.Contains(err.Error(), "encoding=ISO-8859-1") {
					t.Errorf("%s: %s: err = %v; want it refused, naming the file and the encoding option", tc.name, path, err)
				}
			}

			// Its encoding given, the file merges as Spark reads it
			// alone; the UTF-8 file beside it as it is.
			sources := pathSources(dir+"/latin.csv", dir+"/utf8.csv")
			sources[0].Options = map[string]string{"encoding": "ISO-8859-1"}
			res, out := merge(t, c, spark.Job{Sources: sources, SparkInference: true, Verify: true})
			if res.RowsWritten != 4 {
				t.Errorf("wrote %d rows, want 4", res.RowsWritten)
			}
			got := queryRows(t, fmt.Sprintf("SELECT count_if(city = 'München'), count_if(city = 'Paris'), count(*) FROM parquet.`%s`", filepath.ToSlash(out)))
			if len(got) != 1 || fmt.Sprint(got[0]) != "[2 2 4]" {
				t.Errorf("München and Paris in the output: %v, want [2 2 4]", got)
			}
		})
	}
}

// CSV files Spark splits are typed by one inference per header line
// (Spark's inference asked for), the client reading each file's head and
// split starts only (of files only the server sees, by a job that reads
// each file whole there and says whether it is UTF-8): a file of such a group whose bytes past its head and
// split starts are not UTF-8 is refused as any other, local and only on
// the server.
func TestSplitFilesTypedByHeaderAreCheckedForUTF8(t *testing.T) {
	t.Parallel()
	c := splitClient(t)
	stamps := func(latin bool) []byte {
		return linesOf("id,at,n,note", 3000, func(i int) string {
			city := "Paris"
			if latin && i == 1234 {
				city = "M\xfcnchen"
			}
			return fmt.Sprintf(`%d,2024-01-02 03:04:%02d,%d,"%s, %d"`, i, i%60, i*7, city, i)
		})
	}
	files := map[string][]byte{"stamps-1.csv": stamps(false), "stamps-2.csv": stamps(false), "stamps-latin.csv": stamps(true)}
	for where, dir := range map[string]string{"local": localFiles(t, files), "only on the server": clusterFiles(t, files)} {
		planned, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(dir+"/stamps-1.csv", dir+"/stamps-2.csv"), SparkInference: true})
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if planned.TypedByHeader != 2 {
			t.Errorf("%s: %d files typed by header, want 2 (the path under test)", where, planned.TypedByHeader)
		}
		latin := dir + "/stamps-latin.csv"
		_, err = c.Plan(testContext(t), spark.Job{Sources: pathSources(dir+"/stamps-1.csv", dir+"/stamps-2.csv", latin), SparkInference: true})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("source %q is not UTF-8", latin)) || !strings.Contains(err.Error(), "encoding=ISO-8859-1") {
			t.Errorf("%s: err = %v; want %s refused, naming the encoding option", where, err, latin)
		}
	}
}
