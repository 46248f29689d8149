package spark

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// JSON files of any size are typed together (a lake's files of 50 MB
// went to Spark alone, a Spark job each, until the batches' lanes cost
// little more per line than the inference): twenty files of 50 MiB in
// two inferences within maxJSONBatchBytes, each file a read of its own; a
// file past those bytes in an inference of its own (one Spark job, its
// nesting measured by the same read); small files in one read.
func TestJSONFilesOfAnySizeTypedTogether(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   int
		size    int64
		batches []int // files per inference, fewest first
	}{
		{"a lake's files", 20, 50 << 20, []int{10, 10}},
		{"files past the batch's bytes", 3, 600 << 20, []int{1, 1, 1}},
		{"small files", 100, 1 << 10, []int{100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, fake := newFakeClient()
			fake.jsonTypes = func(l jsonLanes) (sparkmerge.Schema, error) {
				if l.perFile != (tc.size > maxJSONSplitFile) {
					t.Errorf("files of %d bytes read each alone: %v", tc.size, l.perFile)
				}
				return lanesOfIDs(l, ""), nil
			}
			var reads []*Read
			for i := range tc.files {
				p := fmt.Sprintf("s3a://b/lake/part-%03d.json", i)
				reads = append(reads, &Read{Name: p, Format: "json", Paths: []string{p}, listed: true, listedSize: tc.size, order: i})
			}
			rest, done, err := client.typeJSONTogether(context.Background(), reads, 8)
			if err != nil {
				t.Fatal(err)
			}
			var batches []int
			for _, call := range fake.recorded() {
				if paths, ok := strings.CutPrefix(call, "jsonLaneTypes "); ok {
					batches = append(batches, len(strings.Split(paths, ",")))
				}
			}
			slices.Sort(batches)
			typed := 0
			for _, n := range tc.batches {
				typed += n
			}
			if fmt.Sprint(batches) != fmt.Sprint(tc.batches) || done.files != typed || done.requests != len(tc.batches) || len(rest) != tc.files-typed {
				t.Errorf("inferences of %v files, %d typed in %d requests, %d left alone; want inferences of %v files, %d left alone",
					batches, done.files, done.requests, len(rest), tc.batches, tc.files-typed)
			}
			for _, r := range reads[:typed] {
				if r.Schema.String() != "id bigint" {
					t.Errorf("%s typed %s, want its lane's id bigint", r.Name, r.Schema)
				}
			}
		})
	}
}

// Each line of a batch's file is the record of its own lane, named by a
// literal (the file is a read of its own): a line that is not UTF-8 marks
// the file as such (it is refused), one that may nest deeper than Spark
// reads safely marks the file as one to go alone (measured first), and
// one that starts with '{' is wrapped without a pattern.
func TestJSONLineExpr(t *testing.T) {
	l := jsonLanes{nonce: "n0", validLine: "is_valid_utf8(value)"}
	got := l.lineExpr(3)
	for _, want := range []string{
		`CASE WHEN NOT is_valid_utf8(value) THEN '{"u3_n0":1}'`,
		" WHEN " + jsonDeeperFilter(256) + " AND " + jsonNestingExpr(256) + ` > 0 THEN '{"x3_n0":1}'`,
		` WHEN startswith(value, '{') THEN concat('{"l3_n0":', value, '}')`,
		" WHEN NOT " + jsonLineHasContent + " THEN ''",
		" WHEN " + jsonLineIsObject + ` THEN concat('{"l3_n0":', value, '}')`,
		` ELSE '{"x3_n0":1}' END AS value`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("line %s\nlacks %s", got, want)
		}
	}
	if strings.Contains(got, "_metadata") {
		t.Errorf("line %s looks its file up by path", got)
	}
	// Files read as one: the lane a column, each line's file found by its
	// path once, and the marker beside the line; the same depth bound.
	l.keys = []string{"/d/a.json", "/d/b.json"}
	if want := "element_at(map('/d/a.json', '0', '/d/b.json', '1'), " + sparkPathKeyExpr + ")"; l.laneExpr() != want {
		t.Errorf("lane %s, want %s", l.laneExpr(), want)
	}
	got = l.laneLineExpr()
	for _, want := range []string{
		`CASE WHEN lane IS NULL THEN '' ELSE CASE WHEN NOT is_valid_utf8(value) THEN concat('{"', 'u', lane, '_n0":1}')`,
		" WHEN " + jsonDeeperFilter(256) + " AND " + jsonNestingExpr(256) + ` > 0 THEN concat('{"', 'x', lane, '_n0":1}')`,
		` WHEN startswith(value, '{') THEN concat('{"', 'm', lane, '_n0":1,"l', lane, '_n0":', value, '}')`,
		` END END AS value`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("line %s\nlacks %s", got, want)
		}
	}
}

// A batch whose inference shows a line it could not type nested (here a
// corrupt record) is split in two until the files that hold one are
// alone, when its files are small; a batch of large files goes to Spark
// alone at once, each file's bytes read once more, not once per halving.
func TestJSONBatchOfLargeFilesNotSplit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size      int64
		inference int // inferences of the batch and its halves
	}{
		{"small files halved", 1 << 20, 5},
		{"large files alone", 50 << 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, fake := newFakeClient()
			const corrupt = "s3a://b/lake/part-002.json"
			fake.jsonTypes = func(l jsonLanes) (sparkmerge.Schema, error) {
				return lanesOfIDs(l, corrupt), nil
			}
			var reads []*Read
			for i := range 4 {
				p := fmt.Sprintf("s3a://b/lake/part-%03d.json", i)
				reads = append(reads, &Read{Name: p, Format: "json", Paths: []string{p}, listed: true, listedSize: tc.size, order: i})
			}
			rest, done, err := client.typeJSONTogether(context.Background(), reads, 8)
			if err != nil {
				t.Fatal(err)
			}
			inferences := 0
			for _, call := range fake.recorded() {
				if strings.HasPrefix(call, "jsonLaneTypes ") {
					inferences++
				}
			}
			wantAlone := 4
			if tc.size < maxJSONSplitFile {
				wantAlone = 1 // the corrupt file's
			}
			if inferences != tc.inference || len(rest) != wantAlone || done.files != 4-wantAlone {
				t.Errorf("%d inferences, %d files typed together, %d alone; want %d inferences, %d alone", inferences, done.files, len(rest), tc.inference, wantAlone)
			}
		})
	}
}

// lanesOfIDs is Spark's inference of the lanes l as the fake server gives
// it: each file's lane a struct of one id, with its marker where the
// files are read as one, and a corrupt record column where the file
// corrupt is among them.
func lanesOfIDs(l jsonLanes, corrupt string) sparkmerge.Schema {
	var fields []sparkmerge.Field
	for i, key := range l.keys {
		if key == corrupt {
			fields = append(fields, sparkmerge.Field{Name: "_corrupt_record", Type: sparkmerge.DataType{Kind: sparkmerge.KindString}, Nullable: true})
		}
		fields = append(fields, laneOfID(l, i)...)
	}
	return sparkmerge.Schema{Fields: fields}
}

// laneOfID is file i's fields of lanesOfIDs: its lane, a struct of one
// id, with its marker where the files are read as one.
func laneOfID(l jsonLanes, i int) []sparkmerge.Field {
	fields := []sparkmerge.Field{{Name: l.lane(i), Nullable: true, Type: sparkmerge.DataType{Kind: sparkmerge.KindStruct,
		Fields: []sparkmerge.Field{{Name: "id", Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true}}}}}
	if !l.perFile {
		fields = append(fields, sparkmerge.Field{Name: l.marker(i), Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true})
	}
	return fields
}

// jsonOfSize is a JSON-lines file of records {"id":…,"<key>":…} up to
// size bytes.
func jsonOfSize(size int, key string) string {
	var b strings.Builder
	pad := strings.Repeat("x", 180)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "{\"id\":%d,%q:\"%s\"}\n", i, key, pad)
	}
	return b.String()
}

// JSON files whose heads the rules take are held for typeJSONTogether,
// not fetched, where their heads type alike in a group of two files or
// more that holds minHeldGroup or more: plain JSON files of a MiB or more
// under options typed together. Each file's own schema is what keeps the
// merge one read a group, so heads of other keys are other groups.
func TestHeldForTogether(t *testing.T) {
	rules, _ := infer.RulesFor("4.0.1")
	const big, small = 14 << 20, 2 << 20
	type file struct {
		key     string
		size    int64
		options map[string]string
	}
	files := map[string]file{}
	for i := range 5 {
		files[fmt.Sprintf("a/%d.json", i)] = file{key: "a", size: big}                                                  // 70 MiB of one schema: held
		files[fmt.Sprintf("d/%d.json", i)] = file{key: fmt.Sprintf("d%d", i), size: big}                                // each its own keys
		files[fmt.Sprintf("e/%d.json.gz", i)] = file{key: "e", size: big}                                               // gzip
		files[fmt.Sprintf("m/%d.json", i)] = file{key: "m", size: big, options: map[string]string{"multiLine": "true"}} // not typed together
		files[fmt.Sprintf("p/%d.json", i)] = file{key: "a", size: big, options: map[string]string{"mode": "FAILFAST"}}  // 70 MiB of the same keys under other options: held
	}
	for i := range 80 {
		files[fmt.Sprintf("s/%d.json", i)] = file{key: "s", size: 1<<20 - 1} // 80 MiB of files under a MiB
	}
	files["b/1.json"], files["b/2.json"] = file{key: "b", size: small}, file{key: "b", size: small} // 4 MiB
	files["c/1.json"] = file{key: "c", size: big}                                                   // alone
	for i := range 6 {
		files[fmt.Sprintf("n/%d.json", i)] = file{size: big} // heads without a whole line
	}
	heads := map[*Read][]byte{}
	listed := map[string]remoteFile{}
	var wanted []*Read
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		r := &Read{Name: name, Format: "json", Paths: []string{"s3a://b/" + name}, Options: f.options, listed: true, listedSize: f.size}
		wanted = append(wanted, r)
		heads[r] = []byte(jsonOfSize(remoteHeadBytes, f.key)[:remoteHeadBytes])
		if f.key == "" {
			heads[r] = []byte(`{"id":1,"long":"` + strings.Repeat("x", remoteHeadBytes))[:remoteHeadBytes]
		}
		listed[r.Paths[0]] = remoteFile{path: r.Paths[0], sparkPath: r.Paths[0], size: f.size, head: &listedHead{}}
	}
	var got []string
	for _, r := range heldForTogether(wanted, heads, listed, rules) {
		got = append(got, r.Name)
	}
	want := []string{"a/0.json", "a/1.json", "a/2.json", "a/3.json", "a/4.json", "p/0.json", "p/1.json", "p/2.json", "p/3.json", "p/4.json"}
	if !slices.Equal(got, want) {
		t.Errorf("held %v, want %v", got, want)
	}
}

// By default, JSON files only the server sees whose heads type alike in
// groups of minHeldGroup or more are typed together from Spark, their
// rests not fetched; a small group's files are fetched and typed on the
// client, as before.
func TestHeldJSONFilesTypedTogether(t *testing.T) {
	client, fake := newFakeClient()
	fake.nowMillis = 10_000
	var held []string
	for i := range 5 {
		p := fmt.Sprintf("s3a://b/in/p%d.json", i)
		fake.files[p] = fakeFile{content: jsonOfSize(14<<20, "note"), mtimeMillis: 1000}
		held = append(held, p)
	}
	for i := range 2 {
		fake.files[fmt.Sprintf("s3a://b/in/q%d.json", i)] = fakeFile{content: jsonOfSize(2<<20, "remark"), mtimeMillis: 1000}
	}
	var inferred []string
	fake.jsonTypes = func(l jsonLanes) (sparkmerge.Schema, error) {
		inferred = append(inferred, l.paths...)
		var fields []sparkmerge.Field
		for i := range l.keys {
			fields = append(fields, sparkmerge.Field{Name: l.lane(i), Nullable: true, Type: sparkmerge.DataType{Kind: sparkmerge.KindStruct, Fields: []sparkmerge.Field{
				{Name: "id", Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true},
				{Name: "note", Type: sparkmerge.DataType{Kind: sparkmerge.KindString}, Nullable: true}}}})
			fields = append(fields, sparkmerge.Field{Name: l.marker(i), Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true})
		}
		return sparkmerge.Schema{Fields: fields}, nil
	}
	planned, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyUnion, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(inferred)
	if planned.TypedTogether != 5 || planned.RemoteTyped != 2 || planned.PastFetchLimit != 0 || !slices.Equal(inferred, held) {
		t.Errorf("%d typed together (inferred %v), %d on the client, %d past the limit; want the 5 p files, 2, 0", planned.TypedTogether, inferred, planned.RemoteTyped, planned.PastFetchLimit)
	}
	checkSchemas(t, planned.Reads, "/q", "id bigint, remark string", "id bigint, note string")
	// The heads, then the small group's rests: none of the held files'.
	if most := int64(7*remoteHeadBytes + 2*(2<<20+1<<10)); fake.fetchedBytes > most {
		t.Errorf("%d bytes fetched, want at most %d (every head, the small group's rests)", fake.fetchedBytes, most)
	}
}

// The inference that types JSON files together checks each line for
// UTF-8 as it reads it: a file with a line that is not is refused naming
// it and the encoding to give (its lane's line would otherwise reach the
// inference as a malformed record); the files it types are not read
// again by checkUTF8OnServer, whose request only a file Spark types
// alone still needs.
func TestJSONTypedTogetherChecksUTF8(t *testing.T) {
	for _, tc := range []struct {
		name      string
		b         string
		wantErr   string
		wantCalls []string
	}{
		{"a file that is not UTF-8", "{\"id\":1,\"city\":\"M\xfcnchen\"}\n",
			`source "$D/b.json" is not UTF-8: Spark found a line of the file holding bytes that are not valid UTF-8 (read where it lives): Spark would read every such byte as U+FFFD; give the file's encoding, e.g. the reader option encoding=ISO-8859-1`,
			[]string{"jsonLaneTypes $D/a.json,$D/b.json"}},
		{"UTF-8 files", "{\"id\":1,\"city\":\"M\u00fcnchen\"}\n", "",
			[]string{"jsonLaneTypes $D/a.json,$D/b.json", "readSchema $D/c.csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"a.json": "{\"id\":1}\n{\"id\":2}\n", "b.json": tc.b, "c.csv": "id\n1\n"}
			var sources []SourceSpec
			for _, name := range []string{"a.json", "b.json", "c.csv"} {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
					t.Fatal(err)
				}
				sources = append(sources, SourceSpec{Paths: []string{path}})
			}
			client, fake := newFakeClient()
			fake.schemas["readSchema "+filepath.Join(dir, "c.csv")] = "id int"
			fake.jsonTypes = func(l jsonLanes) (sparkmerge.Schema, error) {
				if l.validLine != "is_valid_utf8(value)" {
					t.Errorf("lines checked by %q, want Spark 4's is_valid_utf8", l.validLine)
				}
				var fields []sparkmerge.Field
				for i, p := range l.paths {
					content, err := os.ReadFile(p)
					if err != nil {
						return sparkmerge.Schema{}, err
					}
					if !utf8.Valid(content) {
						fields = append(fields, sparkmerge.Field{Name: l.notUTF8(i), Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true})
						continue
					}
					fields = append(fields, laneOfID(l, i)...)
				}
				return sparkmerge.Schema{Fields: fields}, nil
			}
			_, err := client.Plan(context.Background(), Job{Sources: sources, SparkInference: true})
			undir := func(s string) string { return strings.ReplaceAll(s, dir, "$D") }
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(undir(err.Error()), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			var calls []string
			for _, c := range fake.recorded() {
				calls = append(calls, undir(c))
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
