package spark

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// writeSettled writes a file modified a minute ago, so that it is stamped
// (see settled) as files that are not being written are.
func writeSettled(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	if err := os.Chtimes(p, past, past); err != nil {
		t.Fatal(err)
	}
}

// fileReads writes files into a temporary directory and makes one read
// per file, in the order of names.
func fileReads(t *testing.T, files map[string]string, names ...string) []*Read {
	t.Helper()
	dir := t.TempDir()
	var reads []*Read
	for i, name := range names {
		p := filepath.Join(dir, name)
		writeSettled(t, p, files[name])
		sources, err := resolveSources([]SourceSpec{{Paths: []string{p}}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
		reads[i].order = i
	}
	return reads
}

// batchPlan infers the given CSV files locally, one read each, and plans
// them.
func batchPlan(t *testing.T, files map[string]string, names ...string) *Planned {
	t.Helper()
	local, remote := inferLocally(fileReads(t, files, names...), "4.0.1", footerConf{})
	reads := append(local, remote...)
	plan, err := sparkmerge.NewPlan(planSources(reads), sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Planned{Reads: reads, Plan: plan}
}

// scansOf lays out p's positional scans afresh (tests change the reads'
// facts after planning).
func scansOf(p *Planned) (batches []scanBatch, rest []int) {
	s := planScans(p.Reads, p.Plan)
	return s.batches, s.rest
}

func TestScanBatches(t *testing.T) {
	files := map[string]string{
		"a.csv": "x,y\n1,2\n",
		"b.csv": "y,x\n3,4\n",
		"c.csv": "x,y,z\n1,2,3\n",
		"d.csv": "z,x,y\n1,2,3\n",
		"e.csv": "x,y\n\"q,r\",2\n", // quoted: the scan parses its lines with Spark's parser
		"f.csv": "x\n1\n",           // narrower: its rows are padded
		"h.csv": "x,y\n\"\",2\n",    // an empty quoted value: Spark types it, it reads alone

		"g.semi.csv": "x;y\n1;2\n",
	}
	p := batchPlan(t, files, "a.csv", "b.csv", "c.csv", "d.csv", "e.csv", "f.csv", "h.csv")
	batches, rest := scansOf(p)
	var got []string
	for _, b := range batches {
		var names []string
		for _, f := range b.files {
			names = append(names, filepath.Base(f.Paths[0]))
		}
		got = append(got, strings.Join(names, "+"))
	}
	var alone []string
	for _, i := range rest {
		alone = append(alone, filepath.Base(p.Reads[i].Paths[0]))
	}
	// Files of every width share one scan as wide as the widest.
	if strings.Join(got, " ") != "a.csv+b.csv+c.csv+d.csv+e.csv+f.csv" || strings.Join(alone, " ") != "h.csv" || batches[0].width != 3 {
		t.Errorf("batches %v (width %d), alone %v", got, batches[0].width, alone)
	}

	// Other reader options never share a scan.
	dir := t.TempDir()
	var reads []*Read
	for i, opts := range []map[string]string{nil, {"sep": ";"}} {
		name := []string{"a.csv", "g.semi.csv"}[i]
		path := filepath.Join(dir, name)
		writeSettled(t, path, files[name])
		sources, err := resolveSources([]SourceSpec{{Paths: []string{path}, Options: opts}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
	}
	local, _ := inferLocally(reads, "4.0.1", footerConf{})
	plan, err := sparkmerge.NewPlan(planSources(local), sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if batches, _ := scansOf(&Planned{Reads: local, Plan: plan}); len(local) != 2 || len(batches) != 0 {
		t.Errorf("%d local reads, batches %v: want two reads, no batch", len(local), batches)
	}
}

// A relative path cannot be matched against the server's file name, a file
// with no stamp cannot be checked, and a big file is faster alone.
func TestCSVBatchNeedsAbsolutePathAndStamp(t *testing.T) {
	p := batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	if batches, _ := scansOf(p); len(batches) != 1 {
		t.Fatalf("batches %v, want one", batches)
	}
	p.Reads[0].stamp = fileStamp{}
	if batches, _ := scansOf(p); len(batches) != 0 {
		t.Errorf("a read without stamp batched: %v", batches)
	}
	// A big file reads faster on its own (see batchFileLimit).
	p = batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	p.Reads[0].stamp.size = batchFileLimit("csv")
	if batches, _ := scansOf(p); len(batches) != 1 {
		t.Errorf("a file of %d bytes not batched: %v", p.Reads[0].stamp.size, batches)
	}
	p.Reads[0].stamp.size = batchFileLimit("csv") + 1
	if batches, _ := scansOf(p); len(batches) != 0 {
		t.Errorf("a file over %d bytes batched: %v", batchFileLimit("csv"), batches)
	}
	p = batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	p.Reads[1].Paths = []string{"rel/b.csv"}
	if batches, _ := scansOf(p); len(batches) != 0 {
		t.Errorf("a relative path batched: %v", batches)
	}
}

// A file is batched only when a row's file, as rowFileOf gives it from
// Spark's _metadata.file_path, can equal its path as written: a clean
// absolute path, or an object store URI such as Spark lists.
func TestNamesRowFile(t *testing.T) {
	for p, want := range map[string]bool{
		"/data/a.csv":                   true,
		"/data/a b%20c.csv":             true,
		"s3a://bucket/dir/a.csv":        true,
		"gs://bucket/a b.csv":           true,
		"abfss://c@acct.dfs.core/x.csv": true,
		"hdfs://nn:8020/x/a.csv":        true,
		"rel/a.csv":                     false,
		"/data/../a.csv":                false,
		"/data//a.csv":                  false,
		"file:/data/a.csv":              false, // the row's file has no scheme
		"file:///data/a.csv":            false,
		"dbfs:/Volumes/a.csv":           false, // the row's dbfs: is stripped
		"s3a://bucket":                  false,
		"s3a://bucket/":                 false,
		"s3a:///a.csv":                  false,
		"s3a://bucket/dir//a.csv":       false,
		"s3a://bucket/dir/../a.csv":     false,
		"s3a://bucket/dir/":             false,
	} {
		if got := namesRowFile(p); got != want {
			t.Errorf("namesRowFile(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestCastKindFor(t *testing.T) {
	s := sparkmerge.Simple
	cases := []struct {
		from, to sparkmerge.DataType
		want     castKind
	}{
		{s(sparkmerge.KindString), s(sparkmerge.KindString), castNone},
		{s(sparkmerge.KindInt), s(sparkmerge.KindInt), castDirect},
		{s(sparkmerge.KindString), s(sparkmerge.KindLong), castDirect},
		{s(sparkmerge.KindInt), s(sparkmerge.KindLong), castDirect},
		// "-0" is an integer 0 first, then 0.0 (not -0.0).
		{s(sparkmerge.KindInt), s(sparkmerge.KindDouble), castThrough},
		{sparkmerge.NewDecimal(20, 0), s(sparkmerge.KindDouble), castThrough},
		{s(sparkmerge.KindLong), sparkmerge.NewDecimal(22, 2), castDirect},
		// Parsed, then printed: "007" is "7", "1.50" is "1.5".
		{s(sparkmerge.KindInt), s(sparkmerge.KindString), castThrough},
		{s(sparkmerge.KindDouble), s(sparkmerge.KindString), castThrough},
		{s(sparkmerge.KindBoolean), s(sparkmerge.KindString), castThrough},
		// A fraction into a decimal is rounded twice through a double.
		{s(sparkmerge.KindDouble), sparkmerge.NewDecimal(30, 20), castThrough},
		{s(sparkmerge.KindLong), s(sparkmerge.KindInt), castThrough},
	}
	for _, tc := range cases {
		if got := castKindFor(tc.from, tc.to); got != tc.want {
			t.Errorf("%s -> %s: kind %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
}

// A tolerant cast (PERMISSIVE) nulls what the file's parse cannot parse,
// and only there: the planner's cast after it keeps failing on a value it
// cannot take. A checked cast names the column and the row's file.
func TestValueCastSQL(t *testing.T) {
	s := sparkmerge.Simple
	cases := []struct {
		cast valueCast
		want string
	}{
		{valueCast{kind: castNone, from: s(sparkmerge.KindString), to: s(sparkmerge.KindString)}, "v"},
		{valueCast{kind: castDirect, to: s(sparkmerge.KindLong), tolerant: true}, "try_cast(v AS bigint)"},
		{valueCast{kind: castThrough, from: s(sparkmerge.KindInt), to: s(sparkmerge.KindDouble), tolerant: true}, "CAST(try_cast(v AS int) AS double)"},
		{valueCast{kind: castThrough, from: s(sparkmerge.KindInt), to: s(sparkmerge.KindDouble)}, "CAST(CAST(v AS int) AS double)"},
		{valueCast{kind: castChecked, from: s(sparkmerge.KindLong), to: s(sparkmerge.KindDouble), column: "qty"},
			sparkmerge.CheckedCast("CAST(v AS bigint)", s(sparkmerge.KindLong), s(sparkmerge.KindDouble), "qty", "f")},
	}
	for _, tc := range cases {
		if got := tc.cast.sql("v", "f"); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.cast, got, tc.want)
		}
	}
}

// The batch's expressions do not grow with its files: positions and
// templates are literal tables, and a column has one template per way its
// files type it.
func TestCSVBatchLayout(t *testing.T) {
	files := map[string]string{}
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("f%03d.csv", i)
		names = append(names, name)
		if i%2 == 0 {
			files[name] = "id,qty,note\n1,2,z\n"
		} else {
			files[name] = "note,id,qty\nz,1,x\n"
		}
	}
	p := batchPlan(t, files, names...)
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(rest) != 0 || len(batches[0].reads) != 100 {
		t.Fatalf("batches %v, rest %v", batches, rest)
	}
	l := batches[0].layout
	if got := p.Plan.Target.Names(); strings.Join(got, ",") != "id,qty,note" {
		t.Fatalf("target %v", got)
	}
	// qty is an int in half the files and text in the others.
	var casts []string
	for _, cast := range l.casts[1] {
		casts = append(casts, fmt.Sprintf("%d %s->%s", cast.kind, cast.from, cast.to))
	}
	want := fmt.Sprintf("%d int->string | %d string->string", castThrough, castNone)
	if strings.Join(casts, " | ") != want {
		t.Errorf("qty casts %v, want %v", casts, want)
	}
	// File 0 has qty second (position 2, template 1), file 1 third
	// (position 3, template 2).
	if l.positions[0][1] != 2 || l.codes[0][1] != 1 || l.positions[1][1] != 3 || l.codes[1][1] != 2 {
		t.Errorf("qty: file 0 at %d/%d, file 1 at %d/%d", l.positions[0][1], l.codes[0][1], l.positions[1][1], l.codes[1][1])
	}
}

// jsonGroupPlan writes JSON-lines files, infers them locally, groups them
// as auto does and plans them with a provenance column.
func jsonGroupPlan(t *testing.T, files map[string]string, names ...string) *Planned {
	t.Helper()
	reads := fileReads(t, files, names...)
	local, remote := inferLocally(reads, "4.0.1", footerConf{})
	if len(remote) != 0 {
		t.Fatalf("%d files not inferred locally", len(remote))
	}
	reads = groupExact(local, sparkmerge.Options{SourceColumn: "_source"})
	plan, err := sparkmerge.NewPlan(planSources(reads), sparkmerge.Options{SourceColumn: "_source"})
	if err != nil {
		t.Fatal(err)
	}
	return &Planned{Reads: reads, Plan: plan}
}

// The files of a multi-file JSON read join positional scans one by one,
// under the group's schema, with their own paths as provenance (what the
// group's read gives each row from its file).
func TestJSONGroupMembersBatch(t *testing.T) {
	files := map[string]string{
		"a.json": `{"id":1,"v":7}` + "\n",
		"b.json": `{"id":2,"v":25,"w":"x"}` + "\n",
		"c.json": `{"ID":3,"v":1,"w":1.5}` + "\n", // another spelling: its own read
	}
	p := jsonGroupPlan(t, files, "a.json", "b.json", "c.json")
	if len(p.Reads) != 2 || !p.Reads[0].multiFile() {
		t.Fatalf("reads %v: want a+b grouped, c alone", p.Reads)
	}
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(rest) != 0 {
		t.Fatalf("batches %v, rest %v: want one batch of everything", batches, rest)
	}
	b := batches[0]
	if fmt.Sprint(b.reads) != "[0 0 1]" || len(b.files) != 3 || b.files[1] != p.Reads[0].members[1] {
		t.Fatalf("batch reads %v, files %v", b.reads, b.files)
	}
	// Both spellings of id are positions; the group's keys come first.
	if got := strings.Join(b.keys, ","); got != "id,v,w,ID" {
		t.Errorf("keys %s, want id,v,w,ID", got)
	}
	l := b.layout
	target := p.Plan.Target.Names()
	col := func(name string) int { return slices.Index(target, name) }
	// v is a bigint in every file: from_json parses it as one. Each read
	// has one spelling of id, so the first of id and ID is the row's.
	if got := fmt.Sprint(l.typed[col("v")], l.typed[col("id")]); got != "[1] [0 3]" {
		t.Errorf("typed keys of v and id: %s, want [1] [0 3]", got)
	}
	// w is text in the group and a double in c, whose text from_json
	// would print anew: routed by position, the only key in the array.
	w := col("w")
	if l.typed[w] != nil || fmt.Sprint(l.routed) != "[2]" {
		t.Fatalf("w typed by %v; routed keys %v, want [2]", l.typed[w], l.routed)
	}
	// a lacks w: its position holds null for its rows, as in the group's read.
	if l.positions[0][w] != 1 || l.codes[0][w] == 0 || l.positions[2][w] != 1 || l.casts[w][l.codes[2][w]-1].kind != castThrough {
		t.Errorf("w of a: position %d, code %d; of c: position %d, casts %+v", l.positions[0][w], l.codes[0][w], l.positions[2][w], l.casts[w])
	}
	if !l.provenance[col("_source")] {
		t.Errorf("_source is not the provenance column")
	}
	want := []string{p.Reads[0].Paths[0], p.Reads[0].Paths[1], p.Reads[1].Name}
	if fmt.Sprint(b.sources) != fmt.Sprint(want) {
		t.Errorf("provenance %v, want %v", b.sources, want)
	}
}

// from_json parses a key straight into the target's type only where that
// gives each value what the file's read and the planner's cast give it.
func TestJSONTypedKeys(t *testing.T) {
	files := map[string]string{
		// big: a bigint past 2^53 into double, a cast the merge checks.
		"a.json": `{"big":9007199254740993,"n":-0,"d":1.5,"s":"x"}` + "\n",
		"b.json": `{"big":1.5,"n":"t","d":"u","s":"y"}` + "\n",
	}
	p := batchPlan(t, files, "a.json", "b.json")
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(rest) != 0 {
		t.Fatalf("batches %v, rest %v", batches, rest)
	}
	b := batches[0]
	target := p.Plan.Target.Names()
	typed := func(name string) bool { return b.layout.typed[slices.Index(target, name)] != nil }
	for name, want := range map[string]bool{
		"big": false, // checked: routed, so that the check sees the file's value
		"n":   true,  // bigint into string: from_json prints -0 as 0, as the cast does
		"d":   false, // double into string: from_json would print the double anew
		"s":   true,  // string in both
	} {
		if typed(name) != want {
			t.Errorf("%s typed: %v, want %v", name, typed(name), want)
		}
	}
	if got := len(b.layout.routed); got != 2 {
		t.Errorf("%d keys routed, want big and d", got)
	}
	if types := b.keyTypes(); strings.Join(types, ",") != "STRING,STRING,string,string" {
		t.Errorf("from_json types %v (keys %v)", types, b.keys)
	}
}

// A key Spark's inference drops from a file (an empty object, or an array
// of them, is no column of the file read alone) is still in the file's
// records: from_json would parse it into another file's string column as
// its text ('{}'). Such a column is routed, and the file gives it null.
func TestJSONTypedKeysSeeDroppedKeys(t *testing.T) {
	files := map[string]string{
		"a.json": `{"id":1,"a":{}}` + "\n",
		"b.json": `{"id":2,"a":[{}]}` + "\n",
		"c.json": `{"id":3,"a":"x"}` + "\n",
	}
	p := batchPlan(t, files, "a.json", "b.json", "c.json")
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(rest) != 0 {
		t.Fatalf("batches %v, rest %v", batches, rest)
	}
	l := batches[0].layout
	a := slices.Index(p.Plan.Target.Names(), "a")
	if l.typed[a] != nil {
		t.Errorf("a typed by keys %v: from_json would give a.json's {} as text", l.typed[a])
	}
	if l.typed[slices.Index(p.Plan.Target.Names(), "id")] == nil {
		t.Errorf("id not typed")
	}
	for m, want := range []bool{false, false, true} {
		if got := l.codes[m][a] != 0; got != want {
			t.Errorf("file %d gives a a value: %v, want %v", m, got, want)
		}
	}
}

// A JSON batch whose columns all take typed keys reads with no route
// join; a provenance column needs each row's source from the route table.
func TestJSONBatchUnrouted(t *testing.T) {
	files := map[string]string{
		"a.json": `{"id":1,"v":-0}` + "\n",
		"b.json": `{"ID":2,"v":2.5,"w":"x"}` + "\n",
	}
	p := batchPlan(t, files, "a.json", "b.json")
	batches, _ := scansOf(p)
	if len(batches) != 1 || !batches[0].layout.unrouted() {
		t.Fatalf("batches %+v: want one, unrouted", batches)
	}
	// Scanned for the merge, its rows hold the record alone, and the
	// projection asks for nothing else; scanned with each row's source
	// (--verify's count), they are routed, and may be projected too.
	c := &Client{}
	for _, withSource := range []bool{false, true} {
		rows := c.batchScan(p.Reads, batches[0], withSource)
		if rows.routed != withSource {
			t.Errorf("withSource %v: routed %v", withSource, rows.routed)
		}
		scan, values := rows.String(), strings.Join(batches[0].values(len(p.Plan.Target.Fields), rows.routed, rows.empties), ", ")
		for _, col := range []string{castsColumn, sourceColumn, fileColumn} {
			if strings.Contains(scan, col) != withSource || strings.Contains(values, col) != withSource {
				t.Errorf("withSource %v: %s in the scan %v, in its projection %v", withSource, col, strings.Contains(scan, col), strings.Contains(values, col))
			}
		}
		if err := batches[0].project(p.Plan.Target, rows).Err(); err != nil {
			t.Errorf("withSource %v: %v", withSource, err)
		}
	}
	grouped := jsonGroupPlan(t, files, "a.json", "b.json")
	batches, _ = scansOf(grouped)
	if len(batches) != 1 || batches[0].layout.unrouted() {
		t.Errorf("with a provenance column: unrouted")
	}
	csv := batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	if batches, _ = scansOf(csv); len(batches) != 1 || batches[0].layout.unrouted() {
		t.Errorf("CSV batch unrouted")
	}
}

// A group larger than a scan spans scans; its last file alone still reads
// positionally (its read is the group, which must not be read again).
func TestJSONGroupSpansBatches(t *testing.T) {
	files := map[string]string{}
	var names []string
	for i := range maxBatchFiles + 1 {
		name := fmt.Sprintf("f%03d.json", i)
		names = append(names, name)
		files[name] = fmt.Sprintf(`{"id":%d}`+"\n", i)
	}
	p := jsonGroupPlan(t, files, names...)
	if len(p.Reads) != 1 {
		t.Fatalf("%d reads, want one group", len(p.Reads))
	}
	batches, rest := scansOf(p)
	if len(batches) != 2 || len(rest) != 0 || len(batches[0].files) != maxBatchFiles || len(batches[1].files) != 1 {
		t.Fatalf("%d batches, rest %v", len(batches), rest)
	}
	if got := batches[1].files[0].Paths[0]; filepath.Base(got) != names[maxBatchFiles] {
		t.Errorf("second batch reads %s", got)
	}
}

// Spark's JSON reader gives a number in a string column as its text
// (1.50), from_json as the number printed (1.5): a file with such numbers
// in a column its read types as string stays out of positional scans.
// Integers print as written, but for -0.
func TestJSONReprintedNumbersInStringColumns(t *testing.T) {
	tests := []struct {
		name, content string
		batchable     bool
	}{
		{"fraction-in-string.json", "{\"V\":2.50}\n{\"V\":\"z\"}\n", false},
		{"exponent-in-string.json", "{\"V\":1e3}\n{\"V\":\"z\"}\n", false},
		{"negative-zero-in-string.json", "{\"w\":-0}\n{\"w\":\"y\"}\n", false},
		{"integer-in-string.json", "{\"k\":5}\n{\"k\":\"q\"}\n", true},
		{"fraction-in-double.json", "{\"v\":1.50}\n{\"v\":2}\n", true},
	}
	for _, tt := range tests {
		p := jsonGroupPlan(t, map[string]string{tt.name: tt.content}, tt.name)
		if got := batchable(p.Reads[0]); got != tt.batchable {
			t.Errorf("%s: batchable = %v, want %v", tt.name, got, tt.batchable)
		}
	}
}

func TestSettled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(p, []byte("id\n1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	precise := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	whole := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	tests := []struct {
		name     string
		mod, now time.Time
		want     bool
	}{
		{"same millisecond", precise, precise.Add(500 * time.Microsecond), false},
		{"a later millisecond", precise, precise.Add(time.Millisecond), true},
		{"whole seconds, just written", whole, whole.Add(time.Second), false},
		{"whole seconds, long ago", whole, whole.Add(3 * time.Second), true},
	}
	for _, tt := range tests {
		if err := os.Chtimes(p, tt.mod, tt.mod); err != nil {
			t.Fatal(err)
		}
		if got := settled(p, tt.now); got != tt.want {
			t.Errorf("%s: settled = %v, want %v", tt.name, got, tt.want)
		}
	}
	if settled(p+".missing", time.Now()) {
		t.Error("a missing file is settled")
	}
}

// The route table has a row per file of the batch, in the batch's order:
// the path, size and modification time the client saw, and, per target
// column, the position in the file that holds it (checked against each
// file's own header) or a null template where the file lacks it.
func TestRouteTableRoutesEachFilesColumns(t *testing.T) {
	files := map[string]string{
		"a.csv": "id,qty,note\n1,2,z\n",
		"b.csv": "note,ID,qty,extra\nz,1,x,9\n",
		"c.csv": "qty\n5\n",
	}
	p := batchPlan(t, files, "a.csv", "b.csv", "c.csv")
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(rest) != 0 || batches[0].width != 4 {
		t.Fatalf("batches %v, rest %v", batches, rest)
	}
	b := batches[0]
	cols := map[string]connect.LocalColumn{}
	_, keys := b.rowFiles()
	for _, c := range b.routeTable(keys) {
		cols[c.Name] = c
	}
	target := p.Plan.Target.Fields
	for m, f := range b.files {
		info, err := os.Stat(f.Paths[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := cols[fileColumn].Strings[m]; got != f.Paths[0] {
			t.Errorf("file %d: path %s, want %s", m, got, f.Paths[0])
		}
		if got := cols[routeKeyColumn].Strings[m]; got != keys[m] {
			t.Errorf("file %d: route key %s, want its rows' name %s", m, got, keys[m])
		}
		if cols[routeSizeColumn].Longs[m] != info.Size() || cols[routeTimeColumn].Longs[m] != info.ModTime().UnixMilli() {
			t.Errorf("%s: size %d, mtime %d; the file has %d, %d", f.Paths[0],
				cols[routeSizeColumn].Longs[m], cols[routeTimeColumn].Longs[m], info.Size(), info.ModTime().UnixMilli())
		}
		if got := cols[sourceColumn].Strings[m]; got != p.Reads[b.reads[m]].Name {
			t.Errorf("%s: source %q, want %q", f.Paths[0], got, p.Reads[b.reads[m]].Name)
		}
		positions, codes := cols[positionsColumn].IntArrays[m], cols[castsColumn].IntArrays[m]
		if len(positions) != len(target) || len(codes) != len(target) {
			t.Fatalf("%s: %d positions, %d templates for %d target columns", f.Paths[0], len(positions), len(codes), len(target))
		}
		for k, tf := range target {
			j := slices.IndexFunc(f.Schema.Fields, func(x sparkmerge.Field) bool { return strings.EqualFold(x.Name, tf.Name) })
			switch {
			case j < 0 && codes[k] != 0:
				t.Errorf("%s lacks %s but routes position %d (template %d) to it", f.Paths[0], tf.Name, positions[k], codes[k])
			case j >= 0 && (codes[k] == 0 || int(positions[k]) != j+1):
				t.Errorf("%s has %s at position %d, the route says %d (template %d)", f.Paths[0], tf.Name, j+1, positions[k], codes[k])
			}
		}
	}
}

// A merge with positional batches lists serially, unless another read
// names more paths than Spark lists on the driver: then it lists those
// with few tasks. A merge whose every scan is positional generates code
// per operator; one with other scans besides keeps generated methods small
// enough to compile. A merge of many scans interprets its projections.
func TestPlannedTuning(t *testing.T) {
	p := batchPlan(t, map[string]string{"a.csv": "x\n1\n", "b.csv": "x\n2\n"}, "a.csv", "b.csv")
	if got, want := p.tuning(), (tuning{listSerially: true, operatorCode: true}); got != want {
		t.Errorf("batches only: %+v, want %+v", got, want)
	}
	p.Reads = append(p.Reads, &Read{Name: "many", Format: "csv", Paths: make([]string, defaultListingThreshold+1)})
	p.scans = nil
	if got, want := p.tuning(), (tuning{fewListingTasks: true, compiledMethods: true}); got != want {
		t.Errorf("with a read of %d paths: %+v, want %+v", defaultListingThreshold+1, got, want)
	}
	one := batchPlan(t, map[string]string{"a.csv": "x\n1\n"}, "a.csv")
	if got := one.tuning(); got != (tuning{}) {
		t.Errorf("one file: %+v, want nothing", got)
	}
	files := map[string]string{}
	var names []string
	for i := range manyScans {
		name := fmt.Sprintf("f%02d.csv", i)
		names = append(names, name)
		files[name] = strings.Repeat("x", i+1) + "\n1\n"
	}
	many := batchPlan(t, files, names...)
	for _, r := range many.Reads {
		r.stamp = fileStamp{} // each read on its own: manyScans scans
	}
	if got, want := many.tuning(), (tuning{interpreted: true}); got != want {
		t.Errorf("%d scans: %+v, want %+v", manyScans, got, want)
	}
}

// A CSV batch reads each file whole, checks its header line against the
// one planned in the same read, and splits the rest into lines and each
// line at the separator; a file that repeats its header line is read on
// its own, under Spark's check of its header. A split line's empty value
// is null, as the reader makes it.
func TestCSVBatchReadsWholeFiles(t *testing.T) {
	files := map[string]string{
		"a.csv":    "id,note\n1,\n",
		"b.csv":    "note,id\nz,2\n",
		"rep.csv":  "id,note\n3,x\nid,note\n",
		"rep2.csv": "note,id\ny,4\nnote,id\n",
	}
	c := &Client{}
	p := batchPlan(t, files, "a.csv", "b.csv", "rep.csv", "rep2.csv")
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(batches[0].files) != 2 || len(rest) != 2 {
		t.Fatalf("batches %+v, alone %v: want a.csv and b.csv in a scan, rep.csv and rep2.csv alone", batches, rest)
	}
	b := batches[0]
	rows := c.batchScan(p.Reads, b, false)
	plan := rows.String()
	for _, want := range []string{"wholetext", "posexplode(", "__sparkmerge_route_header", "its header line is now"} {
		if !strings.Contains(plan, want) {
			t.Errorf("scan lacks %q:\n%s", want, plan)
		}
	}
	if !rows.empties || rows.inPlace || strings.Contains(plan, "enforceSchema") || strings.Contains(plan, "from_csv") {
		t.Errorf("rows %+v, scan %s: want lines split, none parsed", rows, plan)
	}
	if values := strings.Join(b.values(len(p.Plan.Target.Fields), rows.routed, rows.empties), ", "); !strings.Contains(values, "nullif(") {
		t.Errorf("values of split lines: %s, want empty values null", values)
	}
	// The route holds each file's header line.
	_, keys := b.rowFiles()
	var headers []string
	for _, col := range b.routeTable(keys) {
		if col.Name == routeHeaderColumn {
			headers = col.Strings
		}
	}
	if want := []string{"id,note", "note,id"}; !slices.Equal(headers, want) {
		t.Errorf("route headers %q, want %q", headers, want)
	}
	for sep, want := range map[string]string{";": ";", "|": "\\|", "\t": "\t", "x": ""} {
		b := scanBatch{reads: []int{0}}
		got, ok := b.lineSeparator([]*Read{{Format: "csv", headerLine: "a", Options: map[string]string{"sep": sep}}})
		if got != want || ok != (want != "") {
			t.Errorf("separator %q: %q, %v; want %q", sep, got, ok, want)
		}
	}
}

// A CSV batch with a file of quoted values parses each line that holds a
// quote with Spark's CSV parser (from_csv), under the reads' options and
// FAILFAST, into the batch's width in strings, a narrower file's line
// padded with separators to that width; other lines are split, padded
// alike, their empty values made null in the array, so that the
// projection takes each value as it is.
func TestCSVBatchParsesQuotedLines(t *testing.T) {
	files := map[string]string{
		"q.csv": "id,note,x\n1,\"a,\\\"b\\\"\",2\n",
		"p.csv": "note,id\nz,2\n",
	}
	c := &Client{}
	p := batchPlan(t, files, "q.csv", "p.csv")
	batches, rest := scansOf(p)
	if len(batches) != 1 || len(batches[0].files) != 2 || len(rest) != 0 {
		t.Fatalf("batches %+v, alone %v: want q.csv and p.csv in a scan", batches, rest)
	}
	b := batches[0]
	rows := c.batchScan(p.Reads, b, false)
	plan := rows.String()
	want := `from_csv(concat(__sparkmerge_line, __sparkmerge_route_pad), 'c0 STRING, c1 STRING, c2 STRING', map('enforceSchema', 'false', 'header', 'true', 'inferSchema', 'true', 'mode', 'FAILFAST'))`
	for _, w := range []string{want, "CASE WHEN contains(__sparkmerge_line, ", "array(__sparkmerge_parsed.c0, __sparkmerge_parsed.c1, __sparkmerge_parsed.c2)", "split(concat(__sparkmerge_line, __sparkmerge_route_pad), ',', -1)", "CASE WHEN __sparkmerge_split[2] = '' THEN NULL ELSE __sparkmerge_split[2] END", "its header line is now"} {
		if !strings.Contains(plan, w) {
			t.Errorf("scan lacks %s:\n%s", w, plan)
		}
	}
	if !rows.inPlace || rows.empties {
		t.Errorf("rows of lines not marked so, or marked as holding empty values: %+v", rows)
	}
	if projected := b.project(p.Plan.Target, rows).String(); !strings.Contains(projected, lineValue(0)) || strings.Contains(projected, "nullif(") || strings.Contains(projected, valueColumn(0)) {
		t.Errorf("projection of parsed lines: %s, want each value as it is", projected)
	}
	// q.csv is as wide as the batch, p.csv one column narrower.
	if pads, want := b.pads(","), []string{"", ","}; !slices.Equal(pads, want) || b.files[0].Paths[0] != p.Reads[0].Paths[0] {
		t.Errorf("pads %q, want %q", pads, want)
	}
	var text strings.Builder
	p.writeDiscovery(&text)
	if files := p.PositionalFiles(); len(files) != 2 || !strings.Contains(text.String(), "2 files read in 1 positional scan (files typed on the client, read together; 1 CSV file with quoted values, their lines parsed by Spark's CSV parser)") {
		t.Errorf("positional files %v; discovery:\n%s", files, text.String())
	}
}

// A batch's rows keep Spark's name for their file (a file: URI) when every
// file is a local one at a plain path, which that URI spells as it is;
// otherwise every row's name is decoded into the client's form, and the
// route names the files so.
func TestRowFilesKeepSparksNamesOfPlainLocalPaths(t *testing.T) {
	for _, tc := range []struct {
		names  []string
		asURIs bool
	}{
		{[]string{"a.csv", "b-2_x.csv"}, true},
		{[]string{"a.csv", "b c.csv"}, false},
		{[]string{"a.csv", "b%41.csv"}, false},
		{[]string{"a.csv", "b+c.csv"}, false},
		{[]string{"a.csv", "bé.csv"}, false},
	} {
		files := map[string]string{}
		for _, n := range tc.names {
			files[n] = "id,qty\n1,2\n"
		}
		p := batchPlan(t, files, tc.names...)
		batches, _ := scansOf(p)
		if len(batches) != 1 {
			t.Fatalf("%v: batches %+v", tc.names, batches)
		}
		b := batches[0]
		expr, keys := b.rowFiles()
		for m, f := range b.files {
			want := f.Paths[0]
			if tc.asURIs {
				want = "file:" + want
			}
			if keys[m] != want {
				t.Errorf("%v: file %d named %q in its rows, want %q", tc.names, m, keys[m], want)
			}
		}
		if decoded := expr != sparkFilePath; decoded == tc.asURIs {
			t.Errorf("%v: rows name their files by %s", tc.names, expr)
		}
	}
	listed := scanBatch{files: []*Read{{Paths: []string{"/data/a.csv"}, listed: true}}}
	if expr, keys := listed.rowFiles(); expr == sparkFilePath || keys[0] != "/data/a.csv" {
		t.Errorf("a file only the server sees: %s, %v; want each row's name decoded", expr, keys)
	}
}
