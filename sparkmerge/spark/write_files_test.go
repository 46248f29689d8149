package spark

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestOutputFiles(t *testing.T) {
	dir := t.TempDir()
	var small []*Read
	for i := 0; i < 20; i++ {
		p := filepath.Join(dir, "f"+string(rune('a'+i))+".csv")
		if err := os.WriteFile(p, []byte("a\n1\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		small = append(small, &Read{Paths: []string{p}})
	}
	var remote []*Read
	var remotePaths []string
	for i := 0; i < 20; i++ {
		p := "/only/on/the/server/" + string(rune('a'+i)) + ".csv"
		remote = append(remote, &Read{Paths: []string{p}, listed: true, listedSize: 1 << 20})
		remotePaths = append(remotePaths, p)
	}
	// 40 groups of 5 files only the server sees (1 MiB each), and the
	// shape of lake-json: 4 groups of 5 files of 53 MB.
	var groups, lake []*Read
	for i := 0; i < 40; i++ {
		var members []*Read
		var paths []string
		for j := 0; j < 5; j++ {
			p := fmt.Sprintf("/only/on/the/server/g%d/%d.json", i, j)
			members = append(members, &Read{Paths: []string{p}, listed: true, listedSize: 1 << 20})
			paths = append(paths, p)
		}
		groups = append(groups, &Read{Paths: paths, members: members})
		if i < 4 {
			var big []*Read
			for _, m := range members {
				big = append(big, &Read{Paths: m.Paths, listed: true, listedSize: 53_000_000})
			}
			lake = append(lake, &Read{Paths: paths, members: big})
		}
	}
	var many []*Read
	for i := 0; i < 400; i++ {
		many = append(many, small[i%len(small)])
	}
	tests := []struct {
		name      string
		requested int
		reads     []*Read
		want      int
	}{
		{"20 small local files: 8 output files", 0, small, 8},
		{"12 small local files: 8 output files", 0, small[:12], 8},
		{"the user's number wins", 3, small, 3},
		{"400 reads: at most 32 per task", 0, many, 13},
		{"5 small files: Spark's own partitions", 0, small[:5], 0},
		{"a remote input: sizes unknown", 0, append(small[:3:3], &Read{Paths: []string{"s3a://b/x.csv"}}), 0},
		{"20 files only the server sees, sized by their listing: 8 output files", 0, remote, 8},
		{"40 groups of 5 such files, sized by their members: 8 output files", 0, groups, 8},
		// Spark packs each group's 5 files into 3 partitions (2, 2 and 1
		// file) of at most 128 MiB: 12 partitions of 88 MB on average,
		// which coalescing into 8 would make 4 tasks of 3 files and 4
		// of 2.
		{"4 groups of 5 files of 53 MB: Spark's own partitions", 0, lake, 0},
		{"a group of them, sized by its members", 0, []*Read{{Paths: remotePaths, members: remote}}, 8},
		{"a table: sizes unknown", 0, []*Read{{Table: "db.t"}}, 0},
		{"a dataset directory keeps its partitioning", 0, []*Read{{Paths: []string{dir}}}, 0},
	}
	// 400 reads that run as 4 scans (positional CSV batches): the size
	// rule alone.
	if got := outputFiles(0, many, 4); got != 8 {
		t.Errorf("400 reads in 4 scans: outputFiles = %d, want 8", got)
	}
	for _, tt := range tests {
		if got := outputFiles(tt.requested, tt.reads, len(tt.reads)); got != tt.want {
			t.Errorf("%s: outputFiles = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// A listing of many small files is fetched in a few size ranges of at
// most remoteFetchChunk each (a Parquet file counts only its fetched end),
// together covering every small file, and files of one size are never
// split between two ranges.
func TestSizeRanges(t *testing.T) {
	var files []remoteFile
	for i := 0; i < 300; i++ {
		files = append(files, remoteFile{path: "/d/f.csv", size: int64(1<<20 + i%40)})
	}
	files = append(files, remoteFile{path: "/d/big.csv", size: maxRemoteInferFile + 1}, remoteFile{path: "/d/empty.csv"})
	for i := 0; i < 1000; i++ {
		files = append(files, remoteFile{path: "/d/p.parquet", size: 10 << 20})
	}
	ranges := sizeRanges(files, fetchPart{})
	// 300 MiB of CSV and 62.5 MiB of Parquet ends: the fewest ranges of
	// remoteFetchChunk that hold them, or one more where a size does not fit.
	least := int((300<<20 + 1000*footerTailBytes + remoteFetchChunk - 1) / remoteFetchChunk)
	if len(ranges) < least || len(ranges) > least+1 {
		t.Errorf("%d ranges for 300 MiB of CSV and 62.5 MiB of Parquet ends, want %d or %d of %d MiB: %v", len(ranges), least, least+1, remoteFetchChunk>>20, ranges)
	}
	if ranges[0][0] != 0 || ranges[len(ranges)-1][1] != maxRemoteInferFile {
		t.Errorf("ranges %v do not span [0, %d]", ranges, maxRemoteInferFile)
	}
	for i, r := range ranges {
		var bytes int64
		sizes := map[int64]bool{}
		for _, f := range files {
			if f.size >= r[0] && f.size <= r[1] {
				bytes += fetchPart{}.bytes(f)
				sizes[f.size] = true
			}
		}
		if bytes > remoteFetchChunk && len(sizes) > 1 {
			t.Errorf("range %v fetches %d bytes of %d sizes, over %d", r, bytes, len(sizes), remoteFetchChunk)
		}
		if i > 0 && r[0] <= ranges[i-1][1] {
			t.Errorf("ranges %v and %v overlap", ranges[i-1], r)
		}
	}
	// Their heads (64 KiB of each CSV file) and the Parquet ends fit in
	// one range.
	if got := sizeRanges(files, fetchPart{head: remoteHeadBytes}); len(got) != 1 {
		t.Errorf("ranges of the files' heads: %v, want one", got)
	}
	if got := sizeRanges(nil, fetchPart{}); len(got) != 0 {
		t.Errorf("ranges of no files: %v", got)
	}
}

// A fetched Parquet or ORC end types the file when it holds the whole footer:
// the footer alone (as fetchedContent cuts it), or a longer tail; not a
// tail that cuts the footer, nor one that is not a Parquet end.
func TestFooterFetched(t *testing.T) {
	parquet := &Read{Format: "parquet"}
	footer := append(bytes.Repeat([]byte{'f'}, 100), 100, 0, 0, 0, 'P', 'A', 'R', '1')
	size := int64(1 << 20)
	tests := []struct {
		name    string
		content []byte
		want    bool
	}{
		{"the footer alone", footer, true},
		{"a longer tail", append(bytes.Repeat([]byte{'x'}, 500), footer...), true},
		{"a cut footer", footer[50:], false},
		{"no magic", append(append([]byte(nil), footer[:len(footer)-1]...), 'X'), false},
		{"over the tail's size", append(bytes.Repeat([]byte{'x'}, footerTailBytes), footer...), false},
	}
	for _, tt := range tests {
		file := fetchedFile{remoteFile: remoteFile{path: "/d/a.parquet", size: size}, content: tt.content}
		if got := footerFetched(parquet, file); got != tt.want {
			t.Errorf("%s: footerFetched = %v, want %v", tt.name, got, tt.want)
		}
	}
	if footerFetched(&Read{Format: "csv"}, fetchedFile{remoteFile: remoteFile{size: size}, content: footer}) {
		t.Error("a CSV file's end types it as Parquet")
	}

	// An ORC end: a footer of 100 bytes, the postscript (the footer's
	// length, then the magic) and the postscript's length.
	var ps []byte
	ps = protowire.AppendTag(ps, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, 100)
	ps = protowire.AppendTag(ps, 8000, protowire.BytesType)
	ps = protowire.AppendString(ps, "ORC")
	orcEnd := append(append(bytes.Repeat([]byte{'f'}, 100), ps...), byte(len(ps)))
	orc := &Read{Format: "orc"}
	for _, tt := range []struct {
		name    string
		content []byte
		want    bool
	}{
		{"the footer alone", orcEnd, true},
		{"a longer tail", append(bytes.Repeat([]byte{'x'}, 500), orcEnd...), true},
		{"a cut footer", orcEnd[1:], false},
		{"a cut postscript", orcEnd[len(orcEnd)-3:], false},
		{"no magic", append(append(bytes.Repeat([]byte{'f'}, 100), ps[:len(ps)-1]...), 'X', byte(len(ps))), false},
		{"a Parquet end", footer, false},
		{"over the tail's size", append(bytes.Repeat([]byte{'x'}, footerTailBytes), orcEnd...), false},
	} {
		file := fetchedFile{remoteFile: remoteFile{path: "/d/a.orc", size: size}, content: tt.content}
		if got := footerFetched(orc, file); got != tt.want {
			t.Errorf("ORC, %s: footerFetched = %v, want %v", tt.name, got, tt.want)
		}
	}
}
