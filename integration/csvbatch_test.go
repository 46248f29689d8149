//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// csvBatchFiles drift in every way a positional batch must undo: the same
// columns in other orders and types, padded and signed integers, decimals
// that print differently once parsed, booleans in capitals, nulls, and a
// column that is an int in one file and text in another (so its target is
// a string, and the ints must print as Spark prints the parsed ints).
var csvBatchFiles = map[string]string{
	"w3-a.csv": "id,qty,price\n1,007,1.50\n2,+3,2\n3,,0.1000\n",
	"w3-b.csv": "price,id,qty\n9.75,4,x\n,5,y\n1e5,6,z\n", // 1e5: left to Spark, read alone
	"w3-c.csv": "qty,price,id\n12,3.0,7\n-0,4,8\n",
	"w3-d.csv": "id,flag,qty\n9,TRUE,5\n10,false,\n",
	"w2-a.csv": "id,big\n11,99999999999999999999\n12,5\n",
	"w2-b.csv": "big,id\n-1,13\n,14\n",
	"w4-a.csv": "id,qty,price,Note\n15,6,0.5,hello\n16,7,,\n",
	"w4-b.csv": "Note,price,qty,id\nbye,1.25,8,17\n,2,9,18\n",
}

func csvBatchPaths(t *testing.T) []string {
	t.Helper()
	var names []string
	for name := range csvBatchFiles {
		names = append(names, name)
	}
	// Input order decides the target's column order: keep it fixed.
	sort.Strings(names)
	return writeFiles(t, workDir(t), csvBatchFiles, names...)
}

// TestCSVBatchesMatchReadsOneByOne merges the same drifting CSV files with
// positional batches (the default) and with one read per file (Spark's
// inference, which never batches): the outputs must be the same, row for
// row and value for value.
func TestCSVBatchesMatchReadsOneByOne(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	paths := csvBatchPaths(t)
	// Verify counts the rows of every file through the batches too.
	job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, Verify: true}
	job.Policy.SourceColumn = "_source"
	batched, single := mergeBothWays(t, c, job)
	if !batched.Verified || len(batched.RowsRead) != len(paths) {
		t.Errorf("verified %v, rows read per source %v", batched.Verified, batched.RowsRead)
	}

	if single.Scans != len(paths) {
		t.Errorf("one read per file: %d scans, want %d", single.Scans, len(paths))
	}
	// Every file but w3-b (left to Spark) shares one scan, whatever its
	// width: 2 scans in all.
	if batched.Scans != 2 {
		t.Errorf("batched: %d scans, want 2:\n%s", batched.Scans, batched.Planned)
	}
	if !strings.Contains(batched.Planned.String(), "7 files read in 1 positional scan ") {
		t.Errorf("plan text does not say how reads were batched:\n%s", batched.Planned)
	}
	names, got := newOracle(single.out).sameAs(t, c, batched.out, nil, "", "")
	if len(got) != 18 {
		t.Errorf("%d rows, want 18", len(got))
	}
	// The int column that became text prints as Spark prints the ints.
	qty := slices.Index(names, "qty")
	id1, id2 := rowWhere(t, names, got, "id", "1"), rowWhere(t, names, got, "id", "2")
	if qty < 0 || id1[qty] != "7" || id2[qty] != "3" {
		t.Errorf("qty of ids 1 and 2: %v, %v; want 7 and 3 (parsed, then printed)", id1, id2)
	}
}

// A positional scan reads its CSV files whole, split into lines and at the
// separator, dropping each file's header line, only when no other line of
// a file equals its header: Spark's reader drops the first line alone, so
// a later line like it is a row. Such files are read on their own; both
// ways give the rows of the files read one by one. A line
// like another file's header is a row; the line-scan separators ('|', ';',
// tab) split as the reader does.
func TestCSVBatchLinesMatchReadsOneByOne(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		sep   string
		files map[string]string
		rows  int
		scans int // 0: 1
	}{
		// Read on their own, under Spark's check of the header: a
		// positional scan proves a file's header by its first line.
		{"files repeat their header lines", ",", map[string]string{
			"r1.csv": "tag,code\nx,a1\ntag,code\ny,\n",
			"r2.csv": "code,tag\nc3,z\ncode,tag\n,\n",
		}, 6, 2},
		{"a data line like another file's header", ",", map[string]string{
			"h1.csv": "tag,code\nx,a1\ncode,tag\n",
			"h2.csv": "code,tag\nc3,z\n",
		}, 3, 0},
		{"names Spark escapes in its file URIs", ",", map[string]string{
			"a b%2B+.csv": "tag,code\nx,a1\n",
			"plain.csv":   "code,tag\nc3,z\n",
		}, 2, 0},
		{"a name not in ASCII", ",", map[string]string{
			"é.csv":     "code,tag\nc4,w\n",
			"plain.csv": "code,tag\nc3,z\n",
		}, 2, 0},
		{"pipes", "|", map[string]string{
			"p1.csv": "id|note|x\n1||2.5\n2|a b|\n",
			"p2.csv": "note|id\n|3\nz|4\n",
		}, 4, 0},
		{"semicolons", ";", map[string]string{
			"s1.csv": "id;note\n1;\n2;a,b\n",
			"s2.csv": "note;id;y\nq;3;\n",
		}, 3, 0},
		{"tabs", "\t", map[string]string{
			"t1.csv": "id\tnote\n1\tp q\n2\t\n",
			"t2.csv": "note\tid\nx,y\t3\n",
		}, 3, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Cases in parallel, each on a session of its own.
			t.Parallel()
			c := newClient(t)
			var names []string
			for name := range tc.files {
				names = append(names, name)
			}
			sort.Strings(names)
			paths := writeFiles(t, workDir(t), tc.files, names...)
			job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, Verify: true, ReaderOptions: map[string]string{"sep": tc.sep}}
			job.Policy.SourceColumn = "_source"
			batched, single := mergeBothWays(t, c, job)
			if want := max(tc.scans, 1); batched.Scans != want {
				t.Errorf("batched: %d scans, want %d:\n%s", batched.Scans, want, batched.Planned)
			}
			if _, got := newOracle(single.out).sameAs(t, c, batched.out, nil, "", ""); len(got) != tc.rows {
				t.Errorf("%d rows, want %d", len(got), tc.rows)
			}
		})
	}
}

// A file that changed between planning and the write fails the merge,
// naming the file, instead of being read by stale positions.
func TestCSVBatchRefusesChangedFile(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	paths := csvBatchPaths(t)
	job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion}
	job.Target.Path = filepath.Join(workDir(t), "out")
	planned, err := c.Plan(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	changed := paths[len(paths)-1] // w4-b.csv, batched with w4-a.csv
	if filepath.Base(changed) != "w4-b.csv" {
		t.Fatalf("last path %s", changed)
	}
	// Same size, columns swapped: only the modification time tells.
	rewriteLater(t, changed, "Note,price,id,qty\nbye,1.25,8,17\n,2,9,18\n")
	_, err = c.MergePlanned(context.Background(), job, planned)
	wantChanged(t, "merge", err, changed)
	// A merge that keeps no rows (noop) reads the same scans: the change
	// fails it too.
	job.Target = spark.Target{Format: "noop"}
	_, err = c.MergePlanned(context.Background(), job, planned)
	wantChanged(t, "noop merge", err, changed)
}

// rewriteLater rewrites a file with content and dates it an hour ahead, as
// a file written again after planning.
func rewriteLater(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

// wantChanged fails unless err says that file changed after planning.
func wantChanged(t *testing.T, what string, err error, file string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "changed after sparkmerge read it") {
		t.Fatalf("%s after the file changed: %v, want an error naming %s", what, err, file)
	}
}

// jsonBatchFiles drift like csvBatchFiles, and spell keys in other cases
// (each file alike within itself, as client inference requires).
var jsonBatchFiles = map[string]string{
	"a.json": "{\"id\":1,\"qty\":7,\"price\":1.50,\"ok\":true}\n\n{\"id\":2,\"qty\":-0,\"price\":2,\"ok\":null}\n",
	"b.json": "{\"ID\":3,\"Qty\":\"x\",\"price\":1e3}\r\n{\"ID\":4,\"Qty\":null,\"price\":0.1000}\r\n",
	"c.json": "{\"id\":5,\"note\":\"é \\\"q\\\" \\u00e9\",\"big\":99999999999999999999}\n   \n{\"id\":6,\"big\":5,\"qty\":12}\n",
	"d.json": "{\"id\":7,\"price\":\"cheap\",\"OK\":false}\n",
	"e.json": "{\"id\":8,\"nested\":{\"x\":1}}\n", // nested: read alone
	// mix is a string column in each file: -12 prints as written (f joins
	// the scan), 1.50 does not (g reads alone: Spark 4 keeps "1.50").
	"f.json": "{\"id\":9,\"mix\":-12}\n{\"id\":10,\"mix\":\"u\"}\n",
	"g.json": "{\"id\":11,\"mix\":1.50}\n{\"id\":12,\"mix\":\"t\"}\n",
}

// TestJSONBatchesMatchReadsOneByOne is TestCSVBatchesMatchReadsOneByOne for
// JSON lines.
func TestJSONBatchesMatchReadsOneByOne(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	names := []string{"a.json", "b.json", "c.json", "d.json", "e.json", "f.json", "g.json"}
	paths := writeFiles(t, workDir(t), jsonBatchFiles, names...)
	job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, Verify: true}
	job.Policy.SourceColumn = "_source"
	batched, single := mergeBothWays(t, c, job)
	if single.Scans != len(paths) || batched.Scans != 3 {
		t.Errorf("scans: %d one by one (want %d), %d batched (want 3)\n%s", single.Scans, len(paths), batched.Scans, batched.Planned)
	}
	if !batched.Verified {
		t.Error("not verified")
	}
	// A struct does not cast to string for the row comparison.
	colNames, got := newOracle(single.out).sameAs(t, c, batched.out, func(col string) bool { return strings.HasPrefix(col, "nested ") }, "", "")
	if len(got) != 12 {
		t.Fatalf("%d rows, want 12", len(got))
	}
	// Spark 4.0 reads a JSON number into a string column as written
	// (SPARK-48148); 3.5 prints the double it parsed, alone or batched.
	want11 := "1.50"
	if strings.HasPrefix(c.SparkVersion(), "3.") {
		want11 = "1.5"
	}
	id9, id11 := rowWhere(t, colNames, got, "id", "9"), rowWhere(t, colNames, got, "id", "11")
	if mix := slices.Index(colNames, "mix"); mix < 0 || id9[mix] != "-12" || id11[mix] != want11 {
		t.Errorf("mix of ids 9 and 11: %v, %v; want -12 and %s (columns %v)", id9, id11, want11, colNames)
	}
	t.Logf("columns %v\nrows %v", colNames, got)
}

// TestJSONGroupBatchesMatchGroupReads merges JSON files that auto groups
// (keys spelled alike, types equal) with the groups' files in positional
// scans (the default), and compares the output with each file read alone
// by Spark, value for value: provenance is each row's file.
func TestJSONGroupBatchesMatchGroupReads(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := map[string]string{}
	var names []string
	add := func(name, content string) {
		files[name] = content
		names = append(names, name)
	}
	// Group g: 129 files. u is a bigint and, in some files, a double
	// (1.50): a double column. v is a bigint and, in one file, text: a
	// string column (the integers print as written). w is a boolean and,
	// in one file, a number: a string column too.
	for i := range 129 {
		var b strings.Builder
		switch {
		case i == 77:
			fmt.Fprintf(&b, "{\"id\":%d,\"v\":\"text\",\"w\":5,\"u\":-0}\n", i*10)
		case i%10 == 3:
			fmt.Fprintf(&b, "{\"id\":%d,\"u\":%d.50,\"w\":true,\"note\":\"n\\u00e9\"}\n", i*10, i)
		default:
			fmt.Fprintf(&b, "{\"id\":%d,\"v\":%d,\"u\":%d}\n\n{\"id\":%d,\"w\":false,\"v\":null}\n", i*10, i*1000000007, i-64, i*10+1)
		}
		add(fmt.Sprintf("g%03d.json", i), b.String())
	}
	// Group o spells its keys in capitals: V is a bigint, a double and a
	// 20-digit integer, a double column.
	add("o1.json", "{\"ID\":100001,\"V\":5}\n")
	add("o2.json", "{\"ID\":100002,\"V\":2.25}\n")
	add("o3.json", "{\"ID\":100003,\"V\":99999999999999999999}\n")
	// Group h holds 1.50 and text in one column: Spark's reader keeps the
	// number's text, from_json would print 1.5, so the group is read by
	// Spark, not positionally.
	add("h1.json", "{\"Id\":200001,\"H\":1.50}\n")
	add("h2.json", "{\"Id\":200002,\"H\":\"x\"}\n")
	paths := writeFiles(t, workDir(t), files, names...)

	job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyAuto, Verify: true}
	job.Policy.SourceColumn = "_source"
	var batched, alone merged
	batched.Result, batched.out = merge(t, c, job)
	// The reference: Spark reads each file alone.
	job.Strategy, job.SparkInference = spark.StrategyUnion, true
	alone.Result, alone.out = merge(t, c, job)

	// auto groups only files whose one read types every value as the file
	// alone does (no widening inside a group): 115 of g's files, the 13
	// with a fractional u, g077 (text in v) alone, and o1-o3, h1 and h2
	// each alone (their own types differ).
	if got := len(batched.Planned.Reads); got != 8 {
		t.Errorf("%d reads, want 8:\n%s", got, batched.Planned)
	}
	if !strings.Contains(batched.Planned.String(), "134 files read in 1 positional scan ") {
		t.Errorf("plan text does not say how files were batched:\n%s", batched.Planned)
	}
	if batched.Scans != 1 {
		t.Errorf("scans: %d, want 1", batched.Scans)
	}
	if !batched.Verified || len(batched.RowsRead) != len(paths) {
		t.Errorf("verified %v, rows read for %d sources, want %d", batched.Verified, len(batched.RowsRead), len(paths))
	}
	colNames, got := newOracle(alone.out).sameAs(t, c, batched.out, nil, "", "")
	if want := 129 + 129 - 1 - 13 + 3 + 2; len(got) != want {
		t.Fatalf("%d rows, want %d", len(got), want)
	}
	// h1.json alone types H as double: 1.50 is the double 1.5, printed
	// so in the string column, as Spark's read of that file gives it.
	id200001 := rowWhere(t, colNames, got, "id", "200001")
	if h := slices.Index(colNames, "H"); h < 0 || id200001[h] != "1.5" {
		t.Errorf("H of id 200001: %v, want 1.5 (columns %v)", id200001, colNames)
	}
	t.Logf("columns %v\nfirst rows %v", colNames, got[:4])
}

// TestJSONUnroutedBatchMatchesAndRefusesChangedFile merges JSON files whose
// every column from_json parses into the target's type (a scan with no
// route join; stamps checked against literals), compares the output with
// Spark reading each file alone, then rewrites one file (same size) after
// planning: the merge fails naming it.
func TestJSONUnroutedBatchMatchesAndRefusesChangedFile(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := map[string]string{
		"a.json": "{\"id\":1,\"v\":-0,\"n\":-0,\"w\":\"x\"}\n\n{\"id\":2,\"v\":9007199254740993,\"n\":12}\n",
		"b.json": "{\"ID\":3,\"v\":2.5,\"n\":\"t\"}\n {\"ID\":4,\"v\":1e300,\"w\":null}\n",
		"c.json": "{\"id\":5,\"w\":\"\\u00e9\"}\n",
	}
	paths := writeFiles(t, workDir(t), files, "a.json", "b.json", "c.json")
	job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, Verify: true}
	job.Policy.LossyWidening = true // v: a bigint past 2^53 into double, as Spark casts it
	batched, single := mergeBothWays(t, c, job)
	if batched.Scans != 1 || single.Scans != len(paths) {
		t.Errorf("scans: %d batched (want 1), %d one by one\n%s", batched.Scans, single.Scans, batched.Planned)
	}
	want := newOracle(single.out)
	_, got := want.sameAs(t, c, batched.out, nil, "", "")
	if len(got) != 5 {
		t.Fatalf("%d rows, want 5", len(got))
	}
	// The same files where only Spark sees them: one scan too, the same rows.
	contents := map[string][]byte{}
	for name, content := range files {
		contents[name] = []byte(content)
	}
	_, outputs := sparktest.ClusterDir(t)
	for i, dir := range []string{clusterFiles(t, contents), objectStoreFiles(t, contents)} {
		remote := job
		remote.Sources = pathSources(dir+"/a.json", dir+"/b.json", dir+"/c.json")
		remote.Target.Path = fmt.Sprintf("%s/unrouted-%d", outputs, i)
		res, out := merge(t, c, remote)
		if res.Scans != 1 {
			t.Errorf("%s: %d scans, want 1\n%s", dir, res.Scans, res.Planned)
		}
		want.sameAs(t, c, out, nil, "", "")
	}

	job.Target.Path = filepath.Join(workDir(t), "out")
	planned, err := c.Plan(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	changed := paths[2]
	rewriteLater(t, changed, "{\"id\":5,\"w\":\"\\u00e8\"}\n") // same size
	_, err = c.MergePlanned(context.Background(), job, planned)
	wantChanged(t, "merge", err, changed)
}

// rowWhere is the one row of rows (as sameAs returns them, their columns
// named by names) whose column col holds value.
func rowWhere(t *testing.T, names []string, rows [][]any, col, value string) []any {
	t.Helper()
	i := slices.Index(names, col)
	var found []any
	for _, r := range rows {
		if i >= 0 && r[i] == value {
			if found != nil {
				t.Fatalf("two rows with %s = %s: %v and %v", col, value, found, r)
			}
			found = r
		}
	}
	if found == nil {
		t.Fatalf("no row with %s = %s among %d (columns %v)", col, value, len(rows), names)
	}
	return found
}

// quotedBatchFiles hold values quoted whole, as client inference takes them
// (see package infer): the separator, an escaped quote (\") inside, at the
// end and alone, spaces kept at either end, text not in ASCII, numbers and
// dates quoted, an unquoted value with spaces on a line with a quote, and
// empty values beside quoted ones. qty is an int in bq-a and bq-b and a
// string in bq-plain, so a string in the merge: a quoted "010" of an int
// column is its int's text, 10, and a quoted "1.50" of a string column
// stays as written. bq-c is narrower than the scan, its quoted line
// parsed as wide as it. Spark types bq-alone.csv: an empty quoted value "" and
// a backslash not before a quote (\\, \b), which the client refuses, so
// it is read on its own. SEP is the separator.
var quotedBatchFiles = map[string]string{
	"bq-a.csv": "id,note,qty,day\n" +
		"1,\"a,b\",\"7\",\"2024-01-31\"\n" +
		"2,\"say \\\"hi\\\" SEP\",8,2024-02-01\n" +
		"3,\"  pad  \",,\"2024-02-02\"\n" +
		"4,\"é ü 中 🙂\",\"010\",\n" +
		"5,\"x\\\"\",11,2024-02-03\n" +
		"6,\"\\\"\",12,\"2024-02-04\"\n" +
		"7,  sp ,13,\"2024-02-05\"\n" +
		"15,plain,14,2024-02-06\n" +
		"16,\"1.50\",15,2024-02-07\n",
	"bq-b.csv":     "day,qty,id,note\n\"2024-03-01\",\"20\",8,\"q,\\\"r\\\",s\"\n,21,9,\n",
	"bq-c.csv":     "id,note\n17,\"c,d\"\n",
	"bq-plain.csv": "note,id,qty\nz,10,many\n,11,\n",
	"bq-alone.csv": "id,note\n12,\"\"\n13,\"back\\\\slash\"\n14,\"a\\bc\"\n",
}

// TestCSVBatchParsesQuotedValuesAsSparkDoes merges CSV files with quoted
// values in one positional scan, whose lines with a quote Spark's CSV
// parser reads (from_csv under the read's options), local and only on the
// cluster, with commas and tabs: the output must be the files read one by
// one by Spark's CSV reader, value for value (a quoted separator, escaped
// quotes, padding, text not in ASCII, empty values null), and a quoted file
// rewritten after planning fails the merge naming it.
func TestCSVBatchParsesQuotedValuesAsSparkDoes(t *testing.T) {
	t.Parallel()
	for _, sep := range []string{",", "\t"} {
		name := map[string]string{",": "commas", "\t": "tabs"}[sep]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			localAndCluster(t, func(t *testing.T, host, sdir string) {
				c := newClient(t)
				files := map[string]string{}
				var names []string
				for name, content := range quotedBatchFiles {
					content = strings.ReplaceAll(content, ",", sep)
					files[name] = strings.ReplaceAll(content, "SEP", sep)
					names = append(names, name)
				}
				sort.Strings(names)
				writeFiles(t, host, files, names...)
				var paths []string
				for _, name := range names {
					paths = append(paths, sdir+"/"+name)
				}
				job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, Verify: true, ReaderOptions: map[string]string{"sep": sep}}
				batched, single := mergeBothWays(t, c, job)
				// bq-a, bq-b, bq-c and bq-plain in one scan; bq-alone on
				// its own.
				if batched.Scans != 2 || !strings.Contains(batched.Planned.String(), "4 files read in 1 positional scan ") {
					t.Errorf("batched: %d scans, want 2 (4 files in a positional scan):\n%s", batched.Scans, batched.Planned)
				}
				cols, got := newOracle(single.out).sameAs(t, c, batched.out, nil, "", "")
				if len(got) != 17 {
					t.Errorf("%d rows, want 17", len(got))
				}
				note, qty := slices.Index(cols, "note"), slices.Index(cols, "qty")
				// id 7: unquoted, its spaces kept, on a line with a quote.
				for id, want := range map[string]string{"1": "a,b", "2": `say "hi" ` + sep, "3": "  pad  ", "4": "é ü 中 🙂", "5": `x"`, "6": `"`, "7": "  sp ", "8": `q,"r",s`, "16": "1.50", "17": "c,d"} {
					if row := rowWhere(t, cols, got, "id", id); row[note] != strings.ReplaceAll(want, ",", sep) {
						t.Errorf("note of id %s: %q, want %q", id, row[note], want)
					}
				}
				for id, want := range map[string]string{"1": "7", "4": "10", "8": "20", "10": "many"} {
					if row := rowWhere(t, cols, got, "id", id); row[qty] != want {
						t.Errorf("qty of id %s: %q, want %q", id, row[qty], want)
					}
				}
				for _, id := range []string{"9", "11"} {
					if row := rowWhere(t, cols, got, "id", id); row[note] != nil {
						t.Errorf("note of id %s: %q, want null", id, row[note])
					}
				}
				if row := rowWhere(t, cols, got, "id", "3"); row[qty] != nil {
					t.Errorf("qty of id 3: %q, want null (empty, beside quoted values)", row[qty])
				}

				// Same size and modification time, two columns swapped in
				// the header: only the header line read with the rows tells.
				job.Target.Path = filepath.Join(workDir(t), "out")
				planned, err := c.Plan(context.Background(), job)
				if err != nil {
					t.Fatal(err)
				}
				a := filepath.Join(host, "bq-a.csv")
				info, err := os.Stat(a)
				if err != nil {
					t.Fatal(err)
				}
				swapped := strings.Replace(files["bq-a.csv"], "id"+sep+"note", "note"+sep+"id", 1)
				if err := os.WriteFile(a, []byte(swapped), 0o666); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(a, info.ModTime(), info.ModTime()); err != nil {
					t.Fatal(err)
				}
				// The error is the header check's; its text past the file's
				// name is not asserted, for Spark 3.5 cuts the message of
				// the cause short ("(its heade...").
				_, err = c.MergePlanned(context.Background(), job, planned)
				wantChanged(t, "merge", err, sdir+"/bq-a.csv")
			})
		})
	}
}
