package spark

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

func pathRead(name string, paths ...string) *Read {
	return &Read{Name: name, Sources: []string{name}, Format: "csv", Paths: paths}
}

func TestCheckOverlap(t *testing.T) {
	cwd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	reads := []*Read{
		pathRead("/in/a.csv", "/in/a.csv"),
		pathRead("lake", "s3a://bkt/landing/day=1"),
		{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t"},
		{Name: "mine", Sources: []string{"mine"}, Paths: []string{"/pat/*.csv", "/other/x.csv"}, patterns: true},
	}
	tests := []struct {
		target string
		input  string // "" when allowed
	}{
		{"/in/a.csv", "/in/a.csv"},
		{"/in", "/in/a.csv"},             // contains an input
		{"file:///in/", "/in/a.csv"},     // same place, other spelling
		{"/in/a.csv/out", "/in/a.csv"},   // inside an input
		{"/in/../in/a.csv", "/in/a.csv"}, // cleaned
		{"s3a://bkt/landing", "s3a://bkt/landing/day=1"},
		{"/pat/out", "/pat"},             // below a pattern's directory
		{"/given/dir/out", "/given/dir"}, // inside a directory given as a source
		{"/glob/out", ""},                // beside a glob's files
		{"/out", ""},
		{"/in2", ""}, // a prefix, not a parent
		{"s3a://bkt/landing2", ""},
		{"s3a://other/landing/day=1", ""},
		{"out", ""}, // relative: under the working directory
		{cwd, ""},
	}
	for _, tt := range tests {
		inputs := append(readInputs(reads), sourceDirs([]SourceSpec{{Paths: []string{"/given/dir"}}, {Paths: []string{"/glob/*.csv"}}})...)
		err := checkOverlap(Target{Path: tt.target}, "", inputs)
		var overlap *OverlapError
		switch {
		case tt.input == "" && err != nil:
			t.Errorf("target %s: unexpected %v", tt.target, err)
		case tt.input != "" && !errors.As(err, &overlap):
			t.Errorf("target %s: err = %v, want *OverlapError", tt.target, err)
		case tt.input != "" && overlap.Input != tt.input:
			t.Errorf("target %s: overlaps %s, want %s", tt.target, overlap.Input, tt.input)
		}
	}
	if err := checkOverlap(Target{Table: "db.t"}, "", readInputs(reads)); err != nil {
		t.Errorf("table target: %v", err)
	}
}

func TestCheckDuplicateInputs(t *testing.T) {
	tests := []struct {
		name  string
		reads []*Read
		dup   string // "" when allowed
	}{
		{"distinct", []*Read{pathRead("a", "/d/a.csv"), pathRead("b", "/d/b.csv"), pathRead("d-x", "/d-x")}, ""},
		{"a prefix is no parent", []*Read{pathRead("d", "/d"), pathRead("dx", "/d-x/a.csv"), pathRead("db", "/db/a.csv")}, ""},
		{"same file twice", []*Read{pathRead("a", "/d/a.csv"), pathRead("again", "file:///d/a.csv")}, "/d/a.csv"},
		{"a file and its directory", []*Read{pathRead("d", "/d"), pathRead("d-x", "/d-x"), pathRead("a", "/d/sub/a.csv")}, "/d/sub/a.csv"},
		{"a file and a group holding it", []*Read{
			{Name: "g", Sources: []string{"a", "b"}, members: []*Read{pathRead("a", "s3a://b/x/a.csv"), pathRead("b", "s3a://b/x/b.csv")}},
			pathRead("again", "s3a://b/x/b.csv"),
		}, "s3a://b/x/b.csv"},
	}
	for _, tt := range tests {
		err := checkDuplicateInputs(readInputs(tt.reads))
		var dup *DuplicateInputError
		switch {
		case tt.dup == "" && err != nil:
			t.Errorf("%s: unexpected %v", tt.name, err)
		case tt.dup != "" && !errors.As(err, &dup):
			t.Errorf("%s: err = %v, want *DuplicateInputError", tt.name, err)
		case tt.dup != "" && dup.Path != tt.dup:
			t.Errorf("%s: duplicate %s, want %s (%v)", tt.name, dup.Path, tt.dup, err)
		}
	}
}

func TestOneWriteJobsFiles(t *testing.T) {
	const (
		jobA  = "part-00000-0b1c2d3e-1111-4222-8333-944455556666-c000.snappy.parquet"
		jobA1 = "part-00001-0b1c2d3e-1111-4222-8333-944455556666-c000.snappy.parquet"
		jobB  = "part-00000-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee-c000.snappy.parquet"
	)
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m["s3a://b/out/"+n] = true
		}
		return m
	}
	tests := []struct {
		name          string
		before, after map[string]bool
		want          []string
		wantErr       string
	}{
		{"new job among old files", set(jobB), set(jobB, jobA1, jobA), []string{"s3a://b/out/" + jobA, "s3a://b/out/" + jobA1}, ""},
		{"partition directories", set(), set("k=1/"+jobA, "k=2/"+jobA1), []string{"s3a://b/out/k=1/" + jobA, "s3a://b/out/k=2/" + jobA1}, ""},
		{"nothing written", set(jobB), set(jobB), nil, ""},
		{"another writer appended meanwhile", set(), set(jobA, jobB), nil, "2 write jobs added files"},
		{"a file of no write job", set(), set(jobA, "extra.parquet"), nil, "is not a file of a Spark write job"},
		{"glob characters are escaped", set(), set("[x]/" + jobA), []string{`s3a://b/out/\[x\]/` + jobA}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oneWriteJobsFiles("path \"s3a://b/out\"", tt.before, tt.after)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("files = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckPartitionColumns(t *testing.T) {
	planned := &Planned{Plan: &sparkmerge.Plan{Target: sparkmerge.Schema{Fields: []sparkmerge.Field{
		{Name: "id", Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}}, {Name: "Day", Type: sparkmerge.DataType{Kind: sparkmerge.KindString}},
	}}}}
	if err := checkPartitionColumns(Target{Path: "/o", PartitionBy: []string{"day"}}, planned); err != nil {
		t.Errorf("a column in the merged table (other case): %v", err)
	}
	err := checkPartitionColumns(Target{Path: "/o", PartitionBy: []string{"Day", "region"}}, planned)
	if err == nil || !strings.Contains(err.Error(), `"region"`) || !strings.Contains(err.Error(), "id, Day") {
		t.Errorf("a column the merged table lacks: err = %v, want it named with the table's columns", err)
	}
}

func TestCheckReaderOptions(t *testing.T) {
	for _, ok := range []map[string]string{nil, {"mode": "failfast"}, {"MODE": "DropMalformed"}, {"header": "true"}} {
		if err := CheckReaderOptions(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	if err := CheckReaderOptions(map[string]string{"mode": "strict"}); err == nil || !strings.Contains(err.Error(), "PERMISSIVE") {
		t.Errorf("unknown mode: err = %v", err)
	}
}
