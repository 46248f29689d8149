package spark

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
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
func (c *Client) stage(ctx context.Context, t Target, verify bool) (staged, error) {
	direct := staged{write: t}
	mode := strings.ToLower(t.Mode)
	if t.Table != "" && mode == "overwrite" {
		return c.stageTable(ctx, t)
	}
	if t.Table != "" && mode == "append" && verify {
		return c.stageTableAppend(ctx, t)
	}
	if t.Path == "" || mode == "ignore" {
		return direct, nil
	}
	if !isLocalPath(t.Path) {
		return c.stageRemote(ctx, t)
	}
	target := filepath.Clean(localPath(t.Path))
	parent := filepath.Dir(target)
	if info, err := os.Stat(parent); err != nil || !info.IsDir() {
		return c.stageRemote(ctx, t)
	}
	dir := filepath.Join(parent, stagingName(filepath.Base(target)))
	if !c.sharesParent(ctx, parent) {
		return c.stageRemote(ctx, t)
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

// stageRemote stages an overwrite of an existing path the client cannot
// rename (cluster storage; Spark Connect has no rename): the rows are
// written as Parquet to a hidden directory beside the target, counted
// there by --verify, and only then copied over the target by Spark. A
// failed merge (a value that does not parse, the server killed while
// merging) leaves the target as it was; a failure during the copy, which
// only reads finished Parquet files, leaves the merged rows in the staging
// directory, which the error names, and the record of the copy, from
// which the next run writing the target completes it (see rollForward).
// After the copy the staging directory is emptied (Spark Connect cannot delete it: a hidden directory holding
// a _SUCCESS marker stays). It costs a second write of the rows. Other
// modes write in place.
func (c *Client) stageRemote(ctx context.Context, t Target) (staged, error) {
	direct := staged{write: t}
	root := strings.TrimRight(t.Path, "/")
	cut := strings.LastIndex(root, "/")
	if !strings.EqualFold(t.Mode, "overwrite") || cut < 0 || strings.HasSuffix(root[:cut+1], "//") {
		return direct, nil // not an overwrite, or no parent (a bucket's root)
	}
	// A listing that fails (not for a missing target: targetFiles) stops
	// the merge, rather than overwriting in place what may hold rows.
	files, err := c.targetFiles(ctx, t)
	if err != nil || len(files) == 0 {
		return direct, err // nothing to keep
	}
	dir := root[:cut+1] + stagingName(root[cut+1:])
	at, _ := copyRecordPath(root)
	s := staged{write: Target{Path: dir, Format: "parquet", Mode: "errorifexists"}}
	s.abort = func() { emptyStaging(ctx, c.sess, dir) }
	s.install = func() error {
		rec, err := c.recordCopy(ctx, t, dir, at)
		if err != nil {
			emptyStaging(ctx, c.sess, dir) // the target was not touched
			return fmt.Errorf("%w; the target is as it was", err)
		}
		return c.finishCopy(ctx, at, rec, false)
	}
	return s, nil
}

// dirProbe is what a probe of a client directory found (probeDirectory).
type dirProbe int

const (
	// probeUnwritable: the client wrote no probe there (it could not, or
	// the run is a plan or a dry run, which write none), so it cannot
	// tell whether the server sees the directory.
	probeUnwritable dirProbe = iota
	probeShared              // the server listed the client's probe file
	probeNotShared           // it did not
)

// probeDirectory tells whether the Spark server sees the client's
// filesystem at dir's parent: the client writes a probe file of a fresh
// random name into dir (a hidden directory, which no reader of the parent
// lists) and asks Spark for the files of a read of it (an analysis, no
// Spark job: Spark lists them as it plans the read); only a server that
// sees the file lists it. It removes dir afterwards.
func (c *Client) probeDirectory(ctx context.Context, dir string) dirProbe {
	defer os.RemoveAll(dir)
	if err := os.Mkdir(dir, 0o777); err != nil {
		return probeUnwritable
	}
	os.Chmod(dir, 0o777) // a server in a container may write as another user
	name := "probe-" + uuid.NewString()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o666); err != nil {
		return probeUnwritable
	}
	files, err := c.server.inputFiles(ctx, literalPath(filepath.Join(dir, name)), nil)
	if err == nil && len(files) == 1 && strings.HasSuffix(files[0], "/"+name) {
		return probeShared
	}
	return probeNotShared
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

// stageTable stages an overwrite of an existing table that is not Delta's
// or Iceberg's (those are overwritten by one commit of their format):
// Spark writes this run's rows, aligned to the table's schema, to a new
// table beside it, --verify counts them there, and only then does
// install replace the table's rows by Spark's INSERT OVERWRITE TABLE from
// the staging table, which it then drops. The table itself is never
// dropped or renamed: it keeps its comment, properties, partitioning,
// owner and grants, and a name of any number of parts works. A failed
// merge or --verify leaves the table as it was; a failed INSERT OVERWRITE
// keeps the staging table, which the error names.
func (c *Client) stageTable(ctx context.Context, t Target) (staged, error) {
	if exists, err := c.tableExists(ctx, t.Table); err != nil || !exists {
		return staged{write: t}, err // nothing to keep: written directly
	}
	name := stagingTableName(t.Table)
	s := staged{write: t}
	s.write.Table = name
	s.write.Mode = "errorifexists"
	s.write.PartitionBy = nil // the table keeps its own partitioning
	drop := func() { _ = c.sess.ExecSQL(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+name) }
	s.abort = drop
	s.install = func() error {
		if err := c.overwriteTable(ctx, t.Table, name); err != nil {
			return fmt.Errorf("%w (the new rows are in %s)", err, name)
		}
		drop()
		return nil
	}
	return s, nil
}

// partitionOverwriteKey is Spark's setting that decides whether an
// INSERT OVERWRITE of a partitioned table replaces every partition
// (STATIC) or only those the new rows fall in (DYNAMIC).
const partitionOverwriteKey = "spark.sql.sources.partitionOverwriteMode"

// overwriteTable replaces every row of table by the rows of from, in one
// INSERT OVERWRITE TABLE, its columns selected by name in the table's
// order: Spark's insert matches them by position. A partitioned table
// loses every old partition, also where the session overwrites
// partitions dynamically.
func (c *Client) overwriteTable(ctx context.Context, table, from string) error {
	schema, _, err := c.server.tableSchema(ctx, table)
	if err != nil {
		return fmt.Errorf("read the schema of %s: %w", table, err)
	}
	cols := make([]string, len(schema.Fields))
	for i, f := range schema.Fields {
		cols[i], _ = sparkmerge.QuoteIdent(f.Name)
	}
	values, err := c.server.conf(ctx, partitionOverwriteKey)
	if err != nil {
		return fmt.Errorf("read %s: %w", partitionOverwriteKey, err)
	}
	if old := values[partitionOverwriteKey]; strings.EqualFold(old, "dynamic") {
		if err := c.server.setConf(ctx, map[string]string{partitionOverwriteKey: "STATIC"}); err != nil {
			return fmt.Errorf("overwrite every partition of %s (%s=STATIC): %w", table, partitionOverwriteKey, err)
		}
		defer func() {
			_ = c.server.setConf(context.WithoutCancel(ctx), map[string]string{partitionOverwriteKey: old})
		}()
	}
	stmt := "INSERT OVERWRITE TABLE " + table + " SELECT " + strings.Join(cols, ", ") + " FROM " + from
	if err := c.sess.ExecSQL(ctx, stmt); err != nil {
		return fmt.Errorf("overwrite table %s: %w", table, err)
	}
	return nil
}

// stageTableAppend stages a verified append to an existing table: Spark
// writes this run's rows to a new table, --verify counts them there (a
// concurrent writer's rows are not among them), and install appends the
// staging table to the target (Spark's own append, resolved by name like
// the direct one) and drops it. It costs a second write of the rows.
func (c *Client) stageTableAppend(ctx context.Context, t Target) (staged, error) {
	if exists, err := c.tableExists(ctx, t.Table); err != nil || !exists {
		return staged{write: t}, err // created by this run: its rows are this run's
	}
	name := stagingTableName(t.Table)
	s := staged{write: t}
	s.write.Table = name
	s.write.Mode = "errorifexists"
	s.write.PartitionBy = nil // the append partitions
	drop := func() { _ = c.sess.ExecSQL(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+name) }
	s.abort = drop
	s.install = func() error {
		defer drop()
		spec := connect.WriteSpec{Format: t.Format, Mode: "append", Table: t.Table, PartitionBy: t.PartitionBy, Options: t.Options}
		if err := c.sess.Table(name, nil).Write(ctx, spec); err != nil {
			return fmt.Errorf("append the verified rows of %s: %w", name, err)
		}
		return nil
	}
	return s, nil
}

// tableExists asks Spark whether table exists. Only Spark's "not found"
// means it does not: any other failure (no permission, the server gone)
// is an error, never taken for a missing table, which would be
// overwritten in place, without staging.
func (c *Client) tableExists(ctx context.Context, table string) (bool, error) {
	_, err := c.sess.Table(table, nil).Schema(ctx)
	switch {
	case err == nil:
		return true, nil
	case errorClass(err) == "TABLE_OR_VIEW_NOT_FOUND":
		return false, nil
	}
	return false, fmt.Errorf("look up table %s: %w", table, err)
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

// An append to a path the client cannot rename is written in place. To
// verify it, the files the append's write job made are told apart from
// everyone else's: Spark names every file of one write job
// part-NNNNN-<job UUID>..., so the target is listed before and after, and
// the new files must all come from one job.

// writeJobFile matches a data file's name and captures its write job's id.
var writeJobFile = regexp.MustCompile(`^part-\d+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)

// identifiesWriteJobs reports whether Spark's writer for format names its
// files by write job (the file sources; not table formats such as delta,
// whose files a reader must not pick one by one).
func identifiesWriteJobs(format string) bool {
	switch strings.ToLower(format) {
	case "", "parquet", "orc", "csv", "json", "avro", "text":
		return true
	}
	return false
}

// targetFiles lists the data files of path target t on the server (none
// when it does not exist yet).
func (c *Client) targetFiles(ctx context.Context, t Target) (map[string]bool, error) {
	if c.absentOnServer(ctx, t.Path) {
		return map[string]bool{}, nil
	}
	files, err := c.listFiles(ctx, literalPath(t.Path), nil, listingHeads{})
	if err != nil {
		switch errorClass(err) {
		case "PATH_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA":
			return map[string]bool{}, nil
		}
		return nil, fmt.Errorf("list the files of %s: %w", targetName(t), err)
	}
	set := make(map[string]bool, len(files))
	for _, f := range files {
		set[f.path] = true
	}
	return set, nil
}

// filesOfThisWrite returns the files that appeared in target t since
// before was listed, as literal paths, after checking that one write job
// made them all: files of two jobs mean another writer appended meanwhile,
// and which rows are this run's can then not be told.
func (c *Client) filesOfThisWrite(ctx context.Context, t Target, before map[string]bool) ([]string, error) {
	after, err := c.targetFiles(ctx, t)
	if err != nil {
		return nil, err
	}
	return oneWriteJobsFiles(targetName(t), before, after)
}

// oneWriteJobsFiles is filesOfThisWrite's decision on two listings.
func oneWriteJobsFiles(target string, before, after map[string]bool) ([]string, error) {
	var files []string
	jobs := map[string]bool{}
	for f := range after {
		if before[f] {
			continue
		}
		m := writeJobFile.FindStringSubmatch(path.Base(f))
		if m == nil {
			return nil, fmt.Errorf("cannot tell this run's rows in %s: %s appeared during the run and is not a file of a Spark write job; verify the target yourself", target, f)
		}
		jobs[m[1]] = true
		files = append(files, literalPath(f))
	}
	if len(jobs) > 1 {
		return nil, fmt.Errorf("cannot tell this run's rows in %s: %d write jobs added files to it during the run, so another writer appended meanwhile; the rows are appended, verify them yourself (or append each writer's output to its own path)", target, len(jobs))
	}
	sort.Strings(files)
	return files, nil
}
