package spark

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInferFormat(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"a.csv", "csv"},
		{"a.tsv", "csv"},
		{"a.json", "json"},
		{"a.jsonl", "json"},
		{"a.ndjson", "json"},
		{"a.parquet", "parquet"},
		{"a.orc", "orc"},
		// Impala's names, and pyarrow users' short ones.
		{"abc_data.0.parq", "parquet"},
		{"a.pq", "parquet"},
		{"a.avro", "avro"},
		{"a.txt", "text"},
		{"/data/2024/a.csv", "csv"},
		{"s3a://bucket/dir/events.json", "json"},
		{"file:///tmp/x.orc", "orc"},
		// Compression suffixes are looked through.
		{"a.csv.gz", "csv"},
		{"a.json.bz2", "json"},
		{"a.csv.zst", "csv"},
		{"a.jsonl.xz", "json"},
		{"a.csv.lz4", "csv"},
		{"a.txt.deflate", "text"},
		{"part-0000.snappy.parquet", "parquet"},
		{"part-0000.csv.snappy", "csv"},
		// Case does not matter.
		{"A.CSV", "csv"},
		{"Events.Json.GZ", "json"},
		{"DATA.PARQUET", "parquet"},
		// Directories, with or without trailing slash.
		{"events.parquet/", "parquet"},
		{"events.parquet//", "parquet"},
		{"/data/table.orc/", "orc"},
		{"data/", ""},
		{"data", ""},
		// Unknown.
		{"a.xlsx", ""},
		{"a.gz", ""},
		{"a", ""},
		{"", ""},
		{"a.csv.tar", ""},
	}
	for _, tt := range tests {
		if got := InferFormat(tt.path); got != tt.want {
			t.Errorf("InferFormat(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestIsGlob pins the one set of glob characters every path check uses:
// Hadoop's wildcards, class, alternation and escape; a lone ] or } is
// literal.
func TestIsGlob(t *testing.T) {
	for p, want := range map[string]bool{
		"/data/a.csv":          false,
		"s3a://b/x/part-0.csv": false,
		"file:/data/a]b}.csv":  false,
		"/data/*.csv":          true,
		"/data/a?.csv":         true,
		"/data/a[12].csv":      true,
		"/data/{a,b}.csv":      true,
		`/data/a\b.csv`:        true,
	} {
		if got := IsGlob(p); got != want {
			t.Errorf("IsGlob(%q) = %v, want %v", p, got, want)
		}
		if got := isLocalFile(p); got != (!want && !strings.HasPrefix(p, "s3a:")) {
			t.Errorf("isLocalFile(%q) = %v", p, got)
		}
	}
}

func TestSourceSpecDisplayName(t *testing.T) {
	tests := []struct {
		spec SourceSpec
		want string
	}{
		{SourceSpec{Name: "n", Paths: []string{"a.csv"}}, "n"},
		{SourceSpec{Table: "db.t"}, "db.t"},
		{SourceSpec{Paths: []string{"a.csv", "b.csv"}}, "a.csv,b.csv"},
	}
	for _, tt := range tests {
		if got := tt.spec.DisplayName(); got != tt.want {
			t.Errorf("%+v.DisplayName() = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

// resolved is what a user checks of a resolved source.
type resolved struct {
	Name    string
	Format  string
	Options map[string]string
}

func summarize(rs []resolvedSource) []resolved {
	out := make([]resolved, len(rs))
	for i, r := range rs {
		out[i] = resolved{Name: r.name, Format: r.format, Options: r.options}
	}
	return out
}

var (
	csvDefaults  = map[string]string{"header": "true", "inferSchema": "true", "mode": "FAILFAST"}
	jsonDefaults = map[string]string{"mode": "FAILFAST"}
)

func TestResolveSources(t *testing.T) {
	tests := []struct {
		name          string
		specs         []SourceSpec
		defaultFormat string
		global        map[string]string
		want          []resolved
	}{
		{
			name: "format from extension with per-format defaults",
			specs: []SourceSpec{
				{Paths: []string{"a.csv"}},
				{Paths: []string{"b.json.gz"}},
				{Paths: []string{"c.parquet"}},
				{Paths: []string{"d.txt"}},
			},
			want: []resolved{
				{Name: "a.csv", Format: "csv", Options: csvDefaults},
				{Name: "b.json.gz", Format: "json", Options: jsonDefaults},
				{Name: "c.parquet", Format: "parquet", Options: map[string]string{"mergeSchema": "true"}},
				{Name: "d.txt", Format: "text", Options: map[string]string{}},
			},
		},
		{
			name:          "default format applies to paths without one",
			specs:         []SourceSpec{{Paths: []string{"data/"}}, {Paths: []string{"x.dat"}}},
			defaultFormat: "json",
			want: []resolved{
				{Name: "data/", Format: "json", Options: jsonDefaults},
				{Name: "x.dat", Format: "json", Options: jsonDefaults},
			},
		},
		{
			name:          "default format wins over the extension",
			specs:         []SourceSpec{{Paths: []string{"a.csv"}}},
			defaultFormat: "text",
			want:          []resolved{{Name: "a.csv", Format: "text", Options: map[string]string{}}},
		},
		{
			name: "per-source format wins over default format and extension",
			specs: []SourceSpec{
				{Paths: []string{"a.csv"}, Format: "json"},
				{Paths: []string{"b.csv"}},
			},
			defaultFormat: "parquet",
			want: []resolved{
				{Name: "a.csv", Format: "json", Options: jsonDefaults},
				{Name: "b.csv", Format: "parquet", Options: map[string]string{"mergeSchema": "true"}},
			},
		},
		{
			name:          "tables keep no format and get no format defaults",
			specs:         []SourceSpec{{Table: "db.events"}},
			defaultFormat: "csv",
			want:          []resolved{{Name: "db.events", Format: "", Options: map[string]string{}}},
		},
		{
			name:   "global options override format defaults",
			specs:  []SourceSpec{{Paths: []string{"a.csv"}}},
			global: map[string]string{"mode": "PERMISSIVE", "sep": ";"},
			want: []resolved{{Name: "a.csv", Format: "csv", Options: map[string]string{
				"header": "true", "inferSchema": "true", "mode": "PERMISSIVE", "sep": ";",
			}}},
		},
		{
			name: "per-source options override global options",
			specs: []SourceSpec{
				{Name: "first", Paths: []string{"a.csv"}, Options: map[string]string{"mode": "DROPMALFORMED", "header": "false"}},
				{Paths: []string{"b.csv"}},
			},
			global: map[string]string{"mode": "PERMISSIVE"},
			want: []resolved{
				{Name: "first", Format: "csv", Options: map[string]string{"header": "false", "inferSchema": "true", "mode": "DROPMALFORMED"}},
				{Name: "b.csv", Format: "csv", Options: map[string]string{"header": "true", "inferSchema": "true", "mode": "PERMISSIVE"}},
			},
		},
		{
			name:   "tables get global options",
			specs:  []SourceSpec{{Table: "t", Options: map[string]string{"a": "1"}}},
			global: map[string]string{"b": "2"},
			want:   []resolved{{Name: "t", Options: map[string]string{"a": "1", "b": "2"}}},
		},
		{
			name:  "several paths of one format",
			specs: []SourceSpec{{Paths: []string{"a.json", "b.jsonl", "c.ndjson.gz"}}},
			want:  []resolved{{Name: "a.json,b.jsonl,c.ndjson.gz", Format: "json", Options: jsonDefaults}},
		},
		{
			name:  "mixed extensions are fine with an explicit format",
			specs: []SourceSpec{{Name: "m", Paths: []string{"a.csv", "b.json"}, Format: "text"}},
			want:  []resolved{{Name: "m", Format: "text", Options: map[string]string{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveSources(tt.specs, tt.defaultFormat, tt.global)
			if err != nil {
				t.Fatalf("resolveSources: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("resolveSources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveSourcesDoesNotShareOptionMaps(t *testing.T) {
	global := map[string]string{"mode": "PERMISSIVE"}
	got, err := resolveSources([]SourceSpec{{Paths: []string{"a.csv"}}, {Paths: []string{"b.csv"}}}, "", global)
	if err != nil {
		t.Fatal(err)
	}
	got[0].options["sep"] = ";"
	if _, ok := got[1].options["sep"]; ok {
		t.Error("sources share one options map")
	}
	if _, ok := global["sep"]; ok {
		t.Error("resolveSources returned the caller's global options map")
	}
	if _, ok := defaultReaderOptions("csv")["sep"]; ok {
		t.Error("defaults were modified")
	}
}

func TestResolveSourcesErrors(t *testing.T) {
	tests := []struct {
		name  string
		specs []SourceSpec
		want  []string // substrings of the message
	}{
		{
			name: "no sources",
			want: []string{"no sources", "at least one path or table"},
		},
		{
			name:  "paths and table both",
			specs: []SourceSpec{{Paths: []string{"a.csv"}}, {Name: "both", Paths: []string{"x.csv"}, Table: "db.t"}},
			want:  []string{"source 2", `"both"`, "exactly one of paths, a table, a query and a DataFrame"},
		},
		{
			name:  "neither paths nor table",
			specs: []SourceSpec{{Name: "empty"}},
			want:  []string{"source 1", `"empty"`, "exactly one of paths, a table, a query and a DataFrame"},
		},
		{
			name:  "mixed extensions in one source",
			specs: []SourceSpec{{Paths: []string{"a.csv", "b.csv.gz", "c.json"}}},
			want:  []string{`source "a.csv,b.csv.gz,c.json"`, `different formats ("csv" and "json")`, "separate sources"},
		},
		{
			name:  "known then unknown extension in one source",
			specs: []SourceSpec{{Name: "mix", Paths: []string{"a.csv", "b.dat"}}},
			want:  []string{`source "mix"`, `("csv" and "")`},
		},
		{
			name:  "unknown extension",
			specs: []SourceSpec{{Paths: []string{"a.csv"}}, {Paths: []string{"/data/events.xlsx"}}},
			want:  []string{`source "/data/events.xlsx"`, "cannot tell the format", "Job.Format"},
		},
		{
			name:  "directory without format",
			specs: []SourceSpec{{Name: "events", Paths: []string{"/data/events/"}}},
			want:  []string{`source "events"`, "cannot tell the format"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveSources(tt.specs, "", nil)
			if err == nil {
				t.Fatalf("resolveSources = %+v, want an error", summarize(got))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// writeFiles creates files (name -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExpandLocal(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"csv/b.csv":              "id\n1\n",
		"csv/a.csv":              "id\n2\n",
		"csv/c.csv.gz":           "not really gzip",
		"csv/.hidden.csv":        "x\n",
		"csv/_SUCCESS":           "",
		"csv/sub/d.csv":          "id\n3\n",
		"one/only.csv":           "id\n1\n",
		"parquet/part-0.parquet": "PAR1",
		"parquet/part-1.parquet": "PAR1",
		"parquet/_SUCCESS":       "",
		"txt/a.txt":              "id\n1\n",
		"txt/b.txt":              "id\n1\n",
		"glob/x1.json":           "{}",
		"glob/x2.json":           "{}",
		"glob/y.json":            "{}",
		"only_hidden/_SUCCESS":   "",
		"f.csv":                  "id\n1\n",
	})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	j := func(parts ...string) string { return filepath.Join(append([]string{dir}, parts...)...) }
	missing := j("nope", "x.csv")

	tests := []struct {
		name string
		in   []SourceSpec
		want []SourceSpec
	}{
		{
			name: "csv directory becomes one source per file, sorted, hidden skipped",
			in:   []SourceSpec{{Name: "named", Paths: []string{j("csv")}, Options: map[string]string{"sep": ";"}}},
			want: []SourceSpec{
				{Paths: []string{j("csv", "a.csv")}, Options: map[string]string{"sep": ";"}},
				{Paths: []string{j("csv", "b.csv")}, Options: map[string]string{"sep": ";"}},
				{Paths: []string{j("csv", "c.csv.gz")}, Options: map[string]string{"sep": ";"}},
			},
		},
		{
			name: "csv directory with trailing slash and file: scheme",
			in:   []SourceSpec{{Paths: []string{"file://" + j("csv") + "/"}}},
			want: []SourceSpec{
				{Paths: []string{j("csv", "a.csv")}},
				{Paths: []string{j("csv", "b.csv")}},
				{Paths: []string{j("csv", "c.csv.gz")}},
			},
		},
		{
			name: "directory with one csv file keeps the source's name",
			in:   []SourceSpec{{Name: "only", Paths: []string{j("one")}}},
			want: []SourceSpec{{Name: "only", Paths: []string{j("one", "only.csv")}}},
		},
		{
			name: "a flat directory of parquet files becomes one source per file",
			in:   []SourceSpec{{Paths: []string{j("parquet")}}},
			want: []SourceSpec{{Paths: []string{j("parquet", "part-0.parquet")}}, {Paths: []string{j("parquet", "part-1.parquet")}}},
		},
		{
			name: "a directory of text files expands when the source says csv",
			in:   []SourceSpec{{Paths: []string{j("txt")}, Format: "csv"}},
			want: []SourceSpec{
				{Paths: []string{j("txt", "a.txt")}, Format: "csv"},
				{Paths: []string{j("txt", "b.txt")}, Format: "csv"},
			},
		},
		{
			name: "a directory read as text is one source per file too (auto reads equal schemas together)",
			in:   []SourceSpec{{Paths: []string{j("csv")}, Format: "text"}},
			want: []SourceSpec{
				{Paths: []string{j("csv", "a.csv")}, Format: "text"},
				{Paths: []string{j("csv", "b.csv")}, Format: "text"},
				{Paths: []string{j("csv", "c.csv.gz")}, Format: "text"},
			},
		},
		{
			name: "a directory of only hidden files stays one source",
			in:   []SourceSpec{{Paths: []string{j("only_hidden")}}},
			want: []SourceSpec{{Paths: []string{j("only_hidden")}}},
		},
		{
			name: "a glob expands locally, sorted",
			in:   []SourceSpec{{Name: "g", Paths: []string{j("glob", "x*.json")}}},
			want: []SourceSpec{
				{Paths: []string{j("glob", "x1.json")}},
				{Paths: []string{j("glob", "x2.json")}},
			},
		},
		{
			name: "a glob that matches nothing locally passes through",
			in:   []SourceSpec{{Paths: []string{"/mnt/cluster-only/*.csv"}}},
			want: []SourceSpec{{Paths: []string{"/mnt/cluster-only/*.csv"}}},
		},
		{
			name: "a single file becomes absolute",
			in:   []SourceSpec{{Name: "f", Paths: []string{j("f.csv")}}},
			want: []SourceSpec{{Name: "f", Paths: []string{j("f.csv")}}},
		},
		{
			name: "a path that does not exist locally passes through unchanged",
			in: []SourceSpec{
				{Paths: []string{missing}},
				{Paths: []string{"relative/not/here.csv"}},
				{Paths: []string{"dbfs:/mnt/x.csv"}},
			},
			want: []SourceSpec{
				{Paths: []string{missing}},
				{Paths: []string{"relative/not/here.csv"}},
				{Paths: []string{"dbfs:/mnt/x.csv"}},
			},
		},
		{
			name: "remote paths, tables and multi-path sources pass through",
			in: []SourceSpec{
				{Paths: []string{"s3a://bucket/csv/"}},
				{Paths: []string{"hdfs://nn:8020/data/*.csv"}},
				{Table: "db.events"},
				{Paths: []string{j("csv"), j("txt")}},
			},
			want: []SourceSpec{
				{Paths: []string{"s3a://bucket/csv/"}},
				{Paths: []string{"hdfs://nn:8020/data/*.csv"}},
				{Table: "db.events"},
				{Paths: []string{j("csv"), j("txt")}},
			},
		},
		{
			name: "order of sources is kept around expansions",
			in: []SourceSpec{
				{Table: "t"},
				{Paths: []string{j("glob", "x*.json")}},
				{Paths: []string{j("f.csv")}},
			},
			want: []SourceSpec{
				{Table: "t"},
				{Paths: []string{j("glob", "x1.json")}},
				{Paths: []string{j("glob", "x2.json")}},
				{Paths: []string{j("f.csv")}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandLocal(tt.in, "")
			if err != nil {
				t.Fatalf("ExpandLocal: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ExpandLocal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandLocalRelativePathBecomesAbsolute(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"d/a.csv": "x\n", "d/b.csv": "x\n"})
	t.Chdir(dir)
	got, err := ExpandLocal([]SourceSpec{{Paths: []string{"d"}}, {Paths: []string{"./d/a.csv"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceSpec{
		{Paths: []string{filepath.Join(dir, "d", "a.csv")}},
		{Paths: []string{filepath.Join(dir, "d", "b.csv")}},
		{Paths: []string{filepath.Join(dir, "d", "a.csv")}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpandLocal (-want +got):\n%s", diff)
	}
}

func TestExpandLocalEmptyDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := ExpandLocal([]SourceSpec{{Name: "inputs", Paths: []string{dir}}}, "")
	if err == nil {
		t.Fatal("ExpandLocal of an empty directory: no error")
	}
	for _, w := range []string{`source "inputs"`, dir, "empty"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestExpandLocalBadGlob(t *testing.T) {
	_, err := ExpandLocal([]SourceSpec{{Paths: []string{"/tmp/[x.csv"}}}, "")
	if err == nil || !strings.Contains(err.Error(), "bad glob") {
		t.Errorf("ExpandLocal of a malformed glob: err = %v, want bad glob", err)
	}
}

func TestIsLocalPath(t *testing.T) {
	tests := map[string]bool{
		"/data/a.csv":                        true,
		"a.csv":                              true,
		"./a:b.csv":                          true,
		"dir/a:b.csv":                        true,
		"file:/tmp/a.csv":                    true,
		"file:///tmp/a.csv":                  true,
		"s3a://bucket/a.csv":                 false,
		"hdfs://nn/a.csv":                    false,
		"dbfs:/mnt/a.csv":                    false,
		"abfss://c@a.dfs.core.windows.net/x": false,
	}
	for p, want := range tests {
		if got := isLocalPath(p); got != want {
			t.Errorf("isLocalPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestResolveSourcesTSVHasTabSeparator(t *testing.T) {
	got, err := resolveSources([]SourceSpec{{Paths: []string{"/d/a.tsv.gz"}}, {Paths: []string{"/d/b.tsv"}, Options: map[string]string{"sep": "|"}}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].format != "csv" || got[0].options["sep"] != "\t" {
		t.Errorf("a.tsv.gz: format %q sep %q, want csv with a tab", got[0].format, got[0].options["sep"])
	}
	if got[1].options["sep"] != "|" {
		t.Errorf("b.tsv with sep=|: sep %q, the user's option must win", got[1].options["sep"])
	}
}

func TestExpandLocalGlobSkipsHiddenMarkersAndDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".h.csv", "_SUCCESS", "a.csv", "b.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n1\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	got, err := ExpandLocal([]SourceSpec{{Paths: []string{filepath.Join(dir, "*")}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range got {
		paths = append(paths, s.Paths...)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")}, paths); diff != "" {
		t.Errorf("glob sources (-want +got):\n%s", diff)
	}
	_, err = ExpandLocal([]SourceSpec{{Paths: []string{filepath.Join(dir, "_*")}}}, "")
	if err == nil || !strings.Contains(err.Error(), "matches no data files") {
		t.Errorf("a glob matching only markers: err = %v, want 'matches no data files'", err)
	}
}

func TestExpandLocalJobFormatExpandsCSVDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.dat", "b.dat"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n1\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ExpandLocal([]SourceSpec{{Paths: []string{dir}}}, "csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("--format csv over a directory of .dat files gave %d sources, want one per file (2)", len(got))
	}
}

func TestExpandLocalPartitionedTreeStaysOneSource(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"day=1/part-0.parquet", "day=2/part-0.parquet", "_SUCCESS"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ExpandLocal([]SourceSpec{{Paths: []string{dir}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]SourceSpec{{Paths: []string{dir}, Format: "parquet"}}, got); diff != "" {
		t.Errorf("partitioned tree (-want +got):\n%s", diff)
	}
}

func TestExpandLocalNamedDatasetDirectoryStaysOneSource(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"part-0.parquet", "part-1.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ExpandLocal([]SourceSpec{{Name: "new", Paths: []string{dir}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]SourceSpec{{Name: "new", Paths: []string{dir}, Format: "parquet"}}, got); diff != "" {
		t.Errorf("a named parquet directory (-want +got):\n%s", diff)
	}
}

// A README or notes among a directory's data files are not rows: they are
// skipped and named, unless no file says the format.
func TestExpandLocalSkipsOtherFormats(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.csv": "id\n1\n", "b.csv.gz": "", "part-00000": "id\n2\n", "README.txt": "hello", "notes.md": "# x", "c.json": "{}"})
	for _, format := range []string{"", "csv"} {
		specs, skipped, err := expandLocal([]SourceSpec{{Paths: []string{dir}}}, format, nil, nil)
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		var got []string
		for _, s := range specs {
			got = append(got, filepath.Base(s.Paths[0]))
		}
		for i := range skipped {
			skipped[i] = filepath.Base(skipped[i])
		}
		if format == "" {
			// The names disagree (csv, json): the format must be given.
			if _, err := resolveSources(specs, format, nil); err == nil {
				t.Errorf("no format: resolved %v", got)
			}
			continue
		}
		if d := cmp.Diff([]string{"a.csv", "b.csv.gz", "part-00000"}, got); d != "" {
			t.Errorf("kept (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"README.txt", "c.json", "notes.md"}, skipped); d != "" {
			t.Errorf("skipped (-want +got):\n%s", d)
		}
	}
	// Without a format: a README, notes or a spreadsheet among files of
	// one format or of several are skipped and named (a README.txt among
	// CSV and JSON files was merged as rows of a column "value"; notes.md
	// among CSV files failed the plan: no format from its name).
	for _, tc := range []struct {
		files         []string
		kept, skipped []string
		format        string // the one format the names say (a directory only the server sees), if any
	}{
		{[]string{"a.csv", "b.json", "README.txt", "notes.md", "report.xlsx"}, []string{"a.csv", "b.json"}, []string{"README.txt", "notes.md", "report.xlsx"}, ""},
		{[]string{"a.csv", "b.csv", "notes.md"}, []string{"a.csv", "b.csv"}, []string{"notes.md"}, "csv"},
		{[]string{"a.txt", "b.txt"}, []string{"a.txt", "b.txt"}, nil, "text"},
	} {
		dir := t.TempDir()
		files := map[string]string{}
		for _, f := range tc.files {
			files[f] = "id\n1\n"
		}
		writeFiles(t, dir, files)
		specs, skipped, err := expandLocal([]SourceSpec{{Paths: []string{dir}}}, "", nil, nil)
		if err != nil {
			t.Fatalf("%v: %v", tc.files, err)
		}
		var got []string
		for _, s := range specs {
			got = append(got, filepath.Base(s.Paths[0]))
		}
		for i := range skipped {
			skipped[i] = filepath.Base(skipped[i])
		}
		if d := cmp.Diff(tc.kept, got); d != "" {
			t.Errorf("%v: kept (-want +got):\n%s", tc.files, d)
		}
		if d := cmp.Diff(tc.skipped, skipped); d != "" {
			t.Errorf("%v: skipped (-want +got):\n%s", tc.files, d)
		}
		if _, err := resolveSources(specs, "", nil); err != nil {
			t.Errorf("%v: %v", tc.files, err)
		}
		if got := namesFormat(tc.files); got != tc.format {
			t.Errorf("%v: the names say %q, want %q", tc.files, got, tc.format)
		}
	}

	// Only .txt files, read as CSV: all kept.
	dir = t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "id\n1\n", "b.txt": "id\n2\n"})
	specs, skipped, err := expandLocal([]SourceSpec{{Paths: []string{dir}}}, "csv", nil, nil)
	if err != nil || len(specs) != 2 || len(skipped) != 0 {
		t.Errorf(".txt read as csv: %v, skipped %v, %v", specs, skipped, err)
	}
}

// A directory's files of its format are kept, whatever their extension
// says, when their bytes say it (found in the field: Impala's
// *_data.0.parq files were skipped beside .parquet files, their rows
// lost); files that are not, and files the client cannot read, are set
// apart as before.
func TestSplitByFormatKeepsFilesOfTheFormat(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.parquet":     "PAR1...PAR1",
		"b_data.0.parq": "PAR1...PAR1",
		"c.pq":          "PAR1...PAR1",
		"d.dat":         "PAR1...PAR1",
		"000000_0":      "PAR1...PAR1",
		"README.md":     "# notes",
		"e.csv":         "id\n1\n",
		"orc-named.dat": "ORC...",
		"too-short.bin": "PA",
	}
	writeFiles(t, dir, files)
	var paths []string
	for name := range files {
		paths = append(paths, filepath.Join(dir, name))
	}
	paths = append(paths, "s3a://b/in/x.dat")
	sort.Strings(paths)
	kept, others := splitByFormat(paths, "parquet")
	base := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, path.Base(p))
		}
		return out
	}
	if diff := cmp.Diff([]string{"000000_0", "a.parquet", "b_data.0.parq", "c.pq", "d.dat"}, base(kept)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"README.md", "e.csv", "orc-named.dat", "too-short.bin", "x.dat"}, base(others)); diff != "" {
		t.Errorf("set apart (-want +got):\n%s", diff)
	}
	kept, _ = splitByFormat([]string{filepath.Join(dir, "d.dat"), filepath.Join(dir, "orc-named.dat"), filepath.Join(dir, "z.orc")}, "orc")
	if diff := cmp.Diff([]string{"orc-named.dat", "z.orc"}, base(kept)); diff != "" {
		t.Errorf("kept as ORC (-want +got):\n%s", diff)
	}
}

// A directory only the server sees that holds Parquet summary files
// (_metadata, _common_metadata: pyarrow's write_metadata, Dask), which
// Spark's listing keeps but never reads as data, is read as its data
// files, as the same directory on the client is (found in the field: it
// was refused, "cannot tell the format").
func TestRemoteListingSkipsParquetSummaryFiles(t *testing.T) {
	data, err := os.ReadFile("testdata/parquet/day-1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"", "parquet"} {
		client, fake := newFakeClient()
		fake.nowMillis = 10_000
		fake.files["s3a://b/in/part-0.parquet"] = fakeFile{content: string(data), mtimeMillis: 1000}
		fake.schemas["readSchema s3a://b/in/part-0.parquet"] = "id int"
		fake.files["s3a://b/in/_common_metadata"] = fakeFile{content: "PAR1 a schema PAR1", mtimeMillis: 1000}
		fake.files["s3a://b/in/_metadata"] = fakeFile{content: "PAR1 a schema PAR1", mtimeMillis: 1000}
		p, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Format: format})
		if err != nil {
			t.Fatalf("format %q: %v", format, err)
		}
		var read []string
		for _, r := range p.Reads {
			read = append(read, r.Paths...)
		}
		if diff := cmp.Diff([]string{"s3a://b/in/part-0.parquet"}, read); diff != "" || len(p.Empty) != 0 || len(p.Skipped) != 0 {
			t.Errorf("format %q: read (-want +got):\n%s\nempty %v, skipped %v", format, diff, p.Empty, p.Skipped)
		}
	}
}
