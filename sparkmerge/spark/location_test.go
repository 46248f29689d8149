package spark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsStagingName(t *testing.T) {
	for name, want := range map[string]bool{
		stagingName("t"):                                     true,
		stagingName("out.parquet"):                           true,
		stagingName("t") + ".old":                            true,
		".t.sparkmerge-0b6f2b52-62c1-4a0e-9d5c-2a8d5f7a1c11": true,
		"t.sparkmerge-0b6f2b52-62c1-4a0e-9d5c-2a8d5f7a1c11":  false, // not hidden: the user's
		".t.sparkmerge-notauuid":                             false,
		".hidden":                                            false,
		"t":                                                  false,
	} {
		if got := isStagingName(name); got != want {
			t.Errorf("isStagingName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestInStagingDir(t *testing.T) {
	staging := ".t.sparkmerge-0b6f2b52-62c1-4a0e-9d5c-2a8d5f7a1c11"
	tests := []struct {
		given, file string
		want        bool
	}{
		{"/d/*/*.csv", "/d/t/a.csv", false},
		{"/d/*/*.csv", "/d/" + staging + "/a.csv", true},
		{"/d/*", "file:/d/" + staging + "/part-0.parquet", true},
		{"/d", "/d/" + staging + "/x/part-0.parquet", true},
		{"s3a://b/d/*/*.parquet", "s3a://b/d/" + staging + "/part-0.parquet", true},
		// A staging directory the user names is read as asked.
		{"/d/" + staging, "/d/" + staging + "/a.csv", false},
		{"/d/" + staging + "/*.csv", "/d/" + staging + "/a.csv", false},
	}
	for _, tt := range tests {
		if got := inStagingDir(tt.given, tt.file); got != tt.want {
			t.Errorf("inStagingDir(%q, %q) = %v, want %v", tt.given, tt.file, got, tt.want)
		}
	}
}

// A glob over sibling datasets skips the staging directory an earlier run
// left beside one of them.
func TestExpandLocalGlobSkipsStagingDirectories(t *testing.T) {
	dir := t.TempDir()
	staging := stagingName("t")
	writeFiles(t, dir, map[string]string{"t/a.csv": "x\n", "u/b.csv": "x\n", staging + "/c.csv": "x\n"})
	got, err := ExpandLocal([]SourceSpec{{Paths: []string{filepath.Join(dir, "*", "*.csv")}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceSpec{{Paths: []string{filepath.Join(dir, "t", "a.csv")}}, {Paths: []string{filepath.Join(dir, "u", "b.csv")}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpandLocal (-want +got):\n%s", diff)
	}
}

// The server's listing of such a glob drops them too.
func TestPlanRemoteGlobSkipsStagingDirectories(t *testing.T) {
	c, fake := newFakeClient()
	staging := stagingName("t")
	fake.files["s3a://b/d/t/a.json"] = fakeFile{content: `{"id":1}` + "\n", mtimeMillis: 1}
	fake.files["s3a://b/d/"+staging+"/a.json"] = fakeFile{content: `{"id":1,"emptied":1}` + "\n", mtimeMillis: 1}
	fake.nowMillis = 1 << 40
	planned, err := c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/d/*/*.json"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range planned.Reads {
		for _, p := range r.parts() {
			paths = append(paths, p.Paths...)
		}
	}
	if diff := cmp.Diff([]string{"s3a://b/d/t/a.json"}, paths); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
}

func TestClientRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"out/a.csv": "x\n"})
	for link, to := range map[string]string{"dirlink": "out", "filelink.csv": "out/a.csv", "abslink": filepath.Join(dir, "out")} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]string{
		filepath.Join(dir, "dirlink"):                          filepath.Join(dir, "out"),
		filepath.Join(dir, "dirlink", "a.csv"):                 filepath.Join(dir, "out", "a.csv"),
		"file://" + filepath.Join(dir, "dirlink/a.csv"):        filepath.Join(dir, "out", "a.csv"),
		filepath.Join(dir, "filelink.csv"):                     filepath.Join(dir, "out", "a.csv"),
		filepath.Join(dir, "abslink", "new", "x"):              filepath.Join(dir, "out", "new", "x"), // not yet created
		filepath.Join(dir, "dirlink", "..", "out", "b"):        filepath.Join(dir, "out", "b"),        // ".." cleaned first, as Spark does
		filepath.Join(dir, "none", "dirlink"):                  filepath.Join(dir, "none", "dirlink"),
		filepath.Join(dir, "out") + string(filepath.Separator): filepath.Join(dir, "out"),
	} {
		if got := clientRealPath(p); got != want {
			t.Errorf("clientRealPath(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestFromServerURI(t *testing.T) {
	for u, want := range map[string]string{
		"file:/data/out/a.csv":        "/data/out/a.csv",
		"file:///data/out/a.csv":      "/data/out/a.csv",
		"file:/data/x%20y%23z.csv":    "/data/x y#z.csv",
		"file:/data/out/":             "/data/out",
		"file:/":                      "/",
		"null":                        "",
		"":                            "",
		"s3a://b/x":                   "",
		"file:/data/%E2%82%AC/ü.json": "/data/€/ü.json",
	} {
		if got := fromServerURI(u); got != want {
			t.Errorf("fromServerURI(%q) = %q, want %q", u, got, want)
		}
	}
}

// Paths are compared by their real paths: a link to a file, or to a
// directory holding it, reaches it twice; an output reached through a
// link overlaps the inputs it holds.
func TestChecksCompareRealPaths(t *testing.T) {
	viaLink := func(name, p, real string) *Read {
		r := pathRead(name, p)
		r.real = []string{real}
		return r
	}
	a := viaLink("/d/out/a.csv", "/d/out/a.csv", "/d/out/a.csv")
	linked := viaLink("/d/link/a.csv", "/d/link/a.csv", "/d/out/a.csv")
	err := checkDuplicateInputs(readInputs([]*Read{a, linked}))
	var dup *DuplicateInputError
	if !errors.As(err, &dup) || dup.Path != "/d/link/a.csv" || !strings.Contains(err.Error(), "as /d/out/a.csv and /d/link/a.csv") {
		t.Errorf("a file and a link to it: err = %v, want a DuplicateInputError naming both paths", err)
	}
	dirLink := viaLink("/d/dirlink", "/d/dirlink", "/d/out")
	if err := checkDuplicateInputs(readInputs([]*Read{dirLink, a})); !errors.As(err, &dup) {
		t.Errorf("a link to a directory and a file in it: err = %v, want a DuplicateInputError", err)
	}
	other := viaLink("/e/b.csv", "/e/b.csv", "/e/b.csv")
	if err := checkDuplicateInputs(readInputs([]*Read{a, other})); err != nil {
		t.Errorf("distinct files: %v", err)
	}

	var overlap *OverlapError
	err = checkOverlap(Target{Path: "/d/out"}, "/d/out", readInputs([]*Read{linked}))
	if !errors.As(err, &overlap) || overlap.RealInput != "/d/out/a.csv" || !strings.Contains(err.Error(), "through a link: the output is /d/out, the input /d/out/a.csv") {
		t.Errorf("an input linked into the output: err = %v, want an OverlapError through a link", err)
	}
	err = checkOverlap(Target{Path: "/d/outlink"}, "/d/out", readInputs([]*Read{a}))
	if !errors.As(err, &overlap) {
		t.Errorf("an output that links to the inputs' directory: err = %v, want an OverlapError", err)
	}
	if err := checkOverlap(Target{Path: "/d/new"}, "/d/new", readInputs([]*Read{linked})); err != nil {
		t.Errorf("a distinct output: %v", err)
	}
}

// Files only the server sees are compared by the real paths it lists them
// with, and a target the client lacks by the one it resolves.
func TestPlanComparesServerRealPaths(t *testing.T) {
	c, fake := newFakeClient()
	fake.nowMillis = 1 << 40
	fake.files["/sparkmerge-server-only/out/a.json"] = fakeFile{content: `{"id":1}` + "\n", mtimeMillis: 1}
	fake.files["/sparkmerge-server-only/link/a.json"] = fakeFile{content: `{"id":1}` + "\n", mtimeMillis: 1}
	fake.realPathsOf = map[string]string{"/sparkmerge-server-only/out/a.json": "/sparkmerge-server-only/out/a.json", "/sparkmerge-server-only/link/a.json": "/sparkmerge-server-only/out/a.json", "/sparkmerge-server-only/link": "/sparkmerge-server-only/out", "/sparkmerge-server-only/target": "/sparkmerge-server-only/out"}
	_, err := c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"/sparkmerge-server-only/out/a.json"}}, {Paths: []string{"/sparkmerge-server-only/link/a.json"}}}})
	var dup *DuplicateInputError
	if !errors.As(err, &dup) {
		t.Errorf("a file and a link to it: err = %v, want a DuplicateInputError", err)
	}
	_, err = c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"/sparkmerge-server-only/link"}}}, Target: Target{Path: "/sparkmerge-server-only/target", Mode: "overwrite"}})
	var overlap *OverlapError
	if !errors.As(err, &overlap) {
		t.Errorf("an output linked to the input directory: err = %v, want an OverlapError", err)
	}
	_, err = c.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"/sparkmerge-server-only/link"}}}, Target: Target{Path: "/sparkmerge-server-only/elsewhere", Mode: "overwrite"}})
	if err != nil {
		t.Errorf("a distinct output: %v", err)
	}
}

// A relative source is the client's: made absolute when this machine has
// it, refused when it has not (the server would look in its own working
// directory); a relative output is refused when the server does not see
// the client's directory, in a merge that writes (withSharedDirs). A plan
// or a dry run writes no probe: the directories are taken as seen, and
// the merge checks.
func TestResolveJobPaths(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"in/a.csv": "id\n1\n"})
	t.Chdir(dir)
	c, fake := newFakeClient()

	pinned := pinDirs(t, dir, filepath.Join(dir, "in"))
	job, err := c.resolveJobPaths(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"in/a.csv"}}}, Target: Target{Path: "out/x"}})
	if err != nil || job.Sources[0].Paths[0] != filepath.Join(dir, "in/a.csv") || job.Target.Path != filepath.Join(dir, "out/x") {
		t.Errorf("planned: job %+v, err %v; want the paths made absolute, no refusal", job, err)
	}
	if calls := fake.recorded(); len(calls) != 0 {
		t.Errorf("planned: calls %v, want none (no probe)", calls)
	}
	pinned.unchanged(t)

	job, err = c.resolveJobPaths(withSharedDirs(context.Background()), Job{Sources: []SourceSpec{{Paths: []string{"in/a.csv"}}, {Paths: []string{"s3a://b/x.csv"}}, {Table: "db.t"}}})
	if err == nil {
		t.Fatal("the server does not see the client's files: no error")
	}
	var rel *RelativePathError
	if !errors.As(err, &rel) || !rel.ServerBlind || rel.Absolute != filepath.Join(dir, "in/a.csv") || !strings.Contains(err.Error(), "does not see") {
		t.Errorf("err = %v, want a RelativePathError: the server does not see it", err)
	}

	fake.clientFS = true // a server that shares the client's filesystem
	job, err = c.resolveJobPaths(withSharedDirs(context.Background()), Job{Sources: []SourceSpec{{Paths: []string{"in/a.csv"}}, {Paths: []string{"s3a://b/x.csv"}}, {Table: "db.t"}}, Target: Target{Path: "out/x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Job{Sources: []SourceSpec{{Paths: []string{filepath.Join(dir, "in/a.csv")}}, {Paths: []string{"s3a://b/x.csv"}}, {Table: "db.t"}}, Target: Target{Path: filepath.Join(dir, "out/x")}}
	if diff := cmp.Diff(want.Sources, job.Sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if job.Target.Path != want.Target.Path {
		t.Errorf("target %s, want %s", job.Target.Path, want.Target.Path)
	}

	_, err = c.resolveJobPaths(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{"in/none.csv"}}}})
	if !errors.As(err, &rel) || rel.ServerBlind || !strings.Contains(err.Error(), "this machine has no "+filepath.Join(dir, "in/none.csv")) {
		t.Errorf("a relative path this machine lacks: err = %v, want a RelativePathError naming it", err)
	}

	// Absolute paths and URIs cost no probe.
	before := len(fake.recorded())
	if _, err := c.resolveJobPaths(withSharedDirs(context.Background()), Job{Sources: []SourceSpec{{Paths: []string{"/sparkmerge-server-only/a.csv"}}}, Target: Target{Path: "s3a://b/out"}}); err != nil {
		t.Fatal(err)
	}
	if calls := fake.recorded()[before:]; len(calls) != 0 {
		t.Errorf("absolute paths: calls %v, want none", calls)
	}
}

// A hard link is the same file by another real path: refused too.
func TestCheckSameFilesFindsHardLinks(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.csv": "id\n1\n", "b.csv": "id\n2\n"})
	a, b, hard := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "hard.csv")
	if err := os.Link(a, hard); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	read := func(p string) *Read {
		r := pathRead(p, p)
		r.real = []string{clientRealPath(p)}
		return r
	}
	var dup *DuplicateInputError
	if err := checkSameFiles(readInputs([]*Read{read(a), read(b), read(hard)})); !errors.As(err, &dup) || dup.Path != hard {
		t.Errorf("a file and a hard link to it: err = %v, want a DuplicateInputError for %s", err, hard)
	}
	if err := checkSameFiles(readInputs([]*Read{read(a), read(b)})); err != nil {
		t.Errorf("distinct files of one size: %v", err)
	}
}

// Absolute source paths are spelled as Spark lists their files (no "."
// or empty elements), so that a directory only the server sees, written
// /data/./in or /data//in, is not refused as a partitioned tree it is
// not below (found in the field); URIs stay as given.
func TestResolveJobPathsCleansAbsolutePaths(t *testing.T) {
	c, _ := newFakeClient()
	job := Job{Sources: []SourceSpec{{Paths: []string{"/mnt/data/s3/./landing", "/mnt//data/x/", "/a/b/../c/*.csv", "s3a://bucket//x/./y", "/"}}}}
	got, err := c.resolveJobPaths(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/mnt/data/s3/landing", "/mnt/data/x/", "/a/c/*.csv", "s3a://bucket//x/./y", "/"}
	if d := cmp.Diff(want, got.Sources[0].Paths); d != "" {
		t.Errorf("paths (-want +got):\n%s", d)
	}
}
