package spark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// Result is what a merge did.
type Result struct {
	*Planned
	Target Target `json:"target"`
	// RowsWritten is the number of rows the merge added to the target;
	// -1 when nothing was written (a dry run, or Discarded).
	RowsWritten int64 `json:"rows_written"`
	// Discarded is true when the target's format is Spark's noop: the
	// merge ran, and its rows were read, projected and dropped (to time a
	// merge without its write, or to check that it runs).
	Discarded bool `json:"discarded,omitempty"`
	// Scans is the number of relations Spark read: one per read, except
	// that small locally typed CSV or JSON files share one positional
	// scan per format and options.
	Scans int `json:"scans,omitempty"`
	// RowsRead are the rows read per source (file, or table), counted when
	// verifying.
	RowsRead []SourceRows `json:"rows_read,omitempty"`
	// RowsDistinct, in a verified merge with Options.Distinct, is the
	// number of distinct rows among those read: what the write must hold
	// (RowsRead minus the duplicates dropped); 0 otherwise.
	RowsDistinct int64 `json:"rows_distinct,omitempty"`
	// Rescued count the values the rescue column kept, per source and
	// column, in the rows this merge wrote (Options.Rescue).
	Rescued []RescuedValues `json:"rescued,omitempty"`
	// Verified is true when --verify proved rows written = rows read
	// (distinct rows read, with Options.Distinct).
	Verified bool `json:"verified"`
	// RolledForward is the interrupted overwrite of the target (its
	// staged rows not yet copied over it) that the run completed before
	// its own merge; nil when there was none.
	RolledForward *RolledForward `json:"rolled_forward,omitempty"`
	Elapsed       time.Duration  `json:"elapsed_ns"`
}

// RescuedValues counts the values of one column of one source that the
// rescue column kept (Options.Rescue): values that did not convert, or
// of a column the target drops; Column "_corrupt_record" counts records
// the reader could not parse at all.
type RescuedValues struct {
	Source string `json:"source"`
	Column string `json:"column"`
	Values int64  `json:"values"`
}

// SourceRows is a row count for one source.
type SourceRows struct {
	Source string `json:"source"`
	Rows   int64  `json:"rows"`
}

// VerifyError reports rows lost or gained between reading and writing.
type VerifyError struct {
	// Mismatches lists, per source, rows read and rows written.
	Mismatches []string
	Read       int64
	Written    int64
}

func (e *VerifyError) Error() string {
	shown := e.Mismatches
	if len(shown) > maxSourcesListed {
		shown = append(shown[:maxSourcesListed:maxSourcesListed], fmt.Sprintf("... and %d more sources", len(e.Mismatches)-maxSourcesListed))
	}
	return fmt.Sprintf("verify: %d rows read but %d written:\n  %s", e.Read, e.Written, strings.Join(shown, "\n  "))
}

// Merge plans the job, then reads every source, projects it onto the target
// schema, combines all rows with UNION ALL (duplicates kept) and writes
// them. With DryRun it only plans.
func (c *Client) Merge(ctx context.Context, job Job) (*Result, error) {
	start := time.Now()
	ctx, _ = withProgress(ctx, job)
	if !job.DryRun {
		ctx = withSharedDirs(ctx) // a dry run writes no probe
	}
	job, rolled, unmatch, err := c.startMerge(ctx, job)
	if err != nil {
		return nil, err
	}
	defer unmatch()
	if err := c.checkTargetAbsent(ctx, job.Target); err != nil {
		return nil, err
	}
	planned, err := c.Plan(ctx, job)
	if err != nil {
		return nil, err
	}
	result, err := c.mergePlanned(ctx, job, planned, start)
	if result != nil {
		result.RolledForward = rolled
	}
	return result, err
}

// startMerge is what every merge does before it plans or writes: checks
// the target, matches names as the policy says (unmatch puts the
// session back), resolves the job's paths, checks an incremental job,
// and completes an interrupted overwrite of the target (rolled).
func (c *Client) startMerge(ctx context.Context, job Job) (Job, *RolledForward, func(), error) {
	if err := checkTarget(job.Target); err != nil {
		return job, nil, nil, err
	}
	unmatch, err := c.matchNames(ctx, job.Policy)
	if err != nil {
		return job, nil, nil, err
	}
	fail := func(err error) (Job, *RolledForward, func(), error) {
		unmatch()
		return job, nil, nil, err
	}
	if job, err = c.resolveJobPaths(ctx, job); err != nil {
		return fail(err)
	}
	if job, err = checkIncremental(job); err != nil {
		return fail(err)
	}
	rolled, err := c.rollForward(ctx, job)
	if err != nil {
		return fail(err)
	}
	return job, rolled, unmatch, nil
}

// MergePlanned runs a merge that [Client.Plan] planned for the same job,
// for callers that inspect the plan first. Local files the client read to
// plan must not change in between: a positional scan (see [Result].Scans)
// fails on a file whose size or modification time changed, and Spark
// fails on a header that no longer matches.
func (c *Client) MergePlanned(ctx context.Context, job Job, planned *Planned) (*Result, error) {
	start := time.Now()
	ctx, _ = withProgress(ctx, job)
	if !job.DryRun {
		ctx = withSharedDirs(ctx) // a dry run writes no probe
	}
	job, rolled, unmatch, err := c.startMerge(ctx, job)
	if err != nil {
		return nil, err
	}
	defer unmatch()
	if err := c.checkInputs(ctx, job.Target, planned.Reads, job.Sources); err != nil {
		return nil, err
	}
	if err := c.checkTargetAbsent(ctx, job.Target); err != nil {
		return nil, err
	}
	result, err := c.mergePlanned(ctx, job, planned, start)
	if result != nil {
		result.RolledForward = rolled
	}
	return result, err
}

// mergePlanned runs the planned merge: Spark reads, projects and writes
// the rows (to a staging place first where the target must not change
// until they are verified), counts what it read and wrote for Verify, and
// installs the staged rows.
func (c *Client) mergePlanned(ctx context.Context, job Job, planned *Planned, start time.Time) (*Result, error) {
	result := &Result{Planned: planned, Target: job.Target, RowsWritten: -1}
	if err := refuseUnrunnable(job, planned); err != nil {
		return nil, err
	}
	if job.DryRun {
		return result, nil
	}
	if run := planned.Incremental; run != nil && run.NothingNew {
		return c.mergeNothingNew(ctx, job, run, result, start)
	}
	restore, err := c.tune(ctx, planned.tuning())
	if err != nil {
		return nil, err
	}
	defer restore()
	merged, scans := c.merged(planned)
	result.Scans = scans
	if files := outputFiles(job.Target.Files, planned.Reads, scans); files > 0 {
		merged = merged.Coalesce(files)
	}
	if discards(job.Target) {
		return c.discardMerged(ctx, job, merged, result, start)
	}
	return c.writeToTarget(ctx, job, planned, merged, result, start)
}

// writeToTarget writes the merged rows to the target: counts the rows read
// first where they cannot be counted with the rows written, records an
// incremental run as pending, writes, counts the rows written, verifies,
// installs what was staged and records the run as merged.
func (c *Client) writeToTarget(ctx context.Context, job Job, planned *Planned, merged connect.Frame, result *Result, start time.Time) (*Result, error) {
	w, err := c.prepareWrite(ctx, job, planned.Table)
	if err != nil {
		return nil, err
	}
	defer w.abortUnlessInstalled()
	together := countsReadWithWritten(job, planned, w)
	readCounts, err := c.countReadFirst(ctx, job, planned, merged, result, together)
	if err != nil {
		return nil, err
	}
	if run := planned.Incremental; run != nil {
		if w.tag != "" {
			w.tag = run.RunID // the commit that tells the next run this one landed
		}
		defer run.endRun()
		if err := c.recordPending(ctx, job, run, readCounts); err != nil {
			return nil, err
		}
	}
	if err := c.writeRows(ctx, job, planned, merged, w); err != nil {
		return nil, err
	}
	counted, err := c.countWritten(ctx, job, planned, w, result, together)
	if err != nil {
		return nil, err
	}
	if together {
		readCounts = counted
	}
	if err := countRescuedWritten(ctx, planned, merged, w, result); err != nil {
		return nil, err
	}
	if job.Verify {
		if err := c.verifyWrite(ctx, job, planned, w, readCounts, result); err != nil {
			result.Elapsed = time.Since(start)
			return result, err
		}
	}
	if w.stage.install != nil {
		// From here the staged rows are the merge's result: install
		// cleans up after itself, and keeps what it could not install.
		w.stage.abort = nil
		if err := w.stage.install(); err != nil {
			return nil, fmt.Errorf("write %s: %w", targetName(job.Target), err)
		}
	}
	if run := planned.Incremental; run != nil {
		if err := c.recordMerged(ctx, job, run, readCounts); err != nil {
			return nil, err
		}
	}
	result.Elapsed = time.Since(start)
	return result, nil
}

// refuseUnrunnable refuses, before any work, a merge that cannot run as
// planned.
func refuseUnrunnable(job Job, planned *Planned) error {
	if discards(job.Target) && job.Verify {
		return fmt.Errorf("verify: the noop format keeps no rows to count; verify a merge written to a path or a table")
	}
	if err := checkPartitionColumns(job.Target, planned); err != nil {
		return err
	}
	if err := planned.Err(); err != nil && !job.DryRun {
		return err
	}
	return nil
}

// countRescuedWritten counts, with a rescue column, the values it kept in
// the merge's rows: the written ones where they are its own, else the
// merge once more.
func countRescuedWritten(ctx context.Context, planned *Planned, merged connect.Frame, w *targetWrite, result *Result) error {
	if planned.Plan.Rescue == "" {
		return nil
	}
	rows := merged
	if w.own && w.rows != nil {
		rows = *w.rows
	}
	var err error
	if result.Rescued, err = countRescued(progressIn(ctx).sparkProgress(ctx, PhaseWrite), rows, planned.Plan.Rescue, w.own && w.rows == nil); err != nil {
		return fmt.Errorf("count rescued values: %w", err)
	}
	return nil
}

// verifyWrite runs Verify over what w wrote, reporting its phase.
func (c *Client) verifyWrite(ctx context.Context, job Job, planned *Planned, w *targetWrite, readCounts map[string]int64, result *Result) error {
	progress := progressIn(ctx)
	progress.report(Progress{Phase: PhaseVerify})
	if err := c.verify(progress.sparkProgress(ctx, PhaseVerify), job, w, planned, readCounts, result); err != nil {
		return err
	}
	result.Verified = true
	progress.report(Progress{Phase: PhaseVerify, Finished: true, Done: result.RowsWritten})
	return nil
}

// mergeNothingNew ends an incremental run that has no rows to write: it
// records what it recovered of a stopped run, and new files that are
// empty, and leaves the target untouched.
func (c *Client) mergeNothingNew(ctx context.Context, job Job, run *IncrementalRun, result *Result, start time.Time) (*Result, error) {
	if err := c.writeState(ctx, run.State, run.recovery); err != nil {
		return nil, err
	}
	run.recovery = nil
	if err := c.writeState(ctx, run.State, run.rows(stateMerged, nil, "", "")); err != nil {
		return nil, err
	}
	run.Recorded = len(run.files) > 0
	result.RowsWritten = 0
	result.Elapsed = time.Since(start)
	return result, nil
}

// discardMerged runs a merge to the noop format. Nothing to stage, count
// or verify: the merge runs, every row is read and projected (a failing
// cast or a changed file still fails it), and no row is kept.
func (c *Client) discardMerged(ctx context.Context, job Job, merged connect.Frame, result *Result, start time.Time) (*Result, error) {
	progress := progressIn(ctx)
	progress.report(Progress{Phase: PhaseWrite})
	if err := merged.Write(progress.sparkProgress(ctx, PhaseWrite), connect.WriteSpec{Format: "noop", Mode: "overwrite"}); err != nil {
		return nil, fmt.Errorf("write %s: %w", targetName(job.Target), writeHint(err, result.Planned.Reads))
	}
	result.Discarded = true
	result.Elapsed = time.Since(start)
	return result, nil
}

// targetWrite is how one merge writes its target, and what it needs to
// count the rows it wrote.
type targetWrite struct {
	// table is the target table as planned (nil for a path).
	table     *TargetTable
	appending bool
	// stage is where Spark writes (written) and how the rows get to the
	// target from there.
	stage   staged
	written Target
	// own: what the written target holds is this run's rows alone (a
	// staging place, or the files this run's write job made).
	own bool
	// before is the target's row count before an append; filesBefore its
	// files, where the files of this run's write job tell its rows.
	before      int64
	filesBefore map[string]bool
	// tag marks this run's commit to a Delta or Iceberg table written
	// directly, whose history then says how many rows it added.
	tag string
	// rows are the rows this run wrote, once written (nil: none of its
	// own files).
	rows *connect.Frame
	// perSource are rows' counts per provenance value, where Verify
	// compares them (see countWritten); nil when not counted.
	perSource map[string]int64
}

// prepareWrite decides where the merge writes (see targetWrite) and
// counts what an append's target holds before it.
func (c *Client) prepareWrite(ctx context.Context, job Job, tt *TargetTable) (*targetWrite, error) {
	job.Target = appendTarget(job.Target, tt)
	w := &targetWrite{table: tt}
	w.appending = strings.EqualFold(job.Target.Mode, "append") || strings.EqualFold(job.Target.Mode, "ignore")
	if tt != nil && (tt.path || !tt.Exists || w.appending && tt.historyFormat() || overwritesInPlace(job.Target, tt)) {
		// One commit of the table's format: a Delta path whatever the
		// mode, a table created by this run, an append to or overwrite
		// of a Delta or Iceberg table, whose history --verify reads.
		w.stage = staged{write: job.Target}
	} else {
		var err error
		if w.stage, err = c.stage(ctx, job.Target, job.Verify); err != nil {
			return nil, err
		}
	}
	w.written = w.stage.write
	w.own = w.stage.install != nil
	if tt.historyFormat() && w.stage.install == nil && (w.written.Table == tt.Name || tt.path) {
		w.tag = uuid.NewString()
	}
	var err error
	switch {
	case !w.appending || w.own || w.tag != "":
	case job.Verify && w.written.Path != "" && identifiesWriteJobs(w.written.Format):
		w.filesBefore, err = c.targetFiles(ctx, w.written)
	default:
		w.before, err = c.countTarget(ctx, w.written, true)
	}
	if err != nil {
		w.abortUnlessInstalled()
		return nil, err
	}
	return w, nil
}

// abortUnlessInstalled removes the staging place of a merge that did not
// get to install its rows.
func (w *targetWrite) abortUnlessInstalled() {
	if w.stage.abort != nil {
		w.stage.abort()
		w.stage.abort = nil
	}
}

// countsReadWithWritten says whether Verify counts the rows read per
// source in the query that counts the rows written, after the write: one
// query, where counting them before the write and after took two (each
// with its analysis, its jobs and, of a Parquet output, the job reading
// its footers). The rows read are still counted by reading the sources
// again, by the merge's own scans (readCountFrames), so only where the
// sources hold after the write what they held before it: files (a table
// or a query may read anything, the target included), written to a
// staging place apart from the target or to a path target, which never
// overlaps an input (checkOverlap; nor its staging place, beside it). A
// source that saw the rows written would count more rows read, a
// mismatch, never a pass. Not for an incremental run, which records the
// rows read before it writes, a distinct merge, which counts the
// merge's distinct rows before it writes too, or a table's commit,
// counted from its history.
func countsReadWithWritten(job Job, planned *Planned, w *targetWrite) bool {
	if !job.Verify || planned.Incremental != nil || planned.Plan.Distinct || w.tag != "" {
		return false
	}
	for _, r := range planned.Reads {
		if r.relational() {
			return false
		}
	}
	return w.stage.install != nil || w.written.Path != ""
}

// countReadFirst counts the rows the merge reads before it writes, where
// they are not counted with the rows written (together, see
// countsReadWithWritten): an incremental run records each file's rows,
// Verify compares them. nil where nothing is counted.
func (c *Client) countReadFirst(ctx context.Context, job Job, planned *Planned, merged connect.Frame, result *Result, together bool) (map[string]int64, error) {
	if together || !job.Verify && planned.Incremental == nil {
		return nil, nil
	}
	return c.countRead(ctx, planned, merged, result)
}

// countRead counts the rows the merge reads, per source (and the distinct
// rows of a distinct merge), for Verify.
func (c *Client) countRead(ctx context.Context, planned *Planned, merged connect.Frame, result *Result) (map[string]int64, error) {
	progress := progressIn(ctx)
	progress.report(Progress{Phase: PhaseCount})
	readCounts, err := c.countPerSource(progress.sparkProgress(ctx, PhaseCount), planned)
	if err != nil {
		return nil, fmt.Errorf("verify: count rows read: %w", writeHint(err, planned.Reads))
	}
	var read int64
	for _, n := range readCounts {
		read += n
	}
	if planned.Plan.Distinct {
		// Duplicates are dropped by design: the write must hold exactly
		// the distinct rows, which one more pass counts.
		if result.RowsDistinct, err = merged.Count(progress.sparkProgress(ctx, PhaseCount)); err != nil {
			return nil, fmt.Errorf("verify: count distinct rows read: %w", writeHint(err, planned.Reads))
		}
	}
	progress.report(Progress{Phase: PhaseCount, Finished: true, Done: read})
	return readCounts, nil
}

// appendTarget is t, an append to table tt, written as Spark's writer
// must append to it: in its format and by its partition columns where t
// names none (its writer refused an append to a partitioned Parquet table
// as "Specified partitioning does not match", and to a CSV or ORC table
// as of another format than the default Parquet; found in the field).
// Delta and Iceberg tables are appended to by their own means, and take
// no partitioning from the writer.
func appendTarget(t Target, tt *TargetTable) Target {
	if tt == nil || !tt.Exists || tt.path || tt.historyFormat() || !strings.EqualFold(t.Mode, "append") {
		return t
	}
	if t.Format == "" {
		t.Format = tt.Format
	}
	if len(t.PartitionBy) == 0 {
		t.PartitionBy = tt.partitionBy
	}
	return t
}

// writeSpec is how Spark writes the merge to written.
func writeSpec(written Target, tt *TargetTable) connect.WriteSpec {
	spec := connect.WriteSpec{
		Format:      written.Format,
		Mode:        written.Mode,
		Path:        written.Path,
		Table:       written.Table,
		PartitionBy: written.PartitionBy,
		Options:     written.Options,
	}
	if strings.EqualFold(spec.Format, "csv") && spec.Path != "" {
		// Written with a header, like the files sparkmerge reads, so that
		// the output reads back with its column names.
		spec.Options = withOption(spec.Options, "header", csvHeader(written))
	}
	if spec.Format == "" && spec.Path != "" {
		spec.Format = "parquet"
	}
	if strings.EqualFold(spec.Mode, "overwrite") && optionValue(spec.Options, "partitionOverwriteMode") == "" {
		// An overwrite replaces every row. Under a session's
		// spark.sql.sources.partitionOverwriteMode=dynamic (many clusters
		// set it for everyone) Delta replaced only the partitions the
		// merge wrote, keeping the others' old rows, and verify passed
		// (found in the field, 2026-12-06); the writer's option wins over
		// the session's. A user's --write-option partitionOverwriteMode
		// stands.
		spec.Options = withOption(spec.Options, "partitionOverwriteMode", "static")
	}
	if tt.historyFormat() && tt.Exists && spec.Format == "" && !tt.path {
		// Spark's writer checks the format it is given (by default
		// spark.sql.sources.default) against an existing table's.
		spec.Format = tt.Format
	}
	if replacesEveryDeltaRow(spec, tt) {
		spec.Options = withOption(spec.Options, "replaceWhere", "true")
	}
	return spec
}

// writeRows evolves the target table where planned, then has Spark write
// the merged rows (tagged where the table's history counts them).
func (c *Client) writeRows(ctx context.Context, job Job, planned *Planned, merged connect.Frame, w *targetWrite) error {
	tt := w.table
	spec := writeSpec(w.written, tt)
	if tt != nil && tt.Evolution != nil && !tt.Evolution.Empty() {
		if err := c.evolveTable(ctx, tt.Evolution); err != nil {
			return err
		}
	}
	if w.tag != "" {
		options, untag, err := c.tagCommit(ctx, tt, w.tag)
		if err != nil {
			return err
		}
		defer untag()
		spec.Options = mergeOptions(spec.Options, options)
	}
	progress := progressIn(ctx)
	progress.report(Progress{Phase: PhaseWrite})
	err := c.writeMerged(progress.sparkProgress(ctx, PhaseWrite), merged, spec, tt, w.written)
	if err == nil {
		return nil
	}
	if explained := c.explainParseFailure(ctx, planned, err); explained != err {
		return fmt.Errorf("write %s: %w", targetName(job.Target), explained)
	}
	err = fmt.Errorf("write %s: %w", targetName(job.Target), writeHint(err, planned.Reads))
	if w.written.Path != "" && w.stage.abort == nil && !w.appending && !strings.EqualFold(w.written.Mode, "overwrite") {
		// Spark's failed job removes its files but not the directory it
		// made, which the client cannot remove here.
		err = fmt.Errorf("%w\n  note: Spark may have left an empty directory at %s; a rerun needs the overwrite mode (Target.Mode = \"overwrite\")", err, quoteName(w.written.Path))
	}
	return err
}

// countWritten sets the rows the write added (result.RowsWritten) and the
// frame of them (w.rows): the table history's count of a tagged commit,
// the files this run's write job made, or the target's count after less
// its count before. Where Verify compares the rows written per source
// and w.rows are all there is to count, they are counted per source
// instead, once (w.perSource), and added up: counting them twice cost
// another pass over the output, with its analysis and the job reading its
// footers. withRead (see countsReadWithWritten): the rows read per
// source are counted in the same query, and returned.
func (c *Client) countWritten(ctx context.Context, job Job, planned *Planned, w *targetWrite, result *Result, withRead bool) (map[string]int64, error) {
	if err := c.frameWritten(ctx, w, planned); err != nil {
		return nil, err
	}
	var read map[string]int64
	progress := progressIn(ctx)
	countCtx := ctx
	if withRead && w.tag == "" && w.rows != nil {
		// The count reads the sources again, with the rows written: the
		// verify phase's work, which shows its stages; the write is done.
		progress.report(Progress{Phase: PhaseWrite, Finished: true, Done: -1})
		progress.report(Progress{Phase: PhaseVerify})
		countCtx = progress.sparkProgress(ctx, PhaseVerify)
	}
	switch {
	case w.tag != "":
		var err error
		if result.RowsWritten, err = c.rowsCommitted(ctx, w.table, w.tag); err != nil {
			return nil, fmt.Errorf("count the rows written: %w", err)
		}
		w.own = w.own || !w.table.Exists
	case w.rows == nil:
		result.RowsWritten = 0
	case w.before == 0 && verifiedPerSource(job, planned, w.own) != "":
		perSource, readPerSource, err := c.countPerSourceWritten(countCtx, *w.rows, planned.Plan.SourceColumn, planned, withRead, w.own)
		if err != nil {
			return nil, err
		}
		w.perSource, read = perSource, readPerSource
		result.RowsWritten = 0
		for _, n := range perSource {
			result.RowsWritten += n
		}
	case withRead:
		written, readPerSource, err := c.countWithRead(countCtx, *w.rows, "NULL", planned, w.own)
		if err != nil {
			return nil, fmt.Errorf("verify: count rows read and written in %s: %w", targetName(w.written), writeHint(err, planned.Reads))
		}
		read = readPerSource
		result.RowsWritten = written[""] - w.before
	default:
		after, err := countFrame(ctx, *w.rows, w.written, false)
		if err != nil {
			return nil, err
		}
		result.RowsWritten = after - w.before
	}
	if read == nil {
		progress.report(Progress{Phase: PhaseWrite, Finished: true, Done: result.RowsWritten})
	}
	if withRead && read == nil {
		// Nothing of this run's to count the rows read with.
		var err error
		if read, err = c.countPerSource(ctx, planned); err != nil {
			return nil, fmt.Errorf("verify: count rows read: %w", writeHint(err, planned.Reads))
		}
	}
	return read, nil
}

// frameWritten sets the frame of the rows to count (w.rows): the whole
// target, or where the write's own files can be told from the target's
// (w.filesBefore), only those files (w.own), and nil when it made none.
//
// This run's own rows (w.own) are read with the schema the merge wrote
// them with (writtenSchema), where Spark would otherwise infer it: Spark
// analyses a Parquet read of no given schema with a job reading the
// footers of every file (mergeSchema), each time a query names it.
func (c *Client) frameWritten(ctx context.Context, w *targetWrite, p *Planned) error {
	frame := targetFrame(c.sess, w.written)
	if w.own && w.written.Table == "" {
		frame = writtenFrame(c.sess, w.written, []string{w.written.Path}, p)
	}
	w.rows = &frame
	if w.filesBefore == nil {
		return nil
	}
	files, err := c.filesOfThisWrite(ctx, w.written, w.filesBefore)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	w.own = true
	w.rows = nil
	if len(files) > 0 {
		frame = writtenFrame(c.sess, w.written, files, p)
		w.rows = &frame
	}
	return nil
}

// writtenFrame reads files of path target t (all of them for its path)
// that this run's write made and nothing else did, as targetFilesFrame
// does, but with the schema p's merge wrote them with where that is
// known (writtenSchema): no inference, so no job reading footers.
func writtenFrame(sess *connect.Session, t Target, paths []string, p *Planned) connect.Frame {
	schema := writtenSchema(t, p)
	if schema == "" {
		return targetFilesFrame(sess, t, paths)
	}
	return targetFilesFrameOf(sess, t, paths, schema)
}

// writtenSchema is a schema for reading back the Parquet files p's merge
// wrote to path target t, in DDL, or "" where none is given. It names the
// columns the counts read (the provenance and rescue columns, strings),
// else the first column the files hold, as the merge typed them, every
// one nullable as Spark reads files: a read that names columns of a
// Parquet file takes them by name, and a count reads only the row counts
// and those columns, the same rows with or without the other columns.
// Other formats are left to Spark's inference (CSV's header is read by
// position against a given schema; ORC is not measured), as are
// partition columns (typed from their directories) and types a read's
// schema refuses or that a file may store otherwise (char, varchar,
// intervals, nested).
func writtenSchema(t Target, p *Planned) string {
	if format := strings.ToLower(t.Format); format != "" && format != "parquet" || p == nil || p.Plan == nil {
		return ""
	}
	partition := func(name string) bool {
		return slices.ContainsFunc(t.PartitionBy, func(c string) bool { return strings.EqualFold(c, name) })
	}
	var cols []sparkmerge.Field
	for _, f := range p.Plan.Target.Fields {
		if (f.Name == p.Plan.SourceColumn || f.Name == p.Plan.Rescue) && f.Type.Kind == sparkmerge.KindString && !partition(f.Name) {
			cols = append(cols, sparkmerge.Field{Name: f.Name, Type: f.Type, Nullable: true})
		}
	}
	if i := slices.IndexFunc(p.Plan.Target.Fields, func(f sparkmerge.Field) bool { return !partition(f.Name) }); len(cols) == 0 && i >= 0 {
		switch f := p.Plan.Target.Fields[i]; f.Type.Kind {
		case sparkmerge.KindBoolean, sparkmerge.KindByte, sparkmerge.KindShort, sparkmerge.KindInt, sparkmerge.KindLong,
			sparkmerge.KindFloat, sparkmerge.KindDouble, sparkmerge.KindString, sparkmerge.KindBinary, sparkmerge.KindDate:
			cols = append(cols, sparkmerge.Field{Name: f.Name, Type: f.Type, Nullable: true})
		}
	}
	if len(cols) == 0 {
		return ""
	}
	return sparkmerge.Schema{Fields: cols}.String()
}

func checkTarget(t Target) error {
	switch {
	case discards(t) && (t.Path != "" || t.Table != ""):
		return errors.New("target: the noop format keeps no rows: give no path or table")
	case discards(t):
	case (t.Path == "") == (t.Table == ""):
		return errors.New("target: give exactly one of a path and a table")
	}
	switch strings.ToLower(t.Mode) {
	case "", "error", "errorifexists", "overwrite", "append", "ignore":
	default:
		return fmt.Errorf("target: unknown mode %q: use errorifexists, overwrite, append or ignore", t.Mode)
	}
	return nil
}

// TargetExistsError says that the output exists and the mode is
// errorifexists.
type TargetExistsError struct {
	Target string
	// NoData is set when Spark finds no data files in it: an empty
	// directory, such as the one a failed write leaves on storage the
	// client cannot clean.
	NoData bool
}

func (e *TargetExistsError) Error() string {
	if e.NoData {
		return fmt.Sprintf("output %s already exists, without data files Spark reads (a write that failed leaves such a directory): choose the overwrite mode (Target.Mode = \"overwrite\"), or another output", e.Target)
	}
	return fmt.Sprintf("output %s already exists: choose the mode overwrite, append or ignore (Target.Mode), or another output", e.Target)
}

// checkTargetAbsent fails early, before any source is read, when the
// target exists and the mode is errorifexists.
func (c *Client) checkTargetAbsent(ctx context.Context, t Target) error {
	switch strings.ToLower(t.Mode) {
	case "", "error", "errorifexists":
	default:
		return nil
	}
	if t.Path != "" && c.absentOnServer(ctx, t.Path) {
		return nil
	}
	_, err := targetFrame(c.sess, t).Schema(ctx)
	switch errorClass(err) {
	case "PATH_NOT_FOUND", "TABLE_OR_VIEW_NOT_FOUND":
		return nil
	case "", "UNABLE_TO_INFER_SCHEMA":
		if err == nil || errorClass(err) != "" {
			return &TargetExistsError{Target: targetName(t), NoData: err != nil}
		}
	}
	// Anything else (permissions, a format Spark cannot read back) is left
	// to the write, which reports it with Spark's own error.
	return nil
}

func targetName(t Target) string {
	if discards(t) {
		return "noop (nothing kept)"
	}
	if t.Table != "" {
		return "table " + quoteName(t.Table)
	}
	return quoteName(t.Path)
}

// writeHint adds to a failed run's error what to do about it; reads are
// the plan's (nil: none known), which decide whether the reader option
// mode may help a file Spark could not read.
func writeHint(err error, reads []*Read) error {
	switch errorClass(err) {
	case "PATH_ALREADY_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS":
		return fmt.Errorf("%w\n  hint: the output exists; choose the mode overwrite, append or ignore (Target.Mode)", err)
	case "PATH_NOT_FOUND":
		if hint := notSharedHint(err); hint != "" {
			return fmt.Errorf("%w\n  hint: %s", err, hint)
		}
	}
	if unclosedQuote(err) {
		return fmt.Errorf("%w\n  hint: a CSV line of that file ends inside a quoted value: a value in quotes that runs over several lines, which Spark reads only with the reader option multiLine=true (Job.ReaderOptions); plan again with it, as the file's types may change too", err)
	}
	if (strings.HasPrefix(errorClass(err), "FAILED_READ_FILE") || strings.HasPrefix(errorClass(err), "MALFORMED_RECORD_IN_PARSING")) && modeHelps(err, reads) {
		return fmt.Errorf("%w\n  hint: Spark could not read that file; under the default reader mode FAILFAST, one value that does not fit the schema or one broken line stops the merge: fix the file or the schema, or choose the reader option mode=PERMISSIVE (such values become null) or mode=DROPMALFORMED (such rows are dropped) (Job.ReaderOptions)", err)
	}
	return err
}

// modeHelps reports whether the reader option mode would change a failed
// read: one of a CSV or JSON file read under FAILFAST. Parquet and ORC
// readers have no mode, and a read with mode PERMISSIVE or DROPMALFORMED
// has it already (found in the field: every Parquet read failure was told
// to choose mode=PERMISSIVE, and so was a read with it). The file Spark's
// message names decides, where a read of the plan has it; else any read.
func modeHelps(err error, reads []*Read) bool {
	var failed []*Read
	if m := failedReadFile.FindStringSubmatch(err.Error()); m != nil {
		key := sparkPathKey(pathOfURI(m[1]))
		for _, r := range reads {
			for _, p := range r.Paths {
				if p := sparkPathKey(p); key == p || strings.HasPrefix(key, strings.TrimSuffix(p, "/")+"/") {
					failed = append(failed, r)
					break
				}
			}
		}
	}
	if len(failed) == 0 {
		failed = reads
	}
	return slices.ContainsFunc(failed, func(r *Read) bool {
		mode := optionValue(r.Options, "mode")
		return (r.Format == "csv" || r.Format == "json") && !strings.EqualFold(mode, "PERMISSIVE") && !strings.EqualFold(mode, "DROPMALFORMED")
	})
}

// failedReadFile is the file of Spark's FAILED_READ_FILE message, as a
// URI ("Encountered error while reading file file:///d/a%20b.csv.").
var failedReadFile = regexp.MustCompile(`reading file (\S+?)\.?(?:\s|$)`)

// malformedCSV is Spark's message of a CSV record its parser could not
// read (MALFORMED_CSV_RECORD, a cause of a failed read), up to the record's
// end.
var malformedCSV = regexp.MustCompile(`Malformed CSV record: ([^\n]*?)(?: SQLSTATE: |\n|$)`)

// unclosedQuote reports whether err is a failed read of a CSV record with
// an odd number of quotes: a line that ends inside a quoted value, as a
// value over several lines read without multiLine leaves it.
func unclosedQuote(err error) bool {
	m := malformedCSV.FindStringSubmatch(err.Error())
	return m != nil && strings.Count(m[1], `"`)%2 == 1
}

// notSharedHint is the hint for a PATH_NOT_FOUND error of a path this
// machine has (missingOnServer), or "".
func notSharedHint(err error) string {
	p := missingOnServer(err)
	if p == "" {
		return ""
	}
	return quoteName(p) + " is on this machine, but the Spark server does not see it: they do not share this filesystem. " +
		"Put the sources where the server reads them (a directory mounted on it, or storage the cluster reads: s3a://, abfss://, gs://, dbfs:/) " +
		"and name them as the server does: sparkmerge lists and types files only the server sees through Spark"
}

// missingOnServer is the path of a PATH_NOT_FOUND error when this machine
// has it: the client read and typed a local file that the server cannot
// see (a remote server given the client's paths), which Spark finds out
// only when it reads the rows.
func missingOnServer(err error) string {
	var se *connect.SparkError
	if !errors.As(err, &se) {
		return ""
	}
	p := se.Parameters["path"]
	if p == "" || !clientSees(p) {
		return ""
	}
	return localPath(p)
}

// targetFrame reads the target back.
func targetFrame(sess *connect.Session, t Target) connect.Frame {
	if t.Table != "" {
		return sess.Table(t.Table, nil)
	}
	return targetFilesFrame(sess, t, []string{t.Path})
}

// targetFilesFrame reads some files of path target t (all of them for
// its path), as targetFrame reads t.
func targetFilesFrame(sess *connect.Session, t Target, paths []string) connect.Frame {
	return targetFilesFrameOf(sess, t, paths, "")
}

// targetFilesFrameOf is targetFilesFrame read with schema (DDL; "":
// Spark's own inference).
func targetFilesFrameOf(sess *connect.Session, t Target, paths []string, schema string) connect.Frame {
	format := t.Format
	if format == "" {
		format = "parquet"
	}
	// Read back with the options it was written with (separator, quote,
	// line separator, encoding: Spark ignores those a reader lacks).
	options := map[string]string{}
	for k, v := range t.Options {
		options[k] = v
	}
	if schema == "" && (strings.EqualFold(format, "parquet") || strings.EqualFold(format, "orc")) {
		// Files appended with --evolve have more columns than older ones.
		options["mergeSchema"] = "true"
	}
	if strings.EqualFold(format, "csv") {
		options["header"] = csvHeader(t)
		// A value with a line break is quoted over several lines: one row.
		options["multiLine"] = "true"
	}
	if len(paths) != 1 || paths[0] != t.Path {
		// Files named one by one keep the partition columns of their
		// directories below the target.
		options["basePath"] = t.Path
	}
	return sess.Read(connect.ReadSpec{Format: format, Paths: paths, Options: options, Schema: schema})
}

// csvHeader is the header option of a CSV target: "true" unless the user
// set it.
func csvHeader(t Target) string {
	if h := t.Options["header"]; h != "" {
		return h
	}
	return "true"
}

// discards says whether t is Spark's noop format, which keeps no rows.
func discards(t Target) bool { return strings.EqualFold(t.Format, "noop") }

// countTarget counts the target's rows; a target that does not exist yet
// has none when missingOK.
func (c *Client) countTarget(ctx context.Context, t Target, missingOK bool) (int64, error) {
	if missingOK && t.Path != "" && c.absentOnServer(ctx, t.Path) {
		return 0, nil
	}
	return countFrame(ctx, targetFrame(c.sess, t), t, missingOK)
}

// countFrame counts the rows of frame, which reads target t.
func countFrame(ctx context.Context, frame connect.Frame, t Target, missingOK bool) (int64, error) {
	n, err := frame.Count(ctx)
	if err != nil {
		switch errorClass(err) {
		case "PATH_NOT_FOUND", "TABLE_OR_VIEW_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA":
			if missingOK {
				return 0, nil
			}
		}
		return 0, fmt.Errorf("count rows in %s: %w", targetName(t), err)
	}
	return n, nil
}

// sourceKeyExpr is the expression that names a row's source in read i: its
// file for a multi-file read, else the read's name.
func (p *Planned) sourceKeyExpr(i int) string {
	if p.Reads[i].multiFile() {
		return p.Reads[i].rowFile()
	}
	return sparkmerge.QuoteString(p.Reads[i].Name)
}

// countPerSource counts rows per source in one pass over every input.
func (c *Client) countPerSource(ctx context.Context, p *Planned) (map[string]int64, error) {
	rows, err := countedRows(c.readCountFrames(p, ""), p.countsInOneTask()).Aggregate([]string{"src"}, "count(parsed) AS n").Collect(ctx)
	if err != nil {
		return nil, err
	}
	return countsFromRows(rows)
}

// readCountFrames are the plan's scans as rows of (src, parsed): src
// names the row's source, and count(parsed) counts the rows the merge
// reads. side, where not "", comes first in each row, as a column side
// of that value (see countWithRead).
func (c *Client) readCountFrames(p *Planned, side string) []connect.Frame {
	first := []string{}
	if side != "" {
		first = []string{sparkmerge.QuoteString(side) + " AS side"}
	}
	return c.scans(p, true,
		func(_ scanBatch, scan batchRows) connect.Frame {
			return scan.SelectExpr(append(first, sourceColumn+" AS src", "0 AS parsed")...) // routed: scanned withSource
		},
		func(i int, read connect.Frame) connect.Frame {
			parsed := "0"
			if strings.EqualFold(optionValue(p.Reads[i].Options, "mode"), "DROPMALFORMED") {
				// A count that reads no column parses none either and
				// counts the rows the read drops: use every column, in a
				// nullable expression (count of a non-nullable one becomes
				// count(1), and the columns are pruned again) that is
				// never null (rand() is never below 0).
				parsed = "CASE WHEN rand() < 0 THEN NULL ELSE hash(*) END"
			}
			return read.SelectExpr(append(first, p.sourceKeyExpr(i)+" AS src", parsed+" AS parsed")...)
		})
}

// countWithRead counts, in one query, the rows of written per value of
// the SQL expression key (the provenance column; NULL: in total, under
// "") and the rows the plan's sources hold per source, as
// countPerSource counts them. own: written are this run's rows only,
// written from the sources (see countsInOneTask).
func (c *Client) countWithRead(ctx context.Context, written connect.Frame, key string, p *Planned, own bool) (writtenCounts, read map[string]int64, err error) {
	frames := append([]connect.Frame{written.SelectExpr("'written' AS side", "CAST("+key+" AS STRING) AS src", "0 AS parsed")},
		c.readCountFrames(p, "read")...)
	rows, err := countedRows(frames, own && p.countsInOneTask()).Aggregate([]string{"side", "src"}, "count(parsed) AS n").Collect(ctx)
	if err != nil {
		return nil, nil, err
	}
	writtenCounts, read = map[string]int64{}, map[string]int64{}
	for _, v := range rows.Values {
		if len(v) != 3 {
			return nil, nil, fmt.Errorf("unexpected count row of %d values", len(v))
		}
		side, _ := v[0].(string)
		src, _ := v[1].(string)
		n, ok := v[2].(int64)
		if !ok {
			return nil, nil, fmt.Errorf("unexpected count value %T", v[2])
		}
		switch side {
		case "written":
			writtenCounts[src] += n
		case "read":
			read[src] += n
		default:
			return nil, nil, fmt.Errorf("unexpected count of side %q", side)
		}
	}
	return writtenCounts, read, nil
}

// countedRows is the union of frames a count groups: in one partition
// where oneTask says the rows are few (see countsInOneTask), so that the
// count's aggregate needs no shuffle. A shuffle is a Spark job of its own
// under adaptive execution (Spark's default): its map stage, then the
// result; verify's count of a merge of a few small files was 2 jobs.
// Coalescing runs every scan of the union in one task, one after another:
// the same rows, each counted once.
func countedRows(frames []connect.Frame, oneTask bool) connect.Frame {
	union := connect.UnionAll(frames)
	if oneTask {
		return union.Coalesce(1)
	}
	return union
}

// oneTaskCountBytes bounds the inputs counted in one task: Spark's
// default spark.sql.files.openCostInBytes (4 MiB), the cost in bytes
// Spark gives opening a file when it packs files into tasks, so that
// counting up to that many bytes of small files takes one task no longer
// than opening a file of its own does.
const oneTaskCountBytes = 4 << 20

// countsInOneTask reports whether the plan's sources are files of known
// sizes, oneTaskCountBytes or less in all (and so the rows written from
// them are few too): their count is one task (countedRows). A source of
// unknown size (a table, a query, a DataFrame, a dataset directory) or
// larger inputs keep Spark's partitions, so that a large count runs in
// parallel.
func (p *Planned) countsInOneTask() bool {
	var total int64
	for _, r := range p.Reads {
		if r.relational() {
			return false
		}
		for _, path := range r.Paths {
			size, ok := inputSize(r, path)
			if !ok {
				return false
			}
			total += size
		}
	}
	return total <= oneTaskCountBytes
}

func countsFromRows(rows connect.Rows) (map[string]int64, error) {
	out := make(map[string]int64, len(rows.Values))
	for _, v := range rows.Values {
		src, _ := v[0].(string)
		n, ok := v[1].(int64)
		if !ok {
			return nil, fmt.Errorf("unexpected count value %T", v[1])
		}
		out[src] += n
	}
	return out, nil
}

// countRescued counts the values in rows' rescue column (named col), per
// source and column; none when empty is true (nothing was written).
func countRescued(ctx context.Context, rows connect.Frame, col string, empty bool) ([]RescuedValues, error) {
	if empty {
		return nil, nil
	}
	q, err := sparkmerge.QuoteIdent(col)
	if err != nil {
		return nil, err
	}
	file := sparkmerge.QuoteString(sparkmerge.RescueFilePath)
	counted, err := rows.Filter(q+" IS NOT NULL").
		SelectExpr("from_json("+q+", 'map<string,string>') AS m").
		SelectExpr("m["+file+"] AS src", "explode(map_filter(m, (k, v) -> k <> "+file+")) AS (col, v)").
		Aggregate([]string{"src", "col"}, "count(1) AS n").Collect(ctx)
	if err != nil {
		return nil, err
	}
	var out []RescuedValues
	for _, v := range counted.Values {
		src, _ := v[0].(string)
		c, _ := v[1].(string)
		n, _ := v[2].(int64)
		out = append(out, RescuedValues{Source: src, Column: c, Values: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Column < out[j].Column
	})
	return out, nil
}

// verify compares rows read with rows written: per source when the target
// carries the provenance column (and was not appended to), else in total.
// w.rows are what was written: the target, or its staging (which holds
// only this run's rows, so that an append is checked per source too),
// counted per source already where w.perSource is set.
func (c *Client) verify(ctx context.Context, job Job, w *targetWrite, p *Planned, read map[string]int64, result *Result) error {
	// Sources without rows are absent from the counts, and empty files
	// were not read; list them with 0.
	known := map[string]bool{}
	for _, r := range p.Reads {
		names := r.Sources
		if !r.multiFile() {
			names = []string{r.Name}
		}
		for _, name := range names {
			known[name] = true
			if _, ok := read[name]; !ok {
				read[name] = 0
			}
		}
	}
	for _, name := range p.Empty {
		known[name] = true
		if _, ok := read[name]; !ok {
			read[name] = 0
		}
	}
	var total int64
	for _, src := range inInputOrder(p, read) {
		result.RowsRead = append(result.RowsRead, SourceRows{Source: src, Rows: read[src]})
		total += read[src]
	}
	verr := &VerifyError{Read: total, Written: result.RowsWritten}
	if p.Plan.Distinct {
		// Duplicate rows were dropped on purpose: the distinct rows read
		// are what the write must hold, in total.
		if result.RowsDistinct != result.RowsWritten {
			verr.Read = result.RowsDistinct
			verr.Mismatches = append(verr.Mismatches, fmt.Sprintf("all sources: %d distinct rows read (of %d), written %d", result.RowsDistinct, total, result.RowsWritten))
			return verr
		}
		return nil
	}
	if col := verifiedPerSource(job, p, w.own); col != "" {
		perSource := w.perSource
		if perSource == nil && w.rows != nil {
			var err error
			if perSource, _, err = c.countPerSourceWritten(ctx, *w.rows, col, p, false, w.own); err != nil {
				return err
			}
		}
		if perSource == nil {
			perSource = map[string]int64{}
		}
		for _, src := range inInputOrder(p, mergeKeys(read, perSource)) {
			switch {
			case read[src] != perSource[src]:
				verr.Mismatches = append(verr.Mismatches, fmt.Sprintf("%s: read %d, written %d", src, read[src], perSource[src]))
			case !known[src]:
				// Rows that name no source of the plan: their file
				// was not told right, whatever the counts say.
				verr.Mismatches = append(verr.Mismatches, fmt.Sprintf("%q is no source of the plan: read %d, written %d", src, read[src], perSource[src]))
			}
		}
	}
	if total != result.RowsWritten && len(verr.Mismatches) == 0 {
		verr.Mismatches = append(verr.Mismatches, fmt.Sprintf("all sources: read %d, written %d", total, result.RowsWritten))
	}
	if len(verr.Mismatches) > 0 {
		return verr
	}
	return nil
}

// countPerSourceWritten counts the rows of written per value of its
// provenance column col, and with withRead the rows read per source in
// the same query (see countWithRead; own as there).
func (c *Client) countPerSourceWritten(ctx context.Context, written connect.Frame, col string, p *Planned, withRead, own bool) (perSource, read map[string]int64, err error) {
	q, err := sparkmerge.QuoteIdent(col)
	if err != nil {
		return nil, nil, err
	}
	if withRead {
		if perSource, read, err = c.countWithRead(ctx, written, q, p, own); err != nil {
			return nil, nil, fmt.Errorf("verify: count rows read and written per source: %w", writeHint(err, p.Reads))
		}
		return perSource, read, nil
	}
	rows, err := written.Aggregate([]string{q}, "count(1) AS n").Collect(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("verify: count rows written per source: %w", err)
	}
	perSource, err = countsFromRows(rows)
	if err != nil {
		return nil, nil, fmt.Errorf("verify: %w", err)
	}
	return perSource, nil, nil
}

// verifiedPerSource is the provenance column by which Verify compares
// the rows written with the rows read, per source; "" where it compares
// them in total: no provenance column, duplicates dropped on purpose, or
// an append to rows not only this run's (own: the written rows are).
func verifiedPerSource(job Job, planned *Planned, own bool) string {
	if !job.Verify || planned.Plan.Distinct || !own && strings.EqualFold(job.Target.Mode, "append") {
		return ""
	}
	return planned.Plan.SourceColumn
}

func mergeKeys(a, b map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(a))
	for k := range a {
		out[k] = 0
	}
	for k := range b {
		out[k] = 0
	}
	return out
}

// replacesEveryDeltaRow says whether spec overwrites the existing Delta
// table (or path) tt by Delta's replaceWhere of every row, one commit that
// keeps the table's liquid clustering, which Delta 4.0's plain overwrite
// (DataFrameWriterV2.overwrite, INSERT OVERWRITE, a path's overwrite)
// drops, as it keeps partitioning, properties, comments and constraints
// (checked on Delta 4.0.1; found in the field). A user's replaceWhere, or
// dynamic partition overwrite (which Delta refuses with replaceWhere),
// stands.
func replacesEveryDeltaRow(spec connect.WriteSpec, tt *TargetTable) bool {
	return tt != nil && tt.Exists && tt.Format == sparkmerge.FormatDelta && strings.EqualFold(spec.Mode, "overwrite") &&
		optionValue(spec.Options, "replaceWhere") == "" && !strings.EqualFold(optionValue(spec.Options, "partitionOverwriteMode"), "dynamic")
}

// writeMerged writes the merged rows per spec: a table this run creates
// (tt says it does not exist) through its catalog, with its format,
// partitioning and properties in one statement (CREATE TABLE AS SELECT);
// an existing Delta table it overwrites by Delta's replaceWhere, an
// Iceberg one by its catalog's overwrite of every row (one commit each);
// anything else by Spark's DataFrameWriter.
func (c *Client) writeMerged(ctx context.Context, merged connect.Frame, spec connect.WriteSpec, tt *TargetTable, written Target) error {
	if overwritesInPlace(written, tt) && written.Table == tt.Name {
		if tt.Format == sparkmerge.FormatDelta && optionValue(spec.Options, "replaceWhere") != "" {
			// Delta's replaceWhere (of every row: replacesEveryDeltaRow)
			// is an option of its DataFrameWriter's overwrite, which
			// without it would replace the table itself.
			return merged.Write(ctx, spec)
		}
		// Every row replaced in one commit, by name, keeping the table.
		return merged.WriteV2(ctx, connect.WriteV2Spec{Table: written.Table, Mode: "overwrite", Options: spec.Options})
	}
	if tt == nil || tt.Exists || tt.path || written.Table != tt.Name {
		return merged.Write(ctx, spec)
	}
	return merged.WriteV2(ctx, connect.WriteV2Spec{
		Table:       written.Table,
		Mode:        "create",
		Provider:    tt.Format,
		PartitionBy: written.PartitionBy,
		Properties:  written.Properties,
		Options:     spec.Options,
	})
}

// mergeOptions is a copy of a with b's entries added.
func mergeOptions(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// inInputOrder are counts' keys (source names) in the order of the
// sources, as the plan numbers them, then any other key sorted.
func inInputOrder(planned *Planned, counts map[string]int64) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range planned.Reads {
		names := r.Sources
		if !r.multiFile() {
			names = []string{r.Name} // as verify counts it
		}
		for _, n := range names {
			if _, ok := counts[n]; ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, k := range sortedKeys(counts) {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// ReadTarget returns the first n rows of job's written target, its names
// resolved as the job matches them (a case-sensitive job's target may hold
// c and C).
func (c *Client) ReadTarget(ctx context.Context, job Job, n int) (Rows, error) {
	unmatch, err := c.matchNames(ctx, job.Policy)
	if err != nil {
		return Rows{}, err
	}
	defer unmatch()
	t, err := clientTarget(job.Target)
	if err != nil {
		return Rows{}, err
	}
	rows, err := targetFrame(c.sess, t).Limit(n).Collect(ctx)
	return rowsFrom(rows), err
}

// ShowTarget renders the first n rows of job's written target as Spark's
// show(n, truncate=False) prints them, formatted by Spark itself: values
// whole (a row's source file is a long path), left-aligned; names resolved
// as the job matches them.
func (c *Client) ShowTarget(ctx context.Context, job Job, n int) (string, error) {
	unmatch, err := c.matchNames(ctx, job.Policy)
	if err != nil {
		return "", err
	}
	defer unmatch()
	t, err := clientTarget(job.Target)
	if err != nil {
		return "", err
	}
	return targetFrame(c.sess, t).ShowString(ctx, n, 0)
}

// clientTarget is t with a relative path made absolute on the client, as
// the merge wrote it (resolveJobPaths): the server would read a relative
// path in its own working directory.
func clientTarget(t Target) (Target, error) {
	if !isRelativePath(t.Path) {
		return t, nil
	}
	abs, err := filepath.Abs(t.Path)
	if err != nil {
		return t, fmt.Errorf("output path %s: %w", quoteName(t.Path), err)
	}
	t.Path = abs
	return t, nil
}

// SourceSchema is a source's schema as Spark reads it.
type SourceSchema struct {
	Name   string            `json:"name"`
	Format string            `json:"format,omitempty"`
	Schema sparkmerge.Schema `json:"-"`
}

// MarshalJSON writes s with its schema as [sparkmerge.Column]s, types in
// Spark's SQL syntax.
func (s SourceSchema) MarshalJSON() ([]byte, error) {
	type fields SourceSchema // without this method
	return json.Marshal(struct {
		fields
		Schema []sparkmerge.Column `json:"schema"`
	}{fields(s), s.Schema.Columns()})
}

// Schemas returns each source's schema, one per source (never grouped).
func (c *Client) Schemas(ctx context.Context, job Job) ([]SourceSchema, error) {
	job, err := c.resolveJobPaths(ctx, job)
	if err != nil {
		return nil, err
	}
	in, err := c.expand(ctx, job, false) // Spark types each source
	if err != nil {
		return nil, err
	}
	ctx, progress := withProgress(ctx, job)
	if err := c.checkNestingOnServer(ctx, in.reads); err != nil {
		return nil, err
	}
	if err := c.fetchSchemas(ctx, in.reads, job.Parallelism, progress.discovered(0, len(in.reads))); err != nil {
		return nil, err
	}
	for _, r := range in.reads {
		if len(r.Schema.Fields) == 0 {
			return nil, sourceError(r, errNoColumns)
		}
	}
	if err := addPartitionColumns(in.reads); err != nil {
		return nil, err
	}
	out := make([]SourceSchema, len(in.reads))
	for i, r := range in.reads {
		out[i] = SourceSchema{Name: r.Name, Format: r.Format, Schema: r.Schema}
	}
	return out, nil
}

// bytesPerOutputFile is the input size per output file when sparkmerge
// chooses the number of files.
const bytesPerOutputFile = 128 << 20

// maxReadsPerTask bounds how many scans (reads, or positional batches)
// one write task goes through. A task holds on to each scan's reader until
// it ends: at 2,000 single-file
// CSV reads coalesced into 8 tasks (250 reads each) Spark 4.0 ran out of a
// 2 GiB heap, at 64 tasks (about 31 each) it did not. More tasks cost
// time, though: 500 tasks were much slower than 64 (measured; see
// docs/benchmarks-history.md#measurements-behind-the-code).
const maxReadsPerTask = 32

// sparkFileOpenCost and sparkMaxSplitBytes are Spark's defaults of
// spark.sql.files.openCostInBytes (the bytes a file counts for beyond its
// own when Spark packs files into a scan's partitions) and
// spark.sql.files.maxPartitionBytes (the most a partition packs).
const (
	sparkFileOpenCost  = 4 << 20
	sparkMaxSplitBytes = 128 << 20
)

// outputFiles is how many partitions to coalesce the merge into before
// writing, or 0 to leave Spark's partitioning alone. Without it every small
// input file becomes a small output file and a task of its own.
//
// Where Spark's own partitions are large already, it leaves them: a read
// of files packs at most sparkMaxSplitBytes (counting each file's open
// cost) into a partition, so the reads have at least a partition per
// sparkMaxSplitBytes each; where that many average half an output file
// (bytesPerOutputFile) or more, coalescing them (without a shuffle, whole
// partitions into a task) would only make some tasks one partition and
// others two. On lake-json (20 files of 53 MB in 4 reads of
// 5: 12 partitions of 2, 2 and 1 file) the write coalesced into 8 ran 4
// tasks of 3 files and 4 of 2, and its last 2.6 s on one core.
func outputFiles(requested int, reads []*Read, scans int) int {
	if requested > 0 {
		return requested
	}
	var total int64
	inputs, partitions := 0, 0
	for _, r := range reads {
		var packed int64
		for _, p := range r.Paths {
			size, ok := inputSize(r, p)
			if !ok {
				return 0 // sizes unknown: keep Spark's partitions
			}
			total += size
			packed += size + sparkFileOpenCost
			inputs++
		}
		if r.relational() {
			return 0
		}
		partitions += int(max((packed+sparkMaxSplitBytes-1)/sparkMaxSplitBytes, 1))
	}
	n := int((total + bytesPerOutputFile - 1) / bytesPerOutputFile)
	n = max(n, min(8, inputs), (scans+maxReadsPerTask-1)/maxReadsPerTask, 1)
	if n >= inputs {
		return 0 // no fewer files than Spark would write anyway
	}
	if int64(partitions)*(bytesPerOutputFile/2) <= total {
		return 0 // Spark's partitions are large: see above
	}
	return n
}

// inputSize is the size of r's input p: a local file's, or the size Spark
// listed for a file only the server sees. Without it, a merge of 200
// remote files kept Spark's 200 partitions and wrote 200 files, slower
// than coalesced to 8 (the benchmark's 200 CSV files of 1 MB; see
// docs/benchmarks-history.md#measurements-behind-the-code).
func inputSize(r *Read, p string) (int64, bool) {
	if size, ok := localSize(p); ok {
		return size, true
	}
	for _, m := range r.parts() {
		if m.listed && len(m.Paths) == 1 && m.Paths[0] == p {
			return m.listedSize, true
		}
	}
	return 0, false
}

// localSize is the size of a local file, or of the data files directly in
// a local directory.
func localSize(p string) (int64, bool) {
	if !isLocalFile(p) {
		return 0, false
	}
	info, err := os.Stat(localPath(p))
	if err != nil {
		return 0, false
	}
	if !info.IsDir() {
		return info.Size(), true
	}
	return 0, false // a dataset directory: its partitioning is Spark's to keep
}

// optionValue is a reader option's value, its key matched as Spark matches
// option keys (case-insensitively).
func optionValue(options map[string]string, key string) string {
	for k, v := range options {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}
