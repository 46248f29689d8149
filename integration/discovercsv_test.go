//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// CSV files the client does not type (dates, timestamps, quotes, files
// only the server sees, --spark-inference) are typed by Spark in a few
// inferences over many files (spark's typeCSVTogether), not a request per
// file. Each file must get the schema Spark's inference of it alone
// gives: the test plans every file both ways, by union (a read per file),
// and compares file by file.

// togetherCorpus are CSV files whose types depend on what Spark's parser
// and inference do to each file alone: dates and timestamps, a bare year
// after a date (typed by the order of its values), quoted values holding
// the separator and quotes, a repeated header line (which inference
// skips), a byte-order mark, blank lines before the header, CRLF, rows
// wider or narrower than the header, empty header names, NaN and
// exponents, a file of a header alone, a name Spark's URI of it escapes,
// and a file with a line of a tab (typed alone: Spark's filters of blank
// lines differ on it).
func togetherCorpus() map[string][]byte {
	files := map[string][]byte{
		"dates.csv":        []byte("id,day,at\n1,2024-12-31,2024-01-02 03:04:05\n2,2020-02-29,2024-01-02T03:04:05.123\n"),
		"year-after.csv":   []byte("id,day,at\n1,2020-01-05,x\n2,2020,1999-12-31 23:59:59\n"),
		"year-first.csv":   []byte("id,day,at\n1,2020,2024-01-02\n2,2020-01-05,2024-01-02 03:04:05\n"),
		"quoted.csv":       []byte("id,note,n\n1,\"a,b\",\"2\"\n2,\"say \"\"hi\"\"\",3\n3,\"\",\"\"\n"),
		"header-again.csv": []byte("id,day,at\n1,2024-01-01,2024-01-01 00:00:00\nid,day,at\n2,2024-01-02,2024-01-02 00:00:00\n"),
		"bom.csv":          []byte("\ufeffid,day\r\n1,2024-03-01\r\n2,2024-03-02\r\n"),
		"blank-first.csv":  []byte("\n\nid,day,at\n1,2024-03-01,7\n"),
		"widths.csv":       []byte("id,a,b\n1,2024-01-01\n2,2024-01-02,3.5,extra,9\n3,x,4,\"q,\"\n"),
		"empty-names.csv":  []byte(",x,\n2024-01-01,1,true\n2024-01-02,2,false\n"),
		"numbers.csv":      []byte("id,d,e\n1,NaN,1e3\n2,-Infinity,2.5E-3\n"),
		"header-only.csv":  []byte("id,day,at\n"),
		"tab-line.csv":     []byte("id,day\n\t\n1,2024-01-01\n"),
		"plain.csv":        []byte("id,name\n1,x\n2,y\n"),
		// A name Spark's URI of the file escapes.
		"odd name +%20 é.csv": []byte("id,day\n1,2024-05-01\n"),
	}
	for i := range 12 {
		// Files of a few headers, the common case: many files, few
		// headers, dates.
		files[fmt.Sprintf("many-%02d.csv", i)] = []byte(fewHeadersCSV(i, "day"))
	}
	return files
}

// fewHeadersCSV is the i-th of many CSV files of three headers (its date
// column named date): dates, timestamps in two spellings, decimals and
// quoted values holding the separator.
func fewHeadersCSV(i int, date string) string {
	var b strings.Builder
	b.WriteString([]string{"id," + date + ",at", "id,at," + date + ",amount", "id," + date + ",note"}[i%3] + "\n")
	for r := range 5 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "%d,2024-%02d-%02d,2024-01-01 0%d:00:00\n", r, 1+i%12, 1+r, r)
		case 1:
			fmt.Fprintf(&b, "%d,2024-01-01T0%d:00:00,2024-02-%02d,%d.5\n", r, r, 1+r, r)
		default:
			fmt.Fprintf(&b, "%d,2024-%02d-01,\"n, %d\"\n", r, 1+i%12, r)
		}
	}
	return b.String()
}

func TestCSVTypedTogetherAsAlone(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := togetherCorpus()
	local := localFiles(t, files)
	remote := clusterFiles(t, files)
	for _, where := range []struct {
		name, root string
	}{{"local files", local}, {"files only the server sees", remote}} {
		for _, sparkInference := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, spark inference %v", where.name, sparkInference), func(t *testing.T) {
				got, _ := plannedAsAlone(t, c, spark.Job{Sources: pathSources(where.root), Strategy: spark.StrategyUnion, SparkInference: sparkInference, DryRun: true})
				// Every file but those typed on the client and the one with
				// a line of a tab, in one text read, a parse per header and
				// few inferences.
				typedOnClient := 0
				for _, r := range got.Reads {
					if r.InferredLocally {
						typedOnClient++
					}
				}
				if wantTogether := len(files) - typedOnClient - 1; got.TypedTogether != wantTogether {
					t.Errorf("%d files typed together, want %d", got.TypedTogether, wantTogether)
				}
				if got.TogetherRequests > 20 {
					t.Errorf("%d requests typed %d files together", got.TogetherRequests, got.TypedTogether)
				}
				t.Logf("%d files typed together in %d requests, %d on the client; discovery %v", got.TypedTogether, got.TogetherRequests, typedOnClient, got.Discovery)
			})
		}
	}
}

// plannedAsAlone plans job as it is and with every file typed alone, checks
// that every file's schema is the one it has alone, and returns the plan
// as it is (how many files it typed together, in how many requests) and
// the plan with every file typed alone (its requests).
func plannedAsAlone(t *testing.T, c *spark.Client, job spark.Job) (got, alone *spark.Planned) {
	t.Helper()
	aloneJob := job
	aloneJob.InferEachFileAlone = true
	want, err := c.Plan(testContext(t), aloneJob)
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.Plan(testContext(t), job)
	if err != nil {
		t.Fatal(err)
	}
	if want.TypedTogether != 0 {
		t.Errorf("typed together %d files asked to be typed alone", want.TypedTogether)
	}
	schemas := map[string]string{}
	for _, r := range want.Reads {
		schemas[r.Name] = r.Schema.String()
	}
	for _, r := range got.Reads {
		if w := schemas[r.Name]; r.Schema.String() != w {
			t.Errorf("%s: typed together %s, alone %s", r.Name, r.Schema, w)
		}
	}
	return got, want
}

// recordsCorpus are CSV files read with multiLine whose types depend on
// what Spark's parser and inference do to each file's records: values
// over several lines (LF and CRLF inside quotes), a byte-order mark,
// blank lines before the header, a line of spaces (a record to the
// parser), the header line again (a record: only the first is dropped),
// rows wider or narrower than the header, a quoted header, a year after
// a date (typed by order), a number followed by a line break inside its
// quotes, names as Spark renames repeated ones, a header alone, and files
// of a few headers. Two files are
// Spark's alone by design: a header over two lines and one whose empty
// name Spark renames.
func recordsCorpus() map[string][]byte {
	files := map[string][]byte{
		"lines.csv":         []byte("id,note,day\n1,\"line one\nline two\",2024-01-01\n2,\"crlf\r\nend\",2020\n"),
		"crlf.csv":          []byte("id,note\r\n1,\"a\r\nb\"\r\n2,3.5\r\n"),
		"bom.csv":           []byte("\ufeffid,day\n1,2024-03-01\n"),
		"blank-first.csv":   []byte("\n\nid,day,n\n1,2024-03-01,7\n"),
		"spaces-line.csv":   []byte("id,day\n1,2024-01-01\n   \n2,2024-01-02\n"),
		"header-again.csv":  []byte("id,day\n1,2024-01-01\nid,day\n"),
		"widths.csv":        []byte("id,a,b\n1,2024-01-01\n2,2024-01-02,3.5,extra,9\n3,x,4,\"q,\n\"\n"),
		"quoted-header.csv": []byte("\"id\",\"note\"\n1,\"x\ny\"\n2,\"\"\n"),
		"year-after.csv":    []byte("id,day\n1,2020-01-05\n2,2020\n"),
		"number-break.csv":  []byte("id,d\n1,\"1.5\n\"\n2,7\n"),
		"header-only.csv":   []byte("id,day,at\n"),
		"header-lines.csv":  []byte("id,\"no\nte\"\n1,2\n"),
		"empty-name.csv":    []byte("id,,x\n1,2,\"3\n4\"\n"),
		// Named as Spark renames a repeated name, but as written.
		"digits.csv": []byte("id,col1,x,col3\n1,\"2\n\",3,2024-01-01\n"),
	}
	for i := range 9 {
		var b strings.Builder
		b.WriteString([]string{"id,day,note", "id,note,amount", "id,at"}[i%3] + "\n")
		for r := range 4 {
			switch i % 3 {
			case 0:
				fmt.Fprintf(&b, "%d,2024-%02d-%02d,\"n\n%d\"\n", r, 1+i%12, 1+r, r)
			case 1:
				fmt.Fprintf(&b, "%d,\"a,\r\nb\",%d.5\n", r, r)
			default:
				fmt.Fprintf(&b, "%d,2024-01-01 0%d:00:00\n", r, r)
			}
		}
		files[fmt.Sprintf("many-%02d.csv", i)] = []byte(b.String())
	}
	return files
}

// Files read with multiLine are typed together by their records (spark's
// csvLanes.records), each as Spark's inference of it alone types it.
func TestCSVRecordsTypedTogetherAsAlone(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := recordsCorpus()
	local := localFiles(t, files)
	remote := clusterFiles(t, files)
	for _, where := range []struct {
		name, root string
	}{{"local files", local}, {"files only the server sees", remote}} {
		t.Run(where.name, func(t *testing.T) {
			// Types the files' columns do not share become strings: the
			// files' own types are compared, not the plan's.
			got, _ := plannedAsAlone(t, c, spark.Job{Sources: pathSources(where.root), Strategy: spark.StrategyUnion, ReaderOptions: map[string]string{"multiLine": "true"}, DryRun: true,
				Policy: sparkmerge.Options{Types: sparkmerge.TypesString}})
			if wantTogether := len(files) - 2; got.TypedTogether != wantTogether {
				t.Errorf("%d files typed together, want %d", got.TypedTogether, wantTogether)
			}
			t.Logf("%d files typed together in %d requests; discovery %v", got.TypedTogether, got.TogetherRequests, got.Discovery)
		})
	}
}
