package spark

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// planCase is one run of [Client.Plan] against a [fakeServer]. "$D" in
// paths, answers and expectations is the test's directory, which holds
// files; the remote files live on the fake server only.
type planCase struct {
	name    string
	files   map[string]string // local files, by name below $D
	job     Job
	version string            // the server's Spark version; default 4.0.1
	schemas map[string]string // Spark's answers (see fakeServer.schemas)
	fail    map[string]error  // failing calls
	conf    map[string]string // session settings
	// providers are the tables' formats (fakeServer.providers).
	providers map[string]string
	remote    map[string]string // files only the server sees, by path
	rows      map[string]bool   // whether reads have rows (fakeServer.rows)
	// noListingHeads: listings bring no heads (fakeServer.noListingHeads).
	noListingHeads bool
	// jsonDepths are how deep JSON files nest (fakeServer.jsonDepths).
	jsonDepths map[string]int
	// notUTF8 are how many lines of files are not UTF-8
	// (fakeServer.notUTF8).
	notUTF8 map[string]int64

	wantErr    string   // a part of the error; "" for none
	wantErrAs  any      // a pointer to the error type, for errors.As
	wantReads  []string // see describeReads
	wantTarget string
	wantCalls  []string // every call to the server, in order
	check      func(t *testing.T, p *Planned, fake *fakeServer)
}

// Small local files the client types itself.
var (
	csvA    = "id,name\n1,x\n"
	csvB    = "id,name\n2,y\n"
	csvNote = "id,note\n3,z\n"
	// Spark's parser reads a doubled quote otherwise than the client's
	// rules can tell (its default escape is a backslash): such a file
	// goes to Spark.
	csvQuoted = "id,name\n4,\"w\"\"x\"\n"
	jsonC     = `{"id":5,"note":"v"}` + "\n"
)

func TestPlan(t *testing.T) {
	for _, tt := range slices.Concat(planFileCases(), planRemoteCases(), planTargetCases(), planInferenceCases(), planRefusalCases()) {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t)
		})
	}
}

// planFileCases are TestPlan's cases of the files a plan reads and where it types them: local, remote, multipath.
func planFileCases() []planCase {
	threeFiles := map[string]string{"a.csv": csvA, "b.csv": csvB, "c.json": jsonC}
	threeSources := []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/b.csv"}}, {Paths: []string{"$D/c.json"}}}
	return []planCase{
		{
			name:  "auto groups the files the client typed",
			files: threeFiles,
			job:   Job{Sources: threeSources},
			wantReads: []string{
				"$D/ (2 csv files) [$D/a.csv $D/b.csv]: id int, name string; client, pinned, enforceSchema=false",
				"$D/c.json [$D/c.json]: id bigint, note string; client, pinned",
			},
			wantTarget: "id bigint, name string, note string",
			wantCalls:  nil, // small local files: no Spark job
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.InferenceNote != "" || p.RemoteTyped != 0 || p.RemoteFetchJobs != 0 {
					t.Errorf("note %q, remote typed %d in %d jobs: want none", p.InferenceNote, p.RemoteTyped, p.RemoteFetchJobs)
				}
				if p.Inference <= 0 || p.Discovery < p.Inference {
					t.Errorf("inference %v, discovery %v: want 0 < inference <= discovery", p.Inference, p.Discovery)
				}
			},
		},
		{
			name:  "union reads every file alone",
			files: threeFiles,
			job:   Job{Sources: threeSources, Strategy: StrategyUnion},
			wantReads: []string{
				"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false",
				"$D/b.csv [$D/b.csv]: id int, name string; client, pinned, enforceSchema=false",
				"$D/c.json [$D/c.json]: id bigint, note string; client, pinned",
			},
			wantTarget: "id bigint, name string, note string",
		},
		{
			name:  "a directory is read file by file, others' formats skipped",
			files: map[string]string{"in/a.csv": csvA, "in/b.csv": csvNote, "in/README.txt": "about"},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/in"}}}, Strategy: StrategyUnion},
			wantReads: []string{
				"$D/in/a.csv [$D/in/a.csv]: id int, name string; client, pinned, enforceSchema=false",
				"$D/in/b.csv [$D/in/b.csv]: id int, note string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string, note string",
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if len(p.Skipped) != 1 || !strings.HasSuffix(p.Skipped[0], "/in/README.txt") {
					t.Errorf("Skipped = %q, want the README", p.Skipped)
				}
			},
		},
		{
			name:    "Spark types what the client refuses, in input order",
			files:   map[string]string{"q.csv": csvQuoted, "a.csv": csvA, "n.csv": csvNote},
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/q.csv"}}, {Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/n.csv"}}}},
			schemas: map[string]string{"readSchema $D/q.csv": "id int, name string"},
			wantReads: []string{
				// Not grouped with a.csv: only the client's CSV reads have
				// Spark check the header (enforceSchema=false), and files
				// group by their options.
				"$D/q.csv [$D/q.csv]: id int, name string; pinned, enforceSchema=false",
				"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false",
				"$D/n.csv [$D/n.csv]: id int, note string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string, note string",
			wantCalls:  []string{"readSchema $D/q.csv"},
		},
		{
			name:  "tables and queries are Spark's, never pinned",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Query: "SELECT 1 AS id"}, {Table: "db.events"}, {Paths: []string{"$D/a.csv"}}},
				Policy: sparkmerge.Options{SourceColumn: "_source"}},
			schemas: map[string]string{"readSchema query SELECT 1 AS id": "id int NOT NULL", "readSchema table db.events": "id bigint, at timestamp"},
			wantReads: []string{
				"query: SELECT 1 AS id [query: SELECT 1 AS id]: id int NOT NULL",
				"db.events [db.events]: id bigint, at timestamp",
				"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id bigint, at timestamp, name string, _source string NOT NULL",
			wantCalls:  []string{"readSchema query SELECT 1 AS id", "readSchema table db.events"},
		},
		{
			name:  "multipath reads a group in one load, typed by Spark",
			files: threeFiles,
			job:   Job{Sources: threeSources, Strategy: StrategyMultipath},
			schemas: map[string]string{
				"readSchema $D/a.csv,$D/b.csv": "id int, name string",
				"readSchema $D/c.json":         "id bigint, note string",
			},
			wantReads: []string{
				"$D/ (2 csv files) [$D/a.csv $D/b.csv]: id int, name string; pinned, enforceSchema=false",
				"$D/c.json [$D/c.json]: id bigint, note string; pinned",
			},
			wantTarget: "id bigint, name string, note string",
			// The local headers are read on the client; the JSON file's
			// nesting is measured before Spark infers it.
			wantCalls: []string{"jsonNesting $D/c.json", "readSchema $D/a.csv,$D/b.csv", "readSchema $D/c.json"},
		},
		{
			// Its column would hide Spark's _metadata, each row's file
			// in the group's load (found in the field): every file of
			// that group is read, and typed, alone.
			name: "multipath reads alone the files of a group with a _metadata column",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyMultipath, Policy: sparkmerge.Options{SourceColumn: "_source"}},
			remote: map[string]string{
				"s3a://b/in/a.json": jsonC, "s3a://b/in/b.json": jsonC,
			},
			schemas: map[string]string{
				"readSchema s3a://b/in/a.json,s3a://b/in/b.json": "_Metadata struct<file_path: string>, id bigint",
				"readSchema s3a://b/in/a.json":                   "_Metadata struct<file_path: string>, id bigint",
				"readSchema s3a://b/in/b.json":                   "id bigint",
			},
			wantReads: []string{
				"s3a://b/in/a.json [s3a://b/in/a.json]: _Metadata struct<file_path:string>, id bigint; pinned",
				"s3a://b/in/b.json [s3a://b/in/b.json]: id bigint; pinned",
			},
			wantTarget: "_Metadata struct<file_path:string>, id bigint, _source string NOT NULL",
			wantCalls: []string{
				"inputFiles s3a://b/in", "listFiles s3a://b/in",
				"jsonNesting s3a://b/in/a.json,s3a://b/in/b.json",
				"notUTF8Files s3a://b/in/a.json,s3a://b/in/b.json", "readSchema s3a://b/in/a.json,s3a://b/in/b.json",
				"readSchema s3a://b/in/a.json", "readSchema s3a://b/in/b.json",
			},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				sql, err := p.SQL()
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(sql, "_metadata.file_path") {
					t.Errorf("the SQL takes a row's file from _metadata, which the data's column hides:\n%s", sql)
				}
			},
		},
		{
			name:      "multipath refuses CSV files whose headers differ",
			files:     map[string]string{"a.csv": csvA, "n.csv": csvNote},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/n.csv"}}}, Strategy: StrategyMultipath},
			wantErr:   "refusing a multi-path CSV read of 2 files: their headers differ",
			wantErrAs: new(*HeaderDriftError),
		},
		{
			name: "multipath asks Spark for the headers of files only it sees",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyMultipath},
			remote: map[string]string{
				"s3a://b/in/a.csv": csvA, "s3a://b/in/b.csv": csvB,
			},
			schemas: map[string]string{
				"readSchema s3a://b/in/a.csv":                  "id string, name string",
				"readSchema s3a://b/in/b.csv":                  "id string, name string",
				"readSchema s3a://b/in/a.csv,s3a://b/in/b.csv": "id int, name string",
			},
			wantReads: []string{
				"s3a://b/in/ (2 csv files) [s3a://b/in/a.csv s3a://b/in/b.csv]: id int, name string; pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string",
			wantCalls: []string{
				"inputFiles s3a://b/in",
				"listFiles s3a://b/in",
				"readSchema s3a://b/in/a.csv", "readSchema s3a://b/in/b.csv",
				"notUTF8Files s3a://b/in/a.csv,s3a://b/in/b.csv", "readSchema s3a://b/in/a.csv,s3a://b/in/b.csv",
			},
			check: func(t *testing.T, _ *Planned, fake *fakeServer) {
				if fake.fetchedBytes != 0 {
					t.Errorf("%d bytes of the files fetched, want none: multipath asks Spark", fake.fetchedBytes)
				}
				// A header is asked for without a pass over the rows.
				for _, call := range []string{"readSchema s3a://b/in/a.csv", "readSchema s3a://b/in/b.csv"} {
					if got := fake.options[call]["inferSchema"]; got != "false" {
						t.Errorf("%s: inferSchema=%q, want false", call, got)
					}
				}
				if got := fake.options["readSchema s3a://b/in/a.csv,s3a://b/in/b.csv"]["inferSchema"]; got != "true" {
					t.Errorf("the group's read: inferSchema=%q, want true", got)
				}
			},
		},
	}
}

// planRemoteCases are TestPlan's cases of files only the server sees, typed by the client.
func planRemoteCases() []planCase {
	unreachable := &connect.UnreachableError{Addr: "spark:15002", Err: errors.New("connection refused")}
	return []planCase{
		{
			name: "auto types small remote files from copies their listings bring, with no fetch job",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}, {Paths: []string{"s3a://b/x.json"}}}},
			remote: map[string]string{
				"s3a://b/in/a.csv": csvA, "s3a://b/in/b.csv": csvB, "s3a://b/x.json": jsonC,
			},
			wantReads: []string{
				"s3a://b/in/ (2 csv files) [s3a://b/in/a.csv s3a://b/in/b.csv]: id int, name string; client, pinned, enforceSchema=false",
				"s3a://b/x.json [s3a://b/x.json]: id bigint, note string; client, pinned",
			},
			wantTarget: "id bigint, name string, note string",
			wantCalls:  []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "inputFiles s3a://b/x.json", "listFiles s3a://b/x.json"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.RemoteTyped != 3 || p.RemoteFetchJobs != 0 {
					t.Errorf("remote typed %d in %d jobs, want 3 in 0", p.RemoteTyped, p.RemoteFetchJobs)
				}
				for _, r := range p.Reads {
					for _, part := range r.parts() {
						if part.copy != nil {
							t.Errorf("read %s keeps its removed copy %s", part.Name, part.copy.path)
						}
						if part.stamp != (fileStamp{size: int64(len(csvA)), mtimeMillis: 1000}) && part.Format == "csv" {
							t.Errorf("read %s is stamped %+v, want Spark's listing", part.Name, part.stamp)
						}
					}
				}
			},
		},
		{
			name: "auto types small remote files from copies fetched in one job",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}, {Paths: []string{"s3a://b/x.json"}}}},
			remote: map[string]string{
				"s3a://b/in/a.csv": csvA, "s3a://b/in/b.csv": csvB, "s3a://b/x.json": jsonC,
			},
			noListingHeads: true,
			wantReads: []string{
				"s3a://b/in/ (2 csv files) [s3a://b/in/a.csv s3a://b/in/b.csv]: id int, name string; client, pinned, enforceSchema=false",
				"s3a://b/x.json [s3a://b/x.json]: id bigint, note string; client, pinned",
			},
			wantTarget: "id bigint, name string, note string",
			wantCalls:  []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "inputFiles s3a://b/x.json", "listFiles s3a://b/x.json", "fetchFiles s3a://b/in", "fetchFiles s3a://b/x.json"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.RemoteTyped != 3 || p.RemoteFetchJobs != 2 {
					t.Errorf("remote typed %d in %d jobs, want 3 in 2", p.RemoteTyped, p.RemoteFetchJobs)
				}
			},
		},
		{
			name:           "a failed fetch leaves remote files to Spark",
			noListingHeads: true,
			job:            Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyUnion},
			remote:         map[string]string{"s3a://b/in/a.csv": csvA, "s3a://b/in/b.csv": csvNote},
			fail:           map[string]error{"fetchFiles s3a://b/in": errors.New("binaryFile: permission denied")},
			schemas:        map[string]string{"readSchema s3a://b/in/a.csv": "id int, name string", "readSchema s3a://b/in/b.csv": "id int, note string"},
			wantReads: []string{
				"s3a://b/in/a.csv [s3a://b/in/a.csv]: id int, name string; pinned, enforceSchema=false",
				"s3a://b/in/b.csv [s3a://b/in/b.csv]: id int, note string; pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string, note string",
			wantCalls:  []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "fetchFiles s3a://b/in", "notUTF8Files s3a://b/in/a.csv,s3a://b/in/b.csv", "readSchema s3a://b/in/a.csv", "readSchema s3a://b/in/b.csv"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.RemoteTyped != 0 || p.RemoteFetchJobs != 1 {
					t.Errorf("remote typed %d in %d jobs, want 0 in 1", p.RemoteTyped, p.RemoteFetchJobs)
				}
			},
		},
		{
			name:           "an unreachable server fails the fetch",
			noListingHeads: true,
			job:            Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}},
			remote:         map[string]string{"s3a://b/in/a.csv": csvA, "s3a://b/in/b.csv": csvB},
			fail:           map[string]error{"fetchFiles s3a://b/in": unreachable},
			wantErr:        "spark connect server at spark:15002 is unreachable",
			wantErrAs:      new(*UnreachableError),
			wantCalls:      []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "fetchFiles s3a://b/in"},
		},
		{
			name: "a remote listing mostly of other files is fetched file by file",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}},
			remote: map[string]string{
				"s3a://b/in/a.csv": csvA, "s3a://b/in/notes.txt": strings.Repeat("about\n", 200),
			},
			wantReads:  []string{"s3a://b/in/a.csv [s3a://b/in/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "fetchFiles s3a://b/in/a.csv"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.RemoteTyped != 1 || p.RemoteFetchJobs != 1 || len(p.Skipped) != 1 || p.Skipped[0] != "s3a://b/in/notes.txt" {
					t.Errorf("remote typed %d in %d jobs, skipped %q: want 1 in 1, the notes skipped", p.RemoteTyped, p.RemoteFetchJobs, p.Skipped)
				}
			},
		},
		{
			name: "a remote pattern is listed as such when no file has its name",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in/*.csv"}}}, Strategy: StrategyUnion},
			remote: map[string]string{
				"s3a://b/in/a.csv": csvA, "s3a://b/in/n.csv": csvNote, "s3a://b/in/x.json": jsonC,
			},
			wantReads: []string{
				"s3a://b/in/a.csv [s3a://b/in/a.csv]: id int, name string; client, pinned, enforceSchema=false",
				"s3a://b/in/n.csv [s3a://b/in/n.csv]: id int, note string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string, note string",
			wantCalls:  []string{`inputFiles s3a://b/in/\*.csv`, "inputFiles s3a://b/in/*.csv", "listFiles s3a://b/in/*.csv"},
		},
		{
			name:   "a server-side path written like a local one keeps its spelling",
			job:    Job{Sources: []SourceSpec{{Paths: []string{"/sparkmerge-server-only/in"}}}, Strategy: StrategyUnion},
			remote: map[string]string{"file:/sparkmerge-server-only/in/a.csv": csvA, "file:/sparkmerge-server-only/in/b.csv": csvB},
			wantReads: []string{
				"/sparkmerge-server-only/in/a.csv [/sparkmerge-server-only/in/a.csv]: id int, name string; client, pinned, enforceSchema=false",
				"/sparkmerge-server-only/in/b.csv [/sparkmerge-server-only/in/b.csv]: id int, name string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string",
			wantCalls:  []string{"inputFiles /sparkmerge-server-only/in", "listFiles /sparkmerge-server-only/in"},
		},
		{
			name:      "remote files whose names say no format",
			job:       Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/raw"}}}},
			remote:    map[string]string{"s3a://b/raw/a.dat": "1", "s3a://b/raw/b.dat": "2"},
			wantErr:   `read source "s3a://b/raw": cannot tell the format from the names of its 2 files (s3a://b/raw/a.dat, ...)`,
			wantCalls: []string{"inputFiles s3a://b/raw", "listFiles s3a://b/raw"},
		},
		{
			name:      "a remote path that lists nothing names its source",
			job:       Job{Sources: []SourceSpec{{Name: "events", Paths: []string{"s3a://b/none"}}}},
			wantErr:   `read source "events": list files on the Spark server: [PATH_NOT_FOUND] Path does not exist: s3a://b/none` + "\n  hint: check the path",
			wantCalls: []string{"inputFiles s3a://b/none"},
		},
	}
}

// planTargetCases are TestPlan's cases of reference tables, appends and their targets.
func planTargetCases() []planCase {
	return []planCase{
		{
			name:  "a reference table orders and types the target",
			files: map[string]string{"a.csv": csvA, "n.csv": csvNote},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/n.csv"}}},
				ReferenceTable: "db.ref", Policy: sparkmerge.Options{Missing: sparkmerge.MissingReference, DropExtra: true}},
			schemas: map[string]string{"tableSchema db.ref": "note string, id bigint"},
			wantReads: []string{
				"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false",
				"$D/n.csv [$D/n.csv]: id int, note string; client, pinned, enforceSchema=false",
			},
			wantTarget: "note string, id bigint",
			wantCalls:  []string{"tableSchema db.ref"},
		},
		{
			name:      "a reference table Spark cannot read",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, ReferenceTable: "db.ref"},
			fail:      map[string]error{"tableSchema db.ref": &connect.SparkError{ErrorClass: "TABLE_OR_VIEW_NOT_FOUND", Message: "[TABLE_OR_VIEW_NOT_FOUND] db.ref"}},
			wantErr:   `read reference table "db.ref": [TABLE_OR_VIEW_NOT_FOUND] db.ref`,
			wantCalls: []string{"tableSchema db.ref"},
		},
		{
			name:  "a reference source keeps auto's files apart",
			files: map[string]string{"a.csv": csvA, "b.csv": csvB},
			job: Job{Sources: []SourceSpec{{Name: "first", Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/b.csv"}}},
				Policy: sparkmerge.Options{Missing: sparkmerge.MissingReference, ReferenceSource: "first"}},
			wantReads: []string{
				"first [first]: id int, name string; client, pinned, enforceSchema=false",
				"$D/b.csv [$D/b.csv]: id int, name string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string",
		},
		{
			name:  "append aligns to the target table",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Policy: sparkmerge.Options{SourceColumn: "_source"},
				Target: Target{Table: "db.t", Mode: "APPEND"}},
			schemas:   map[string]string{"tableSchema db.t": "name string, id bigint, _source string, extra double"},
			providers: map[string]string{"db.t": "parquet"},
			wantReads: []string{
				"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false",
			},
			// The table's order; its provenance column is added again, last.
			wantTarget: "name string, id bigint, extra double, _source string NOT NULL",
			wantCalls:  []string{"tableSchema db.t", "tableProvider db.t"},
		},
		{
			name:  "append with Evolve adds the columns the table lacks",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "db.t", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"tableSchema db.t": "id bigint NOT NULL"},
			providers:  map[string]string{"db.t": "parquet"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id bigint, name string",
			wantCalls:  []string{"tableSchema db.t", "tableProvider db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				want := []string{"ALTER TABLE db.t ADD COLUMNS (`name` string)"}
				if diff := cmp.Diff(want, p.Table.Evolution.Statements()); diff != "" || len(p.AddColumns) != 0 {
					t.Errorf("evolution (-want +got):\n%s\nAddColumns %v", diff, p.AddColumns)
				}
			},
		},
		{
			name:      "a JSON file nested deeper than Spark reads safely is refused, never sent to Spark",
			files:     map[string]string{"a.csv": csvA, "deep.json": "{\"id\":1}\n" + `{"id":2,"a":` + strings.Repeat(`[`, 299) + `1` + strings.Repeat(`]`, 299) + "}\n"},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/deep.json"}}}},
			wantErr:   `source "$D/deep.json": its record on line 2 nests objects and arrays 300 levels deep, past the 256 that Spark reads safely (a record of 400 levels ran a Spark server out of stack, which ended it, and Spark takes one of more than 1,000 for a malformed record): flatten such records before merging; Spark was not asked to infer or read the file`,
			wantCalls: nil,
		},
		{
			name:       "a JSON file Spark types alone is measured first and refused past the depth Spark reads safely",
			files:      map[string]string{"a.csv": csvA, "deep.json": jsonC},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/deep.json"}}, {Paths: []string{"s3a://b/in"}}}, SparkInference: true},
			remote:     map[string]string{"s3a://b/in/c.json": jsonC},
			jsonDepths: map[string]int{"$D/deep.json": 300},
			wantErr:    `source "$D/deep.json": a record nests objects and arrays 300 levels deep (as Spark measured the file's text), past the 256 that Spark reads safely (a record of 400 levels ran a Spark server out of stack, which ended it, and Spark takes one of more than 1,000 for a malformed record): flatten such records before merging; Spark was not asked to infer or read the file`,
			// The CSV file is not measured, and nothing is inferred alone:
			// typed together (which the fake refuses; a line past the
			// depth keeps its file out of the batch: jsonLanes.lineExpr),
			// the JSON files are measured before either is asked alone.
			wantCalls: []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "jsonLaneTypes $D/deep.json,s3a://b/in/c.json", "jsonNesting $D/deep.json,s3a://b/in/c.json"},
		},
		{
			// Spark reads a CSV file's bytes as they are: one that is
			// not UTF-8 would reach the output as U+FFFD. Of the files
			// Spark types with its inference, the client reads a local
			// one through itself (q.csv, Latin-1, named where its first
			// such byte is), and the server checks those it alone sees
			// where they live, in one request.
			name:    "a file Spark types that is not UTF-8 is refused naming it and the encoding to give",
			files:   map[string]string{"a.csv": csvA, "q.csv": csvQuoted + "5,M\xfcnchen\n"},
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/q.csv"}}, {Paths: []string{"s3a://b/in"}}}, SparkInference: true},
			remote:  map[string]string{"s3a://b/in/c.csv": csvQuoted},
			schemas: map[string]string{"readSchema $D/q.csv": "id int, name string", "readSchema s3a://b/in/c.csv": "id int, name string"},
			notUTF8: map[string]int64{"s3a://b/in/c.csv": 1},
			wantErr: `source "$D/q.csv" is not UTF-8: the byte at offset 20 (0xfc) is not valid UTF-8: Spark would read every such byte as U+FFFD; give the file's encoding, e.g. the reader option encoding=ISO-8859-1`,
			wantCalls: []string{"inputFiles s3a://b/in", "listFiles s3a://b/in",
				"notUTF8Files s3a://b/in/c.csv"},
		},
		{
			// The same, the local file UTF-8: the file only the server
			// sees is named as Spark found it.
			name:    "a file only the server sees that is not UTF-8 is refused naming it",
			files:   map[string]string{"a.csv": csvA, "q.csv": csvQuoted},
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/q.csv"}}, {Paths: []string{"s3a://b/in"}}}, InferEachFileAlone: true},
			remote:  map[string]string{"s3a://b/in/c.csv": csvQuoted},
			schemas: map[string]string{"readSchema $D/q.csv": "id int, name string", "readSchema s3a://b/in/c.csv": "id int, name string"},
			notUTF8: map[string]int64{"s3a://b/in/c.csv": 2},
			wantErr: `source "s3a://b/in/c.csv" is not UTF-8: Spark found 2 lines of a file holding bytes that are not valid UTF-8 (read where it lives)`,
			wantCalls: []string{"inputFiles s3a://b/in", "listFiles s3a://b/in",
				"notUTF8Files s3a://b/in/c.csv"},
		},
		{
			name:       "a JSON file read with the user's schema is not measured",
			files:      map[string]string{"deep.json": jsonC},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/deep.json"}, Schema: "id bigint, note string"}}, SparkInference: true},
			jsonDepths: map[string]int{"$D/deep.json": 300},
			schemas:    map[string]string{"readSchema $D/deep.json": "id bigint, note string"},
			wantReads:  []string{"$D/deep.json [$D/deep.json]: id bigint, note string"},
			wantCalls:  []string{"readSchema $D/deep.json"},
		},
		{
			name:  "append with Evolve to a table an earlier merge gave the provenance column",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Policy: sparkmerge.Options{SourceColumn: "_source"},
				Target: Target{Table: "db.t", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"tableSchema db.t": "id bigint, _source string"},
			providers:  map[string]string{"db.t": "parquet"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id bigint, name string, _source string NOT NULL",
			wantCalls:  []string{"tableSchema db.t", "tableProvider db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				want := []string{"ALTER TABLE db.t ADD COLUMNS (`name` string)"}
				if diff := cmp.Diff(want, p.Table.Evolution.Statements()); diff != "" || len(p.NullColumns) != 0 {
					t.Errorf("evolution (-want +got):\n%s\nNullColumns %v", diff, p.NullColumns)
				}
			},
		},
		{
			name:  "append with Evolve to a dataset an earlier merge gave the provenance column",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Policy: sparkmerge.Options{SourceColumn: "_source"},
				Target: Target{Path: "/out/data", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"targetSchema /out/data": "id int, _source string"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string, _source string NOT NULL",
			wantCalls:  []string{"targetSchema /out/data"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if got := fieldNames(p.AddColumns); got != "name" || len(p.NullColumns) != 0 {
					t.Errorf("AddColumns %s, NullColumns %v; want name added, none null", got, p.NullColumns)
				}
			},
		},
		{
			name:  "a target column of the provenance column's name that is no string",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Policy: sparkmerge.Options{SourceColumn: "_source"},
				Target: Target{Path: "/out/data", Mode: "append", Evolve: true}},
			schemas:   map[string]string{"targetSchema /out/data": "id int, _source int"},
			wantErr:   "append to \"/out/data\": its column `_source` is int, and the merge's column of that name (Options.SourceColumn) is a string",
			wantCalls: []string{"targetSchema /out/data"},
		},
		{
			name:  "append without the provenance column says no source has the target's",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "db.t", Mode: "append"}},
			schemas:    map[string]string{"tableSchema db.t": "id bigint, name string, _source string"},
			providers:  map[string]string{"db.t": "parquet"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id bigint, name string, _source string",
			wantCalls:  []string{"tableSchema db.t", "tableProvider db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if got := fieldNames(p.NullColumns); got != "_source" {
					t.Errorf("NullColumns %s, want _source", got)
				}
				want := "  warning: no source has the target's column _source string: every row merged gets null there; to fill an earlier merge's provenance column, name it (Options.SourceColumn, --source-column NAME)\n"
				if !strings.Contains(p.String(), want) {
					t.Errorf("the plan does not say\n%s\nit says:\n%s", want, p.String())
				}
			},
		},
		{
			name:  "append with Evolve to a Delta table widens a type and adds a column",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "spark_catalog.db.t", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"tableSchema spark_catalog.db.t": "ID smallint, other date"},
			providers:  map[string]string{"spark_catalog.db.t": "delta"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "ID int, other date, name string",
			wantCalls:  []string{"tableSchema spark_catalog.db.t", "tableProvider spark_catalog.db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				want := []string{
					"ALTER TABLE spark_catalog.db.t SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
					"ALTER TABLE spark_catalog.db.t ALTER COLUMN `ID` TYPE int",
					"ALTER TABLE spark_catalog.db.t ADD COLUMNS (`name` string)",
				}
				if diff := cmp.Diff(want, p.Table.Evolution.Statements()); diff != "" || p.Table.Format != "delta" {
					t.Errorf("format %q, evolution (-want +got):\n%s", p.Table.Format, diff)
				}
			},
		},
		{
			// Spark's JSON inference sorts a struct's fields by name; a
			// table's struct in another order took no append (found in
			// the field): fields match by name.
			name:  "append of a JSON struct to a table whose struct orders its fields otherwise",
			files: map[string]string{"n1.json": `{"id":1,"user":{"name":"a","age":3}}` + "\n"},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/n1.json"}}},
				Target: Target{Table: "spark_catalog.db.t", Mode: "append"}},
			schemas:    map[string]string{"tableSchema spark_catalog.db.t": "id bigint, user struct<name:string,age:bigint>"},
			providers:  map[string]string{"spark_catalog.db.t": "delta"},
			wantTarget: "id bigint, `user` struct<name:string,age:bigint>",
			wantCalls:  []string{"tableSchema spark_catalog.db.t", "tableProvider spark_catalog.db.t"},
		},
		{
			name:  "append with Evolve of a JSON struct with a field that sorts before the table's",
			files: map[string]string{"n2.json": `{"id":3,"user":{"name":"b","age":7}}` + "\n"},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/n2.json"}}},
				Target: Target{Table: "spark_catalog.db.t", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"tableSchema spark_catalog.db.t": "id bigint, user struct<name:string>"},
			providers:  map[string]string{"spark_catalog.db.t": "delta"},
			wantTarget: "id bigint, `user` struct<name:string,age:bigint>",
			wantCalls:  []string{"tableSchema spark_catalog.db.t", "tableProvider spark_catalog.db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				want := []string{"ALTER TABLE spark_catalog.db.t ADD COLUMNS (`user`.`age` bigint)"}
				if diff := cmp.Diff(want, p.Table.Evolution.Statements()); diff != "" {
					t.Errorf("evolution (-want +got):\n%s", diff)
				}
			},
		},
		{
			// A column that does not fit the table as evolved is shown
			// in the evolved type, which the table does not hold yet: it
			// was named the table's (found in the field).
			name:  "a column that does not fit the evolved table names the table once evolved",
			files: map[string]string{"a.json": `{"s":{"a":[1]}}` + "\n", "b.json": `{"s":{"a":1,"b":2}}` + "\n"},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.json"}}, {Paths: []string{"$D/b.json"}}}, Policy: sparkmerge.Options{Types: sparkmerge.TypesString},
				Target: Target{Table: "spark_catalog.db.t", Mode: "append", Evolve: true}},
			schemas:   map[string]string{"tableSchema spark_catalog.db.t": "s struct<a:string>"},
			providers: map[string]string{"spark_catalog.db.t": "delta"},
			wantErr:   `column does not fit table spark_catalog.db.t once evolved: "s": struct<a:string,b:bigint> in "(table spark_catalog.db.t once evolved)"`,
			wantCalls: []string{"tableSchema spark_catalog.db.t", "tableProvider spark_catalog.db.t"},
		},
		{
			// Spark 3.5's Delta (3.x) widens smallint to int but not int to
			// bigint: the merge is refused before any statement runs, so
			// the table is not half evolved.
			name:    "append with Evolve to a Delta table on Spark 3.5 refuses a widening Delta 3 cannot do",
			version: "3.5.7",
			files:   map[string]string{"b.csv": "id,name\n5000000000,x\n"},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/b.csv"}}},
				Target: Target{Table: "spark_catalog.db.t", Mode: "append", Evolve: true}},
			schemas:   map[string]string{"tableSchema spark_catalog.db.t": "id int, name smallint"},
			providers: map[string]string{"spark_catalog.db.t": "delta"},
			wantErr:   `evolve table spark_catalog.db.t (delta): 2 columns cannot take the merge: "id" is int in the table and bigint in the sources: the server's Delta 3 (Spark 3.5) does not change int to bigint`,
			wantErrAs: new(*sparkmerge.EvolutionConflictError),
			wantCalls: []string{"tableSchema spark_catalog.db.t", "tableProvider spark_catalog.db.t"},
		},
		{
			name:    "append with Evolve to a Delta table on Spark 3.5 widens smallint to int",
			version: "3.5.7",
			files:   map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "spark_catalog.db.t", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"tableSchema spark_catalog.db.t": "ID smallint"},
			providers:  map[string]string{"spark_catalog.db.t": "delta"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "ID int, name string",
			wantCalls:  []string{"tableSchema spark_catalog.db.t", "tableProvider spark_catalog.db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				want := []string{
					"ALTER TABLE spark_catalog.db.t SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
					"ALTER TABLE spark_catalog.db.t ALTER COLUMN `ID` TYPE int",
					"ALTER TABLE spark_catalog.db.t ADD COLUMNS (`name` string)",
				}
				if diff := cmp.Diff(want, p.Table.Evolution.Statements()); diff != "" {
					t.Errorf("evolution (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:  "append with Evolve to an Iceberg table refuses a widening Iceberg cannot do",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "iceberg.db.t", Mode: "append", Evolve: true}},
			schemas:   map[string]string{"tableSchema iceberg.db.t": "id int, name int"},
			providers: map[string]string{"iceberg.db.t": "iceberg"},
			wantErr:   `evolve table iceberg.db.t (iceberg): 1 column cannot take the merge: "name" is int in the table and string in the sources: Iceberg does not change int to string`,
			wantErrAs: new(*sparkmerge.EvolutionConflictError),
			wantCalls: []string{"tableSchema iceberg.db.t", "tableProvider iceberg.db.t"},
		},
		{
			name:  "a dry run shows the conflicts of an evolution instead of failing",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, DryRun: true,
				Target: Target{Table: "iceberg.db.t", Mode: "append", Evolve: true}},
			schemas:    map[string]string{"tableSchema iceberg.db.t": "id int, name int"},
			providers:  map[string]string{"iceberg.db.t": "iceberg"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string", // the sources merged alone
			wantCalls:  []string{"tableSchema iceberg.db.t", "tableProvider iceberg.db.t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				var conflict *sparkmerge.EvolutionConflictError
				if !errors.As(p.Err(), &conflict) || len(conflict.Conflicts) != 1 || !strings.Contains(p.String(), "conflict: name: int in the table, string in the sources: Iceberg does not change int to string") {
					t.Errorf("Err() = %v, plan:\n%s", p.Err(), p)
				}
			},
		},
		{
			name:  "an Iceberg table asked of a catalog that makes none",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "lake.events", Format: "Iceberg", Mode: "append"}},
			fail:      map[string]error{"tableSchema lake.events": &connect.SparkError{ErrorClass: "TABLE_OR_VIEW_NOT_FOUND"}},
			conf:      map[string]string{"spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog", "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog"},
			wantErr:   "create table lake.events as iceberg: its catalog spark_catalog (org.apache.spark.sql.delta.catalog.DeltaCatalog) makes no Iceberg tables; name the table in ice, e.g. ice.lake.events",
			wantCalls: []string{"tableSchema lake.events", "catalogs", "catalogs"},
		},
		{
			name:  "a table asked in another format than its own",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Table: "db.t", Format: "delta", Mode: "append"}},
			schemas:   map[string]string{"tableSchema db.t": "id int, name string"},
			providers: map[string]string{"db.t": "parquet"},
			wantErr:   "table db.t is a parquet table: a merge into it keeps its format; ask for parquet or for none (Target.Format)",
			wantCalls: []string{"tableSchema db.t", "tableProvider db.t"},
		},
		{
			name:       "append to a table not there yet plans as a new one",
			files:      map[string]string{"a.csv": csvA},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Target: Target{Table: "db.t", Mode: "append"}},
			fail:       map[string]error{"tableSchema db.t": &connect.SparkError{ErrorClass: "TABLE_OR_VIEW_NOT_FOUND"}},
			conf:       map[string]string{"spark.sql.sources.default": "parquet"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			// Created in the catalog's default format.
			wantCalls: []string{"tableSchema db.t", "catalogs", "conf spark.sql.sources.default"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.Table.Exists || p.Table.Format != "parquet" {
					t.Errorf("table %+v, want a parquet table to create", p.Table)
				}
			},
		},
		{
			name:       "a table to create in an Iceberg catalog is Iceberg's",
			files:      map[string]string{"a.csv": csvA},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Target: Target{Table: "`ice`.db.t", Mode: "append"}},
			fail:       map[string]error{"tableSchema `ice`.db.t": &connect.SparkError{ErrorClass: "TABLE_OR_VIEW_NOT_FOUND"}},
			conf:       map[string]string{"spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  []string{"tableSchema `ice`.db.t", "catalogs"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.Table.Exists || p.Table.Format != "iceberg" {
					t.Errorf("table %+v, want an iceberg table to create", p.Table)
				}
			},
		},
		{
			name:      "append to a table that lacks a column",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Target: Target{Table: "db.t", Mode: "append"}},
			schemas:   map[string]string{"tableSchema db.t": "id bigint"},
			providers: map[string]string{"db.t": "parquet"},
			wantErrAs: new(*sparkmerge.MissingColumnsError),
			wantCalls: []string{"tableSchema db.t", "tableProvider db.t"},
		},
		{
			// Said in an append's terms: --evolve, not "the reference".
			name:      "append to a table that lacks a column, said",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Target: Target{Table: "db.t", Mode: "append"}},
			schemas:   map[string]string{"tableSchema db.t": "id bigint"},
			providers: map[string]string{"db.t": "parquet"},
			wantErr:   `append to table "db.t": sources have columns it lacks: source 1 "$D/a.csv" has "name"; add them to it first (Target.Evolve)`,
			wantCalls: []string{"tableSchema db.t", "tableProvider db.t"},
		},
		{
			name:      "append to a target Spark cannot read",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Target: Target{Table: "db.t", Mode: "append"}},
			fail:      map[string]error{"tableSchema db.t": errors.New("permission denied")},
			wantErr:   `look up table db.t: permission denied`,
			wantCalls: []string{"tableSchema db.t"},
		},
		{
			name:  "a CSV dataset cannot gain columns",
			files: map[string]string{"a.csv": csvA},
			job: Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}},
				Target: Target{Path: "/out/data", Format: "csv", Mode: "append", Evolve: true}},
			schemas:   map[string]string{"targetSchema /out/data": "id int"},
			wantErr:   `append to "/out/data": a CSV dataset cannot gain columns (name)`,
			wantCalls: []string{"targetSchema /out/data"},
		},
	}
}

// planInferenceCases are TestPlan's cases of who types each file: Spark, the client by its rules, Parquet and ORC footers.
func planInferenceCases() []planCase {
	threeFiles := map[string]string{"a.csv": csvA, "b.csv": csvB, "c.json": jsonC}
	threeSources := []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/b.csv"}}, {Paths: []string{"$D/c.json"}}}
	return []planCase{
		{
			name:  "SparkInference asks Spark for every schema",
			files: threeFiles,
			job:   Job{Sources: threeSources, Strategy: StrategyUnion, SparkInference: true},
			schemas: map[string]string{
				"readSchema $D/a.csv": "id int, name string", "readSchema $D/b.csv": "id int, name string",
				"readSchema $D/c.json": "id bigint, note string",
			},
			wantReads: []string{
				"$D/a.csv [$D/a.csv]: id int, name string; pinned, enforceSchema=false",
				"$D/b.csv [$D/b.csv]: id int, name string; pinned, enforceSchema=false",
				"$D/c.json [$D/c.json]: id bigint, note string; pinned",
			},
			wantTarget: "id bigint, name string, note string",
			wantCalls:  []string{"jsonNesting $D/c.json", "readSchema $D/a.csv", "readSchema $D/b.csv", "readSchema $D/c.json"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if p.Inference != 0 || p.InferenceNote != "" {
					t.Errorf("inference %v, note %q: want none when asked for", p.Inference, p.InferenceNote)
				}
			},
		},
		{
			name:    "a server of other rules types every file itself, saying why",
			files:   map[string]string{"a.csv": csvA, "b.csv": csvB},
			version: "4.4.0",
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/b.csv"}}}},
			schemas: map[string]string{"readSchema $D/a.csv": "id int, name string", "readSchema $D/b.csv": "id int, name string"},
			wantReads: []string{
				"$D/ (2 csv files) [$D/a.csv $D/b.csv]: id int, name string; pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string",
			wantCalls:  []string{"readSchema $D/a.csv", "readSchema $D/b.csv"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				want := "the server runs Spark 4.4.0 and the client has the inference rules of Spark 3.5, 4.0, 4.1, 4.2 and 4.3 only: Spark infers every schema"
				if p.InferenceNote != want {
					t.Errorf("InferenceNote = %q, want %q", p.InferenceNote, want)
				}
			},
		},
		{
			name:  "a Parquet file is typed from its footer under the server's settings",
			files: map[string]string{"p.parquet": readFixture("primitives.parquet")},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/p.parquet"}}}},
			conf:  parquetConfValues(defaultParquetConf),
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if len(p.Reads) != 1 || !p.Reads[0].InferredLocally || len(p.Reads[0].Schema.Fields) == 0 {
					t.Errorf("reads %s: want the Parquet file typed on the client", describeReads(p.Reads, ""))
				}
			},
			wantCalls: []string{parquetConf},
		},
		{
			// A column of Parquet's Null logical type (pandas' column of
			// None) is an int to Spark; as int evidence it made a boolean
			// column a string, and failed beside a timestamp (found in the
			// field). It holds no value: the others' type, a typed null.
			name:  "a Parquet column of the Null logical type takes the other sources' type",
			files: map[string]string{"a.parquet": readFixture("null-typed.parquet"), "b.csv": "id,paid\n3,true\n"},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/a.parquet"}}, {Paths: []string{"$D/b.csv"}}}},
			conf:  parquetConfValues(defaultParquetConf),
			wantReads: []string{
				"$D/a.parquet [$D/a.parquet]: id bigint, paid int; client, pinned, mergeSchema=true",
				"$D/b.csv [$D/b.csv]: id int, paid boolean; client, pinned, enforceSchema=false",
			},
			wantTarget: "id bigint, paid boolean",
			wantCalls:  []string{parquetConf},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if got := p.Plan.Projections(0)[1]; got.Kind != sparkmerge.ProjectNull || !got.NoValue {
					t.Errorf("a.parquet's paid: %+v, want a typed null for no value", got)
				}
			},
		},
		{
			name:       "Parquet files of the Null logical type read together take the other sources' type",
			files:      map[string]string{"a.parquet": readFixture("null-typed.parquet"), "c.parquet": readFixture("null-typed.parquet"), "b.csv": "id,paid\n3,true\n"},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/a.parquet"}}, {Paths: []string{"$D/c.parquet"}}, {Paths: []string{"$D/b.csv"}}}},
			conf:       parquetConfValues(defaultParquetConf),
			wantTarget: "id bigint, paid boolean",
			wantCalls:  []string{parquetConf},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if len(p.Reads) != 2 || len(p.Reads[0].parts()) != 2 {
					t.Fatalf("reads %s: want the Parquet files read together", describeReads(p.Reads, ""))
				}
			},
		},
		{
			name:       "a column only Parquet's Null logical type gives stays Spark's int",
			files:      map[string]string{"a.parquet": readFixture("null-typed.parquet")},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/a.parquet"}}}},
			conf:       parquetConfValues(defaultParquetConf),
			wantTarget: "id bigint, paid int",
			wantCalls:  []string{parquetConf},
		},
		{
			name:   "a large remote Parquet file is typed from its fetched end alone",
			job:    Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/big.parquet"}}, {Paths: []string{"s3a://b/small.parquet"}}}},
			remote: map[string]string{"s3a://b/big.parquet": paddedParquet(100 << 10), "s3a://b/small.parquet": readFixture("primitives.parquet")},
			conf:   parquetConfValues(defaultParquetConf),
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if len(p.Reads) != 1 || len(p.Reads[0].parts()) != 2 || p.RemoteTyped != 2 {
					t.Fatalf("reads %s, %d typed remotely: want both files typed on the client, grouped", describeReads(p.Reads, ""), p.RemoteTyped)
				}
				big, small := p.Reads[0].parts()[0], p.Reads[0].parts()[1]
				if !big.InferredLocally || !big.Schema.Equal(small.Schema) || big.stamp.size != 100<<10+int64(len(readFixture("primitives.parquet"))) {
					t.Errorf("the large file: %s stamped %+v, want the small one's schema %s and its listed size", big.Schema, big.stamp, small.Schema)
				}
			},
			wantCalls: []string{"inputFiles s3a://b/big.parquet", "listFiles s3a://b/big.parquet", "inputFiles s3a://b/small.parquet", "listFiles s3a://b/small.parquet", parquetConf},
		},
		{
			name:    "a remote Parquet footer past the fetched end is left to Spark",
			job:     Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/wide.parquet"}}}},
			remote:  map[string]string{"s3a://b/wide.parquet": footerClaiming(100<<10, footerTailBytes)},
			conf:    parquetConfValues(defaultParquetConf),
			schemas: map[string]string{"readSchema s3a://b/wide.parquet": "id bigint"},
			wantReads: []string{
				"s3a://b/wide.parquet [s3a://b/wide.parquet]: id bigint; pinned, mergeSchema=true",
			},
			wantTarget: "id bigint",
			wantCalls:  []string{"inputFiles s3a://b/wide.parquet", "listFiles s3a://b/wide.parquet", "readSchema s3a://b/wide.parquet"},
		},
		{
			name:    "a failed settings request leaves Parquet to Spark",
			files:   map[string]string{"p.parquet": readFixture("primitives.parquet")},
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/p.parquet"}}}},
			fail:    map[string]error{parquetConf: errors.New("config: permission denied")},
			schemas: map[string]string{"readSchema $D/p.parquet": "id bigint"},
			wantReads: []string{
				"$D/p.parquet [$D/p.parquet]: id bigint; pinned, mergeSchema=true",
			},
			wantTarget: "id bigint",
			wantCalls:  []string{parquetConf, "readSchema $D/p.parquet"},
		},
		{
			name:  "an ORC file is typed from its footer",
			files: map[string]string{"o.orc": readORCFixture()},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/o.orc"}}}},
			conf:  defaultORCConf,
			wantReads: []string{
				"$D/o.orc [$D/o.orc]: id int, price double, note string, day date; client, pinned, mergeSchema=true",
			},
			wantTarget: "id int, price double, note string, day date",
			wantCalls:  []string{orcConf},
		},
		{
			name:   "a large remote ORC file is typed from its fetched end alone",
			job:    Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/big.orc"}}, {Paths: []string{"s3a://b/small.orc"}}}},
			remote: map[string]string{"s3a://b/big.orc": paddedORC(100 << 10), "s3a://b/small.orc": readORCFixture()},
			conf:   defaultORCConf,
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				if len(p.Reads) != 1 || len(p.Reads[0].parts()) != 2 || p.RemoteTyped != 2 {
					t.Fatalf("reads %s, %d typed remotely: want both files typed on the client, grouped", describeReads(p.Reads, ""), p.RemoteTyped)
				}
				if got := p.Reads[0].Schema.String(); got != "id int, price double, note string, day date" {
					t.Errorf("schema %s", got)
				}
			},
			wantCalls: []string{"inputFiles s3a://b/big.orc", "listFiles s3a://b/big.orc", "inputFiles s3a://b/small.orc", "listFiles s3a://b/small.orc", orcConf},
		},
		{
			name:    "an ORC file is left to Spark under settings the rules do not reproduce",
			files:   map[string]string{"o.orc": readORCFixture()},
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/o.orc"}}}},
			conf:    map[string]string{"spark.sql.timestampType": "TIMESTAMP_LTZ", "spark.sql.orc.impl": "hive"},
			schemas: map[string]string{"readSchema $D/o.orc": "id int"},
			wantReads: []string{
				"$D/o.orc [$D/o.orc]: id int; pinned, mergeSchema=true",
			},
			wantTarget: "id int",
			wantCalls:  []string{orcConf, "readSchema $D/o.orc"},
		},
		{
			name:  "Parquet and ORC settings come in one call",
			files: map[string]string{"o.orc": readORCFixture(), "p.parquet": readFixture("primitives.parquet")},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/o.orc"}}, {Paths: []string{"$D/p.parquet"}}}, Strategy: StrategyUnion},
			conf:  mergeSettings(parquetConfValues(defaultParquetConf), defaultORCConf),
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				for _, r := range p.Reads {
					if !r.InferredLocally {
						t.Errorf("%v: not typed on the client", r.Paths)
					}
				}
			},
			wantCalls: []string{"conf " + strings.Join(append(infer.ORCConfKeys(), infer.ParquetConfKeys()...), " ")},
		},
	}
}

// planRefusalCases are TestPlan's cases of what a plan refuses, and empty sources.
func planRefusalCases() []planCase {
	pathNotFound := &connect.SparkError{ErrorClass: "PATH_NOT_FOUND", Message: "[PATH_NOT_FOUND] Path does not exist: file:/data/q.csv."}
	return []planCase{
		{
			name:      "an unknown parse mode is refused before any call",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, ReaderOptions: map[string]string{"MODE": "lenient"}},
			wantErr:   `reader option mode "lenient"`,
			wantCalls: nil,
		},
		{
			name:      "a source's unknown parse mode names the source",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Name: "a", Paths: []string{"$D/a.csv"}, Options: map[string]string{"mode": "x"}}}},
			wantErr:   `source a: reader option mode "x"`,
			wantCalls: nil,
		},
		{
			name:      "no sources",
			job:       Job{},
			wantErr:   "no sources: give at least one path or table",
			wantCalls: nil,
		},
		{
			name:      "a file two sources reach",
			files:     map[string]string{"in/a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/in/a.csv"}}, {Paths: []string{"$D/in"}}}},
			wantErr:   `$D/in/a.csv is read by 2 sources ("$D/in/a.csv" and "$D/in/a.csv"): its rows would be merged twice`,
			wantErrAs: new(*DuplicateInputError),
			wantCalls: nil,
		},
		{
			name:      "a target overlapping an input",
			files:     map[string]string{"in/a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/in/a.csv"}}}, Target: Target{Path: "$D/in"}},
			wantErr:   `output $D/in overlaps input $D/in/a.csv (source "$D/in/a.csv")`,
			wantErrAs: new(*OverlapError),
			wantCalls: nil,
		},
		{
			name:      "an unknown strategy, after expansion",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Strategy: Strategy(7)},
			wantErr:   "unknown strategy Strategy(7)",
			wantCalls: nil,
		},
		{
			name:      "a file that is not UTF-8 and names no encoding",
			files:     map[string]string{"a.csv": csvA, "latin1.csv": "id,name\n1,caf\xe9\n"},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/latin1.csv"}}}},
			wantErr:   `source "$D/latin1.csv" is `,
			wantCalls: nil, // refused before Spark types the file
		},
		{
			name:      "a schema Spark fails to give names its source, with a hint",
			files:     map[string]string{"q.csv": csvQuoted},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/q.csv"}}}},
			fail:      map[string]error{"readSchema $D/q.csv": pathNotFound},
			wantErr:   `read source "$D/q.csv": [PATH_NOT_FOUND] Path does not exist: file:/data/q.csv.` + "\n  hint: check the path",
			wantCalls: []string{"readSchema $D/q.csv"},
		},
		{
			name:      "a source Spark reads no column but rows from",
			files:     map[string]string{"q.csv": csvQuoted},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/q.csv"}}}},
			schemas:   map[string]string{"readSchema $D/q.csv": ""},
			rows:      map[string]bool{"$D/q.csv": true},
			wantErr:   `read source "$D/q.csv": it has rows but no columns`,
			wantCalls: []string{"readSchema $D/q.csv", "haveRows $D/q.csv"},
		},
		{
			name:      "a source without columns Spark cannot read the rows of",
			files:     map[string]string{"q.csv": csvQuoted},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/q.csv"}}}},
			schemas:   map[string]string{"readSchema $D/q.csv": ""},
			fail:      map[string]error{"haveRows $D/q.csv": errors.New("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file")},
			wantErr:   `read source "$D/q.csv": it has no columns, and Spark cannot read its rows ([FAILED_READ_FILE.NO_HINT]`,
			wantCalls: []string{"readSchema $D/q.csv", "haveRows $D/q.csv"},
		},
		{
			// A Parquet file a writer left without columns or row groups
			// (footer typed by the client, or the schema Spark infers).
			name:       "a source without columns or rows is empty",
			files:      map[string]string{"a.csv": csvA, "q.csv": csvQuoted},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/q.csv"}}, {Paths: []string{"$D/a.csv"}}}},
			schemas:    map[string]string{"readSchema $D/q.csv": ""},
			rows:       map[string]bool{"$D/q.csv": false},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  []string{"readSchema $D/q.csv", "haveRows $D/q.csv"},
			check:      wantEmpty("$D/q.csv"),
		},
		{
			// Neither typed by the client nor asked of Spark (which fails
			// to infer a Parquet file of 0 bytes, and types a CSV file of
			// 0 bytes with no columns), on either inference side.
			name:       "local files of 0 bytes are empty",
			files:      map[string]string{"a.csv": csvA, "e.csv": "", "z/e.json": "", "z/e.parquet": ""},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/e.csv"}}, {Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/z"}, Format: "json"}, {Paths: []string{"$D/z/e.parquet"}}}},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  nil,
			check:      wantEmpty("$D/e.csv", "$D/z/e.json", "$D/z/e.parquet"),
		},
		{
			name:       "local files of 0 bytes are empty with Spark's inference",
			files:      map[string]string{"a.csv": csvA, "e.csv": ""},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D"}}}, SparkInference: true},
			schemas:    map[string]string{"readSchema $D/a.csv": "id int, name string"},
			wantReads:  []string{"$D/a.csv [$D/a.csv]: id int, name string; pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  []string{"readSchema $D/a.csv"},
			check:      wantEmpty("$D/e.csv"),
		},
		{
			// Spark's scan of the listing skips them; its file index
			// lists them.
			name:       "remote files of 0 bytes are empty",
			job:        Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}},
			remote:     map[string]string{"s3a://b/in/a.csv": csvA, "s3a://b/in/e.csv": "", "s3a://b/in/f.csv": ""},
			wantReads:  []string{"s3a://b/in/a.csv [s3a://b/in/a.csv]: id int, name string; client, pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  []string{"inputFiles s3a://b/in", "listFiles s3a://b/in"},
			check:      wantEmpty("s3a://b/in/e.csv", "s3a://b/in/f.csv"),
		},
		{
			name:       "remote files of 0 bytes are empty with Spark's inference",
			job:        Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, SparkInference: true, Strategy: StrategyUnion},
			remote:     map[string]string{"s3a://b/in/a.csv": csvA, "s3a://b/in/e.csv": ""},
			schemas:    map[string]string{"readSchema s3a://b/in/a.csv": "id int, name string"},
			wantReads:  []string{"s3a://b/in/a.csv [s3a://b/in/a.csv]: id int, name string; pinned, enforceSchema=false"},
			wantTarget: "id int, name string",
			wantCalls:  []string{"inputFiles s3a://b/in", "listFiles s3a://b/in", "notUTF8Files s3a://b/in/a.csv", "readSchema s3a://b/in/a.csv"},
			check:      wantEmpty("s3a://b/in/e.csv"),
		},
		{
			// Its columns are strings to the inference, from no value:
			// they take the other file's types, not string.
			name:       "a local CSV file of its header alone is typed by the others",
			files:      map[string]string{"a.csv": csvA, "h.csv": "id,name,extra\n"},
			job:        Job{Sources: []SourceSpec{{Paths: []string{"$D/h.csv"}}, {Paths: []string{"$D/a.csv"}}}, Strategy: StrategyUnion},
			wantTarget: "id int, name string, extra string",
			wantCalls:  nil,
			check:      wantNoRows("$D/h.csv"),
		},
		{
			// Spark types the files; a file all of whose columns are
			// strings is asked for a row, under its schema.
			name:  "a CSV file of its header alone is typed by the others with Spark's inference",
			files: map[string]string{"a.csv": csvA, "h.csv": "id,name,extra\n", "s.csv": "name,extra\nx,y\n"},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/h.csv"}}, {Paths: []string{"$D/a.csv"}}, {Paths: []string{"$D/s.csv"}}}, SparkInference: true, Strategy: StrategyUnion},
			schemas: map[string]string{
				"readSchema $D/h.csv": "id string, name string, extra string",
				"readSchema $D/a.csv": "id int, name string",
				"readSchema $D/s.csv": "name string, extra string",
			},
			rows:       map[string]bool{"$D/h.csv": false, "$D/s.csv": true},
			wantTarget: "id int, name string, extra string",
			wantCalls:  []string{"readSchema $D/h.csv", "readSchema $D/a.csv", "readSchema $D/s.csv", "haveRows $D/h.csv", "haveRows $D/s.csv"},
			check:      wantNoRows("$D/h.csv"),
		},
		{
			name:      "every source empty is nothing to merge",
			files:     map[string]string{"e.csv": ""},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/e.csv"}}, {Paths: []string{"s3a://b/in"}}}},
			remote:    map[string]string{"s3a://b/in/e.csv": ""},
			wantErr:   "nothing to merge: every source is empty (no rows and no columns: files of 0 bytes, or without columns): $D/e.csv, s3a://b/in/e.csv",
			wantCalls: []string{"inputFiles s3a://b/in", "listFiles s3a://b/in"},
		},
		{
			name:      "a partition column the merge lacks",
			files:     map[string]string{"a.csv": csvA},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/a.csv"}}}, Target: Target{Path: "/out", PartitionBy: []string{"day"}}},
			wantErr:   `partition column "day" is not in the merged table; its columns are id, name`,
			wantCalls: nil,
		},
	}
}

// run plans tt's job and checks the outcome and the calls made.
func (tt planCase) run(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, tt.files)
	in := func(s string) string { return strings.ReplaceAll(s, "$D", dir) }
	client, fake := newFakeClient()
	tt.setUp(fake, in)
	job := jobIn(tt.job, in)
	planned, err := client.Plan(context.Background(), job)
	tt.checkErr(t, err, planned, dir, in)
	var wantCalls []string
	for _, c := range tt.wantCalls {
		wantCalls = append(wantCalls, in(c))
	}
	// The listing settings around discovery are TestPlanListingSettings'.
	calls := slices.DeleteFunc(fake.recorded(), isListingSetting)
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("calls to the server (-want +got):\n%s", diff)
	}
	if err != nil {
		return
	}
	if planned.Strategy != job.Strategy {
		t.Errorf("Strategy = %v, want %v", planned.Strategy, job.Strategy)
	}
	tt.checkPlanned(t, planned, in)
	if tt.check != nil {
		tt.check(t, planned, fake)
	}
}

// setUp gives the fake server tt's answers, with in placing $D.
func (tt planCase) setUp(fake *fakeServer, in func(string) string) {
	if tt.version != "" {
		fake.version = tt.version
	}
	for call, ddl := range tt.schemas {
		fake.schemas[in(call)] = ddl
	}
	for call, err := range tt.fail {
		fake.fail[in(call)] = err
	}
	fake.settings = tt.conf
	fake.providers = tt.providers
	fake.rows = map[string]bool{}
	for paths, has := range tt.rows {
		fake.rows[in(paths)] = has
	}
	for p, content := range tt.remote {
		fake.files[p] = fakeFile{content: content, mtimeMillis: 1000}
	}
	fake.noListingHeads = tt.noListingHeads
	fake.notUTF8 = map[string]int64{}
	for p, n := range tt.notUTF8 {
		fake.notUTF8[in(p)] = n
	}
	fake.jsonDepths = map[string]int{}
	for p, depth := range tt.jsonDepths {
		fake.jsonDepths[in(p)] = depth
	}
	fake.nowMillis = 10_000 // the files settled long ago
}

// jobIn is job with in applied to its paths and reader options, planned
// one call at a time.
func jobIn(job Job, in func(string) string) Job {
	sources := job.Sources
	job.Sources = nil
	for _, s := range sources {
		s.Paths = append([]string(nil), s.Paths...)
		for i, p := range s.Paths {
			s.Paths[i] = in(p)
		}
		job.Sources = append(job.Sources, s)
	}
	job.Target.Path = in(job.Target.Path)
	if job.ReaderOptions != nil {
		job.ReaderOptions = maps.Clone(job.ReaderOptions)
		for k, v := range job.ReaderOptions {
			job.ReaderOptions[k] = in(v)
		}
	}
	if job.Parallelism == 0 {
		job.Parallelism = 1 // the calls in input order
	}
	return job
}

// checkErr checks Plan's error against the one tt wants, if any.
func (tt planCase) checkErr(t *testing.T, err error, planned *Planned, dir string, in func(string) string) {
	t.Helper()
	if tt.wantErr == "" && tt.wantErrAs == nil {
		if err != nil {
			t.Fatalf("Plan: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("Plan succeeded with reads %q, want an error", describeReads(planned.Reads, dir))
	}
	if tt.wantErr != "" && !strings.Contains(err.Error(), in(tt.wantErr)) {
		t.Errorf("err = %v\nwant it to contain %q", err, in(tt.wantErr))
	}
	if tt.wantErrAs != nil && !errors.As(err, tt.wantErrAs) {
		t.Errorf("err = %v (%T), want a %T", err, err, tt.wantErrAs)
	}
}

// checkPlanned checks the reads and target of a plan against tt's.
func (tt planCase) checkPlanned(t *testing.T, planned *Planned, in func(string) string) {
	t.Helper()
	if tt.wantReads != nil {
		var want []string
		for _, r := range tt.wantReads {
			want = append(want, in(r))
		}
		if diff := cmp.Diff(want, describeReads(planned.Reads, "")); diff != "" {
			t.Errorf("reads (-want +got):\n%s", diff)
		}
	}
	if tt.wantTarget != "" && planned.Plan.Target.String() != tt.wantTarget {
		t.Errorf("target = %s, want %s", planned.Plan.Target, tt.wantTarget)
	}
	if len(planned.Plan.Sources) != len(planned.Reads) {
		t.Errorf("the plan has %d sources for %d reads", len(planned.Plan.Sources), len(planned.Reads))
	}
}

// describeReads is one line per read: name, sources, schema, and whether
// the client typed it, whether its schema is pinned, and the reader
// options planning set (with dir written as $D when given).
func describeReads(reads []*Read, dir string) []string {
	var out []string
	for _, r := range reads {
		var tags []string
		if r.InferredLocally {
			tags = append(tags, "client")
		}
		if r.pinned != "" {
			if r.pinned != r.Schema.String() {
				tags = append(tags, "pinned "+r.pinned)
			} else {
				tags = append(tags, "pinned")
			}
		}
		for _, k := range []string{"enforceSchema", "mergeSchema", "basePath"} {
			if v, ok := r.Options[k]; ok {
				tags = append(tags, k+"="+v)
			}
		}
		line := fmt.Sprintf("%s %v: %s", r.Name, r.Sources, r.Schema)
		if len(tags) > 0 {
			line += "; " + strings.Join(tags, ", ")
		}
		if dir != "" {
			line = strings.ReplaceAll(line, dir, "$D")
		}
		out = append(out, line)
	}
	return out
}

// paddedParquet is the primitives fixture made pad bytes longer before
// its footer (column chunks no reader here looks at), so that only its
// end is fetched.
func paddedParquet(pad int) string {
	f := readFixture("primitives.parquet")
	return f[:4] + strings.Repeat("\x00", pad) + f[4:]
}

// footerClaiming is a file of size bytes that ends like a Parquet file
// whose footer is footer bytes long.
func footerClaiming(size, footer int) string {
	end := make([]byte, 8)
	binary.LittleEndian.PutUint32(end, uint32(footer))
	copy(end[4:], "PAR1")
	return "PAR1" + strings.Repeat("\x00", size-12) + string(end)
}

// readFixture is the contents of a Parquet fixture (testdata/parquet).
func readFixture(name string) string {
	b, err := os.ReadFile(fixture(name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// readORCFixture is a Spark-written ORC file (zstd) of id int, price
// double, note string, day date.
func readORCFixture() string {
	b, err := os.ReadFile(filepath.Join("testdata", "orc", "csv-typed.orc"))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// paddedORC is the ORC fixture with pad more bytes inside it, before the
// footer: a file larger than its fetched end, with the same schema.
func paddedORC(pad int) string {
	f := readORCFixture()
	return f[:3] + strings.Repeat("\x00", pad) + f[3:]
}

// defaultORCConf is Spark 4.0's defaults of the settings the ORC rules read.
var defaultORCConf = map[string]string{"spark.sql.timestampType": "TIMESTAMP_LTZ", "spark.sql.orc.impl": "native"}

var orcConf = "conf " + strings.Join(infer.ORCConfKeys(), " ")

// mergeSettings is every setting of both.
func mergeSettings(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// parquetConfValues are the session settings that give conf.
func parquetConfValues(conf infer.ParquetConf) map[string]string {
	values := map[string]string{}
	for i, v := range []bool{conf.BinaryAsString, conf.Int96AsTimestamp, conf.InferNTZ, conf.NanosAsLong} {
		values[infer.ParquetConfKeys()[i]] = fmt.Sprint(v)
	}
	return values
}

// Many schemas from Spark are fetched in parallel, with progress, and the
// first real failure, not another read's cancellation, is reported.
func TestPlanFetchesSchemasInParallel(t *testing.T) {
	dir := t.TempDir()
	client, fake := newFakeClient()
	var sources []SourceSpec
	for i := range 60 {
		p := filepath.Join(dir, fmt.Sprintf("f%02d.csv", i))
		if err := os.WriteFile(p, []byte(csvQuoted), 0o644); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, SourceSpec{Paths: []string{p}})
		fake.schemas["readSchema "+p] = "id int, name string"
	}
	var progress bytes.Buffer
	planned, err := client.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	reads := 0 // besides them: settings around the text read typing files together
	for _, call := range fake.recorded() {
		if strings.HasPrefix(call, "readSchema ") {
			reads++
		}
	}
	if len(planned.Reads) != 60 || reads != 60 {
		t.Errorf("%d reads after %d schema requests, want 60 and 60", len(planned.Reads), reads)
	}
	for i, r := range planned.Reads {
		if want := sources[i].Paths[0]; r.Name != want {
			t.Errorf("read %d is %s, want %s: input order", i, r.Name, want)
		}
	}
	if got := progress.String(); got != "schemas: 60/60\n" {
		t.Errorf("progress = %q", got)
	}

	bad := sources[41].Paths[0]
	fake.fail["readSchema "+bad] = errors.New("boom")
	_, err = client.Plan(context.Background(), Job{Sources: sources, Strategy: StrategyUnion, Parallelism: 4})
	if err == nil || err.Error() != fmt.Sprintf("read source %q: boom", bad) {
		t.Errorf("err = %v, want the failing source's own error", err)
	}
}

// A cancelled plan fails with the cancellation, naming the source.
func TestPlanCancelled(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "q.csv")
	if err := os.WriteFile(p, []byte(csvQuoted), 0o644); err != nil {
		t.Fatal(err)
	}
	client, fake := newFakeClient()
	fake.schemas["readSchema "+p] = "id int, name string"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := client.Plan(ctx, Job{Sources: []SourceSpec{{Paths: []string{p}}}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %v, want context.Canceled naming %s", err, p)
	}
}

// Schemas reads every source alone through the same seam, never grouped.
func TestSchemas(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"a.csv": csvA, "b.csv": csvB} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	client, fake := newFakeClient()
	fake.schemas["readSchema "+filepath.Join(dir, "a.csv")] = "id int, name string"
	fake.schemas["readSchema "+filepath.Join(dir, "b.csv")] = "id bigint, name string"
	got, err := client.Schemas(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{dir}}}, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.csv") + " csv: id int, name string", filepath.Join(dir, "b.csv") + " csv: id bigint, name string"}
	var lines []string
	for _, s := range got {
		lines = append(lines, fmt.Sprintf("%s %s: %s", s.Name, s.Format, s.Schema))
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("Schemas (-want +got):\n%s", diff)
	}
}

// Schemas asks Spark for every file's schema, so it measures how deep the
// JSON files nest first, and refuses one nested deeper than Spark reads
// safely without asking Spark to infer it.
func TestSchemasRefusesDeepJSON(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "deep.json")
	if err := os.WriteFile(deep, []byte(jsonC), 0o644); err != nil {
		t.Fatal(err)
	}
	client, fake := newFakeClient()
	fake.jsonDepths = map[string]int{deep: 1000}
	fake.schemas["readSchema "+deep] = "id bigint, note string"
	_, err := client.Schemas(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{deep}}}})
	if err == nil || !strings.Contains(err.Error(), deep) || !strings.Contains(err.Error(), "1000 levels deep") {
		t.Errorf("err = %v, want the file refused for its 1000 levels", err)
	}
	if diff := cmp.Diff([]string{"jsonNesting " + deep}, fake.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// parquetConf is the call for the settings Parquet footers are typed by.
var parquetConf = "conf " + strings.Join(infer.ParquetConfKeys(), " ")

// isListingSetting says whether a fake server's call reads or sets the
// session settings (see Client.tune), or reads the file split sizes
// (Client.fileSplitBytes).
func isListingSetting(call string) bool {
	return strings.Contains(call, "parallelPartitionDiscovery") || strings.Contains(call, "codegen") || strings.Contains(call, "spark.sql.files.")
}

// Discovery of files only the server sees runs with few listing tasks,
// and the session's settings are restored after it; a job of local files
// changes nothing.
func TestPlanListingSettings(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(local, []byte(csvA), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sources  []string
		settings map[string]string
		want     []string
	}{
		{"remote, local[2]", []string{"s3a://b/in"}, map[string]string{masterKey: "local[2]", listingTasksKey: "10000"}, []string{
			"conf " + parallelListingKey + " " + listingTasksKey + " " + codegenFactoryKey + " " + hugeMethodKey + " " + wholeStageKey + " " + masterKey,
			"setConf " + listingTasksKey + "=2",
			"setConf " + listingTasksKey + "=10000",
		}},
		{"remote, a cluster", []string{"s3a://b/in"}, map[string]string{masterKey: "spark://m:7077", listingTasksKey: "10000"}, []string{
			"conf " + parallelListingKey + " " + listingTasksKey + " " + codegenFactoryKey + " " + hugeMethodKey + " " + wholeStageKey + " " + masterKey,
			"setConf " + listingTasksKey + "=64",
			"setConf " + listingTasksKey + "=10000",
		}},
		{"remote, already few tasks", []string{"s3a://b/in"}, map[string]string{masterKey: "local[2]", listingTasksKey: "1"}, []string{
			"conf " + parallelListingKey + " " + listingTasksKey + " " + codegenFactoryKey + " " + hugeMethodKey + " " + wholeStageKey + " " + masterKey,
		}},
		{"local files", []string{local}, map[string]string{masterKey: "local[2]", listingTasksKey: "10000"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, fake := newFakeClient()
			fake.settings = tt.settings
			fake.files["s3a://b/in/a.csv"] = fakeFile{content: csvA, mtimeMillis: 1000}
			fake.nowMillis = 10_000
			var sources []SourceSpec
			for _, p := range tt.sources {
				sources = append(sources, SourceSpec{Paths: []string{p}})
			}
			if _, err := client.Plan(context.Background(), Job{Sources: sources}); err != nil {
				t.Fatal(err)
			}
			got := slices.DeleteFunc(fake.recorded(), func(call string) bool { return !isListingSetting(call) })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("listing settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListingTasks(t *testing.T) {
	for master, want := range map[string]int{"local[2]": 2, "local[16]": 16, "local[4,2]": 4, "local[*]": 8, "local": 8, "spark://m:7077": 64, "yarn": 64, "": 64} {
		if got := listingTasks(master); got != want {
			t.Errorf("listingTasks(%q) = %d, want %d", master, got, want)
		}
	}
}

// A merge's tuning sets only what the session does not already have, and
// restores the values Spark reported; a refused setting stops nothing.
func TestTune(t *testing.T) {
	defaults := map[string]string{codegenFactoryKey: "FALLBACK", hugeMethodKey: "65535", wholeStageKey: "true", masterKey: "local[2]"}
	conf := "conf " + parallelListingKey + " " + listingTasksKey + " " + codegenFactoryKey + " " + hugeMethodKey + " " + wholeStageKey + " " + masterKey
	tests := []struct {
		name     string
		tuning   tuning
		settings map[string]string
		refuse   bool
		want     []string
	}{
		{"positional batches", tuning{compiledMethods: true}, defaults, false, []string{
			conf,
			"setConf " + hugeMethodKey + "=8000",
			"setConf " + hugeMethodKey + "=65535",
		}},
		{"many scans too", tuning{compiledMethods: true, interpreted: true}, defaults, false, []string{
			conf,
			"setConf " + codegenFactoryKey + "=NO_CODEGEN " + hugeMethodKey + "=8000",
			"setConf " + codegenFactoryKey + "=FALLBACK " + hugeMethodKey + "=65535",
		}},
		{"already small methods", tuning{compiledMethods: true}, map[string]string{hugeMethodKey: "4000"}, false, []string{conf}},
		{"positional scans only", tuning{operatorCode: true}, defaults, false, []string{
			conf,
			"setConf " + wholeStageKey + "=false",
			"setConf " + wholeStageKey + "=true",
		}},
		{"whole-stage code already off", tuning{operatorCode: true}, map[string]string{wholeStageKey: "FALSE"}, false, []string{conf}},
		{"refused", tuning{compiledMethods: true}, defaults, true, []string{
			conf,
			"setConf " + hugeMethodKey + "=8000",
		}},
		{"nothing wanted", tuning{}, defaults, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, fake := newFakeClient()
			fake.settings = maps.Clone(tt.settings)
			if tt.refuse {
				fake.fail["setConf "+hugeMethodKey+"=8000"] = fmt.Errorf("[CONFIG_NOT_AVAILABLE] Configuration %s is not available", hugeMethodKey)
			}
			restore, err := client.tune(context.Background(), tt.tuning)
			if err != nil {
				t.Fatalf("tune: %v (a refused optional setting must not stop a merge)", err)
			}
			restore()
			if diff := cmp.Diff(tt.want, fake.recorded()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if !tt.refuse && !maps.Equal(fake.settings, tt.settings) && len(tt.settings) > 0 {
				t.Errorf("settings after restore = %v, want %v", fake.settings, tt.settings)
			}
		})
	}
}

// wantEmpty checks that the plan lists exactly these files as empty ($D
// is the test's directory), and says so in its text.
func wantEmpty(files ...string) func(t *testing.T, p *Planned, fake *fakeServer) {
	return func(t *testing.T, p *Planned, _ *fakeServer) {
		t.Helper()
		dir := ""
		for _, r := range p.Reads {
			for _, path := range r.Paths {
				if strings.HasPrefix(path, "/") {
					dir = filepath.Dir(path)
				}
			}
		}
		var want []string
		for _, f := range files {
			want = append(want, strings.ReplaceAll(f, "$D", dir))
		}
		if diff := cmp.Diff(want, p.Empty); diff != "" {
			t.Errorf("empty files (-want +got):\n%s", diff)
		}
		if text := p.String(); !strings.Contains(text, fmt.Sprintf("empty: %d %s with no rows and no columns, not read: %s", len(want), plural(len(want), "file", "files"), strings.Join(want, ", "))) {
			t.Errorf("the plan's text does not list the empty files:\n%s", text)
		}
	}
}

// wantNoRows checks that exactly these files ($D is the test's directory)
// are planned as sources without rows.
func wantNoRows(files ...string) func(t *testing.T, p *Planned, fake *fakeServer) {
	return func(t *testing.T, p *Planned, _ *fakeServer) {
		t.Helper()
		var got []string
		dir := ""
		for i, sp := range p.Plan.Sources {
			dir = filepath.Dir(p.Reads[i].Paths[0])
			if sp.NoRows {
				got = append(got, sp.Name)
			}
		}
		var want []string
		for _, f := range files {
			want = append(want, strings.ReplaceAll(f, "$D", dir))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sources without rows (-want +got):\n%s", diff)
		}
	}
}
