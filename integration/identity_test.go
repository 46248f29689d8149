//go:build integration

package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Inputs are known by their real paths (symlinks and ".." resolved) on
// files the client reads and on files only Spark sees; sparkmerge's own
// staging directories are never inputs; relative paths are the client's.

// place is a directory of test files: where the test writes them (host)
// and the path sparkmerge is given (spark): the same for files the client
// sees, a path only Spark has for cluster files.
type place struct {
	name, host, spark string
}

func places(t *testing.T) []place {
	t.Helper()
	local := workDir(t)
	host, remote := sparktest.ClusterDir(t)
	return []place{{"local", local, local}, {"cluster", host, remote}}
}

// symlink makes a relative link name -> to inside dir, which the client
// and Spark resolve alike wherever dir is mounted.
func symlink(t *testing.T, dir, to, name string) {
	t.Helper()
	if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// An input that is a link to the output directory is refused before
// anything is written, in every mode: an overwrite would delete the rows
// it reads (it exited 0, verified, and the inputs were gone). A link from
// the output to the input directory likewise.
func TestLinkToOutputIsRefused(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, pl := range places(t) {
		putFiles(t, pl.host, textFiles(map[string]string{"out/a.csv": "id,v\n1,x\n", "out/b.csv": "id,v\n2,y\n", "data/c.csv": "id,v\n3,z\n"}))
		symlink(t, pl.host, "out", "in")
		symlink(t, pl.host, "data", "datalink")
		for _, tc := range []struct{ sources, target string }{
			{"in", "out"},            // an input directory linked to the output
			{"in/a.csv", "out"},      // a file in it
			{"data", "datalink"},     // the output is a link to the input directory
			{"data", "datalink/new"}, // the output inside it, through the link
		} {
			for _, mode := range []string{"overwrite", "append"} {
				_, err := c.Merge(context.Background(), spark.Job{Verify: true,
					Sources: pathSources(pl.spark + "/" + tc.sources),
					Target:  spark.Target{Path: pl.spark + "/" + tc.target, Mode: mode}})
				var overlap *spark.OverlapError
				if !errors.As(err, &overlap) || !strings.Contains(err.Error(), "through a link") {
					t.Errorf("%s: %s into %s (%s): err = %v, want an OverlapError through a link", pl.name, tc.sources, tc.target, mode, err)
				}
			}
		}
		for _, name := range []string{"out/a.csv", "out/b.csv", "data/c.csv"} {
			if _, err := os.Stat(filepath.Join(pl.host, name)); err != nil {
				t.Errorf("%s: input lost: %v", pl.name, err)
			}
		}
		if _, err := os.Stat(filepath.Join(pl.host, "data", "new")); err == nil {
			t.Errorf("%s: written inside the input directory", pl.name)
		}
	}
}

// The same file reached twice through a link (a directory and a link to
// it, a file and a link to it) is refused, naming both paths, instead of
// its rows merged twice with --verify passing.
func TestSameFileThroughLinkIsRefused(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, pl := range places(t) {
		putFiles(t, pl.host, textFiles(map[string]string{"data/a.csv": "id,v\n1,x\n", "data/b.csv": "id,v\n2,y\n"}))
		symlink(t, pl.host, "data", "link")
		symlink(t, pl.host, "data/a.csv", "a-link.csv")
		for _, sources := range [][]string{
			{"data", "link"},
			{"data/a.csv", "a-link.csv"},
			{"link", "a-link.csv"},
			{"data/b.csv", "link/b.csv"},
		} {
			var paths []string
			for _, s := range sources {
				paths = append(paths, pl.spark+"/"+s)
			}
			for _, sparkInference := range []bool{false, true} {
				_, err := c.Merge(context.Background(), spark.Job{Verify: true, SparkInference: sparkInference,
					Sources: pathSources(paths...), Target: spark.Target{Path: filepath.Join(workDir(t), "out")}})
				var dup *spark.DuplicateInputError
				if !errors.As(err, &dup) || !strings.Contains(err.Error(), " as ") {
					t.Errorf("%s: %v: err = %v, want a DuplicateInputError naming both paths", pl.name, sources, err)
				}
			}
		}
		// One path through the link alone is read once.
		res, out := merge(t, c, spark.Job{Verify: true, Sources: pathSources(pl.spark + "/link")})
		if !res.Verified || res.RowsWritten != 2 {
			t.Errorf("%s: the link alone: verified %v, %d rows, want 2", pl.name, res.Verified, res.RowsWritten)
		}
		diff(t, pl.name+" rows", [][]any{row("1", "x"), row("2", "y")}, parquetRows(t, out, []string{"id", "v"}, "id"))
	}
}

// A glob over sibling datasets does not read the staging directory an
// earlier run left beside one of them (.NAME.sparkmerge-UUID): before,
// its rows were merged too, and verified.
func TestStagingDirectoriesAreNotInputs(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	staging := ".t.sparkmerge-" + uuid.NewString()
	for _, pl := range places(t) {
		putFiles(t, pl.host, textFiles(map[string]string{
			"t/part-0.csv":              "id,v\n1,x\n2,y\n",
			"u/part-0.csv":              "id,v\n3,z\n",
			staging + "/part-0.csv":     "id,v,emptied\n9,stale,1\n",
			staging + ".old/part-0.csv": "id,v\n8,older\n",
		}))
		for _, sparkInference := range []bool{false, true} {
			res, out := merge(t, c, spark.Job{Verify: true, SparkInference: sparkInference, Sources: pathSources(pl.spark + "/*/*.csv")})
			if !res.Verified || res.RowsWritten != 3 {
				t.Errorf("%s: verified %v, %d rows written, want 3", pl.name, res.Verified, res.RowsWritten)
			}
			cols, _ := query(t, "SELECT * FROM parquet.`"+out+"` LIMIT 0")
			diff(t, pl.name+" columns", []string{"id", "v"}, cols)
			diff(t, pl.name+" rows", [][]any{row("1", "x"), row("2", "y"), row("3", "z")}, parquetRows(t, out, []string{"id", "v"}, "id"))
		}
		// Named, a staging directory is read as asked (to recover its rows).
		_, out := merge(t, c, spark.Job{Sources: pathSources(pl.spark + "/" + staging)})
		diff(t, pl.name+" staging rows", [][]any{row("9", "stale")}, parquetRows(t, out, []string{"id", "v"}, "id"))
	}
}

// A relative path is the client's, resolved in its working directory:
// --show reads the rows a relative --out wrote (it read the server's
// working directory and failed after writing); a relative source this
// machine lacks is refused (Spark merged the file it found under its own
// working directory); a relative --out a server that does not share this
// filesystem would write is refused (it was written, "verified", where the
// user cannot see it).
func TestRelativePathsAreTheClients(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	writeFiles(t, dir, map[string]string{"in/a.csv": "id,v\n1,x\n"}, "in/a.csv")
	code, stdout, stderr := cliRunIn(t, dir, "merge", "in", "--out", "rel/out", "--show", "5", "--verify")
	if code != 0 || !strings.Contains(stdout, "x") {
		t.Errorf("relative --out with --show: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}

	// "../" past the root stays at the root: on the server, whose working
	// directory is shallower, this names a file only it sees.
	host, remote := sparktest.ClusterDir(t)
	putFiles(t, host, textFiles(map[string]string{"a.csv": "id,v\n7,server\n"}))
	up := strings.Repeat("../", 2+strings.Count(dir, "/"))
	rel := up + strings.TrimPrefix(remote, "/") + "/a.csv"
	code, _, stderr = cliRunIn(t, dir, "merge", rel, "--out", filepath.Join(dir, "out2"))
	if code == 0 || !strings.Contains(stderr, "is relative, and this machine has no") {
		t.Errorf("relative source only the server has: exit %d, stderr %s; want a refusal naming it", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out2")); err == nil {
		t.Error("relative source only the server has: written")
	}

	// A working directory the server does not see (not mounted).
	private := t.TempDir()
	code, _, stderr = cliRunIn(t, private, "merge", remote, "--out", "out", "--verify")
	if code == 0 || !strings.Contains(stderr, "does not see") || !strings.Contains(stderr, filepath.Join(private, "out")) {
		t.Errorf("relative --out the server does not see: exit %d, stderr %s; want a refusal naming the path", code, stderr)
	}
	writeFiles(t, private, map[string]string{"mine.csv": "id,v\n5,client\n"}, "mine.csv")
	code, _, stderr = cliRunIn(t, private, "merge", "mine.csv", "--out", filepath.Join(dir, "out3"))
	if code == 0 || !strings.Contains(stderr, "does not see") || !strings.Contains(stderr, filepath.Join(private, "mine.csv")) {
		t.Errorf("relative source the server does not see: exit %d, stderr %s; want a refusal naming the path", code, stderr)
	}
}
