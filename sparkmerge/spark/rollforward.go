package spark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// An overwrite of a path the client cannot rename is staged, then copied
// by Spark's own overwrite, which deletes the target before it writes (see
// stageRemote). Between the two the target holds no rows: a server killed
// there left it empty, its rows only in the staging directory. So before
// the copy the merge records it beside the target (copyRecordName: the
// staging directory, its files and row count, how to write the target),
// and clears the record once the copy is done. The next run writing the
// target finds a record left standing and completes the copy from the
// staged rows (rolls forward) before anything else, after checking that
// they are the rows recorded: the same files, the same count. A staging
// directory without a record was never complete (the merge failed before
// its copy began, and the target was not touched): it is never copied.
//
// A local target the client installs by renames has a window too, between
// moving the old target aside and moving the new one in (a killed client):
// rollForwardLocal finishes that install from the renamed directories.

// copyRecordSuffix ends the name of the record beside a target of an
// overwrite copying its staged rows (".NAME.sparkmerge-copying").
const copyRecordSuffix = ".sparkmerge-copying"

// copyRecord is what an overwrite records before copying its staged rows
// over the target: enough to finish the copy, and to check that the staged
// rows are whole.
type copyRecord struct {
	// Staging is the staging directory, holding the rows as Parquet.
	Staging string `json:"staging"`
	// Rows is the number of rows staged.
	Rows int64 `json:"rows"`
	// Files are the staging directory's data files.
	Files []string `json:"files"`
	// Target is the overwrite's target (path, format, options,
	// partitioning, files).
	Target Target `json:"target"`
}

// copyRecordPath is where an overwrite of the path root records its copy:
// a hidden directory beside it, which no listing of sparkmerge's takes
// for an input. ok is false for a path without a parent (a bucket's root),
// which is never staged.
func copyRecordPath(root string) (string, bool) {
	root = strings.TrimRight(root, "/")
	cut := strings.LastIndex(root, "/")
	if cut < 0 || strings.HasSuffix(root[:cut+1], "//") {
		return "", false
	}
	return root[:cut+1] + "." + root[cut+1:] + copyRecordSuffix, true
}

// RolledForward is an interrupted overwrite a run completed before its
// own work: the staged rows it copied over the target.
type RolledForward struct {
	Target  string `json:"target"`
	Staging string `json:"staging"`
	Rows    int64  `json:"rows"`
}

// InterruptedOverwriteError reports a target whose overwrite was
// interrupted while copying its staged rows over it, which this run
// could not complete (or, in a dry run, would not).
type InterruptedOverwriteError struct {
	Target  string
	Staging string
	Rows    int64
	Err     error
}

func (e *InterruptedOverwriteError) Error() string {
	if e.Err == nil {
		rows := "staged rows"
		if e.Rows >= 0 {
			rows = fmt.Sprintf("%d staged rows", e.Rows)
		}
		return fmt.Sprintf("%s: an earlier overwrite was interrupted while installing its %s (they are in %s): run the merge without --dry-run, which completes the overwrite first", e.Target, rows, e.Staging)
	}
	return fmt.Sprintf("%s: complete the interrupted overwrite from %s: %v", e.Target, e.Staging, e.Err)
}

func (e *InterruptedOverwriteError) Unwrap() error { return e.Err }

// rollForward completes an overwrite of job's target that was interrupted
// while copying its staged rows, if there is one (nil when there is not).
// A dry run does not write: it refuses, saying so.
func (c *Client) rollForward(ctx context.Context, job Job) (*RolledForward, error) {
	t := job.Target
	if t.Path == "" || t.Table != "" || discards(t) {
		return nil, nil
	}
	if isLocalPath(t.Path) {
		if err := rollForwardLocal(localPath(t.Path), job.DryRun); err != nil {
			return nil, err
		}
	}
	at, ok := copyRecordPath(t.Path)
	if !ok {
		return nil, nil
	}
	rec, err := c.readCopyRecord(ctx, at)
	if err != nil || rec == nil {
		return nil, err
	}
	if job.DryRun {
		return nil, &InterruptedOverwriteError{Target: targetName(t), Staging: rec.Staging, Rows: rec.Rows}
	}
	if err := c.checkStaged(ctx, rec); err != nil {
		return nil, &InterruptedOverwriteError{Target: targetName(t), Staging: rec.Staging, Rows: rec.Rows, Err: err}
	}
	if err := c.finishCopy(ctx, at, rec, true); err != nil {
		return nil, &InterruptedOverwriteError{Target: targetName(t), Staging: rec.Staging, Rows: rec.Rows, Err: err}
	}
	return &RolledForward{Target: targetName(t), Staging: rec.Staging, Rows: rec.Rows}, nil
}

// readCopyRecord reads the copy record at path (nil when there is none,
// or it was cleared).
func (c *Client) readCopyRecord(ctx context.Context, at string) (*copyRecord, error) {
	if c.absentOnServer(ctx, at) {
		return nil, nil // the rule, told without a failing analysis
	}
	record := c.sess.Read(connect.ReadSpec{Format: "text", Paths: []string{literalPath(at)}})
	// Its absence where the client cannot tell it costs one analysis (no
	// job), which fails.
	_, err := record.Schema(ctx)
	if errorClass(err) == "PATH_NOT_FOUND" {
		return nil, nil
	}
	var rows connect.Rows
	if err == nil {
		rows, err = record.Collect(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("read the record of an interrupted overwrite at %s: %w", at, err)
	}
	for _, v := range rows.Values {
		line, _ := v[0].(string)
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec copyRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("the record of an interrupted overwrite at %s does not parse (%v): inspect it, then remove it", at, err)
		}
		return &rec, nil
	}
	return nil, nil
}

// recordCopy counts and lists the staged rows of an overwrite of t and
// records them at path, before the copy that deletes the target.
func (c *Client) recordCopy(ctx context.Context, t Target, staging, at string) (*copyRecord, error) {
	rows, err := c.stagedFrame(staging).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count the staged rows: %w", err)
	}
	files, err := c.stagedFiles(ctx, staging)
	if err != nil {
		return nil, err
	}
	rec := &copyRecord{Staging: staging, Rows: rows, Files: files, Target: t}
	line, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	record := c.sess.SQL("SELECT " + sparkmerge.QuoteString(string(line)) + " AS value").Coalesce(1)
	if err := record.Write(ctx, connect.WriteSpec{Format: "text", Mode: "overwrite", Path: at}); err != nil {
		return nil, fmt.Errorf("record the copy at %s: %w", at, err)
	}
	return rec, nil
}

// stagedFrame reads a staging directory's rows.
func (c *Client) stagedFrame(staging string) connect.Frame {
	return c.sess.Read(connect.ReadSpec{Format: "parquet", Paths: []string{literalPath(staging)}})
}

// stagedFiles lists a staging directory's data files, sorted.
func (c *Client) stagedFiles(ctx context.Context, staging string) ([]string, error) {
	set, err := c.targetFiles(ctx, Target{Path: staging})
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(set))
	for f := range set {
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// checkStaged checks that a recorded copy's staging directory holds the
// rows recorded: the same data files and row count.
func (c *Client) checkStaged(ctx context.Context, rec *copyRecord) error {
	files, err := c.stagedFiles(ctx, rec.Staging)
	if err != nil {
		return err
	}
	if strings.Join(files, "\n") != strings.Join(rec.Files, "\n") {
		return fmt.Errorf("the staging directory holds %d data files where %d were recorded: the staged rows are not whole, so nothing is copied; inspect %s and the target, then remove the record %s", len(files), len(rec.Files), rec.Staging, quoteName(copyRecordOf(rec)))
	}
	n, err := c.stagedFrame(rec.Staging).Count(ctx)
	if err != nil {
		return fmt.Errorf("count the staged rows: %w", err)
	}
	if n != rec.Rows {
		return fmt.Errorf("the staging directory holds %d rows where %d were recorded: nothing is copied; inspect %s and the target, then remove the record %s", n, rec.Rows, rec.Staging, quoteName(copyRecordOf(rec)))
	}
	return nil
}

// copyRecordOf is where rec is recorded.
func copyRecordOf(rec *copyRecord) string {
	at, _ := copyRecordPath(rec.Target.Path)
	return at
}

// finishCopy copies a recorded overwrite's staged rows over its target by
// Spark's overwrite, then clears the record and empties the staging
// directory (Spark Connect cannot delete it). count: check that the target
// then holds the rows recorded. A failure leaves the record, for the next
// run to complete the copy.
func (c *Client) finishCopy(ctx context.Context, at string, rec *copyRecord, count bool) error {
	t := rec.Target
	staging := c.stagedFrame(rec.Staging)
	if t.Files > 0 {
		staging = staging.Coalesce(t.Files)
	}
	spec := connect.WriteSpec{Format: t.Format, Mode: "overwrite", Path: t.Path, PartitionBy: t.PartitionBy, Options: t.Options}
	if spec.Format == "" {
		spec.Format = "parquet"
	}
	if strings.EqualFold(spec.Format, "csv") {
		spec.Options = withOption(spec.Options, "header", csvHeader(t))
	}
	progress := progressIn(ctx)
	progress.report(Progress{Phase: PhaseInstall})
	if err := staging.Write(progress.sparkProgress(ctx, PhaseInstall), spec); err != nil {
		return fmt.Errorf("copy the merged rows over the target: %w; they are in %s (Parquet), and the next sparkmerge run writing %s completes the copy", err, rec.Staging, quoteName(t.Path))
	}
	if count {
		written := t
		written.Format = spec.Format
		n, err := c.countTarget(ctx, written, false)
		if err != nil {
			return err
		}
		if n != rec.Rows {
			return fmt.Errorf("the copy wrote %d rows of the %d staged; they are in %s (Parquet)", n, rec.Rows, rec.Staging)
		}
	}
	progress.report(Progress{Phase: PhaseInstall, Finished: true, Done: rec.Rows})
	// The copy is done: clear the record first, so that no later run
	// copies again, then empty the staging directory. A run killed in
	// between leaves staged rows nobody reads (no record names them).
	cleared := c.sess.SQL("SELECT CAST(NULL AS STRING) AS value WHERE false")
	if err := cleared.Write(context.WithoutCancel(ctx), connect.WriteSpec{Format: "text", Mode: "overwrite", Path: at}); err != nil {
		return fmt.Errorf("clear the record %s of the finished copy: %w", at, err)
	}
	emptyStaging(ctx, c.sess, rec.Staging)
	return nil
}

// emptyStaging leaves no rows in a staging directory: an empty dataset
// written over it.
func emptyStaging(ctx context.Context, sess *connect.Session, dir string) {
	_ = sess.SQL("SELECT 1 AS emptied WHERE false").Write(context.WithoutCancel(ctx),
		connect.WriteSpec{Format: "parquet", Mode: "overwrite", Path: dir})
}

// rollForwardLocal finishes a local install by renames that a killed
// client left between its two renames: the old target moved aside
// (".NAME.sparkmerge-ID.old"), the new one not yet moved in. The new rows
// are whole (the install begins only after the write, and --verify,
// succeeded): they are moved in, and the old ones removed, as the install
// would have done. A dry run refuses instead.
func rollForwardLocal(target string, dryRun bool) error {
	target = filepath.Clean(target)
	parent, prefix := filepath.Dir(target), "."+filepath.Base(target)+".sparkmerge-"
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil // no parent: nothing was installed there
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".old") || !isStagingName(name) {
			continue
		}
		old := filepath.Join(parent, name)
		staged := strings.TrimSuffix(old, ".old")
		if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
			// Killed between the renames: the new rows go in, or, where
			// they are gone too, the old rows go back.
			from := staged
			if _, err := os.Stat(staged); err != nil {
				from = old
			}
			if dryRun {
				return &InterruptedOverwriteError{Target: quoteName(target), Staging: from, Rows: -1}
			}
			if err := os.Rename(from, target); err != nil {
				return &InterruptedOverwriteError{Target: quoteName(target), Staging: from, Rows: -1, Err: err}
			}
		}
		if dryRun {
			continue
		}
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove the old rows of %s at %s: %w", quoteName(target), old, err)
		}
	}
	return nil
}
