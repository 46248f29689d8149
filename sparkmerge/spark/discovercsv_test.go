package spark

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
)

func TestByteSizeReadsSparkSizes(t *testing.T) {
	for in, want := range map[string]int64{
		"128MB": 128 << 20, "4194304": 4 << 20, "4m": 4 << 20, "1g": 1 << 30, "512k": 512 << 10, "10b": 10, " 2KB ": 2 << 10,
	} {
		if got, ok := byteSize(in); !ok || got != want {
			t.Errorf("byteSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "1.5m", "99999999999p"} {
		if got, ok := byteSize(in); ok {
			t.Errorf("byteSize(%q) = %d, want refused", in, got)
		}
	}
}

// Only single CSV files with a header and options that typing among
// others leaves as they are may be typed together; their key sets apart
// reads of other options (enforceSchema only checks reads).
func TestCSVTogetherKey(t *testing.T) {
	csv := func(path string, options map[string]string) *Read {
		return &Read{Format: "csv", Paths: []string{path}, Options: options}
	}
	header := map[string]string{"header": "true", "inferSchema": "true"}
	if csvTogetherKey(csv("/d/a.csv", header)) == "" {
		t.Error("a plain CSV file is not typed together")
	}
	if csvTogetherKey(csv("/d/a.csv", header)) != csvTogetherKey(csv("/d/b.csv", withOption(header, "enforceSchema", "false"))) {
		t.Error("enforceSchema sets files apart")
	}
	// A file of a partitioned tree is typed by its own columns, without
	// basePath, as a file alone: among any others of its options.
	inTree := csv("/d/k=1/a.csv", header)
	inTree.partition = &partitionFile{tree: &partitionTree{given: "/d", root: "/d", columns: []string{"k"}}, values: []string{"1"}}
	if key := csvTogetherKey(inTree); key == "" || key != csvTogetherKey(csv("/e/b.csv", header)) {
		t.Errorf("a file of a tree: key %q, a flat file's %q", key, csvTogetherKey(csv("/e/b.csv", header)))
	}
	jsonInTree := &Read{Format: "json", Paths: []string{"/d/k=1/a.json"}, partition: inTree.partition}
	if key := jsonTogetherKey(jsonInTree); key == "" || key != jsonTogetherKey(&Read{Format: "json", Paths: []string{"/e/b.json"}}) {
		t.Errorf("a JSON file of a tree: key %q", key)
	}
	if csvTogetherKey(csv("/d/a.csv", header)) == csvTogetherKey(csv("/d/b.csv", withOption(header, "sep", ";"))) {
		t.Error("files of two separators share a key")
	}
	// Files read with multiLine are typed together by their records,
	// never among files typed by their lines.
	if records := csvTogetherKey(csv("/d/a.csv", withOption(header, "multiLine", "true"))); records == "" || records == csvTogetherKey(csv("/d/b.csv", header)) {
		t.Errorf("multiLine: key %q, a plain file's %q", records, csvTogetherKey(csv("/d/b.csv", header)))
	}
	for name, r := range map[string]*Read{
		"no header":  csv("/d/a.csv", map[string]string{"inferSchema": "true"}),
		"encoding":   csv("/d/a.csv", withOption(header, "encoding", "UTF-16")),
		"comment":    csv("/d/a.csv", withOption(header, "comment", "#")),
		"sampling":   csv("/d/a.csv", withOption(header, "samplingRatio", "0.5")),
		"lineSep":    csv("/d/a.csv", withOption(header, "lineSep", ";")),
		"a pattern":  csv("/d/*.csv", header),
		"json":       {Format: "json", Paths: []string{"/d/a.json"}},
		"two paths":  {Format: "csv", Paths: []string{"/d/a.csv", "/d/b.csv"}, Options: header},
		"a schema":   {Format: "csv", Paths: []string{"/d/a.csv"}, Options: header, UserSchema: "a INT"},
		"a table":    {Table: "t"},
		"user paths": {Format: "csv", Paths: []string{"/d/a.csv"}, Options: header, patterns: true},
	} {
		if key := csvTogetherKey(r); key != "" {
			t.Errorf("%s: typed together (key %q)", name, key)
		}
	}
}

// Spark names a file by its URI; a read names it as given or listed.
func TestMatchSparkPaths(t *testing.T) {
	names := map[string]string{
		"/tmp/x 1é.csv":         "file:/tmp/x%201é.csv",
		"/tmp/a.csv":            "file:///tmp/a.csv",
		"file:///tmp/b.csv":     "file:/tmp/b.csv",
		"s3a://b/k/a b.csv":     "s3a://b/k/a%20b.csv",
		"/tmp/100%25 off.csv":   "file:/tmp/100%2525%20off.csv",
		"s3a://b/k/a%20b.csv":   "s3a://b/k/a%2520b.csv",
		"/tmp/missing.csv":      "",
		"/tmp/c.csv":            "file:/tmp/c.csv",
		"/tmp/not-by-spark.csv": "file:/tmp/other.csv",
	}
	var reads []*Read
	var files []csvFileLines
	for given, spark := range names {
		reads = append(reads, &Read{Paths: []string{given}})
		if spark != "" {
			files = append(files, csvFileLines{path: spark, first: given})
		}
	}
	got := matchSparkPaths(reads, files)
	for _, r := range reads {
		f, ok := got[r]
		switch r.Paths[0] {
		case "/tmp/missing.csv", "/tmp/not-by-spark.csv":
			if ok {
				t.Errorf("%s matched %s", r.Paths[0], f.path)
			}
		default:
			if !ok || f.first != r.Paths[0] {
				t.Errorf("%s matched %q (%v)", r.Paths[0], f.path, ok)
			}
		}
	}
}

// Each line of the lanes has the file's values in its own lanes, as wide
// as its header, the lanes before them empty; the first line has every
// lane.
func TestLaneLineExpr(t *testing.T) {
	lanes := csvLanes{width: 6, tokenizer: map[string]string{"sep": ";"}, files: []csvLaneFile{
		{path: "file:/d/a.csv", header: "a;b", offset: 1, columns: 2},
		{path: "file:/d/b.csv", header: "x;y;z", offset: 3, columns: 3},
	}}
	line := lanes.laneLineExpr()
	for _, want := range []string{
		"concat(repeat(',', f.offset), CASE",
		"WHEN f.columns = 2 AND f.witnessed = false THEN concat(to_csv(from_csv(value, 'c0 STRING, c1 STRING', map('mode', 'PERMISSIVE', 'sep', ';'))",
		"WHEN f.columns = 3 AND f.witnessed = false THEN concat(to_csv(from_csv(value, 'c0 STRING, c1 STRING, c2 STRING'",
		"'quoteAll', 'true'",
		"')), ',1') END) AS value",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("line %s\nlacks %s", line, want)
		}
	}
	files := lanes.laneFileExpr()
	if want := "element_at(map('file:/d/a.csv', named_struct('header', 'a;b', 'offset', 1, 'columns', 2, 'witnessed', false), 'file:/d/b.csv', named_struct('header', 'x;y;z', 'offset', 3, 'columns', 3, 'witnessed', false)), " + sparkPathKeyExpr + ") AS f"; files != want {
		t.Errorf("files %s, want %s", files, want)
	}
	if got := lanes.laneWidthLine(); got != "SELECT repeat(',', 5) AS value" {
		t.Errorf("width line %s", got)
	}
	if got := lanes.laneInferenceOptions(); got["sep"] != "," || got["header"] != "false" || got["inferSchema"] != "true" {
		t.Errorf("inference options %v", got)
	}
}

// Spark types CSV files together in one text read, a parse per header and
// an inference over their lanes: each file gets its own lanes' types and
// its header's names. A file with a blank line that is not empty, one
// larger than Spark's split, one whose marker lane says its lines missed
// its lanes and every file of a failed inference are asked of Spark
// alone.
func TestTypeCSVTogether(t *testing.T) {
	for _, fails := range []bool{false, true} {
		t.Run(fmt.Sprintf("inference fails %v", fails), func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"a.csv": "id,day\n1,2024-01-01\n", "b.csv": "id,day\nx,2024\n", "c.csv": "id,at\n1,2\n", "tab.csv": "id,day\n\t\n", "big.csv": "id,day\n1,2024-01-01\n" + strings.Repeat("2,2024-01-02\n", 10)}
			c, f := newFakeClient()
			f.rows = map[string]bool{}
			writeFiles(t, dir, files)
			var sources []SourceSpec
			for _, name := range slices.Sorted(maps.Keys(files)) {
				p := filepath.Join(dir, name)
				sources = append(sources, SourceSpec{Paths: []string{p}})
				header, _, _ := strings.Cut(files[name], "\n")
				blankish := int64(strings.Count(files[name], "\t"))
				f.csvLines = append(f.csvLines, csvFileLines{path: "file:" + p, first: header, lines: int64(strings.Count(files[name], "\n")) - blankish, blankish: blankish})
				f.schemas["readSchema "+p] = "id STRING, " + strings.TrimPrefix(header, "id,") + " STRING"
				f.rows[p] = true // a file Spark types alone, all strings, is asked for a row
			}
			f.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "40b"}
			f.csvHeaders = map[string]string{"id,day": "id STRING, day STRING", "id,at": "id STRING, at STRING"}
			// Lane 0, then a's, b's and c's, each with its marker: b's
			// lines missed its lanes.
			asked := f.answerLanes("_c0 STRING, _c1 INT, _c2 DATE, _c3 INT, _c4 STRING, _c5 TIMESTAMP, _c6 STRING, _c7 INT, _c8 BIGINT, _c9 INT",
				failWith(fails, "[SOME_ERROR] lanes failed"))
			planned, err := c.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, SparkInference: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range planned.Reads {
				got[filepath.Base(r.Name)] = r.Schema.String()
			}
			want := map[string]string{"a.csv": "id int, day date", "b.csv": "id string, day string", "c.csv": "id int, at bigint",
				"big.csv": "id string, day string", "tab.csv": "id string, day string"}
			wantTogether, wantAlone := 2, []string{"b.csv", "big.csv", "tab.csv"}
			if fails {
				want["a.csv"], want["b.csv"], want["c.csv"] = "id string, day string", "id string, day string", "id string, at string"
				wantTogether, wantAlone = 0, []string{"a.csv", "b.csv", "big.csv", "c.csv", "tab.csv"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schemas (-want +got):\n%s", diff)
			}
			// Local files: their lines read here, two headers, one
			// inference.
			if planned.TypedTogether != wantTogether || planned.TogetherRequests != 3 {
				t.Errorf("%d typed together in %d requests, want %d in 3", planned.TypedTogether, planned.TogetherRequests, wantTogether)
			}
			if diff := cmp.Diff(wantAlone, f.askedAlone()); diff != "" {
				t.Errorf("files asked alone (-want +got):\n%s", diff)
			}
			if asked.width != 10 || len(asked.files) != 3 || asked.files[2].offset != 7 || asked.files[2].header != "id,at" || !asked.files[2].data {
				t.Errorf("lanes %+v", *asked)
			}
		})
	}
}

// A local file's lines as Spark's text reader splits them: at CR, LF or
// CRLF, after a byte-order mark; the header is the first line with more
// than spaces and control characters.
func TestLocalCSVFileLines(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]csvFileLines{
		"a,b\n1,2\n":             {first: "a,b", lines: 2},
		"\ufeffa,b\r\n1,2\r\n":   {first: "a,b", lines: 2},
		"\n\n a,b\r1,2\r\r\n3,4": {first: " a,b", lines: 3},
		"a,b\n \n\t\n\n1,2\n":    {first: "a,b", lines: 2, blankish: 2},
		"":                       {},
		"a,\"b\nc\"\n":           {first: "a,\"b", lines: 2},
		"\u00a0x,y\n\x7f\n":      {first: "\u00a0x,y", lines: 2},
	} {
		p := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
		got, ok := localCSVFileLines(p)
		if !ok || got != want {
			t.Errorf("%q: %+v %v, want %+v", content, got, ok, want)
		}
	}
	p := filepath.Join(dir, "latin1.csv")
	if err := os.WriteFile(p, []byte("a,b\n\xe9,1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, ok := localCSVFileLines(p); ok {
		t.Error("a file that is not UTF-8 was read")
	}
}

// CSV files past Spark's split that are asked of Spark alone (over
// maxWitnessedFile, or of options the witnesses do not know) are not read
// for their lines first: on lake-csv (20 files of 50 MB only on the
// server, all asked alone) that text read of the whole corpus was 12.7 s
// of discovery's 32.7 s of task CPU. The files under the split are still
// typed together, and files past it as before.
func TestCSVFilesAskedAloneAreNotReadForLines(t *testing.T) {
	big := rowsOf("id,day\n", maxWitnessedFile/12+1, func(i int) string { return fmt.Sprintf("%d,2024-01-%02d\n", i%1000, 1+i%28) })
	if len(big) <= maxWitnessedFile {
		t.Fatalf("a file of %d bytes: not past maxWitnessedFile", len(big))
	}
	const dir = "/sparkmerge-server-only/lake"
	client, fake := newFakeClient()
	fake.nowMillis = 10_000
	fake.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "40b", "spark.sql.legacy.timeParserPolicy": "CORRECTED"}
	files := map[string]string{"a.csv": "id,day\n1,2024-01-01\n", "b.csv": "id,day\n2,2024-01-02\n", "big1.csv": big, "big2.csv": big,
		"formats.csv": "id,day\n" + strings.Repeat("3,2024-01-03\n", 4)}
	var sources []SourceSpec
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fake.files["file:"+dir+"/"+name] = fakeFile{content: files[name], mtimeMillis: 1000}
		spec := SourceSpec{Paths: []string{dir + "/" + name}}
		if name == "formats.csv" {
			spec.Options = map[string]string{"dateFormat": "yyyy-MM-dd"} // not witnessed: past the split, alone
		}
		sources = append(sources, spec)
		if strings.HasPrefix(name, "big") || name == "formats.csv" {
			fake.schemas["readSchema "+dir+"/"+name] = "id int, day date"
		}
	}
	fake.csvLines = []csvFileLines{{path: "file:" + dir + "/a.csv", first: "id,day", lines: 2}, {path: "file:" + dir + "/b.csv", first: "id,day", lines: 2}}
	fake.csvHeaders = map[string]string{"id,day": "id STRING, day STRING"}
	fake.laneTypes = func(l csvLanes) (sparkmerge.Schema, error) {
		if len(l.files) != 2 {
			return sparkmerge.Schema{}, fmt.Errorf("lanes of %d files, want a.csv and b.csv", len(l.files))
		}
		return sparkmerge.ParseSchema("_c0 STRING, _c1 INT, _c2 DATE, _c3 INT, _c4 INT, _c5 DATE, _c6 INT")
	}
	planned, err := client.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, SparkInference: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range planned.Reads {
		if r.Schema.String() != "id int, day date" {
			t.Errorf("%s: %s, want id int, day date", r.Name, r.Schema)
		}
	}
	var lines []string
	for _, call := range fake.recorded() {
		if p, ok := strings.CutPrefix(call, "csvFileLines "); ok {
			lines = append(lines, p)
		}
	}
	alone := fake.askedAlone()
	if diff := cmp.Diff([]string{dir + "/a.csv," + dir + "/b.csv"}, lines); diff != "" {
		t.Errorf("files read for their lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"big1.csv", "big2.csv", "formats.csv"}, alone); diff != "" {
		t.Errorf("files asked alone (-want +got):\n%s", diff)
	}
	if planned.TypedTogether != 2 || planned.TogetherRequests != 3 {
		t.Errorf("%d typed together in %d requests, want 2 in 3 (lines, header, lanes)", planned.TypedTogether, planned.TogetherRequests)
	}
}

// Files read with multiLine are typed together too, from their records:
// each header's files are read by Spark's CSV reader under the header's
// names (strings), with multiLine, the header checked, PERMISSIVE, and
// their records laid in their lanes; each file gets its own lanes' types.
// A file of any size is among them (Spark reads such a file whole, in
// one partition), and one with a blank line that is not empty (a record
// to Spark's parser, alone or among others). A file whose header Spark
// renames (an empty or repeated name; not one named as it renames them)
// is asked alone, as is every file
// of a failed inference (a first record that is not its header line's
// names fails the read).
func TestTypeCSVTogetherByRecords(t *testing.T) {
	for _, fails := range []bool{false, true} {
		t.Run(fmt.Sprintf("inference fails %v", fails), func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"a.csv":       "id,note\n1,\"two\nlines\"\n",
				"b.csv":       "id,note\n2024-01-01,x\n",
				"c.csv":       "id,at\n1,2\n \n",
				"big.csv":     "id,note\n" + strings.Repeat("2,\"y\nz\"\n", 10),
				"renamed.csv": "id,,x\n1,2,3\n",
				// Names as Spark renames repeated ones, but as written.
				"x.csv": "x0,x1\n1,2\n",
			}
			c, f := newFakeClient()
			f.rows = map[string]bool{}
			writeFiles(t, dir, files)
			var sources []SourceSpec
			for _, name := range slices.Sorted(maps.Keys(files)) {
				p := filepath.Join(dir, name)
				sources = append(sources, SourceSpec{Paths: []string{p}})
				f.schemas["readSchema "+p] = "id STRING, note STRING"
				f.rows[p] = true
			}
			f.schemas["readSchema "+filepath.Join(dir, "c.csv")] = "id STRING, at STRING"
			f.schemas["readSchema "+filepath.Join(dir, "renamed.csv")] = "id STRING, _c1 STRING, x STRING"
			f.schemas["readSchema "+filepath.Join(dir, "x.csv")] = "x0 STRING, x1 STRING"
			// A split smaller than big.csv: read whole all the same.
			f.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "40b"}
			f.csvHeaders = map[string]string{"id,note": "id STRING, note STRING", "id,at": "id STRING, at STRING", "id,,x": "id STRING, _c1 STRING, x STRING", "x0,x1": "x0 STRING, x1 STRING"}
			// Lane 0, then a's, b's, big's, c's and x's, each with its
			// marker.
			asked := f.answerLanes("_c0 STRING, _c1 INT, _c2 STRING, _c3 INT, _c4 DATE, _c5 STRING, _c6 INT, _c7 INT, _c8 STRING, _c9 INT, _c10 INT, _c11 INT, _c12 INT, _c13 INT, _c14 BIGINT, _c15 INT",
				failWith(fails, "[_LEGACY_ERROR_TEMP_3241] CSV header does not conform to the schema"))
			planned, err := c.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, SparkInference: true, ReaderOptions: map[string]string{"multiLine": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range planned.Reads {
				got[filepath.Base(r.Name)] = r.Schema.String()
			}
			want := map[string]string{"a.csv": "id int, note string", "b.csv": "id date, note string", "big.csv": "id int, note string", "c.csv": "id int, at int",
				"renamed.csv": "id string, _c1 string, x string", "x.csv": "x0 int, x1 bigint"}
			wantTogether, wantAlone := 5, []string{"renamed.csv"}
			if fails {
				want = map[string]string{"a.csv": "id string, note string", "b.csv": "id string, note string", "big.csv": "id string, note string", "c.csv": "id string, at string",
					"renamed.csv": "id string, _c1 string, x string", "x.csv": "x0 string, x1 string"}
				wantTogether, wantAlone = 0, []string{"a.csv", "b.csv", "big.csv", "c.csv", "renamed.csv", "x.csv"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schemas (-want +got):\n%s", diff)
			}
			// Four headers parsed, one inference.
			if planned.TypedTogether != wantTogether || planned.TogetherRequests != 5 {
				t.Errorf("%d typed together in %d requests, want %d in 5", planned.TypedTogether, planned.TogetherRequests, wantTogether)
			}
			if diff := cmp.Diff(wantAlone, f.askedAlone()); diff != "" {
				t.Errorf("files asked alone (-want +got):\n%s", diff)
			}
			checkRecordLanes(t, *asked)
		})
	}
}

// answerLanes has the fake answer typeCSVTogether's lane inference with
// schema, or fail with err when it is not nil, and returns where it keeps
// the lanes last asked for.
func (f *fakeServer) answerLanes(schema string, err error) *csvLanes {
	asked := new(csvLanes)
	f.laneTypes = func(l csvLanes) (sparkmerge.Schema, error) {
		*asked = l
		if err != nil {
			return sparkmerge.Schema{}, err
		}
		return sparkmerge.ParseSchema(schema)
	}
	return asked
}

// failWith is an error of message when fails, else nil.
func failWith(fails bool, message string) error {
	if !fails {
		return nil
	}
	return errors.New(message)
}

// checkRecordLanes checks the lanes TestTypeCSVTogetherByRecords's
// inference was asked for: of records, a read per header, with the
// options that read records as Spark's inference alone tokenizes them.
func checkRecordLanes(t *testing.T, asked csvLanes) {
	t.Helper()
	if !asked.records || asked.width != 16 || len(asked.files) != 5 {
		t.Fatalf("lanes %+v", asked)
	}
	if f := asked.files[3]; f.offset != 10 || !slices.Equal(f.names, []string{"id", "at"}) || !f.data || f.witnessed {
		t.Errorf("c.csv's lanes %+v", f)
	}
	var reads []string
	for _, r := range asked.recordReads() {
		var names []string
		for _, p := range r.paths {
			names = append(names, filepath.Base(p))
		}
		reads = append(reads, r.schema+": "+strings.Join(names, ","))
	}
	if diff := cmp.Diff([]string{"id string, note string: a.csv,b.csv,big.csv", "id string, at string: c.csv", "x0 string, x1 string: x.csv"}, reads); diff != "" {
		t.Errorf("record reads (-want +got):\n%s", diff)
	}
	options := asked.recordOptions()
	for k, v := range map[string]string{"multiLine": "true", "header": "true", "enforceSchema": "false", "mode": "PERMISSIVE"} {
		if options[k] != v {
			t.Errorf("records read with %s=%q, want %q (%v)", k, options[k], v, options)
		}
	}
	if line := asked.recordLineExpr(); !strings.HasPrefix(line, "concat(repeat(',', f.offset), to_csv(record, map(") || !strings.Contains(line, "'quoteAll', 'true'") || !strings.HasSuffix(line, "), ',1') AS value") {
		t.Errorf("record line %s", line)
	}
}

// A CSV file only the server sees, typed with others, whose names look
// as Spark renames a repeated name (col1 and col3 at places 1 and 3) is
// checked for repeated names by its header line, which typing it learnt,
// when that line splits at the separator into its names: Spark is not
// asked for its header again (a read of its first row, and for a
// multiLine file an inference). A header line with quotes is still asked.
func TestCSVTypedTogetherHeaderNotAskedAgain(t *testing.T) {
	const dir = "/sparkmerge-server-only/drop"
	client, fake := newFakeClient()
	fake.nowMillis = 10_000
	fake.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "4MB"}
	files := map[string]string{"a.csv": "id,col1,x,col3\n1,2,3,4\n", "b.csv": "\"id\",\"col1\",\"x\",\"col3\"\n1,2,3,4\n"}
	var sources []SourceSpec
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fake.files["file:"+dir+"/"+name] = fakeFile{content: files[name], mtimeMillis: 1000}
		sources = append(sources, SourceSpec{Paths: []string{dir + "/" + name}})
		header, _, _ := strings.Cut(files[name], "\n")
		fake.csvLines = append(fake.csvLines, csvFileLines{path: "file:" + dir + "/" + name, first: header, lines: 2})
	}
	fake.csvHeaders = map[string]string{"id,col1,x,col3": "id STRING, col1 STRING, x STRING, col3 STRING", `"id","col1","x","col3"`: "id STRING, col1 STRING, x STRING, col3 STRING"}
	fake.laneTypes = func(l csvLanes) (sparkmerge.Schema, error) {
		return sparkmerge.ParseSchema("_c0 STRING, _c1 INT, _c2 INT, _c3 INT, _c4 INT, _c5 INT, _c6 INT, _c7 INT, _c8 INT, _c9 INT, _c10 INT")
	}
	planned, err := client.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, SparkInference: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if planned.TypedTogether != 2 {
		t.Errorf("%d files typed together, want 2", planned.TypedTogether)
	}
	var asked []string
	for _, call := range fake.recorded() {
		if p, ok := strings.CutPrefix(call, "csvHeader "); ok && strings.HasPrefix(p, dir) {
			asked = append(asked, path.Base(p))
		}
	}
	if diff := cmp.Diff([]string{"b.csv"}, asked); diff != "" {
		t.Errorf("headers asked of Spark (-want +got):\n%s", diff)
	}
}

// The text read that learns the header lines of CSV files Spark types
// together reads every line of each file: it also counts the lines that
// are not UTF-8, so that such a file is refused (never typed) and every
// other one needs no second read for the check (Read.validUTF8); a local
// file the client reads whole here is found UTF-8 so too.
func TestFileLinesCheckUTF8(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"local.csv": "id\n1\n"})
	c, f := newFakeClient()
	f.csvLines = []csvFileLines{
		{path: "s3a://b/in/good.csv", first: "id", lines: 2},
		{path: "s3a://b/in/latin.csv", first: "id", lines: 3, notUTF8: 2},
	}
	good := &Read{Name: "s3a://b/in/good.csv", Format: "csv", Paths: []string{"s3a://b/in/good.csv"}, listed: true}
	latin := &Read{Name: "s3a://b/in/latin.csv", Format: "csv", Paths: []string{"s3a://b/in/latin.csv"}, listed: true}
	local := &Read{Name: "local.csv", Format: "csv", Paths: []string{filepath.Join(dir, "local.csv")}}
	tg := &together{c: c, parallelism: 1}
	linesOf, err := tg.fileLines(context.Background(), []*Read{good, latin, local})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := linesOf[latin]; ok || latin.validUTF8 || latin.encodingProblem != "not UTF-8: Spark found 2 lines of a file holding bytes that are not valid UTF-8 (read where it lives)" {
		t.Errorf("latin.csv: lines %v, valid %v, problem %q; want it refused", ok, latin.validUTF8, latin.encodingProblem)
	}
	for _, r := range []*Read{good, local} {
		if _, ok := linesOf[r]; !ok || !r.validUTF8 || r.encodingProblem != "" {
			t.Errorf("%s: lines %v, valid %v, problem %q; want its lines, found UTF-8", r.Name, ok, r.validUTF8, r.encodingProblem)
		}
	}
	if diff := cmp.Diff([]string{"csvFileLines s3a://b/in/good.csv,s3a://b/in/latin.csv"}, f.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
