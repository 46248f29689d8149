package spark

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A client killed between the two renames of a local overwrite's install
// leaves the old target moved aside and the new one not yet moved in: the
// next run moves the new rows in and removes the old (what the install
// would have done); without new rows it moves the old ones back; a dry run
// refuses and changes nothing.
func TestRollForwardLocalFinishesAnInstall(t *testing.T) {
	const id = ".out.sparkmerge-0a1b2c3d-0000-4000-8000-000000000001"
	setup := func(t *testing.T, staged bool) (target string) {
		t.Helper()
		dir := t.TempDir()
		target = filepath.Join(dir, "out")
		write := func(p, content string) {
			if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
				t.Fatal(err)
			}
		}
		write(filepath.Join(dir, id+".old", "part-00000-old.parquet"), "old")
		if staged {
			write(filepath.Join(dir, id, "part-00000-new.parquet"), "new")
		}
		return target
	}
	files := func(t *testing.T, dir string) []string {
		t.Helper()
		var out []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("new rows staged", func(t *testing.T) {
		target := setup(t, true)
		if err := rollForwardLocal(target, false); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"out/part-00000-new.parquet"}, files(t, filepath.Dir(target))); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})
	t.Run("no new rows", func(t *testing.T) {
		target := setup(t, false)
		if err := rollForwardLocal(target, false); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"out/part-00000-old.parquet"}, files(t, filepath.Dir(target))); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		target := setup(t, true)
		before := files(t, filepath.Dir(target))
		var interrupted *InterruptedOverwriteError
		if err := rollForwardLocal(target, true); !errors.As(err, &interrupted) || interrupted.Staging != filepath.Join(filepath.Dir(target), id) {
			t.Errorf("err = %v, want an InterruptedOverwriteError naming the staged rows", err)
		}
		if diff := cmp.Diff(before, files(t, filepath.Dir(target))); diff != "" {
			t.Errorf("a dry run changed files (-want +got):\n%s", diff)
		}
	})
}
