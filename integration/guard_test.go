//go:build integration

package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// A directory with x1.csv and x[12].csv: the second name is a Hadoop glob
// matching x1.csv and x2.csv. Each file must be read as itself, both where
// the client lists it and where only Spark does: (1,one) once, (2,two)
// once, and --verify counting each.
func TestGlobCharactersInFileNames(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"x1.csv":          "id,v\n1,one\n",
		"x[12].csv":       "id,v\n2,two\n",
		"odd {a,b} ?.csv": "v,id\nthree,3\n",
	})
	want := [][]any{row("1", "one"), row("2", "two"), row("3", "three")}
	for _, place := range []struct {
		name string
		dir  string
	}{{"local", localFiles(t, files)}, {"cluster", clusterFiles(t, files)}} {
		for _, sparkInference := range []bool{false, true} {
			res, out := merge(t, c, spark.Job{Sources: pathSources(place.dir), Verify: true, SparkInference: sparkInference})
			if !res.Verified || res.RowsWritten != 3 {
				t.Errorf("%s: verified %v, %d rows written, want 3", place.name, res.Verified, res.RowsWritten)
			}
			diff(t, place.name+" rows", want, parquetRows(t, out, []string{"id", "v"}, "id"))
		}
		// Named on its own, the file with brackets is that file.
		_, out := merge(t, c, spark.Job{Sources: pathSources(place.dir + "/x[12].csv")})
		diff(t, place.name+" x[12].csv alone", [][]any{row("2", "two")}, parquetRows(t, out, []string{"id", "v"}, "id"))
	}
}

// An output that is, contains or lies inside an input is refused before
// anything is deleted, in every mode: the inputs are intact afterwards.
func TestOutputOverlappingInputIsRefused(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{"in/a.csv": "id\n1\n", "in/b.csv": "id\n2\n"}, "in/a.csv", "in/b.csv")
	in := filepath.Join(dir, "in")
	for _, target := range []string{in, dir, filepath.Join(in, "out"), paths[0]} {
		for _, mode := range []string{"overwrite", "append"} {
			_, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(in), Target: spark.Target{Path: target, Mode: mode}})
			var overlap *spark.OverlapError
			if !errors.As(err, &overlap) {
				t.Errorf("output %s (%s): err = %v, want *spark.OverlapError", target, mode, err)
			}
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("input lost: %v", err)
		}
	}
	// A plan with the target refuses too (what --dry-run shows).
	_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(in), Target: spark.Target{Path: in, Mode: "overwrite"}})
	var overlap *spark.OverlapError
	if !errors.As(err, &overlap) {
		t.Errorf("plan: err = %v, want *spark.OverlapError", err)
	}
}

// The same file reached twice (a directory, the file itself, a glob over
// it) is an error naming it, not rows merged twice.
func TestSameFileTwiceIsRefused(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{"a.csv": "id\n1\n", "b.csv": "id\n2\n"}, "a.csv", "b.csv")
	for _, sources := range [][]string{
		{dir, paths[0]},
		{filepath.Join(dir, "*.csv"), paths[1]},
		{paths[0], "file://" + paths[0]},
	} {
		_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(sources...)})
		var dup *spark.DuplicateInputError
		if !errors.As(err, &dup) {
			t.Errorf("%v: err = %v, want *spark.DuplicateInputError", sources, err)
		}
	}
	// Only Spark sees them: the same.
	remote := clusterFiles(t, textFiles(map[string]string{"a.csv": "id\n1\n"}))
	_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(remote, remote+"/a.csv")})
	var dup *spark.DuplicateInputError
	if !errors.As(err, &dup) {
		t.Errorf("cluster files: err = %v, want *spark.DuplicateInputError", err)
	}
}

// A CSV output whose values hold line breaks is counted as the rows
// written, not as lines: --verify passes for 3 rows and reads them back.
func TestCSVOutputWithLineBreaksIsCountedRight(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{
		"a.json": "{\"id\":1,\"note\":\"two\\nlines\"}\n{\"id\":2,\"note\":\"one\"}\n",
		"b.json": "{\"id\":3,\"note\":\"x\\r\\ny\",\"extra\":true}\n",
	}, "a.json", "b.json")
	out := filepath.Join(workDir(t), "out")
	res, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(paths...), Verify: true,
		Target: spark.Target{Path: out, Format: "csv", Options: map[string]string{"sep": ";"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsWritten != 3 || !res.Verified {
		t.Errorf("rows written %d, verified %v; want 3, true", res.RowsWritten, res.Verified)
	}
	rows := queryRows(t, "SELECT id, note FROM csv.`"+out+"` WITH (header 'true', multiLine 'true', sep ';') ORDER BY id")
	if len(rows) != 3 {
		t.Errorf("read back %v", rows)
	}
}

// A Latin-1 file is refused with the offset of its first byte that is not
// UTF-8 and the option to give, instead of merging U+FFFD; with the
// encoding given, the text is right.
func TestLatin1IsNotMergedAsReplacementCharacters(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	p := filepath.Join(dir, "latin1.csv")
	if err := os.WriteFile(p, []byte("id,city\n1,M\xfcnchen\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(p)})
	if err == nil || !strings.Contains(err.Error(), "encoding=ISO-8859-1") || !strings.Contains(err.Error(), "offset 11") {
		t.Fatalf("Latin-1 file: err = %v, want the offset and the encoding option", err)
	}
	_, out := merge(t, c, spark.Job{Sources: pathSources(p), ReaderOptions: map[string]string{"encoding": "ISO-8859-1"}})
	diff(t, "rows", [][]any{row("1", "München")}, parquetRows(t, out, []string{"id", "city"}, "id"))
}
