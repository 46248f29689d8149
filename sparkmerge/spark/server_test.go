package spark

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
)

// sessionServer, the [server] of a connected client, against sparkFake:
// what it sends Spark for each question planning asks, and how it reads
// the answers.

// lastRead is the Read relation of the last analysis the fake received.
func lastRead(t *testing.T, f *sparkFake) (nt, ds map[string]any) {
	t.Helper()
	calls := f.recorded("schema read")
	if len(calls) == 0 {
		t.Fatal("no analysis of a read")
	}
	read := pmsg(calls[len(calls)-1].plan(), "root", "read")
	if m := pmsg(read, "named_table"); m != nil {
		nt = map[string]any{"name": pstr(m, "unparsed_identifier"), "options": pmap(m, "options")}
	}
	if m := pmsg(read, "data_source"); m != nil {
		ds = map[string]any{"format": pstr(m, "format"), "schema": pstr(m, "schema"), "paths": pstrs(m, "paths"), "options": pmap(m, "options")}
	}
	return nt, ds
}

func TestSessionServerSchemas(t *testing.T) {
	c, f := sparkFakeClient(t)
	s := sessionServer{c.sess}
	ctx := context.Background()
	f.tables["db.t"] = &fakeTable{schema: "id BIGINT, name STRING"}
	f.schemas["SELECT 1 AS one"] = "one INT"
	f.schemas["/d/x[1].csv"] = "a DECIMAL(12,4)"
	f.schemas["/d/*.csv"] = "b DATE"
	f.putData(t, "s3a://b/out/part-0.orc", sourceRows{"old": 1})
	f.putData(t, "s3a://b/csv/part-0.csv", sourceRows{"old": 1})
	noOptions := map[string]string{}
	tests := []struct {
		name     string
		ask      func() (sparkmerge.Schema, error)
		want     string
		table    map[string]any
		dataRead map[string]any
	}{
		{
			name: "table",
			ask: func() (sparkmerge.Schema, error) {
				schema, _, err := s.tableSchema(ctx, "db.t")
				return schema, err
			},
			want:  "id BIGINT, name STRING",
			table: map[string]any{"name": "db.t", "options": noOptions},
		},
		{
			name: "table source with options",
			ask: func() (sparkmerge.Schema, error) {
				return s.readSchema(ctx, &Read{Table: "db.t", Options: map[string]string{"k": "v"}})
			},
			want:  "id BIGINT, name STRING",
			table: map[string]any{"name": "db.t", "options": map[string]string{"k": "v"}},
		},
		{
			name: "query",
			ask:  func() (sparkmerge.Schema, error) { return s.readSchema(ctx, &Read{Query: "SELECT 1 AS one"}) },
			want: "one INT",
		},
		{
			name: "a file named like a pattern, read literally, with the user's schema",
			ask: func() (sparkmerge.Schema, error) {
				return s.readSchema(ctx, &Read{Format: "csv", Paths: []string{"/d/x[1].csv"}, UserSchema: "a DECIMAL(12,4)", Options: map[string]string{"header": "true"}})
			},
			want:     "a DECIMAL(12,4)",
			dataRead: map[string]any{"format": "csv", "schema": "a DECIMAL(12,4)", "paths": []string{`/d/x\[1\].csv`}, "options": map[string]string{"header": "true"}},
		},
		{
			name: "the user's pattern, as given",
			ask: func() (sparkmerge.Schema, error) {
				return s.readSchema(ctx, &Read{Format: "csv", Paths: []string{"/d/*.csv"}, patterns: true})
			},
			want:     "b DATE",
			dataRead: map[string]any{"format": "csv", "schema": "", "paths": []string{"/d/*.csv"}, "options": noOptions},
		},
		{
			name: "an ORC target, read back merging its files' schemas",
			ask: func() (sparkmerge.Schema, error) {
				return s.targetSchema(ctx, Target{Path: "s3a://b/out", Format: "orc"})
			},
			want:     "id BIGINT",
			dataRead: map[string]any{"format": "orc", "schema": "", "paths": []string{"s3a://b/out"}, "options": map[string]string{"mergeSchema": "true"}},
		},
		{
			name: "a CSV target, read back with its header",
			ask: func() (sparkmerge.Schema, error) {
				return s.targetSchema(ctx, Target{Path: "s3a://b/csv", Format: "csv", Options: map[string]string{"header": "false"}})
			},
			want:     "id BIGINT",
			dataRead: map[string]any{"format": "csv", "schema": "", "paths": []string{"s3a://b/csv"}, "options": map[string]string{"header": "false", "multiLine": "true"}},
		},
		{
			name:  "a table target",
			ask:   func() (sparkmerge.Schema, error) { return s.targetSchema(ctx, Target{Table: "db.t"}) },
			want:  "id BIGINT, name STRING",
			table: map[string]any{"name": "db.t", "options": noOptions},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ask()
			if err != nil {
				t.Fatal(err)
			}
			want, err := sparkmerge.ParseSchema(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if tt.table == nil && tt.dataRead == nil {
				return
			}
			nt, ds := lastRead(t, f)
			if diff := cmp.Diff(tt.table, nt); diff != "" {
				t.Errorf("table read (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dataRead, ds); diff != "" {
				t.Errorf("data source read (-want +got):\n%s", diff)
			}
		})
	}
	_, _, err := s.tableSchema(ctx, "db.none")
	wantSparkError(t, err, "TABLE_OR_VIEW_NOT_FOUND")
}

// conf answers the values the session has, and none for settings it has
// not.
func TestSessionServerConf(t *testing.T) {
	c, f := sparkFakeClient(t)
	f.settings["spark.sql.parquet.binaryAsString"] = "true"
	got, err := sessionServer{c.sess}.conf(context.Background(), "spark.sql.parquet.binaryAsString", "spark.sql.unset")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"spark.sql.parquet.binaryAsString": "true"}, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}

// listFiles lists a path through Spark's binaryFile source without
// contents, with the listing options given; fetchFiles brings the
// contents of the files named, or of the listing's files in a size range.
func TestSessionServerListsAndFetchesFiles(t *testing.T) {
	c, f := sparkFakeClient(t)
	s := sessionServer{c.sess}
	ctx := context.Background()
	dir := t.TempDir()
	for name, content := range map[string]string{"a.csv": "id\n1\n", "b.csv": "id\n22\n333\n", "_SUCCESS": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	options := map[string]string{"pathGlobFilter": "*.csv"}
	files, err := s.listFiles(ctx, dir, options, listingHeads{})
	if err != nil {
		t.Fatal(err)
	}
	want := []remoteFile{{path: "file:" + a, size: 5, mtimeMillis: fakeMTime, real: a}, {path: "file:" + b, size: 10, mtimeMillis: fakeMTime, real: b}}
	if diff := cmp.Diff(want, files, cmp.AllowUnexported(remoteFile{})); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	list := f.recorded("list")[0]
	project := pmsg(list.plan(), "root", "project")
	ds := dataSourceBelow(project)
	if pstr(ds, "format") != "binaryFile" || !slices.Equal(pstrs(ds, "paths"), []string{dir}) || !cmp.Equal(pmap(ds, "options"), options) {
		t.Errorf("listed through %s %v %v, want binaryFile of %s with the listing options", pstr(ds, "format"), pstrs(ds, "paths"), pmap(ds, "options"), dir)
	}
	if got := exprs(project, "expressions"); !slices.Equal(got, []string{"path", "length", "unix_millis(modificationTime)", serverRealPath("path")}) {
		t.Errorf("the listing selects %v: contents too?", got)
	}

	fetched, err := s.fetchFiles(ctx, fileFetch{paths: []string{b}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fetched) != 1 || string(fetched[0].content) != "id\n22\n333\n" || fetched[0].path != "file:"+b || fetched[0].nowMillis != fakeNow {
		t.Errorf("fetched %+v, want b.csv's contents and the server's clock", fetched)
	}

	fetched, err = s.fetchFiles(ctx, fileFetch{given: dir, options: options, minSize: 0, maxSize: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(fetched) != 1 || string(fetched[0].content) != "id\n1\n" {
		t.Errorf("fetched %+v, want a.csv alone (up to 9 bytes)", fetched)
	}
	fetch := f.recorded("fetch")[1]
	cond := pmsg(fetch.plan(), "root", "project", "input", "filter", "condition", "expression_string")
	if got := pstr(cond, "expression"); got != "length >= 0 AND length <= 9" {
		t.Errorf("fetch filter %q", got)
	}
	if got, want := exprs(pmsg(fetch.plan(), "root", "project"), "expressions")[3], fetchedContent(fileFetch{}); got != want {
		t.Errorf("fetched content as %q, want the Parquet-aware %q", got, want)
	}

	if _, err := s.listFiles(ctx, filepath.Join(dir, "none"), nil, listingHeads{}); errorClass(err) != "PATH_NOT_FOUND" {
		t.Errorf("listing a missing path: err = %v, want PATH_NOT_FOUND", err)
	}
}

// Files only the server sees are listed with their heads in one Spark
// job (headsListing: a scan of the files up to maxRemoteInferFile with
// their contents, and one of the larger files without), then typed on
// the client as Spark would type them, with no fetch job.
func TestPlanTypesFilesOnlyTheServerSees(t *testing.T) {
	c, f := sparkFakeClient(t)
	f.remote["s3a://b/in/a.csv"] = []byte("id,name\n1,x\n")
	f.remote["s3a://b/in/b.csv"] = []byte("id,amount\n2,1.5\n")
	f.remote["s3a://b/in/_SUCCESS"] = nil
	planned, err := c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyUnion})
	if err != nil {
		t.Fatal(err)
	}
	if planned.RemoteTyped != 2 || planned.RemoteFetchJobs != 0 {
		t.Errorf("%d files typed by the client in %d fetches, want 2 in 0", planned.RemoteTyped, planned.RemoteFetchJobs)
	}
	lists, fetches := f.recorded("list"), f.recorded("fetch")
	if len(lists) != 1 || len(fetches) != 0 {
		t.Fatalf("%d listings and %d fetches, want 1 listing and no fetch", len(lists), len(fetches))
	}
	union := pmsg(lists[0].plan(), "root", "set_op")
	for i, side := range []struct {
		input, filter string
		content       bool
	}{
		{"left_input", fmt.Sprintf("length >= 0 AND length <= %d", maxRemoteInferFile), true},
		{"right_input", fmt.Sprintf("length >= %d AND length <= %d", maxRemoteInferFile+1, int64(math.MaxInt64)), false},
	} {
		project := pmsg(union, side.input, "project")
		cond := pstr(pmsg(project, "input", "filter", "condition", "expression_string"), "expression")
		ds := dataSourceBelow(project)
		cols := exprs(project, "expressions")
		if pstr(ds, "format") != "binaryFile" || !slices.Equal(pstrs(ds, "paths"), []string{"s3a://b/in"}) || cond != side.filter || len(cols) != 6 || strings.Contains(cols[4], "content") != side.content {
			t.Errorf("the listing's scan %d: %s of %v where %q selecting %v; want binaryFile of s3a://b/in where %q, content %v", i, pstr(ds, "format"), pstrs(ds, "paths"), cond, cols, side.filter, side.content)
		}
	}
	got := map[string]string{}
	for _, r := range planned.Reads {
		got[r.Name] = r.Schema.String()
	}
	want := map[string]string{"s3a://b/in/a.csv": "id int, name string", "s3a://b/in/b.csv": "id int, amount double"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schemas (-want +got):\n%s", diff)
	}
	if n := len(f.recorded("schema read")); n != 0 {
		t.Errorf("Spark was asked for %d schemas", n)
	}
}

// A CSV file only the server sees whose header names a column twice is
// refused at plan time as a file the client reads is (it planned under
// Spark's renamed columns a0, id, a2 and failed at the write): when
// Spark's schema has columns named as Spark renames repeated ones, the
// client asks Spark for the header. A header that names its columns so
// itself merges, and a schema without such names costs no question.
func TestPlanRefusesADuplicateHeaderOnlyTheServerSees(t *testing.T) {
	for _, tc := range []struct {
		name, content, schema string
		asks                  bool
		dup                   [2]string
	}{
		{"repeated", "a,id,a\nx,1,y\n", "a0 STRING, id INT, a2 STRING", true, [2]string{"a", "a"}},
		{"repeated in another case", "Id,v,id\n1,x,2\n", "Id0 INT, v STRING, id2 INT", true, [2]string{"Id", "id"}},
		{"named so by the file", "a0,id,a2\nx,1,y\n", "a0 STRING, id INT, a2 STRING", true, [2]string{}},
		{"plain", "a,id\nx,1\n", "a STRING, id INT", false, [2]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, fake := newFakeClient()
			fake.nowMillis = 1 << 40
			p := "/sparkmerge-server-only/in/f.csv"
			fake.files[p] = fakeFile{content: tc.content, mtimeMillis: 1}
			fake.schemas["readSchema "+p] = tc.schema
			_, err := c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{p}}}, SparkInference: true})
			var dup *DuplicateHeaderError
			switch {
			case tc.dup == [2]string{} && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.dup != [2]string{} && (!errors.As(err, &dup) || dup.File != p || dup.Columns != tc.dup):
				t.Errorf("err = %v, want a *DuplicateHeaderError naming %s and %v", err, p, tc.dup)
			}
			if asked := slices.Contains(fake.recorded(), "csvHeader "+p); asked != tc.asks {
				t.Errorf("asked Spark for the header: %v, want %v (calls %v)", asked, tc.asks, fake.recorded())
			}
		})
	}
}

// A CSV file whose header names a column twice is refused once Spark has
// typed it: Spark would rename both columns.
func TestPlanRefusesADuplicateHeader(t *testing.T) {
	c, f := sparkFakeClient(t)
	p := filepath.Join(t.TempDir(), "dup.csv")
	if err := os.WriteFile(p, []byte("id,name,ID\n1,x,2\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	f.schemas[p] = "id0 INT, name STRING, ID2 INT"
	_, err := c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{p}}}, SparkInference: true})
	var dup *DuplicateHeaderError
	if !errors.As(err, &dup) || dup.File != p || dup.Columns != [2]string{"id", "ID"} {
		t.Fatalf("err = %v, want a *DuplicateHeaderError for id and ID", err)
	}
	if !strings.Contains(err.Error(), "its header has the column `id` twice (also as `ID`)") {
		t.Errorf("error text %q", err)
	}
}

// A target only the server sees (an object store's) that does not exist
// yet costs one failed listing, not one for each way of listing (with
// the real paths, then without them: both read the same missing path).
func TestMissingRemoteTargetIsListedOnce(t *testing.T) {
	c, f := sparkFakeClient(t)
	files, err := c.targetFiles(context.Background(), Target{Path: "s3a://b/out"})
	if err != nil || len(files) != 0 {
		t.Fatalf("files %v, err %v; want none", files, err)
	}
	if failed := f.failures(); len(failed) != 1 || !strings.Contains(failed[0], "PATH_NOT_FOUND") {
		t.Errorf("requests failed: %q, want the one listing", failed)
	}
}
