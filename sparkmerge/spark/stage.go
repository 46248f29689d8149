package spark

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// A path write goes first to a hidden staging directory beside the target
// and is installed only once it (and --verify) succeeded, when the client
// shares the server's filesystem and can rename there: a failure during the
// write leaves the target as it was, and --verify counts exactly this run's
// rows. Elsewhere (cluster storage, where Spark Connect offers no rename)
// Spark writes the target directly.

// staged is a write's destination and how to make it the target's content.
type staged struct {
	// write is where Spark writes.
	write Target
	// install moves the written rows into the target (nil: written there
	// already).
	install func() error
	// abort removes what was written (nil: nothing to remove).
	abort func()
}

// stage decides where a path target's rows are written. Modes that keep an
// existing target as it is (ignore) and targets the client cannot rename
// are written directly.
func (c *Client) stage(ctx context.Context, t Target) (staged, error) {
	direct := staged{write: t}
	mode := strings.ToLower(t.Mode)
	if t.Table != "" && mode == "overwrite" {
		return c.stageTable(ctx, t)
	}
	if t.Path == "" || mode == "ignore" || !isLocalPath(t.Path) {
		return direct, nil
	}
	target := filepath.Clean(localPath(t.Path))
	parent := filepath.Dir(target)
	if info, err := os.Stat(parent); err != nil || !info.IsDir() {
		return direct, nil
	}
	dir := filepath.Join(parent, "."+filepath.Base(target)+".sparkmerge-"+uuid.NewString())
	if !c.sharesDirectory(ctx, dir) {
		return direct, nil
	}
	s := staged{write: t, abort: func() { os.RemoveAll(dir) }}
	s.write.Path = dir
	s.write.Mode = "errorifexists"
	s.install = func() error {
		defer os.RemoveAll(dir)
		_, err := os.Stat(target)
		exists := err == nil
		switch {
		case !exists:
			return os.Rename(dir, target)
		case mode == "append":
			return moveFiles(dir, target)
		case mode == "overwrite":
			old := dir + ".old"
			if err := os.Rename(target, old); err != nil {
				return fmt.Errorf("move the old %s aside: %w", target, err)
			}
			if err := os.Rename(dir, target); err != nil {
				if rerr := os.Rename(old, target); rerr != nil {
					return fmt.Errorf("install the new %s: %w; the old data is at %s", target, err, old)
				}
				return fmt.Errorf("install the new %s: %w (the old data is back)", target, err)
			}
			return os.RemoveAll(old)
		default: // errorifexists: it appeared while the merge ran
			return &TargetExistsError{Target: target}
		}
	}
	return s, nil
}

// sharesDirectory reports whether the Spark server sees the client's
// filesystem at dir's parent: the client writes a probe file into dir (a
// hidden directory, which no reader of the parent lists) and asks Spark to
// list it. It removes dir afterwards.
func (c *Client) sharesDirectory(ctx context.Context, dir string) bool {
	defer os.RemoveAll(dir)
	if err := os.Mkdir(dir, 0o777); err != nil {
		return false
	}
	os.Chmod(dir, 0o777) // a server in a container may write as another user
	probe := filepath.Join(dir, "probe")
	content := []byte(filepath.Base(dir))
	if err := os.WriteFile(probe, content, 0o666); err != nil {
		return false
	}
	files, err := c.listFiles(ctx, literalPath(probe), nil)
	return err == nil && len(files) == 1 && files[0].size == int64(len(content))
}

// moveFiles moves every data file below from to the same place below to
// (partition directories included), for an append: each rename is atomic,
// and Spark's file names are unique per write. Markers (_SUCCESS) and
// checksum files stay behind.
func moveFiles(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			return nil
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dest := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dest), 0o777); err != nil {
			return err
		}
		if _, err := os.Stat(dest); err == nil {
			return fmt.Errorf("append: %s exists already", dest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return os.Rename(p, dest)
	})
}

// stageTable stages an overwrite of an existing table: Spark writes a new
// table beside it, and only after the write and --verify succeeded is the
// old table dropped and the new one renamed in its place (two catalog
// operations, no data written between them). A failed write leaves the
// old table as it was; a failed rename leaves the new rows in the staging
// table, which the error names.
func (c *Client) stageTable(ctx context.Context, t Target) (staged, error) {
	if _, err := c.sess.Table(t.Table, nil).Schema(ctx); err != nil {
		return staged{write: t}, nil // nothing to keep: written directly
	}
	name := stagingTableName(t.Table)
	s := staged{write: t}
	s.write.Table = name
	s.write.Mode = "errorifexists"
	s.abort = func() {
		_ = c.sess.ExecSQL(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+name)
	}
	s.install = func() error {
		if err := c.sess.ExecSQL(ctx, "DROP TABLE "+t.Table); err != nil {
			return fmt.Errorf("drop the old table: %w (the new rows are in %s)", err, name)
		}
		if err := c.sess.ExecSQL(ctx, "ALTER TABLE "+name+" RENAME TO "+t.Table); err != nil {
			return fmt.Errorf("rename %s to %s: %w (the new rows are in %s)", name, t.Table, err, name)
		}
		// Other sessions that read the old table refresh it themselves
		// (REFRESH TABLE), as after any table replaced behind them.
		return c.sess.ExecSQL(ctx, "REFRESH TABLE "+t.Table)
	}
	return s, nil
}

// stagingTableName is a fresh table name beside table ("db.t" gives
// "db.t__sparkmerge_1a2b3c4d"), inside its quotes if it is quoted.
func stagingTableName(table string) string {
	suffix := "__sparkmerge_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	if strings.HasSuffix(table, "`") {
		return table[:len(table)-1] + suffix + "`"
	}
	return table + suffix
}
