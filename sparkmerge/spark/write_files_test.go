package spark

import (
	"os"
	"path/filepath"
	"testing"
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
		{"the user's number wins", 3, small, 3},
		{"400 reads: at most 32 per task", 0, many, 13},
		{"5 small files: Spark's own partitions", 0, small[:5], 0},
		{"a remote input: sizes unknown", 0, append(small[:3:3], &Read{Paths: []string{"s3a://b/x.csv"}}), 0},
		{"20 files only the server sees, sized by their listing: 8 output files", 0, remote, 8},
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
