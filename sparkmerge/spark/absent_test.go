package spark

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readPaths are the paths of the analyses of reads the fake received.
func readPaths(f *sparkFake) []string {
	var out []string
	for _, a := range f.recorded("schema read") {
		out = append(out, pstrs(dataSourceBelow(pmsg(a.plan(), "root")), "paths")...)
	}
	return out
}

// A merge to a local path that does not exist yet, in every mode, asks
// Spark to read neither the target nor the record of an interrupted
// overwrite beside it (rollForward, checkTargetAbsent, appendTargetSchema):
// one probe in the target's directory shows that the server shares it,
// and the client finds neither there. No request fails, and the probe is
// made once, for the staging directory too.
func TestNewLocalTargetIsAbsentWithoutFailedAnalyses(t *testing.T) {
	for _, mode := range []string{"", "errorifexists", "overwrite", "append", "ignore"} {
		t.Run("mode "+mode, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			job.Target.Mode = mode
			res, err := c.Merge(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, job.Target.Path)); diff != "" {
				t.Errorf("target rows (-want +got):\n%s", diff)
			}
			if res.RowsWritten != 3 {
				t.Errorf("%d rows written, want 3", res.RowsWritten)
			}
			if failed := f.failures(); len(failed) != 0 {
				t.Errorf("requests failed: %q, want none", failed)
			}
			record, _ := copyRecordPath(job.Target.Path)
			for _, p := range readPaths(f) {
				if p == job.Target.Path || p == literalPath(record) {
					t.Errorf("Spark was asked to read %s, which the client knows is absent", p)
				}
			}
			if n := len(f.recorded("input files")); n != 1 {
				t.Errorf("%d probes, want 1", n)
			}
		})
	}
}

// What the client finds at a local target is asked of Spark as before,
// whatever it is: data, an empty directory, a file, a dangling link; only
// absence is told on the client.
func TestLocalTargetThatExistsIsAskedOfSpark(t *testing.T) {
	cases := map[string]struct {
		make   func(t *testing.T, f *sparkFake, target string)
		noData bool
	}{
		"data": {make: func(t *testing.T, f *sparkFake, target string) {
			f.putData(t, filepath.Join(target, "part-00000.parquet"), sourceRows{"old": 4})
		}},
		"an empty directory": {noData: true, make: func(t *testing.T, _ *sparkFake, target string) {
			if err := os.Mkdir(target, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		"a file": {make: func(t *testing.T, f *sparkFake, target string) {
			f.putData(t, target, sourceRows{"old": 1})
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, f, _, job := mergeSetup(t)
			tc.make(t, f, job.Target.Path)
			_, err := c.Merge(context.Background(), job)
			var exists *TargetExistsError
			if !errors.As(err, &exists) || exists.NoData != tc.noData {
				t.Fatalf("err = %v, want a *TargetExistsError (no data: %v)", err, tc.noData)
			}
			if got := readPaths(f); !slices.Equal(got, []string{job.Target.Path}) {
				t.Errorf("analyses of reads %q, want the target's only", got)
			}
		})
	}
	t.Run("a dangling link", func(t *testing.T) {
		c, f, _, job := mergeSetup(t)
		if err := os.Symlink(filepath.Join(filepath.Dir(job.Target.Path), "gone"), job.Target.Path); err != nil {
			t.Fatal(err)
		}
		_, _ = c.Merge(context.Background(), job)
		if got := readPaths(f); len(got) == 0 || got[0] != job.Target.Path {
			t.Errorf("analyses of reads %q, want the target's first: a link is Spark's to judge", got)
		}
	})
}

// The record of an interrupted overwrite beside a local target: absent
// where the server shares the directory, it costs the probe only; present
// (with a record, or cleared) it is read by Spark as before; where the
// server does not share the directory (it does not list the probe), Spark
// is asked as before.
func TestLocalCopyRecord(t *testing.T) {
	setup := func(t *testing.T) (*Client, *sparkFake, string) {
		c, f := sparkFakeClient(t)
		at, _ := copyRecordPath(filepath.Join(t.TempDir(), "out"))
		return c, f, at
	}
	t.Run("absent", func(t *testing.T) {
		c, f, at := setup(t)
		rec, err := c.readCopyRecord(context.Background(), at)
		if err != nil || rec != nil {
			t.Fatalf("record %+v, err %v; want none", rec, err)
		}
		if got := readPaths(f); len(got) != 0 {
			t.Errorf("analyses of reads %q, want none", got)
		}
		if n := len(f.recorded("input files")); n != 1 {
			t.Errorf("%d probes, want 1", n)
		}
		if failed := f.failures(); len(failed) != 0 {
			t.Errorf("requests failed: %q", failed)
		}
		if entries, _ := os.ReadDir(filepath.Dir(at)); len(entries) != 0 {
			t.Errorf("the probe left %v", entries)
		}
	})
	t.Run("present", func(t *testing.T) {
		c, f, at := setup(t)
		want := copyRecord{Staging: filepath.Dir(at) + "/.out.sparkmerge-x", Rows: 7, Files: []string{"file:/a.parquet"}, Target: Target{Path: filepath.Join(filepath.Dir(at), "out"), Mode: "overwrite"}}
		line, _ := json.Marshal(want)
		writeFiles(t, at, map[string]string{"part-00000.txt": string(line) + "\n", "_SUCCESS": ""})
		rec, err := c.readCopyRecord(context.Background(), at)
		if err != nil || rec == nil {
			t.Fatalf("record %+v, err %v; want the record", rec, err)
		}
		if diff := cmp.Diff(want, *rec, cmp.AllowUnexported(Target{})); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
		if got := readPaths(f); !slices.Equal(got, []string{literalPath(at)}) {
			t.Errorf("analyses of reads %q, want the record's", got)
		}
	})
	t.Run("cleared", func(t *testing.T) {
		c, f, at := setup(t)
		writeFiles(t, at, map[string]string{"part-00000.txt": "", "_SUCCESS": ""})
		rec, err := c.readCopyRecord(context.Background(), at)
		if err != nil || rec != nil {
			t.Fatalf("record %+v, err %v; want none", rec, err)
		}
		if got := readPaths(f); !slices.Equal(got, []string{literalPath(at)}) {
			t.Errorf("analyses of reads %q, want the record's", got)
		}
	})
	t.Run("directory not shared", func(t *testing.T) {
		c, f, at := setup(t)
		f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
			if call.what == "input files" {
				return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist")}, true
			}
			return sparkReply{}, false
		}
		rec, err := c.readCopyRecord(context.Background(), at)
		if err != nil || rec != nil {
			t.Fatalf("record %+v, err %v; want none", rec, err)
		}
		if got := readPaths(f); !slices.Equal(got, []string{literalPath(at)}) {
			t.Errorf("analyses of reads %q, want the record's: the client cannot tell", got)
		}
	})
}

// An incremental run's STATE at a new local path is read as empty
// without asking Spark to read it.
func TestNewLocalStateIsAbsentWithoutFailedAnalyses(t *testing.T) {
	c, f := sparkFakeClient(t)
	rows, err := c.readState(context.Background(), filepath.Join(t.TempDir(), "state"))
	if err != nil || len(rows) != 0 {
		t.Fatalf("rows %v, err %v; want none", rows, err)
	}
	if failed := f.failures(); len(failed) != 0 {
		t.Errorf("requests failed: %q, want none", failed)
	}
	if n := len(f.recorded("input files")); n != 1 || len(f.recorded("ExecutePlan")) != 0 {
		t.Errorf("calls %d probes, %d executions; want the probe only", n, len(f.recorded("ExecutePlan")))
	}
}

// Only a path Spark reads as the client's own absolute path is decided on
// the client.
func TestExactLocalPath(t *testing.T) {
	for p, want := range map[string]string{
		"/tmp/out":         "/tmp/out",
		"/tmp/out/":        "/tmp/out",
		"file:/tmp/out":    "/tmp/out",
		"file:///tmp/out":  "/tmp/out",
		"file:/tmp/a%20b":  "",
		"out":              "",
		"./out":            "",
		"/tmp/./out":       "",
		"/tmp/x/../out":    "",
		"/tmp//out":        "",
		"/tmp/o[1]":        "",
		"/tmp/o*":          "",
		`/tmp/a\b`:         "",
		"/tmp/a:b":         "",
		"s3a://b/out":      "",
		"dbfs:/out":        "",
		"/":                "",
		"file://host/tmp/": "",
	} {
		got, ok := exactLocalPath(p)
		if ok != (want != "") || got != want {
			t.Errorf("exactLocalPath(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
}

// A merge's probe beside its target is made once whatever asks (the
// record, the target, the staging directory), and a merge to a local
// directory the server does not share still asks Spark (the probe is not
// listed): the record and the target are analysed as before.
func TestLocalTargetNotSharedIsAskedOfSpark(t *testing.T) {
	c, f, _, job := mergeSetup(t)
	f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
		if call.what == "input files" {
			ds := dataSourceBelow(pmsg(call.req, "input_files", "plan", "root"))
			if strings.Contains(pstrs(ds, "paths")[0], ".sparkmerge-probe.") {
				return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist")}, true
			}
		}
		return sparkReply{}, false
	}
	job.DryRun = true
	if _, err := c.Merge(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	record, _ := copyRecordPath(job.Target.Path)
	got := readPaths(f)
	if len(got) < 2 || got[0] != literalPath(record) || got[1] != job.Target.Path {
		t.Errorf("analyses of reads %q, want the record's and the target's first", got)
	}
	if n := len(f.recorded("input files")); n != 1 {
		t.Errorf("%d probes, want 1", n)
	}
}

// A Delta path target that does not exist yet is described as new
// without asking Spark for its schema.
func TestNewLocalDeltaPathIsAbsentWithoutFailedAnalyses(t *testing.T) {
	c, f := sparkFakeClient(t)
	target := filepath.Join(t.TempDir(), "lake")
	tt, err := c.describeTarget(context.Background(), Target{Path: target, Format: "delta"})
	if err != nil || tt == nil || tt.Exists || tt.Name != deltaPathTable(target) {
		t.Fatalf("described %+v, err %v; want a new Delta path", tt, err)
	}
	if failed := f.failures(); len(failed) != 0 {
		t.Errorf("requests failed: %q, want none", failed)
	}
	if got := readPaths(f); len(got) != 0 {
		t.Errorf("analyses of reads %q, want none", got)
	}
}

// The files of a local target that does not exist yet (an incremental
// run's, an append's) are none, without a listing that fails.
func TestNewLocalTargetHasNoFilesWithoutFailedListing(t *testing.T) {
	c, f := sparkFakeClient(t)
	files, err := c.targetFiles(context.Background(), Target{Path: filepath.Join(t.TempDir(), "out")})
	if err != nil || len(files) != 0 {
		t.Fatalf("files %v, err %v; want none", files, err)
	}
	if failed := f.failures(); len(failed) != 0 {
		t.Errorf("requests failed: %q, want none", failed)
	}
	if n := len(f.recorded("list")); n != 0 {
		t.Errorf("%d listings, want none", n)
	}
}
