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

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// The splits of a file read alone, as a Spark 4.0.1 server of local[2]
// read them (_metadata.file_block_start of a text read of the file):
// 7,096, 5,626 and 2,048 bytes with maxPartitionBytes 2048 and openCostInBytes
// 1024; under the defaults, a lake's 50 MB file in two.
func TestFileSplitsStarts(t *testing.T) {
	small := fileSplits{maxPartitionBytes: 2048, openCost: 1024, minPartitions: 2}
	defaults := fileSplits{maxPartitionBytes: 128 << 20, openCost: 4 << 20, minPartitions: 2}
	for _, c := range []struct {
		splits fileSplits
		size   int64
		want   []int64
	}{
		{small, 7096, []int64{2048, 4096, 6144}},
		{small, 5626, []int64{2048, 4096}},
		{small, 2048, []int64{1536}},
		{small, 1024, nil},
		{defaults, 4 << 20, nil},
		{defaults, 50549329, []int64{(50549329 + 4<<20) / 2}},
		{defaults, 1 << 30, []int64{128 << 20, 256 << 20, 384 << 20, 512 << 20, 640 << 20, 768 << 20, 896 << 20}},
		{fileSplits{maxPartitionBytes: 128 << 20, openCost: 4 << 20, minPartitions: 16}, 50 << 20, []int64{4 << 20, 8 << 20, 12 << 20, 16 << 20, 20 << 20, 24 << 20, 28 << 20, 32 << 20, 36 << 20, 40 << 20, 44 << 20, 48 << 20}},
	} {
		if got := c.splits.starts(c.size); !slices.Equal(got, c.want) {
			t.Errorf("%+v, %d bytes: %v, want %v", c.splits, c.size, got, c.want)
		}
	}
}

func TestRangeSplits(t *testing.T) {
	for plan, want := range map[string]int64{
		"== Physical Plan ==\n*(1) Range (0, 1, step=1, splits=2)\n\n": 2,
		"Range (0, 1, step=1, splits=64)":                              64,
		"Range (0, 1, step=1)":                                         0,
	} {
		if got := rangeSplits(plan); got != want {
			t.Errorf("%q: %d, want %d", plan, got, want)
		}
	}
}

// A head is cut to its whole lines; a later split's start loses the line
// Spark's reader skips there, up to its first line feed, and a carriage
// return alone in it (a line end to Hadoop's reader) refuses the file.
func TestSlicedFile(t *testing.T) {
	r := &Read{Paths: []string{"/d/a.csv"}}
	f, ok := slicedFile(r, [][]byte{[]byte("a,b\n1,2\n3,"), []byte("2\n5,6\n7"), []byte("\n8,9\n")})
	if !ok || string(f.head) != "a,b\n1,2\n" || len(f.splits) != 2 || string(f.splits[0]) != "5,6\n7" || string(f.splits[1]) != "8,9\n" {
		t.Fatalf("%v: %+v", ok, f)
	}
	if f, ok := slicedFile(r, [][]byte{[]byte("a,b\r\n1,2\r\n"), []byte("2\r\n5,6\r\n")}); !ok || string(f.splits[0]) != "5,6\r\n" {
		t.Errorf("CRLF: %v, %+v", ok, f)
	}
	for name, slices := range map[string][][]byte{
		"no line in the head":       {[]byte("a,b")},
		"no line at a split":        {[]byte("a,b\n"), []byte("1,2")},
		"a carriage return alone":   {[]byte("a,b\n"), []byte("1\r2\n3,4\n")},
		"a carriage return in head": {[]byte("a,b\r1,2\n")},
	} {
		f, ok := slicedFile(r, slices)
		if name == "a carriage return in head" {
			// The head keeps it: the rules refuse such a line when they
			// fold the head (ownTypes).
			if _, err := infer.Spark40.CSVStartOf(f.head, csvOptions()); !ok || err == nil {
				t.Errorf("%s: %v, rules %v", name, ok, err)
			}
			continue
		}
		if ok {
			t.Errorf("%s: sliced", name)
		}
	}
}

func csvOptions() map[string]string {
	return map[string]string{"header": "true", "inferSchema": "true"}
}

// A file takes its group's types where its head folds to each of them,
// every column with a value, and each timestamp column starts each later
// split with a date or timestamp.
func TestOwnTypes(t *testing.T) {
	group := sparkmerge.NewSchema(
		sparkmerge.NewField("id", sparkmerge.DataType{Kind: sparkmerge.KindInt}),
		sparkmerge.NewField("at", sparkmerge.DataType{Kind: sparkmerge.KindTimestamp}),
		sparkmerge.NewField("note", sparkmerge.DataType{Kind: sparkmerge.KindString}))
	head := "id,at,note\n1,2024-01-02 03:04:05,x\n2,2024-01-02 03:04:06,y\n"
	for _, c := range []struct {
		name   string
		head   string
		splits []string
		want   bool
	}{
		{"the group's types, unsplit", head, nil, true},
		{"a later split starting with a timestamp", head, []string{"7,2024-01-03 00:00:00,z\n"}, true},
		{"a later split starting with a year", head, []string{"7,2024,z\n8,2024-01-03 00:00:00,z\n"}, false},
		{"one of several splits starting with a year", head, []string{"7,2024-01-03,z\n", "9,1999,z\n"}, false},
		{"a narrower column", "id,at,note\n1,2024-01-02 03:04:05,7\n", nil, false},
		{"a column without a value", "id,at,note\n1,2024-01-02 03:04:05,\n", nil, false},
		{"a date where the group has a timestamp", "id,at,note\n1,2024-01-02,x\n", nil, false},
		{"another name", "id,when,note\n1,2024-01-02 03:04:05,x\n", nil, false},
		{"a head the rules refuse", "id,at,note\n1,2024/01/02,x\n", nil, false},
	} {
		f := &headerFile{r: &Read{Options: csvOptions()}, head: []byte(c.head)}
		for _, s := range c.splits {
			f.splits = append(f.splits, []byte(s))
		}
		if got := len(provable([]*headerFile{f}, infer.Spark40)) == 1 && ownTypes(f, "id,at,note", group, infer.Spark40); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Files are grouped by their options and header line (blank lines before
// it skipped, as Spark's inference skips them); a group of one is no
// group.
func TestGroupByHeaderLine(t *testing.T) {
	file := func(name, head string, options map[string]string) *headerFile {
		return &headerFile{r: &Read{Format: "csv", Paths: []string{"/d/" + name}, Options: options}, head: []byte(head)}
	}
	semi := map[string]string{"header": "true", "inferSchema": "true", "sep": ";"}
	groups := groupByHeaderLine([]*headerFile{
		file("a.csv", "x,y\n1,2\n", csvOptions()),
		file("b.csv", "\n  \nx,y\n3,4\n", csvOptions()),
		file("c.csv", "x,y\n", semi),
		file("d.csv", "x,z\n", csvOptions()),
		file("e.csv", "x,y\r\n5,6\r\n", csvOptions()),
		file("f.csv", "x,y\n", semi),
		file("g.csv", "\n\n", csvOptions()),
	})
	var got [][]string
	for _, g := range groups {
		var names []string
		for _, f := range g.files {
			names = append(names, filepath.Base(f.r.Paths[0]))
		}
		got = append(got, names)
	}
	want := [][]string{{"a.csv", "b.csv", "e.csv"}, {"c.csv", "f.csv"}}
	if len(got) != len(want) || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Errorf("groups %v, want %v", got, want)
	}
}

// A local file's slices are read at its offsets.
func TestLocalSlices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte("a,b\n1,2\n3,4\n5,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, ok := localSlices(&Read{Paths: []string{path}}, []int64{0, 9})
	if !ok || string(f.head) != "a,b\n1,2\n3,4\n5,6\n" || len(f.splits) != 1 || string(f.splits[0]) != "5,6\n" {
		t.Fatalf("%v: %+v", ok, f)
	}
}

// A task's heap is its executor's (the driver's on a local master) over
// the executor's cores, Spark's 1 GiB where the heap is not said, and
// the session's parallelism where the cores are not.
func TestTaskHeapOf(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		name        string
		settings    map[string]string
		parallelism int64
		want        int64
	}{
		{"the --local default", map[string]string{"spark.master": "local[2]", "spark.driver.memory": "1g"}, 2, gib / 2},
		{"local, every core", map[string]string{"spark.master": "local[*]", "spark.driver.memory": "4g"}, 8, gib / 2},
		{"local, one core", map[string]string{"spark.master": "local", "spark.driver.memory": "512m"}, 1, gib / 2},
		{"local with retries", map[string]string{"spark.master": "local[4,3]", "spark.driver.memory": "2g"}, 4, gib / 2},
		{"local, heap not said", map[string]string{"spark.master": "local[2]"}, 2, gib / 2},
		{"a number alone is MiB", map[string]string{"spark.master": "local[2]", "spark.driver.memory": "2048"}, 2, gib},
		{"a cluster's executors", map[string]string{"spark.master": "spark://m:7077", "spark.driver.memory": "16g", "spark.executor.memory": "8g", "spark.executor.cores": "4"}, 32, 2 * gib},
		{"executor cores not said", map[string]string{"spark.master": "spark://m:7077", "spark.executor.memory": "8g"}, 16, gib / 2},
		{"nothing said", nil, 4, gib / 4},
		{"a heap Spark would refuse", map[string]string{"spark.master": "yarn", "spark.executor.memory": "lots"}, 2, gib / 2},
	} {
		if got := taskHeapOf(c.settings, c.parallelism); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// The files whose slices are fetched hold at most an eighth of a task's
// heap each (and never past maxSlicedFile): on the --local default, four
// files of 100 MiB killed the server, four of 60 MiB did not. A file
// whose head came with its listing and which has no later split needs no
// slices, so no bound.
func TestSlicesBoundedByTheTaskHeap(t *testing.T) {
	if got := (fileSplits{taskHeap: 512 << 20}).sliceLimit(); got != 64<<20 {
		t.Errorf("a task of 512 MiB: %d", got)
	}
	if got := (fileSplits{taskHeap: 8 << 30}).sliceLimit(); got != maxSlicedFile {
		t.Errorf("a task of 8 GiB: %d, want maxSlicedFile", got)
	}
	if got := (fileSplits{}).sliceLimit(); got != maxSlicedFile {
		t.Errorf("a task's heap not known: %d, want maxSlicedFile", got)
	}
	client, fake := newFakeClient()
	// A task of 16 MiB: files of 2 MiB at most; splits of 1 MiB.
	splits := fileSplits{maxPartitionBytes: 1 << 20, openCost: 1 << 20, minPartitions: 2, taskHeap: 16 << 20}
	read := func(name string, size int64, head []byte) *Read {
		r := &Read{Name: name, Format: "csv", Paths: []string{"s3a://b/" + name}, Options: csvOptions(), listed: true, listedSize: size, fetchedHead: head}
		return r
	}
	small := read("small.csv", 1536<<10, nil)
	large := read("large.csv", 3<<20, nil)
	headed := read("headed.csv", 900<<10, []byte("a,b\n1,2\n"))
	listed := map[string]remoteFile{}
	for _, r := range []*Read{small, large, headed} {
		listed[r.Paths[0]] = remoteFile{path: r.Paths[0], sparkPath: r.Paths[0], size: r.listedSize}
	}
	headed.listedSize = int64(len(headed.fetchedHead))
	listed[headed.Paths[0]] = remoteFile{path: headed.Paths[0], sparkPath: headed.Paths[0], size: headed.listedSize}
	files, err := client.readSlices(context.Background(), []*Read{small, large, headed}, listed, splits)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].r != headed {
		t.Errorf("%d files read without a fetch, want headed.csv alone", len(files))
	}
	if calls := fake.recorded(); !slices.Equal(calls, []string{"fileSlices s3a://b/small.csv"}) {
		t.Errorf("calls %q, want the slices of small.csv alone", calls)
	}
}

// A file is typed by its header line's group past the session's split
// or from a MiB on; smaller files up to the split stay with the lanes,
// which type many in one inference.
func TestWorthAGroup(t *testing.T) {
	const split = 4 << 20 // min(maxPartitionBytes, openCostInBytes) by default
	for _, c := range []struct {
		size, split int64
		want        bool
	}{
		{size: 100 << 10, split: split, want: false},
		{size: minByHeaderFile - 1, split: split, want: false},
		{size: minByHeaderFile, split: split, want: true},
		{size: 3 << 20, split: split, want: true},
		{size: split + 1, split: split, want: true},
		{size: 5 << 10, split: 40, want: true},       // a session of tiny splits
		{size: 2 << 20, split: 64 << 20, want: true}, // a session of large ones
		{size: 512 << 10, split: 64 << 20, want: false},
	} {
		if got := worthAGroup(c.size, c.split); got != c.want {
			t.Errorf("worthAGroup(%d, %d) = %v, want %v", c.size, c.split, got, c.want)
		}
	}
}

// With no file fetched whole (Job.FetchLimit below 0), files only the
// server sees whose heads the rules take are Spark's to type: those of a
// MiB or more and one header line by one inference of them, proven from
// the heads their listing brought (the fake has no slices to fetch),
// nothing fetched past those heads. By default the same files are
// fetched whole and typed on the client.
func TestServerOnlyFilesTypedByHeaderFromTheirListedHeads(t *testing.T) {
	content := func(year int) string {
		var b strings.Builder
		b.WriteString("id,day,note\n")
		for i := range 60000 {
			fmt.Fprintf(&b, "%d,%d-%02d-%02d,\"a, %d\"\n", i, year, 1+i%12, 1+i%28, i)
		}
		return b.String()
	}
	for _, limit := range []int64{-1, 0} {
		client, fake := newFakeClient()
		fake.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128m", "spark.sql.files.openCostInBytes": "4m", "spark.sql.legacy.timeParserPolicy": "CORRECTED"}
		fake.splits = fileSplits{maxPartitionBytes: 128 << 20, openCost: 4 << 20, minPartitions: 2}
		a, b := content(2023), content(2024)
		if len(a) < minByHeaderFile || len(a) > 4<<20 {
			t.Fatalf("a file of %d bytes: not from a MiB up to the split", len(a))
		}
		fake.files["s3a://b/in/a.csv"] = fakeFile{content: a, mtimeMillis: 1000}
		fake.files["s3a://b/in/b.csv"] = fakeFile{content: b, mtimeMillis: 1000}
		fake.nowMillis = 10_000
		fake.schemas["readSchema s3a://b/in/a.csv,s3a://b/in/b.csv"] = "id int, day date, note string"
		planned, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyUnion, FetchLimit: limit, DryRun: true})
		if err != nil {
			t.Fatalf("FetchLimit %d: %v", limit, err)
		}
		for _, r := range planned.Reads {
			if got := r.Schema.String(); got != "id int, day date, note string" {
				t.Errorf("FetchLimit %d: %s typed %s", limit, r.Name, got)
			}
		}
		calls := strings.Join(fake.recorded(), "\n")
		switch limit {
		case -1:
			if planned.TypedByHeader != 2 || planned.ByHeaderRequests != 1 || planned.RemoteTyped != 0 || planned.PastFetchLimit != 2 {
				t.Errorf("FetchLimit -1: %d typed by header in %d requests, %d on the client, %d past the limit; want 2 in 1, none, 2", planned.TypedByHeader, planned.ByHeaderRequests, planned.RemoteTyped, planned.PastFetchLimit)
			}
			if strings.Contains(calls, "fetchFiles") || fake.fetchedBytes > 2*remoteHeadBytes {
				t.Errorf("FetchLimit -1: %d bytes fetched, calls:\n%s\nwant the listing's heads alone", fake.fetchedBytes, calls)
			}
		case 0:
			if planned.RemoteTyped != 2 || planned.TypedByHeader != 0 || planned.PastFetchLimit != 0 || fake.fetchedBytes < int64(len(a)+len(b)) {
				t.Errorf("default limit: %d typed on the client, %d by header, %d bytes fetched; want both fetched whole and typed on the client", planned.RemoteTyped, planned.TypedByHeader, fake.fetchedBytes)
			}
		}
	}
}

// csvOfSize is a CSV file of the header id,day,note and lines up to size
// bytes: dates, and a quoted note that pads each line.
func csvOfSize(size int, year int) string {
	var b strings.Builder
	b.WriteString("id,day,note\n")
	pad := strings.Repeat("x", 180)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%d,%d-%02d-%02d,\"a, %s\"\n", i, year, 1+i%12, 1+i%28, pad)
	}
	return b.String()
}

// Files whose heads the rules take are held for their header line's
// inference, not fetched, where the group is of two files or more and
// holds minHeldGroup or more: plain CSV files of a MiB or more whose head
// folds with every column valued and came with their listing (where
// their rests are fetched from, if the inference does not prove them).
func TestHeldForHeader(t *testing.T) {
	rules, _ := infer.RulesFor("4.0.1")
	head := func(content string) []byte { return []byte(content[:min(len(content), headBytes)]) }
	named := func(content, note string) string { return strings.Replace(content, "id,day,note", "id,day,"+note, 1) }
	big := csvOfSize(14<<20, 2024)
	small := named(csvOfSize(2<<20, 2024), "b")
	var empty strings.Builder // no day in its head
	empty.WriteString("id,day,d\n")
	for i := 0; empty.Len() < 14<<20; i++ {
		day := ""
		if i > 2000 {
			day = "2024-01-02"
		}
		fmt.Fprintf(&empty, "%d,%s,%s\n", i, day, strings.Repeat("y", 180))
	}
	files := map[string]string{
		"a/1.csv": big, "a/2.csv": big, "a/3.csv": big, "a/4.csv": big, "a/5.csv": big, // 70 MiB: held
		"b/1.csv": small, "b/2.csv": small, // 4 MiB: fetched
		"c/1.csv": big,                                                                                                                        // alone: fetched
		"d/1.csv": empty.String(), "d/2.csv": empty.String(), "d/3.csv": empty.String(), "d/4.csv": empty.String(), "d/5.csv": empty.String(), // not provable
		"f/1.csv": named(big, "f"), "f/2.csv": named(big, "f"), "f/3.csv": named(big, "f"), "f/4.csv": named(big, "f"), "f/5.csv": named(big, "f"), // heads not listed
		"e/1.csv.gz": named(big, "e"), "e/2.csv.gz": named(big, "e"), "e/3.csv.gz": named(big, "e"), "e/4.csv.gz": named(big, "e"), "e/5.csv.gz": named(big, "e"), // gzip
	}
	heads := map[*Read][]byte{}
	listed := map[string]remoteFile{}
	var wanted []*Read
	for _, name := range slices.Sorted(maps.Keys(files)) {
		content := files[name]
		if strings.HasPrefix(name, "c/") {
			content = named(content, "c")
		}
		r := &Read{Name: name, Format: "csv", Paths: []string{"s3a://b/" + name}, Options: map[string]string{"header": "true", "inferSchema": "true"}}
		wanted = append(wanted, r)
		heads[r] = head(content)
		r.listed, r.listedSize = true, int64(len(content))
		listed[r.Paths[0]] = remoteFile{path: r.Paths[0], sparkPath: r.Paths[0], size: int64(len(content)), head: &listedHead{}}
		if strings.HasPrefix(name, "f/") {
			listed[r.Paths[0]] = remoteFile{path: r.Paths[0], sparkPath: r.Paths[0], size: int64(len(content))} // its head fetched by a job of its own
		}
	}
	var got []string
	for _, r := range heldForHeader(wanted, heads, listed, rules) {
		got = append(got, r.Name)
	}
	if want := []string{"a/1.csv", "a/2.csv", "a/3.csv", "a/4.csv", "a/5.csv"}; !slices.Equal(got, want) {
		t.Errorf("held %v, want %v", got, want)
	}
}

// By default, files only the server sees of one header line that hold
// minHeldGroup or more are typed by their group's inference from their
// listed heads, their rests not fetched; a group whose inference does
// not prove its files (here it fails) has its rests fetched after it and
// typed on the client, as without the hold.
func TestHeldFilesTypedByHeaderOrFetchedAfter(t *testing.T) {
	client, fake := newFakeClient()
	fake.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128m", "spark.sql.files.openCostInBytes": "128m", "spark.sql.legacy.timeParserPolicy": "CORRECTED"}
	fake.splits = fileSplits{maxPartitionBytes: 128 << 20, openCost: 128 << 20, minPartitions: 2}
	fake.nowMillis = 10_000
	var proven []string
	for i := range 5 {
		p, q := fmt.Sprintf("s3a://b/in/p%d.csv", i), fmt.Sprintf("s3a://b/in/q%d.csv", i)
		fake.files[p] = fakeFile{content: csvOfSize(14<<20, 2023), mtimeMillis: 1000}
		fake.files[q] = fakeFile{content: strings.Replace(csvOfSize(14<<20, 2024), "id,day,note", "id,day,remark", 1), mtimeMillis: 1000}
		proven = append(proven, p) // (the q files' inference has no answer: it fails)
	}
	fake.schemas["readSchema "+strings.Join(proven, ",")] = "id int, day date, note string"
	planned, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/in"}}}, Strategy: StrategyUnion, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if planned.TypedByHeader != 5 || planned.RemoteTyped != 5 || planned.PastFetchLimit != 0 {
		t.Errorf("%d typed by header, %d on the client, %d past the limit; want 5, 5, 0", planned.TypedByHeader, planned.RemoteTyped, planned.PastFetchLimit)
	}
	checkSchemas(t, planned.Reads, "/q", "id int, day date, remark string", "id int, day date, note string")
	// The listing's heads, then the refused group's rests: none of the
	// proven group's.
	if most := int64(10*remoteHeadBytes + 5*(14<<20+1<<10)); fake.fetchedBytes > most {
		t.Errorf("%d bytes fetched, want at most %d (every head, the refused group's rests)", fake.fetchedBytes, most)
	}
}

// checkSchemas checks that each of reads has the schema withPart where
// its name holds part, else other.
func checkSchemas(t *testing.T, reads []*Read, part, withPart, other string) {
	t.Helper()
	for _, r := range reads {
		want := other
		if strings.Contains(r.Name, part) {
			want = withPart
		}
		if got := r.Schema.String(); got != want {
			t.Errorf("%s: %s, want %s", r.Name, got, want)
		}
	}
}
