//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// A file rewritten in place after Spark lists it and before it reads it
// (the same size, its columns rotated) is listed with the size and
// modification time the client saw when it planned, so the stamps agree
// and only the file's bytes tell. The test makes that state without a race:
// it rewrites the file between planning and the merge and puts its old
// modification time back, so that Spark's listing at the merge shows what
// a listing taken before the rewrite would. A positional scan must read
// the file's header line in the same read as its rows and fail the merge
// naming the file (it wrote every value one column off, exit 0), on files
// the client reads and on files only the cluster sees.
func TestFileRewrittenUnderItsStampFailsTheMerge(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	var a, b strings.Builder
	// Text columns, so that nothing but the header tells: the rotated
	// header line read as a row casts as well as any other.
	a.WriteString("name,city,note\n")
	b.WriteString("city,name,note\n")
	for i := range 20 {
		fmt.Fprintf(&a, "n%d,c%d,a%d\n", i, i, i)
		fmt.Fprintf(&b, "c%d,m%d,b%d\n", 20+i, 20+i, i)
	}
	// b.csv with its columns rotated: the same bytes in another order, so
	// the same size.
	var rotated strings.Builder
	rotated.WriteString("note,city,name\n")
	for i := range 20 {
		fmt.Fprintf(&rotated, "b%d,c%d,m%d\n", i, 20+i, 20+i)
	}
	if rotated.Len() != b.Len() {
		t.Fatalf("rotated file is %d bytes, want %d", rotated.Len(), b.Len())
	}
	for _, p := range places(t) {
		for _, strategy := range []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion} {
			t.Run(p.name+" "+strategy.String(), func(t *testing.T) {
				sub := "rw-" + strategy.String()
				putFiles(t, filepath.Join(p.host, sub), textFiles(map[string]string{"a.csv": a.String(), "b.csv": b.String()}))
				dir := p.spark + "/" + sub
				job := spark.Job{
					Sources:  pathSources(dir+"/a.csv", dir+"/b.csv"),
					Strategy: strategy,
					Target:   spark.Target{Path: dir + "/out", Mode: "overwrite"},
				}
				planned, err := c.Plan(testContext(t), job)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(planned.String(), "positional scan") {
					t.Fatalf("want the files in a positional scan; plan:\n%s", planned)
				}
				rewriteKeepingStamp(t, filepath.Join(p.host, sub, "b.csv"), rotated.String())
				_, err = c.MergePlanned(context.Background(), job, planned)
				wantChanged(t, "merge", err, dir+"/b.csv")
				if !strings.Contains(err.Error(), "header") {
					t.Errorf("error does not say the header changed: %v", err)
				}
			})
		}
	}
}

// rewriteKeepingStamp rewrites a file with content of its size and puts
// its modification time back.
func rewriteKeepingStamp(t *testing.T, p, content string) {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != int64(len(content)) {
		t.Fatalf("%s: %d bytes, rewritten with %d", p, info.Size(), len(content))
	}
	if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}
