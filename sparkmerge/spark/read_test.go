package spark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

func csvRead(path string, options map[string]string) *Read {
	return &Read{Name: path, Sources: []string{path}, Format: "csv", Paths: []string{path}, Options: options}
}

func TestNewRead(t *testing.T) {
	rs, err := resolveSources([]SourceSpec{
		{Name: "ev", Paths: []string{"a.json", "b.json"}, Schema: "id bigint"},
		{Table: "db.t"},
	}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := []*Read{newRead(rs[0]), newRead(rs[1])}
	want := []*Read{
		{Name: "ev", Sources: []string{"ev"}, Format: "json", Paths: []string{"a.json", "b.json"}, Options: jsonDefaults, UserSchema: "id bigint", patterns: true},
		{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t", Options: map[string]string{}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Read{}, fileStamp{})); diff != "" {
		t.Errorf("newRead (-want +got):\n%s", diff)
	}
	if got[0].multiFile() {
		t.Error("a single source over two paths is not a multi-file read (its provenance is its name)")
	}
}

func TestGroupReadsByGroupKey(t *testing.T) {
	opts := map[string]string{"header": "true", "mode": "FAILFAST"}
	sameOpts := map[string]string{"mode": "FAILFAST", "header": "true"}
	reads := []*Read{
		csvRead("/data/a/1.csv", opts),
		{Name: "/data/a/1.json", Sources: []string{"/data/a/1.json"}, Format: "json", Paths: []string{"/data/a/1.json"}},
		csvRead("/data/b/2.csv", sameOpts),
		{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t"},
		csvRead("/data/a/3.csv", map[string]string{"header": "false", "mode": "FAILFAST"}),
		{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t"},
		{Name: "/data/a/4.csv", Sources: []string{"/data/a/4.csv"}, Format: "csv", Paths: []string{"/data/a/4.csv"}, Options: opts, UserSchema: "id int"},
		{Name: "/data/a/2.json", Sources: []string{"/data/a/2.json"}, Format: "json", Paths: []string{"/data/a/2.json"}},
		csvRead("/data/a/5.csv", opts),
		{Name: "/data/a/6.csv", Sources: []string{"/data/a/6.csv"}, Format: "csv", Paths: []string{"/data/a/6.csv"}, Options: opts, UserSchema: "id int"},
	}
	got := groupReads(reads, groupKey)
	want := []*Read{
		{Name: "/data/ (3 csv files)", Sources: []string{"/data/a/1.csv", "/data/b/2.csv", "/data/a/5.csv"}, Format: "csv",
			Paths: []string{"/data/a/1.csv", "/data/b/2.csv", "/data/a/5.csv"}, Options: opts},
		{Name: "/data/a/ (2 json files)", Sources: []string{"/data/a/1.json", "/data/a/2.json"}, Format: "json",
			Paths: []string{"/data/a/1.json", "/data/a/2.json"}},
		{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t"},
		csvRead("/data/a/3.csv", map[string]string{"header": "false", "mode": "FAILFAST"}),
		{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t"},
		{Name: "/data/a/ (2 csv files)", Sources: []string{"/data/a/4.csv", "/data/a/6.csv"}, Format: "csv",
			Paths: []string{"/data/a/4.csv", "/data/a/6.csv"}, Options: opts, UserSchema: "id int"},
	}
	// members (the reads a group came from) are checked in TestGroupReadsKeepsMembers.
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Read{}, fileStamp{}), cmpopts.IgnoreFields(Read{}, "members")); diff != "" {
		t.Errorf("groupReads (-want +got):\n%s", diff)
	}
	// The inputs are not modified.
	if diff := cmp.Diff(csvRead("/data/a/1.csv", opts), reads[0], cmp.AllowUnexported(Read{}, fileStamp{})); diff != "" {
		t.Errorf("groupReads modified its input (-want +got):\n%s", diff)
	}
}

func TestGroupKey(t *testing.T) {
	base := csvRead("/a.csv", map[string]string{"header": "true", "sep": ";"})
	same := csvRead("/b.csv", map[string]string{"sep": ";", "header": "true"})
	tests := []struct {
		name  string
		other *Read
		equal bool
	}{
		{"same format and options, other path", same, true},
		{"other option value", csvRead("/b.csv", map[string]string{"header": "true", "sep": ","}), false},
		{"extra option", csvRead("/b.csv", map[string]string{"header": "true", "sep": ";", "quote": "'"}), false},
		{"other format", &Read{Format: "text", Paths: []string{"/b.csv"}, Options: base.Options}, false},
		{"user schema", &Read{Format: "csv", Paths: []string{"/b.csv"}, Options: base.Options, UserSchema: "a int"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groupKey(base) == groupKey(tt.other); got != tt.equal {
				t.Errorf("groupKey equal = %v, want %v", got, tt.equal)
			}
		})
	}
	if k := groupKey(&Read{Table: "db.t"}); k != "" {
		t.Errorf("groupKey(table) = %q, want \"\" (tables are never grouped)", k)
	}
}

func TestGroupName(t *testing.T) {
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{"/d/a.csv", "/d/b.csv"}, "/d/ (2 csv files)"},
		{[]string{"/d/x/a.csv", "/d/y/b.csv", "/d/x/c.csv"}, "/d/ (3 csv files)"},
		{[]string{"/d/b/a.csv", "/d/bb/b.csv"}, "/d/ (2 csv files)"},
		{[]string{"/a.csv", "/b.csv"}, "/ (2 csv files)"},
		{[]string{"/x/a.csv", "/y/b.csv"}, "/ (2 csv files)"},
		{[]string{"a.csv", "b.csv"}, "./ (2 csv files)"},
	}
	for _, tt := range tests {
		r := &Read{Format: "csv", Sources: tt.paths, Paths: tt.paths}
		if got := groupName(r); got != tt.want {
			t.Errorf("groupName(%q) = %q, want %q", tt.paths, got, tt.want)
		}
	}
}

func TestGlobOf(t *testing.T) {
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{"/d/a.csv"}, "/d/a.csv"},
		{[]string{"/d/[x].csv"}, `/d/\[x\].csv`}, // a listed file: read literally
		// Spark reads a pattern that starts with "{" as relative: the
		// common directory (at least "/") goes before the braces.
		{[]string{"/d/a.csv", "/e/b.csv"}, "/{d/a.csv,e/b.csv}"},
		{[]string{"/d/x/a.csv", "/d/y/b.csv"}, "/d/{x/a.csv,y/b.csv}"},
		{[]string{"a.csv", "b.csv"}, "{a.csv,b.csv}"},
		{[]string{"s3a://bkt/x/a.csv", "s3a://bkt/x/b.csv"}, "s3a://bkt/x/{a.csv,b.csv}"},
		{[]string{"/d/a,b.csv", "/d/{x}.csv"}, `/d/{a\,b.csv,\{x\}.csv}`},
		{[]string{"/d/a*.csv", "/d/b?.csv", "/d/[c].csv"}, `/d/{a\*.csv,b\?.csv,\[c\].csv}`},
		{[]string{`/d/back\slash.csv`, "/d/x.csv"}, `/d/{back\\slash.csv,x.csv}`},
	}
	for _, tt := range tests {
		if got := globOf(tt.paths); got != tt.want {
			t.Errorf("globOf(%q) = %q, want %q", tt.paths, got, tt.want)
		}
	}
}

func TestLocalFirstLine(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"lf.csv":      "a,b\n1,2\n",
		"crlf.csv":    "a,b\r\n1,2\r\n",
		"bom.csv":     "\ufeffa,b\n1,2\n",
		"bomcrlf.tsv": "\ufeffa\tb\r\n",
		"nonl.csv":    "a,b",
		"empty.csv":   "",
		"upper.CSV":   "A,B\n",
		"gz.csv.gz":   "a,b\n",
		"x.json":      "{}\n",
		"star*.csv":   "a,b\n",
		"inner.csv":   "a,\"b\nc\"\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		path   string
		want   string
		wantOK bool
	}{
		{p("lf.csv"), "a,b", true},
		{p("crlf.csv"), "a,b", true},
		{p("bom.csv"), "a,b", true},
		{p("bomcrlf.tsv"), "a\tb", true},
		{p("nonl.csv"), "a,b", true},
		{p("empty.csv"), "", true},
		{p("upper.CSV"), "A,B", true},
		{"file://" + p("lf.csv"), "a,b", true},
		{"file:" + p("lf.csv"), "a,b", true},
		{p("gz.csv.gz"), "", false},
		{p("x.json"), "", false},
		{p("star*.csv"), "", false},
		{p("missing.csv"), "", false},
		{"s3a://bucket/lf.csv", "", false},
	}
	for _, tt := range tests {
		got, ok := localFirstLine(tt.path)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("localFirstLine(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestHeaderDriftError(t *testing.T) {
	err := error(&HeaderDriftError{
		Files:  3,
		First:  "/d/a.csv",
		Header: "id,name",
		Differ: []string{"  /d/b.csv: id,age", "  /d/c.csv: name,id"},
	})
	want := "refusing a multi-path CSV read of 3 files: their headers differ, and Spark would map later files by position under the first file's header (/d/a.csv: id,name), shifting values into the wrong columns; use the auto or union strategy (Job.Strategy = StrategyAuto or StrategyUnion) to read each header on its own\n" +
		"  /d/b.csv: id,age\n" +
		"  /d/c.csv: name,id"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("HeaderDriftError.Error() (-want +got):\n%s", diff)
	}
	wrapped := fmt.Errorf("plan: %w", err)
	if !errors.Is(wrapped, sparkmerge.ErrSchemaConflict) {
		t.Error("errors.Is(HeaderDriftError, ErrSchemaConflict) = false")
	}
	var hd *HeaderDriftError
	if !errors.As(wrapped, &hd) || hd.Files != 3 {
		t.Errorf("errors.As(*HeaderDriftError) = %v, %+v", hd != nil, hd)
	}
}

func TestSourceErrorHints(t *testing.T) {
	tests := []struct {
		class string
		hint  string // "" means no hint
	}{
		{"PATH_NOT_FOUND", "check the path; it is resolved on the Spark server's filesystem"},
		{"UNABLE_TO_INFER_SCHEMA", "the source is empty or has no readable files"},
		{"TABLE_OR_VIEW_NOT_FOUND", "check the table name and the current catalog/database"},
		{"DATA_SOURCE_NOT_FOUND", "set the right format (Job.Format or SourceSpec.Format)"},
		{"COLUMN_ALREADY_EXISTS", "the source names a column twice"},
		{"DIVIDE_BY_ZERO", ""},
		{"", ""},
	}
	r := &Read{Name: "/data/a.csv"}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			cause := &connect.SparkError{ErrorClass: tt.class, Message: "[" + tt.class + "] boom"}
			err := sourceError(r, cause)
			msg := err.Error()
			prefix := `read source "/data/a.csv": [` + tt.class + "] boom"
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("message %q does not start with %q", msg, prefix)
			}
			if tt.hint == "" {
				if msg != prefix {
					t.Errorf("message %q, want %q (no hint)", msg, prefix)
				}
			} else if !strings.Contains(msg, "\n  hint: "+tt.hint) {
				t.Errorf("message %q lacks hint %q", msg, tt.hint)
			}
			var se *SparkError
			if !errors.As(err, &se) || se.ErrorClass != tt.class {
				t.Errorf("errors.As(*SparkError) lost the cause: %v", se)
			}
		})
	}
	plain := errors.New("connection reset")
	if err := sourceError(r, plain); err.Error() != `read source "/data/a.csv": connection reset` || !errors.Is(err, plain) {
		t.Errorf("sourceError(plain) = %q", err)
	}
}

func TestWithOptionCopies(t *testing.T) {
	in := map[string]string{"a": "1"}
	got := withOption(in, "b", "2")
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "2"}, got); diff != "" {
		t.Errorf("withOption (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "1"}, in); diff != "" {
		t.Errorf("withOption modified its input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, sortedKeys(got), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("sortedKeys (-want +got):\n%s", diff)
	}
}

func TestGroupReadsNamesAreUnique(t *testing.T) {
	mk := func(p, header string) *Read {
		return &Read{Name: p, Sources: []string{p}, Format: "csv", Paths: []string{p}, Options: map[string]string{"h": header}}
	}
	reads := groupReads([]*Read{mk("/d/a.csv", "1"), mk("/d/b.csv", "2"), mk("/d/c.csv", "1"), mk("/d/e.csv", "2")}, groupKey)
	var names []string
	for _, r := range reads {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"/d/ (2 csv files)", "/d/ (2 csv files) #2"}, names); diff != "" {
		t.Errorf("group names (-want +got):\n%s", diff)
	}
}

func TestGroupReadsKeepsMembers(t *testing.T) {
	a := &Read{Name: "/d/a.json", Sources: []string{"/d/a.json"}, Format: "json", Paths: []string{"/d/a.json"}, order: 0}
	b := &Read{Name: "/d/b.csv", Sources: []string{"/d/b.csv"}, Format: "csv", Paths: []string{"/d/b.csv"}, Options: map[string]string{"x": "1"}, order: 1}
	c := &Read{Name: "/d/c.json", Sources: []string{"/d/c.json"}, Format: "json", Paths: []string{"/d/c.json"}, order: 2}
	got := groupReads([]*Read{a, b, c}, groupKey)
	if len(got) != 2 || len(got[0].parts()) != 2 || got[0].parts()[0] != a || got[0].parts()[1] != c || got[0].order != 0 {
		t.Fatalf("group of a and c: parts %v, order %d", got[0].parts(), got[0].order)
	}
	if parts := got[1].parts(); len(parts) != 1 || parts[0] != b {
		t.Errorf("a read that was not grouped is its own part: %v", parts)
	}
	// Grouping groups again keeps the original reads.
	again := groupReads(got, func(*Read) string { return "all" })
	if n := len(again[0].parts()); n != 3 {
		t.Errorf("regrouped: %d parts, want 3", n)
	}
}

// A file read as another format than its name says fails deep in Spark;
// the error says which format its name says, and what to set.
func TestSourceErrorNamesAFormatMismatch(t *testing.T) {
	r := &Read{Name: "/d/a.csv", Format: "parquet", Paths: []string{"/d/a.csv"}}
	err := sourceError(r, errors.New("Job aborted due to stage failure: Exception thrown in awaitResult"))
	if want := "hint: its name says csv and it is read as parquet: set the right format (Job.Format or SourceSpec.Format)"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	r.Format = "csv"
	if err := sourceError(r, errors.New("boom")); strings.Contains(err.Error(), "hint") {
		t.Errorf("a csv file read as csv got a hint: %v", err)
	}
}

// Spark's file index gives URIs (Path.toUri), its scans paths
// (Path.toString): the same file, spelled otherwise where its name needs
// escapes.
func TestPathOfURI(t *testing.T) {
	tests := []struct{ uri, want string }{
		{"file:/d/at=2024-02-29%2010%253A00%253A00.5/f00.csv", "file:/d/at=2024-02-29 10%3A00%3A00.5/f00.csv"},
		{"file:/d/a%20b%2520c%7Bd%7D.csv", "file:/d/a b%20c{d}.csv"},
		{"s3a://bucket/t/k=a%20b/x.csv", "s3a://bucket/t/k=a b/x.csv"},
		{"file:/d/plain.csv", "file:/d/plain.csv"},
		{"/d/no-scheme.csv", "/d/no-scheme.csv"},
	}
	for _, tt := range tests {
		if got := pathOfURI(tt.uri); got != tt.want {
			t.Errorf("pathOfURI(%q) = %q, want %q", tt.uri, got, tt.want)
		}
	}
}

func TestDuplicateHeaderErrorNamesTheOtherSpellingOnlyWhenThereIsOne(t *testing.T) {
	same := (&DuplicateHeaderError{File: "f.csv", Columns: [2]string{"COL1", "COL1"}}).Error()
	if !strings.Contains(same, "has the column `COL1` twice; ") {
		t.Errorf("a name written twice alike: %s", same)
	}
	cased := (&DuplicateHeaderError{File: "f.csv", Columns: [2]string{"id", "ID"}}).Error()
	if !strings.Contains(cased, "has the column `id` twice (also as `ID`); ") {
		t.Errorf("a name written twice in two cases: %s", cased)
	}
}

// TestSourceErrorNamesLocalFilesTheServerCannotSee: a source Spark does
// not find while planning (its schema asked, its JSON nesting measured)
// that this machine has gets the hint the write gives such a file, and
// the error names the source; a path missing here too gets the general
// hint. (The nesting measure's error named no source: found checking a
// server that did not mount the client's files.)
func TestSourceErrorNamesLocalFilesTheServerCannotSee(t *testing.T) {
	dir := t.TempDir()
	here := filepath.Join(dir, "a.json")
	other := filepath.Join(dir, "b.json")
	for _, p := range []string{here, other} {
		if err := os.WriteFile(p, []byte(`{"id":1}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notFound := func(path string) error {
		return &connect.SparkError{ErrorClass: "PATH_NOT_FOUND", Parameters: map[string]string{"path": path},
			Message: "[PATH_NOT_FOUND] Path does not exist: " + path + ". SQLSTATE: 42K03"}
	}
	const notShared = "is on this machine, but the Spark server does not see it"
	if err := sourceError(&Read{Name: here}, notFound("file:"+here)); !strings.Contains(err.Error(), "hint: "+quoteName(here)+" "+notShared) {
		t.Errorf("sourceError of a file here = %v, want the hint %q", err, notShared)
	}
	gone := filepath.Join(dir, "gone.json")
	if err := sourceError(&Read{Name: gone}, notFound("file:"+gone)); !strings.Contains(err.Error(), "hint: check the path") || strings.Contains(err.Error(), notShared) {
		t.Errorf("sourceError of a file missing here too = %v, want the general hint", err)
	}

	c, fake := newFakeClient()
	reads := []*Read{{Name: here, Format: "json", Paths: []string{here}}, {Name: other, Format: "json", Paths: []string{other}}}
	fake.fail["jsonNesting "+here+","+other] = notFound("file:" + other)
	err := c.checkNestingOnServer(context.Background(), reads)
	if err == nil || !strings.HasPrefix(err.Error(), "read source "+quoteName(other)+":") || !strings.Contains(err.Error(), notShared) {
		t.Errorf("checkNestingOnServer = %v, want an error naming %s and saying the server does not see it", err, other)
	}
	if errorClass(err) != "PATH_NOT_FOUND" {
		t.Errorf("checkNestingOnServer lost the error class: %v", err)
	}
}
