package spark

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// defaultParquetConf is Spark 4.0's defaults.
var defaultParquetConf = infer.ParquetConf{Int96AsTimestamp: true, InferNTZ: true}

// fixture is a Parquet file of testdata/parquet (gen.py), shared with
// package infer's tests and the integration tests.
func fixture(name string) string { return filepath.Join("testdata", "parquet", name) }

func TestLocalCSVFileOptionsAndFiles(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csv, []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	semi := filepath.Join(dir, "semi.csv")
	if err := os.WriteFile(semi, []byte("a;b\n1;x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "a.csv.gz")
	if err := os.WriteFile(gz, []byte("not really gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte("a\n"+strings.Repeat("1\n", infer.MaxFileBytes/2)), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := defaultReaderOptions("csv")
	tests := []struct {
		name    string
		path    string
		options map[string]string
		ok      bool
	}{
		{"defaults", csv, defaults, true},
		{"file: URI", "file://" + csv, defaults, true},
		{"semicolon", semi, withOption(defaults, "sep", ";"), true},
		{"mode is irrelevant", csv, withOption(defaults, "mode", "PERMISSIVE"), true},
		{"other option", csv, withOption(defaults, "nullValue", "NA"), false},
		{"odd separator", csv, withOption(defaults, "sep", "::"), false},
		{"no header", csv, withOption(defaults, "header", "false"), false},
		{"no inference", csv, withOption(defaults, "inferSchema", "false"), false},
		{"compressed", gz, defaults, false},
		{"too big", big, defaults, false},
		{"remote", "s3a://bucket/a.csv", defaults, false},
		{"missing", filepath.Join(dir, "missing.csv"), defaults, false},
		{"glob", filepath.Join(dir, "*.csv"), defaults, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := localCSVFile(infer.Spark40, tt.path, nil, tt.options)
			if ok := err == nil; ok != tt.ok {
				t.Errorf("inferred locally = %v (%v), want %v", ok, err, tt.ok)
			}
		})
	}
}

// A remote file's fetched contents are typed like the local file of the
// same name and bytes, and refused where its name or bytes would be.
func TestFetchedFileTypedLikeLocal(t *testing.T) {
	dir := t.TempDir()
	content := []byte("id,note\n1,x\n2.5,y\n")
	local := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(local, content, 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := defaultReaderOptions("csv")
	want, err := localCSVFile(infer.Spark40, local, nil, defaults)
	if err != nil {
		t.Fatal(err)
	}
	got, err := localCSVFile(infer.Spark40, "s3a://bucket/a.csv", content, defaults)
	if err != nil || got.Schema.String() != want.Schema.String() {
		t.Errorf("fetched: %v (%v), local: %v", got.Schema, err, want.Schema)
	}
	for name, tc := range map[string]struct {
		path    string
		content []byte
	}{
		"compressed name": {"s3a://bucket/a.csv.gz", content},
		"glob characters": {"s3a://bucket/a[1].csv", content}, // as a local file of that name
		"not UTF-8":       {"s3a://bucket/a.csv", []byte("id\n\xff\n")},
	} {
		if _, err := localCSVFile(infer.Spark40, tc.path, tc.content, defaults); err == nil {
			t.Errorf("%s: typed, want refused", name)
		}
	}
	json, err := localJSONFile(infer.Spark40, "s3a://bucket/a.json", []byte("{\"id\":1}\n"), nil)
	if err != nil || json.Raw.String() == "" {
		t.Errorf("fetched JSON: %v (%v)", json.Raw, err)
	}
	if _, err := localJSONFile(infer.Spark40, "s3a://bucket/a.json", []byte("{\"id\":\"\xff\"}\n"), nil); err == nil {
		t.Error("fetched JSON that is not UTF-8 typed, want refused (Spark reads such bytes as U+FFFD)")
	}
}

func TestInferLocallySplitsReads(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.csv")
	quoted := filepath.Join(dir, "quoted.csv")
	if err := os.WriteFile(plain, []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(quoted, []byte("a,b\n1,\"x\"\"y\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sources, err := resolveSources([]SourceSpec{{Paths: []string{plain}}, {Paths: []string{quoted}}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	reads := []*Read{newRead(sources[0]), newRead(sources[1])}
	local, remote := inferLocally(reads, "4.0.1", footerConf{})
	if len(local) != 1 || local[0].Paths[0] != plain || len(remote) != 1 || remote[0].Paths[0] != quoted {
		t.Fatalf("local %v, remote %v: want plain.csv local and quoted.csv remote", local, remote)
	}
	r := local[0]
	if !r.InferredLocally || r.Schema.String() != "a int, b string" {
		t.Errorf("local read: inferred %v, schema %s", r.InferredLocally, r.Schema)
	}
	// Spark checks each file's header against the names inferred here.
	if r.Options["enforceSchema"] != "false" {
		t.Errorf("options %v: want enforceSchema=false", r.Options)
	}
	if remote[0].InferredLocally || remote[0].Options["enforceSchema"] != "" {
		t.Errorf("remote read changed: %+v", remote[0])
	}
}

// The client reads at most a budget of bytes; later files go to Spark.
func TestInferLocallyBudget(t *testing.T) {
	dir := t.TempDir()
	var reads []*Read
	for _, name := range []string{"a.csv", "b.csv", "c.csv"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("id\n1\n"), 0o644); err != nil { // 5 bytes
			t.Fatal(err)
		}
		sources, err := resolveSources([]SourceSpec{{Paths: []string{p}}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
	}
	local, remote := inferLocallyWithin(reads, infer.Spark40, footerConf{}, 12)
	if len(local) != 2 || len(remote) != 1 || filepath.Base(remote[0].Paths[0]) != "c.csv" {
		t.Fatalf("local %d, remote %d (%v): want a.csv and b.csv local within 12 bytes, c.csv to Spark", len(local), len(remote), remote)
	}
}

func TestGroupLocalParquet(t *testing.T) {
	var reads []*Read
	for _, name := range []string{"day-1.parquet", "day-3.parquet", "day-2.parquet", "day-4.parquet", "int96.parquet"} {
		sources, err := resolveSources([]SourceSpec{{Paths: []string{fixture(name)}}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
	}
	conf := defaultParquetConf
	local, remote := inferLocally(reads, "4.0.1", footerConf{parquet: &conf})
	if len(remote) != 0 || len(local) != len(reads) {
		t.Fatalf("local %d, remote %v", len(local), remote)
	}
	var got []string
	for _, g := range groupExact(local, sparkmerge.Options{}) {
		var base []string
		for _, p := range g.Paths {
			base = append(base, filepath.Base(p))
		}
		got = append(got, strings.Join(base, "+")+": "+g.Schema.String())
		if !g.InferredLocally {
			t.Errorf("%v: not marked inferred locally", base)
		}
	}
	want := []string{
		// day-2 adds y; day-3's id is an int, like int96's; day-4
		// spells ID.
		"day-1.parquet+day-2.parquet: id bigint, x double, y string",
		"day-3.parquet+int96.parquet: id int, x double, at timestamp",
		"day-4.parquet: ID bigint, x double",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// What inference learns stays on the read when Spark must type the file:
// why a file is not UTF-8 (Plan refuses it), and a CSV file's short
// numbers; and a server whose rules the client lacks types every file.
func TestInferLocallyRefusals(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"latin1.csv":  "a\nZ\xfcrich\n",
		"latin1.json": "{\"a\":\"Z\xfcrich\"}\n",
		"bom.csv":     "\ufeffa\n1\n",
		"quoted.csv":  "a,b\n\"1\"\"\",2\n",
		"long.csv":    "a,b\n\"1\"\"\",12345678901234567\n",
		"empty.json":  "{\"e\":{},\"a\":[{}]}\n",
		"plain.csv":   "a\n1\n",
	}
	var reads []*Read
	byName := map[string]*Read{}
	for _, name := range sortedKeys(files) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		sources, err := resolveSources([]SourceSpec{{Paths: []string{p}}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		r := newRead(sources[0])
		reads = append(reads, r)
		byName[name] = r
	}
	if local, remote := inferLocally(reads, "4.4.0", footerConf{}); len(local) != 0 || len(remote) != len(reads) {
		t.Fatalf("Spark 4.4: %d inferred on the client, want none", len(local))
	}
	local, _ := inferLocally(reads, "4.0.1", footerConf{})
	if len(local) != 1 || local[0] != byName["plain.csv"] {
		t.Fatalf("inferred %v, want plain.csv alone", local)
	}
	for name, r := range byName {
		if strings.HasPrefix(name, "latin1") {
			if !strings.HasPrefix(r.encodingProblem, "not UTF-8: the byte at offset ") || !strings.HasSuffix(r.encodingProblem, " (0xfc) is not valid UTF-8") {
				t.Errorf("%s: encoding problem %q", name, r.encodingProblem)
			}
		} else if r.encodingProblem != "" {
			t.Errorf("%s: encoding problem %q", name, r.encodingProblem)
		}
		if name != "plain.csv" && (r.InferredLocally || len(r.Schema.Fields) > 0 || r.raw.Kind != 0 || r.Options["enforceSchema"] != "") {
			t.Errorf("%s: left to Spark but changed: %+v", name, r)
		}
	}
	// The file was read: its numbers are short, whoever types it.
	if !byName["quoted.csv"].shortNumbers || byName["long.csv"].shortNumbers || byName["latin1.csv"].shortNumbers || byName["bom.csv"].shortNumbers {
		t.Errorf("short numbers: quoted %v, long %v, latin1 %v, bom %v", byName["quoted.csv"].shortNumbers, byName["long.csv"].shortNumbers, byName["latin1.csv"].shortNumbers, byName["bom.csv"].shortNumbers)
	}
	// A JSON file whose columns all vanish keeps the facts of its records.
	if e := byName["empty.json"]; !e.reprinted["a"] || !e.reprinted["e"] || !e.shortNumbers {
		t.Errorf("empty.json: reprinted %v, short %v", e.reprinted, e.shortNumbers)
	}
}

// A CSV file whose types hold only if Spark reads it in one partition (a
// year after a date: a timestamp there, across two partitions a string)
// is typed on the client only when the session's split cannot cut it;
// past a smaller split, or when the server does not say its split, Spark
// types it. Other files are typed on the client and nothing is asked.
func TestSplitSensitiveCSVFilesFollowTheSessionsSplit(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"years.csv": "id,day\n1,2024-01-31\n2,2020\n",
		"dates.csv": "id,day\n1,2024-01-31\n2,2024-02-01\n",
	}
	var sources []SourceSpec
	for _, name := range []string{"dates.csv", "years.csv"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, SourceSpec{Paths: []string{p}})
	}
	for _, tt := range []struct {
		name     string
		settings map[string]string
		local    map[string]bool
	}{
		{"default split", map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "4194304"}, map[string]bool{"dates.csv": true, "years.csv": true}},
		{"a split of 20 bytes", map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "20b"}, map[string]bool{"dates.csv": true, "years.csv": false}},
		{"no split said", map[string]string{}, map[string]bool{"dates.csv": true, "years.csv": false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newFakeClient()
			f.settings = tt.settings
			f.schemas["readSchema "+filepath.Join(dir, "years.csv")] = "id int, day string"
			planned, err := c.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, InferEachFileAlone: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, r := range planned.Reads {
				got[filepath.Base(r.Name)] = r.InferredLocally
				if r.InferredLocally && filepath.Base(r.Name) == "years.csv" && r.Schema.String() != "id int, day timestamp" {
					t.Errorf("years.csv typed %s on the client, want id int, day timestamp", r.Schema)
				}
			}
			if diff := cmp.Diff(tt.local, got); diff != "" {
				t.Errorf("typed on the client (-want +got):\n%s", diff)
			}
		})
	}
}

// A plan asks the server for the session's split once, however many of
// its stages need it: the CSV files the client typed whose types the
// split may change (keepUnsplit), then the CSV files Spark types
// together (typeCSVTogether), here the same files, left to Spark by the
// first.
func TestPlanAsksTheSplitOnce(t *testing.T) {
	dir := t.TempDir()
	c, f := newFakeClient()
	f.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "20b"}
	var sources []SourceSpec
	for _, name := range []string{"years1.csv", "years2.csv"} {
		p := filepath.Join(dir, name)
		content := "id,day\n1,2024-01-31\n2,2020\n"
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, SourceSpec{Paths: []string{p}})
		f.csvLines = append(f.csvLines, csvFileLines{path: "file:" + p, first: "id,day", lines: 3})
		f.schemas["readSchema "+p] = "id int, day string"
	}
	planned, err := c.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range planned.Reads {
		if r.InferredLocally || r.Schema.String() != "id int, day string" {
			t.Errorf("%s: typed on the client %v, schema %s; want Spark's id int, day string", r.Name, r.InferredLocally, r.Schema)
		}
	}
	var asked []string
	for _, call := range f.recorded() {
		if strings.Contains(call, "spark.sql.files.maxPartitionBytes") {
			asked = append(asked, call)
		}
	}
	if len(asked) != 1 {
		t.Errorf("the split asked %d times, want once: %q", len(asked), asked)
	}
}

// A file of a plain extension compressed with gzip, local or a fetched
// copy, is typed from its text, every member of it, as the plain file
// is; past maxGzipText, or not gzip at all, Spark types it.
func TestGzipFilesTypedFromTheirText(t *testing.T) {
	rules, ok := infer.RulesFor("4.0.1")
	if !ok {
		t.Fatal("no rules for 4.0.1")
	}
	dir := t.TempDir()
	csvOptions := map[string]string{"header": "true", "inferSchema": "true"}
	gz := func(parts ...string) []byte {
		var b bytes.Buffer
		for _, p := range parts {
			zw := gzip.NewWriter(&b)
			zw.Write([]byte(p))
			zw.Close()
		}
		return b.Bytes()
	}
	write := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := "id,amount,day\n1,2,2024-01-02\n2,2.5,2024-01-03\n"
	plainCSV, err := localCSVFile(rules, write("a.csv", []byte(text)), nil, csvOptions)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := localCSVFile(rules, write("a.csv.gz", gz(text[:30], text[30:])), nil, csvOptions)
	if err != nil {
		t.Fatal(err)
	}
	if zipped.Schema.String() != plainCSV.Schema.String() || zipped.Header != plainCSV.Header {
		t.Errorf("gzip file typed %s (header %q), plain %s (header %q)", zipped.Schema, zipped.Header, plainCSV.Schema, plainCSV.Header)
	}
	lines := `{"a":1,"b":{"c":"x"}}` + "\n" + `{"a":1.5}` + "\n"
	plainJSON, err := localJSONFile(rules, write("b.json", []byte(lines)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	zippedJSON, err := localJSONFile(rules, write("b.jsonl.gz", gz(lines)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !zippedJSON.Raw.Equal(plainJSON.Raw) {
		t.Errorf("gzip JSON typed %s, plain %s", zippedJSON.Raw, plainJSON.Raw)
	}
	var unsupported *infer.Unsupported
	big := "v\n" + strings.Repeat("1234567\n", maxGzipText/8+1)
	for name, content := range map[string][]byte{
		"big.csv.gz":  gz(big),
		"fake.csv.gz": []byte(text),
	} {
		if _, err := localCSVFile(rules, write(name, content), nil, csvOptions); !errors.As(err, &unsupported) {
			t.Errorf("%s: %v, want an *infer.Unsupported (Spark types it)", name, err)
		}
	}
	for _, name := range []string{"c.csv.bz2", "c.csv.zst", "c.gz"} {
		if _, err := localCSVFile(rules, write(name, gz(text)), nil, csvOptions); !errors.Is(err, errNotPlainLocal) {
			t.Errorf("%s: %v, want errNotPlainLocal", name, err)
		}
	}
	if fetched, err := localCSVFile(rules, "s3a://b/a.csv.gz", gz(text), csvOptions); err != nil || fetched.Schema.String() != plainCSV.Schema.String() {
		t.Errorf("a fetched gzip copy typed %s (%v), plain %s", fetched.Schema, err, plainCSV.Schema)
	}
	if got := splitSensitiveSize(infer.CSVFile{SplitSensitive: true}, filepath.Join(dir, "a.csv.gz"), nil); got != 0 {
		t.Errorf("a gzip file's split-sensitive size %d, want 0: Spark never splits it", got)
	}
}
