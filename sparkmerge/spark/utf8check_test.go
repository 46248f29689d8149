package spark

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"
)

// Which reads checkUTF8OnServer reads: CSV and JSON files read as UTF-8
// that the client did not find UTF-8 as a whole; a multi-line CSV file
// too (only JSON detects a multi-line file's encoding).
func TestNeedsUTF8Check(t *testing.T) {
	csv := func(options map[string]string) *Read {
		return &Read{Format: "csv", Paths: []string{"/d/a.csv"}, Options: options}
	}
	json := func(options map[string]string) *Read {
		return &Read{Format: "json", Paths: []string{"/d/a.json"}, Options: options}
	}
	typed := csv(nil)
	typed.validUTF8 = true
	refused := csv(nil)
	refused.encodingProblem = "not UTF-8"
	for _, tc := range []struct {
		name string
		r    *Read
		want bool
	}{
		{"csv", csv(nil), true},
		{"csv, multiLine", csv(map[string]string{"multiLine": "true"}), true},
		{"csv, encoding UTF-8", csv(map[string]string{"encoding": "utf8"}), true},
		{"csv, charset Latin-1", csv(map[string]string{"charset": "ISO-8859-1"}), false},
		{"csv, encoding wins over charset", csv(map[string]string{"encoding": "windows-1252", "charset": "UTF-8"}), false},
		{"csv the client typed", typed, false},
		{"csv the client refused as not UTF-8", refused, false},
		{"json", json(nil), true},
		{"json, multiLine (Jackson detects its encoding)", json(map[string]string{"multiLine": "true"}), false},
		{"json, multiLine, UTF-8", json(map[string]string{"multiLine": "true", "encoding": "UTF-8"}), true},
		{"json, UTF-16", json(map[string]string{"encoding": "UTF-16LE", "lineSep": "\n"}), false},
		{"parquet", &Read{Format: "parquet", Paths: []string{"/d/a.parquet"}}, false},
		{"table", &Read{Format: "csv", Table: "db.t"}, false},
	} {
		if got := needsUTF8Check(tc.r); got != tc.want {
			t.Errorf("%s: needsUTF8Check = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// firstNotUTF8 reads in chunks of a MiB: a character cut by a chunk's
// end is whole in the next, and the first byte that is not UTF-8 is found
// at its offset in the whole stream, as a check of the whole at once
// finds it; on text around the chunk's size, a character of every length
// straddling the cut, with and without a bad byte.
func TestFirstNotUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "\n", "ü", "€", "𝄞", "\xfc", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80"}
	want := func(data []byte) (int64, bool) {
		if utf8.Valid(data) {
			return 0, false
		}
		for i := 0; ; {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return int64(i), true
			}
			i += size
		}
	}
	var text []byte // 3 MiB of UTF-8
	for len(text) < 3<<20 {
		text = append(text, pieces[rng.IntN(5)]...)
	}
	for n := range 120 {
		// Cut at every alignment near one and two chunks (a cut inside
		// a character at the start is itself not UTF-8), some with a
		// bad piece somewhere.
		size := 1<<20 + n%17 - 8
		if n%2 == 1 {
			size += 1 << 20
		}
		b := slices.Clone(text[n : n+size])
		if n%3 == 0 {
			at := rng.IntN(len(b) - 4)
			copy(b[at:], pieces[5+rng.IntN(4)])
		}
		wantOff, wantBad := want(b)
		off, c, gotBad, err := firstNotUTF8(bytes.NewReader(b))
		if err != nil || gotBad != wantBad || off != wantOff || gotBad && c != b[off] {
			t.Fatalf("text of %d bytes: offset %d (0x%02x), not UTF-8 %v, %v; want offset %d, %v", len(b), off, c, gotBad, err, wantOff, wantBad)
		}
	}
}

// A local file Spark would type is read through by the client (gzip
// decompressed, a multi-path read's every file), and its read marked
// UTF-8 or refused naming the byte (and, of several files, the file);
// what the client cannot read (another codec, a directory) is left to
// the server, as are the files past the plan's budget of bytes.
func TestCheckUTF8Locally(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gz := func(s string) []byte {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write([]byte(s))
		z.Close()
		return b.Bytes()
	}
	good := write("good.csv", []byte("id,city\n1,München\n"))
	latin := write("latin.csv", []byte("id,city\n1,M\xfcnchen\n"))
	goodGz := write("good.json.gz", gz(`{"city":"München"}`+"\n"))
	latinGz := write("latin.csv.gz", gz("id,city\n1,M\xfcnchen\n"))
	bz := write("b.csv.bz2", []byte("not read"))
	read := func(format string, paths ...string) *Read {
		return &Read{Name: paths[0], Format: format, Paths: paths}
	}
	reads := []*Read{read("csv", good), read("csv", latin), read("json", goodGz), read("csv", latinGz),
		read("csv", good, latin), read("csv", bz), read("csv", dir), read("csv", "s3a://b/a.csv")}
	onServer, err := checkUTF8Locally(context.Background(), reads, maxLocalUTF8Total)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		valid   bool
		problem string
	}{
		{true, ""},
		{false, "not UTF-8: the byte at offset 11 (0xfc) is not valid UTF-8"},
		{true, ""},
		{false, "not UTF-8: the byte at offset 11 of its decompressed contents (0xfc) is not valid UTF-8"},
		{false, fmt.Sprintf("not UTF-8: in its file %q the byte at offset 11 (0xfc) is not valid UTF-8", latin)},
		{false, ""}, {false, ""}, {false, ""},
	}
	for i, r := range reads {
		if r.validUTF8 != want[i].valid || r.encodingProblem != want[i].problem {
			t.Errorf("%v: valid %v, problem %q; want %v, %q", r.Paths, r.validUTF8, r.encodingProblem, want[i].valid, want[i].problem)
		}
	}
	if len(onServer) != 3 || onServer[0] != reads[5] || onServer[1] != reads[6] || onServer[2] != reads[7] {
		t.Errorf("left to the server %d reads, want the bzip2 file, the directory and the file only the server sees", len(onServer))
	}
}

// Past its budget of bytes, in input order, checkUTF8Locally leaves the
// files to the server's read (a cluster's, sharing them, may read many
// at once).
func TestCheckUTF8LocallyWithinBudget(t *testing.T) {
	dir := t.TempDir()
	var reads []*Read
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("%d.csv", i))
		if err := os.WriteFile(p, []byte("id\n1\n"), 0o644); err != nil { // 5 bytes
			t.Fatal(err)
		}
		reads = append(reads, &Read{Name: p, Format: "csv", Paths: []string{p}})
	}
	onServer, err := checkUTF8Locally(context.Background(), reads, 12)
	if err != nil {
		t.Fatal(err)
	}
	if len(onServer) != 2 || onServer[0] != reads[2] || onServer[1] != reads[3] || !reads[0].validUTF8 || !reads[1].validUTF8 || reads[2].validUTF8 {
		t.Errorf("%d left to the server; valid %v %v %v; want the last two left, the first two found UTF-8", len(onServer), reads[0].validUTF8, reads[1].validUTF8, reads[2].validUTF8)
	}
}
