package spark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// pinnedDirs are directories as a test found them: their names, and a
// modification time set far in the past, which any entry made or removed
// in them (a probe, even one removed at once) sets to now.
type pinnedDirs map[string][]string

var pinnedTime = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// pinDirs pins dirs (see pinnedDirs).
func pinDirs(t *testing.T, dirs ...string) pinnedDirs {
	t.Helper()
	p := pinnedDirs{}
	for _, d := range dirs {
		if err := os.Chtimes(d, pinnedTime, pinnedTime); err != nil {
			t.Fatal(err)
		}
		p[d] = dirNames(t, d)
	}
	return p
}

// unchanged fails t unless every pinned directory is as it was: the same
// names, and no entry made or removed since.
func (p pinnedDirs) unchanged(t *testing.T) {
	t.Helper()
	for d, names := range p {
		if got := dirNames(t, d); !slices.Equal(got, names) {
			t.Errorf("%s holds %q, was %q", d, got, names)
		}
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !info.ModTime().Equal(pinnedTime) {
			t.Errorf("%s was written to (modified %v): an entry was made or removed there", d, info.ModTime())
		}
	}
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
		rec, err := c.readCopyRecord(withSharedDirs(context.Background()), at)
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
		rec, err := c.readCopyRecord(withSharedDirs(context.Background()), at)
		if err != nil || rec != nil {
			t.Fatalf("record %+v, err %v; want none", rec, err)
		}
		if got := readPaths(f); !slices.Equal(got, []string{literalPath(at)}) {
			t.Errorf("analyses of reads %q, want the record's: the client cannot tell", got)
		}
	})
}

// An incremental run's STATE at a new local path is read as empty
// without asking Spark to read it (in a merge that writes).
func TestNewLocalStateIsAbsentWithoutFailedAnalyses(t *testing.T) {
	c, f := sparkFakeClient(t)
	rows, _, err := c.readState(withSharedDirs(context.Background()), filepath.Join(t.TempDir(), "state"))
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
// without asking Spark for its schema (in a merge that writes).
func TestNewLocalDeltaPathIsAbsentWithoutFailedAnalyses(t *testing.T) {
	c, f := sparkFakeClient(t)
	target := filepath.Join(t.TempDir(), "lake")
	tt, err := c.describeTarget(withSharedDirs(context.Background()), Target{Path: target, Format: "delta"})
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
// run's, an append's) are none, without a listing that fails (in a merge
// that writes).
func TestNewLocalTargetHasNoFilesWithoutFailedListing(t *testing.T) {
	c, f := sparkFakeClient(t)
	files, err := c.targetFiles(withSharedDirs(context.Background()), Target{Path: filepath.Join(t.TempDir(), "out")})
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

// A plan or a dry run writes nothing to the user's directories, not even
// a probe removed at once: whether the target, its record, a Delta path
// or STATE exists is asked of Spark (a failed analysis where absent), the
// directories of relative paths are taken as seen, and the plan is the
// one a merge that writes makes with its probes.
func TestPlanWritesNothingBesideTheTarget(t *testing.T) {
	// Each case's plan asks whether a path of the merge's own exists (but
	// errorifexists's, whose target a merge checks before it plans).
	cases := map[string]func(t *testing.T, f *sparkFake, job *Job){
		"an append":        func(_ *testing.T, _ *sparkFake, job *Job) { job.Target.Mode = "append" },
		"an errorifexists": func(*testing.T, *sparkFake, *Job) {},
		"an append under a missing parent": func(_ *testing.T, _ *sparkFake, job *Job) {
			job.Target.Mode = "append"
			job.Target.Path = filepath.Join(filepath.Dir(job.Target.Path), "new", "day", "out")
		},
		"a Delta path": func(_ *testing.T, _ *sparkFake, job *Job) { job.Target.Mode, job.Target.Format = "append", "delta" },
		"an incremental run": func(_ *testing.T, f *sparkFake, job *Job) {
			state := filepath.Join(filepath.Dir(job.Target.Path), "state")
			job.Incremental = &Incremental{State: state}
			target := job.Target.Path
			f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
				// Spark's answer to a read of STATE, which does not exist,
				// and of the target, which a run with a new STATE looks
				// in for rows (the fake answers no query of a read).
				if call.method != "ExecutePlan" {
					return sparkReply{}, false
				}
				for _, p := range []string{state, target} {
					if slices.Contains(pstrs(dataSourceBelow(pmsg(call.plan(), "root")), "paths"), p) {
						return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist: "+p)}, true
					}
				}
				return sparkReply{}, false
			}
		},
		"a relative append": func(t *testing.T, _ *sparkFake, job *Job) {
			t.Chdir(filepath.Dir(job.Target.Path))
			job.Target.Mode, job.Target.Path = "append", "out"
		},
	}
	for name, setup := range cases {
		for _, dry := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, dry run %v", name, dry), func(t *testing.T) {
				c, f, paths, job := mergeSetup(t)
				setup(t, f, &job)
				job.DryRun = dry
				dirs := []string{filepath.Dir(paths[0]), filepath.Dir(job.Target.Path)}
				if !filepath.IsAbs(job.Target.Path) {
					dirs[1], _ = os.Getwd()
				}
				if _, err := os.Stat(dirs[1]); err != nil {
					dirs[1] = filepath.Dir(filepath.Dir(dirs[1]))
				}
				pinned := pinDirs(t, dirs...)
				planned, err := c.Plan(context.Background(), job)
				if err != nil {
					t.Fatal(err)
				}
				if dry {
					if _, err := c.Merge(context.Background(), job); err != nil {
						t.Fatalf("dry run: %v", err)
					}
				}
				pinned.unchanged(t)
				if n := len(f.recorded("input files")); n != 0 {
					t.Errorf("%d probes, want none", n)
				}
				// The same plan as a merge that writes makes, deciding
				// with its probe.
				job.DryRun = false
				merging, err := c.Plan(withSharedDirs(context.Background()), job)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(f.recorded("input files")); n == 0 && name != "an errorifexists" {
					t.Errorf("a merge that writes made no probe")
				}
				if diff := cmp.Diff(merging.Plan, planned.Plan); diff != "" {
					t.Errorf("plan (-merging +planned):\n%s", diff)
				}
				if diff := cmp.Diff(merging.Table, planned.Table, cmp.AllowUnexported(TargetTable{})); diff != "" {
					t.Errorf("target table (-merging +planned):\n%s", diff)
				}
			})
		}
	}
}

// A local target whose parent does not exist yet (nor its parent's) is
// told absent without asking Spark, in every mode: the nearest directory
// the client has lacks the next name on the way, and the server lists the
// probe written there. No request fails, the probe is made once, and the
// rows are written.
func TestNewLocalTargetUnderMissingParent(t *testing.T) {
	for _, mode := range []string{"", "errorifexists", "overwrite", "append", "ignore"} {
		t.Run("mode "+mode, func(t *testing.T) {
			c, f, paths, job := mergeSetup(t)
			dir := filepath.Dir(job.Target.Path)
			job.Target.Path = filepath.Join(dir, "new", "day=1", "out")
			job.Target.Mode = mode
			var probed []string
			f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
				if call.what == "input files" {
					probed = append(probed, pstrs(dataSourceBelow(pmsg(call.req, "input_files", "plan", "root")), "paths")...)
				}
				return sparkReply{}, false
			}
			if _, err := c.Merge(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sourceRows{paths[0]: 2, paths[1]: 1}, f.storedRows(t, job.Target.Path)); diff != "" {
				t.Errorf("target rows (-want +got):\n%s", diff)
			}
			if failed := f.failures(); len(failed) != 0 {
				t.Errorf("requests failed: %q, want none", failed)
			}
			if got := readPaths(f); len(got) != 0 {
				t.Errorf("analyses of reads %q, want none", got)
			}
			if len(probed) != 1 || filepath.Dir(filepath.Dir(localPath(probed[0]))) != dir {
				t.Errorf("probes %q, want one in %s", probed, dir)
			}
		})
	}
}

// What the client cannot tell on the way to a target under a missing
// parent is asked of Spark: a file where a directory would be, a dangling
// link, a directory the server does not share.
func TestTargetUnderMissingParentAskedOfSpark(t *testing.T) {
	cases := map[string]func(t *testing.T, f *sparkFake, dir string){
		"a file on the way": func(t *testing.T, _ *sparkFake, dir string) {
			writeFiles(t, dir, map[string]string{"new": "x"})
		},
		"a dangling link on the way": func(t *testing.T, _ *sparkFake, dir string) {
			if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "new")); err != nil {
				t.Fatal(err)
			}
		},
		"a directory not shared": func(_ *testing.T, f *sparkFake, _ string) {
			f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
				if call.what == "input files" {
					return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist")}, true
				}
				return sparkReply{}, false
			}
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			c, f := sparkFakeClient(t)
			dir := t.TempDir()
			setup(t, f, dir)
			target := filepath.Join(dir, "new", "day=1", "out")
			if c.absentOnServer(withSharedDirs(context.Background()), target) {
				t.Errorf("%s told absent on the client", target)
			}
		})
	}
	t.Run("a first name the client lacks", func(t *testing.T) {
		// A mount only the server has (/data/...): no probe in the
		// client's root, which a server in a container never shares.
		c, f := sparkFakeClient(t)
		for _, p := range []string{"/sparkmerge-not-here-" + filepath.Base(t.TempDir()) + "/day=1/out", "/sparkmerge-not-here"} {
			if c.absentOnServer(withSharedDirs(context.Background()), p) {
				t.Errorf("%s told absent on the client", p)
			}
		}
		if n := len(f.recorded("input files")); n != 0 {
			t.Errorf("%d probes, want none", n)
		}
	})
	t.Run("a link to a directory on the way", func(t *testing.T) {
		c, f := sparkFakeClient(t)
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "real"), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		if !c.absentOnServer(withSharedDirs(context.Background()), filepath.Join(dir, "link", "new", "out")) {
			t.Error("a missing path below a link to a shared directory: not told absent")
		}
		if n := len(f.recorded("input files")); n != 1 {
			t.Errorf("%d probes, want 1", n)
		}
	})
}

// A merge to a view or a DataFrame reads the sources' rows: the directory
// of a relative source is checked as a merge's is (the server must list
// the probe), unlike a plan's, and refused where the server does not see
// it.
func TestMergeViewChecksRelativeSources(t *testing.T) {
	c, f, paths, job := frameSetup(t)
	t.Chdir(filepath.Dir(paths[0]))
	job.Sources = []SourceSpec{{Paths: []string{filepath.Base(paths[0])}}}
	f.hook = func(_ context.Context, call sparkCall) (sparkReply, bool) {
		if call.what == "input files" {
			return sparkReply{err: sparkErrorOf("PATH_NOT_FOUND", "Path does not exist")}, true
		}
		return sparkReply{}, false
	}
	_, err := c.MergeView(context.Background(), job, "merged", false)
	var rel *RelativePathError
	if !errors.As(err, &rel) || !rel.ServerBlind || rel.Absolute != paths[0] {
		t.Errorf("err = %v, want a RelativePathError: the server does not see %s", err, paths[0])
	}
	if _, err := c.Plan(context.Background(), job); err != nil {
		t.Errorf("the plan, which takes the directory as seen: %v", err)
	}
}
