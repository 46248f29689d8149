package spark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
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
// literal (the file is a read of its own): a line that may nest deeper
// than Spark reads safely marks the file instead (it goes alone, measured
// first), and one that starts with '{' is wrapped without a pattern.
func TestJSONLineExpr(t *testing.T) {
	l := jsonLanes{nonce: "n0"}
	got := l.lineExpr(3)
	for _, want := range []string{
		"CASE WHEN " + jsonDeeperFilter(256) + " AND " + jsonNestingExpr(256) + ` > 0 THEN '{"x3_n0":1}'`,
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
		"CASE WHEN lane IS NULL THEN '' ELSE CASE WHEN " + jsonDeeperFilter(256) + " AND " + jsonNestingExpr(256) + ` > 0 THEN concat('{"', 'x', lane, '_n0":1}')`,
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
		fields = append(fields, sparkmerge.Field{Name: l.lane(i), Nullable: true, Type: sparkmerge.DataType{Kind: sparkmerge.KindStruct,
			Fields: []sparkmerge.Field{{Name: "id", Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true}}}})
		if !l.perFile {
			fields = append(fields, sparkmerge.Field{Name: l.marker(i), Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true})
		}
	}
	return sparkmerge.Schema{Fields: fields}
}
