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
// (multiLine), a gzip file, a JSON file, the multipath strategy; local
// and only on the server. Every such file must be refused before the
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
			}{
				{"Spark's inference", "latin.csv", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }},
				{"options the client leaves to Spark", "latin.csv", func(s []spark.SourceSpec) spark.Job {
					return spark.Job{Sources: s, ReaderOptions: map[string]string{"multiLine": "true"}}
				}},
				{"gzip", "gz/latin.csv.gz", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }},
				{"JSON", "latin.json", func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }},
				{"multipath", "latin.csv", func(s []spark.SourceSpec) spark.Job {
					return spark.Job{Sources: s, Strategy: spark.StrategyMultipath}
				}},
			} {
				path := dir + "/" + tc.file
				_, err := c.Plan(testContext(t), tc.job(pathSources(path, dir+"/utf8.csv")))
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
