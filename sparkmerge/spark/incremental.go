package spark

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// An incremental merge (Job.Incremental) takes only the files that no
// earlier run merged. Which files were merged is STATE, a Parquet dataset
// at a path or a table, that every run appends to: one row per file and
// event (see stateRow). A run lists its sources as any merge does, reads
// STATE, merges the files STATE does not hold, appends them to the target
// and records them.
//
// The order makes a run that stops anywhere (killed, a lost server)
// recoverable by the next one: first STATE gets the run's files as
// "pending" (with what the target held before), then the rows are
// written, then STATE gets them as "merged". A run that finds pending
// files of a run that never recorded them merged decides from the target
// whether that run's rows are in it: a Delta or Iceberg table's history
// holds a commit tagged with the run's id or not; a file dataset (Parquet,
// ORC, ...) holds files of one write job that were not there before the
// run or not (Spark names every file of a write job after the job). It
// then records them merged, or abandoned, and merges the files again.

// Incremental makes a merge take only the files an earlier run did not
// merge (see [Job.Incremental]).
type Incremental struct {
	// State is where the merged files are recorded: a path, where they
	// are a Parquet dataset, or table:NAME, a catalog table. The merge
	// creates it.
	State string `json:"state"`
	// Changed is what a run does with a file STATE holds whose size or
	// modification time is no longer what STATE recorded.
	Changed ChangedFiles `json:"changed"`
	// Fault, when set, is called at each step of a run's recording:
	// "recording" (the run read STATE and is about to record its files
	// pending), "pending" (STATE holds the run's files as pending,
	// nothing is written yet) and "written" (the rows are in the target,
	// STATE does not say so yet). An error from it stops the run there,
	// as a killed process would stop it: a seam for tests of what the
	// next run does, or of another run's rows arriving meanwhile.
	Fault func(step string) error `json:"-"`
	// NewState starts a new STATE for a target that already holds rows:
	// without it a run whose STATE does not exist (or holds no file)
	// refuses such a target, since every listed file would count as new
	// and rows the target may hold already would be appended again (a
	// STATE lost, or its path spelled otherwise than before).
	NewState bool `json:"new_state,omitempty"`
	// Lease is how long a run that recorded files pending, on another
	// machine than this one, counts as running after its last sign of
	// life (0: 10 minutes). A running job renews it every fifth of it;
	// see runAlive.
	Lease time.Duration `json:"-"`
}

// ChangedFiles is what an incremental run does with a file merged before
// whose size or modification time changed since.
type ChangedFiles int

const (
	// ChangedError fails the run, naming the file (the default).
	ChangedError ChangedFiles = iota
	// ChangedRemerge merges the file again: its rows as they are now are
	// appended; the rows an earlier run appended stay in the target.
	ChangedRemerge
	// ChangedSkip leaves the file out, as merged.
	ChangedSkip
)

var changedNames = []string{"error", "remerge", "skip"}

func (c ChangedFiles) String() string {
	if c >= 0 && int(c) < len(changedNames) {
		return changedNames[c]
	}
	return fmt.Sprintf("ChangedFiles(%d)", int(c))
}

// MarshalText writes the policy's name.
func (c ChangedFiles) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// ParseChangedFiles reads "error", "remerge" or "skip".
func ParseChangedFiles(s string) (ChangedFiles, error) {
	for i, name := range changedNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return ChangedFiles(i), nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q for changed files: use error, remerge or skip", s)
}

// IncrementalRun is what an incremental merge took and left (see
// [Job.Incremental]).
type IncrementalRun struct {
	// State is where the merged files are recorded.
	State string `json:"state"`
	// RunID names this run in STATE (and tags its commit to a Delta or
	// Iceberg table).
	RunID string `json:"run_id"`
	// Listed counts the files the sources list.
	Listed int `json:"listed"`
	// Unlisted are the sources that list no file (an empty directory, a
	// pattern that matches none): nothing new from them, as from a
	// directory whose files are merged already.
	Unlisted []string `json:"unlisted,omitempty"`
	// AlreadyMerged counts the listed files STATE holds, unchanged, that
	// this run leaves out.
	AlreadyMerged int `json:"already_merged"`
	// Merged are the files this run merges, in input order.
	Merged []string `json:"merged"`
	// Changed are the files STATE holds whose size or modification time
	// changed, merged again or left out as [Incremental.Changed] says.
	Changed []string `json:"changed,omitempty"`
	// Recovered is an earlier run that stopped before it recorded its
	// files merged, and what this run found of it.
	Recovered *RecoveredRun `json:"recovered,omitempty"`
	// NothingNew is true when no file is to be merged: the run writes no
	// row and leaves the target untouched.
	NothingNew bool `json:"nothing_new"`
	// Recorded is true once STATE records this run's files merged.
	Recorded bool `json:"recorded"`

	files    []incrementalFile
	recovery []stateRow
	// target is the target's identity in STATE (stateTargetID).
	target string
	// stopRenewal ends the renewal of the run's lease (see renewLease).
	stopRenewal func()
	// before are the write jobs of the target's files before this run
	// wrote (a file dataset).
	before []string
}

// RecoveredRun is a run that stopped between recording its files pending
// and recording them merged.
type RecoveredRun struct {
	RunID string `json:"run_id"`
	// Files counts its files.
	Files int `json:"files"`
	// Landed is true when its rows are in the target: its files are now
	// recorded merged; else abandoned, and merged again by this run.
	Landed bool `json:"landed"`
}

// ChangedFileError is a file STATE recorded whose size or modification
// time changed since it was merged.
type ChangedFileError struct {
	State, Path, RunID     string
	Size, RecordedSize     int64
	Modified, RecordedTime time.Time
}

func (e *ChangedFileError) Error() string {
	return fmt.Sprintf("incremental: %s changed after run %s merged it (%d bytes, modified %s; now %d bytes, modified %s, as listed), and %s records it merged: "+
		"merge it again (Incremental.Changed = remerge: its rows as they are now are appended, the earlier ones stay), "+
		"leave it out (Incremental.Changed = skip), or put the file back as it was",
		quoteName(e.Path), e.RunID, e.RecordedSize, e.RecordedTime.UTC().Format(time.RFC3339Nano), e.Size, e.Modified.UTC().Format(time.RFC3339Nano), e.State)
}

// incrementalFile is a listed file as an incremental run knows it.
type incrementalFile struct {
	path string
	// name is its source name in the plan (the key of its row counts).
	name           string
	size, modified int64 // modified: Unix milliseconds
}

// Statuses of STATE's rows.
const (
	statePending   = "pending"
	stateMerged    = "merged"
	stateAbandoned = "abandoned"
	// stateAlive rows (no path) renew a running run's lease.
	stateAlive = "alive"
)

// stateRow is one row of STATE: a file and what a run did with it.
type stateRow struct {
	path           string
	size, modified int64 // modified: Unix milliseconds
	runID          string
	rows           int64
	mergedAt       int64 // Unix milliseconds
	status         string
	// writeJob is the Spark write job whose files in a file dataset hold
	// the run's rows ("" for a table); jobsBefore, in pending rows, the
	// write jobs of the dataset's files before the run wrote.
	writeJob, jobsBefore string
	// target is the target the row's run wrote to (stateTargetID; "" in
	// a STATE written before sparkmerge recorded it: this run's target).
	target string
	// owner is the process that wrote the row (see processOwner), and
	// recordedAt when the Spark server recorded it (Unix milliseconds,
	// the server's clock, 0 in an older STATE): together they tell a
	// running run from a stopped one.
	owner      string
	recordedAt int64
}

// stateColumns are STATE's columns as SQL expressions over the local
// table of rows the client sends (see writeState).
var stateColumns = []string{
	"path", "size", "timestamp_millis(modified_ms) AS modified", "run_id", "rows",
	"timestamp_millis(merged_at_ms) AS merged_at", "status", "write_job", "jobs_before",
	"target", "owner", "current_timestamp() AS recorded_at",
}

// stateSchema is STATE's schema, as a path STATE is read: the columns an
// older STATE lacks (target, owner, recorded_at) are null there.
const stateSchema = "path STRING, size BIGINT, modified TIMESTAMP, run_id STRING, rows BIGINT, merged_at TIMESTAMP, status STRING, " +
	"write_job STRING, jobs_before STRING, target STRING, owner STRING, recorded_at TIMESTAMP"

// stateAddedColumns are the columns sparkmerge added to STATE since its
// first release, as ALTER TABLE adds them to an older STATE table.
var stateAddedColumns = []string{"target STRING", "owner STRING", "recorded_at TIMESTAMP"}

// stateTargetID is a target's identity in STATE: its table, or its
// absolute path, as the run names it.
func stateTargetID(t Target) string {
	if t.Table != "" {
		return "table:" + strings.ToLower(t.Table)
	}
	if abs, err := clientTarget(t); err == nil {
		t = abs
	}
	if strings.Contains(t.Path, "://") {
		return strings.TrimRight(t.Path, "/")
	}
	return path.Clean(t.Path)
}

// stateTarget is where STATE lives, as a target to write and read.
func stateTarget(state string) Target {
	if name, ok := strings.CutPrefix(state, "table:"); ok {
		return Target{Table: name, Mode: "append"}
	}
	return Target{Path: state, Format: "parquet", Mode: "append"}
}

// readState reads every row of STATE, none when it does not exist yet,
// and the Spark server's clock now (Unix milliseconds; 0 without rows).
func (c *Client) readState(ctx context.Context, state string) ([]stateRow, int64, error) {
	t := stateTarget(state)
	if t.Path != "" && c.absentOnServer(ctx, t.Path) {
		return nil, 0, nil
	}
	added := []string{"coalesce(target, '')", "coalesce(owner, '')", "coalesce(unix_millis(recorded_at), 0)"}
	var frame connect.Frame
	if t.Path != "" {
		// Named, the columns an older STATE lacks are null.
		frame = targetFilesFrameOf(c.sess, t, []string{t.Path}, stateSchema)
	} else {
		frame = targetFrame(c.sess, t)
		has, err := c.stateHasAddedColumns(ctx, t)
		if err != nil || !has {
			added = []string{"''", "''", "CAST(0 AS BIGINT)"}
		}
	}
	frame = frame.SelectExpr(append(append([]string{"path", "size", "unix_millis(modified)", "run_id", "rows",
		"unix_millis(merged_at)", "status", "coalesce(write_job, '')", "coalesce(jobs_before, '')"}, added...),
		serverClock)...)
	rows, err := frame.Collect(ctx)
	switch errorClass(err) {
	case "":
	case "PATH_NOT_FOUND", "TABLE_OR_VIEW_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA":
		return nil, 0, nil
	default:
		return nil, 0, fmt.Errorf("incremental: read STATE %s: %w", targetName(t), err)
	}
	out := make([]stateRow, 0, len(rows.Values))
	var now int64
	for _, v := range rows.Values {
		r := stateRow{}
		r.path, _ = v[0].(string)
		r.size, _ = v[1].(int64)
		r.modified, _ = v[2].(int64)
		r.runID, _ = v[3].(string)
		r.rows, _ = v[4].(int64)
		r.mergedAt, _ = v[5].(int64)
		r.status, _ = v[6].(string)
		r.writeJob, _ = v[7].(string)
		r.jobsBefore, _ = v[8].(string)
		r.target, _ = v[9].(string)
		r.owner, _ = v[10].(string)
		r.recordedAt, _ = v[11].(int64)
		now = serverMillis(v[12])
		out = append(out, r)
	}
	return out, now, nil
}

// stateHasAddedColumns says whether a STATE table has the columns
// sparkmerge added since its first release (stateAddedColumns).
func (c *Client) stateHasAddedColumns(ctx context.Context, t Target) (bool, error) {
	schema, err := targetFrame(c.sess, t).Schema(ctx)
	if err != nil {
		return false, err
	}
	for _, f := range schema.Fields {
		if strings.EqualFold(f.Name, "recorded_at") {
			return true, nil
		}
	}
	return false, nil
}

// addStateColumns adds to an older STATE table the columns it lacks, so
// that a run's rows append to it; a table that does not exist yet is
// created with them.
func (c *Client) addStateColumns(ctx context.Context, t Target) error {
	if t.Table == "" {
		return nil
	}
	has, err := c.stateHasAddedColumns(ctx, t)
	if err != nil || has {
		return nil // absent: the write creates it
	}
	stmt := fmt.Sprintf("ALTER TABLE %s ADD COLUMNS (%s)", t.Table, strings.Join(stateAddedColumns, ", "))
	if err := c.sess.ExecSQL(ctx, stmt); err != nil {
		return fmt.Errorf("incremental: add the columns %s to STATE table %s: %w", strings.Join(stateAddedColumns, ", "), t.Table, err)
	}
	return nil
}

// writeState appends rows to STATE (creating it).
func (c *Client) writeState(ctx context.Context, state string, rows []stateRow) error {
	if len(rows) == 0 {
		return nil
	}
	cols := []connect.LocalColumn{
		{Name: "path"}, {Name: "size"}, {Name: "modified_ms"}, {Name: "run_id"}, {Name: "rows"},
		{Name: "merged_at_ms"}, {Name: "status"}, {Name: "write_job"}, {Name: "jobs_before"},
		{Name: "target"}, {Name: "owner"},
	}
	for _, r := range rows {
		cols[0].Strings = append(cols[0].Strings, r.path)
		cols[1].Longs = append(cols[1].Longs, r.size)
		cols[2].Longs = append(cols[2].Longs, r.modified)
		cols[3].Strings = append(cols[3].Strings, r.runID)
		cols[4].Longs = append(cols[4].Longs, r.rows)
		cols[5].Longs = append(cols[5].Longs, r.mergedAt)
		cols[6].Strings = append(cols[6].Strings, r.status)
		cols[7].Strings = append(cols[7].Strings, r.writeJob)
		cols[8].Strings = append(cols[8].Strings, r.jobsBefore)
		cols[9].Strings = append(cols[9].Strings, r.target)
		cols[10].Strings = append(cols[10].Strings, processOwner())
	}
	t := stateTarget(state)
	if err := c.addStateColumns(ctx, t); err != nil {
		return err
	}
	frame := c.sess.LocalTable(cols...).SelectExpr(stateColumns...).Coalesce(1)
	if err := frame.Write(ctx, writeSpec(t, nil)); err != nil {
		return fmt.Errorf("incremental: record %d files in STATE %s: %w", len(rows), targetName(t), err)
	}
	return nil
}

// stateOf is what STATE says: the files merged (the latest record of
// each), and the pending rows of runs that recorded no outcome, by run.
func stateOf(rows []stateRow) (merged map[string]stateRow, pending map[string][]stateRow) {
	resolved := map[string]bool{}
	for _, r := range rows {
		if r.status == stateMerged || r.status == stateAbandoned {
			resolved[r.runID] = true
		}
	}
	merged, pending = map[string]stateRow{}, map[string][]stateRow{}
	for _, r := range rows {
		switch {
		case r.status == stateMerged:
			if old, ok := merged[r.path]; !ok || r.mergedAt >= old.mergedAt {
				merged[r.path] = r
			}
		case r.status == statePending && !resolved[r.runID]:
			pending[r.runID] = append(pending[r.runID], r)
		}
	}
	return merged, pending
}

// selectNew picks the listed files to merge: those STATE does not hold,
// and those whose size or modification time changed, as changed says.
func selectNew(state string, files []incrementalFile, merged map[string]stateRow, changed ChangedFiles) (picked []incrementalFile, already int, changedPaths []string, err error) {
	for _, f := range files {
		m, ok := merged[f.path]
		switch {
		case !ok:
			picked = append(picked, f)
		case m.size == f.size && m.modified == f.modified:
			already++
		case changed == ChangedRemerge:
			changedPaths = append(changedPaths, f.path)
			picked = append(picked, f)
		case changed == ChangedSkip:
			changedPaths = append(changedPaths, f.path)
			already++
		default:
			return nil, 0, nil, &ChangedFileError{State: state, Path: f.path, RunID: m.runID, Size: f.size, RecordedSize: m.size,
				Modified: time.UnixMilli(f.modified), RecordedTime: time.UnixMilli(m.modified)}
		}
	}
	return picked, already, changedPaths, nil
}

// writeJobsOf are the write jobs that made files (Spark's part-N-JOB
// names), and the files of no write job, sorted.
func writeJobsOf(files map[string]bool) (jobs map[string][]string, others []string) {
	jobs = map[string][]string{}
	for f := range files {
		if m := writeJobFile.FindStringSubmatch(path.Base(f)); m != nil {
			jobs[m[1]] = append(jobs[m[1]], f)
		} else {
			others = append(others, f)
		}
	}
	sort.Strings(others)
	return jobs, others
}

// landedJob decides whether a run that recorded jobsBefore (the write
// jobs of a file dataset before it wrote) wrote its rows: the one write
// job whose files were not there before, or "" when there is none. Files
// of two new jobs, or new files of no write job, cannot be told apart.
func landedJob(target, runID, jobsBefore string, now map[string]bool) (string, error) {
	before := map[string]bool{}
	for _, j := range strings.Split(jobsBefore, ",") {
		before[j] = true
	}
	jobs, others := writeJobsOf(now)
	var added []string
	for j := range jobs {
		if !before[j] {
			added = append(added, j)
		}
	}
	sort.Strings(added)
	switch {
	case len(others) > 0:
		return "", fmt.Errorf("incremental: run %s stopped before it recorded its files merged, and %s holds files no Spark write job made (%s), so whether that run's rows are in it cannot be told: check the target, then record the run's files yourself or remove its rows", runID, target, strings.Join(others, ", "))
	case len(added) > 1:
		return "", fmt.Errorf("incremental: run %s stopped before it recorded its files merged, and %d write jobs added files to %s since (%s): another writer appended too, so which are that run's rows cannot be told; check the target, then record the run's files yourself or remove its rows", runID, len(added), target, strings.Join(added, ", "))
	case len(added) == 1:
		return added[0], nil
	}
	return "", nil
}

// listStamps are the files of the expanded reads with their sizes and
// modification times, as the merge lists them: the client's stat of a
// local file, Spark's listing of a file only it sees.
func listStamps(reads []*Read, listed map[string]remoteFile) ([]incrementalFile, error) {
	out := make([]incrementalFile, 0, len(reads))
	for _, r := range reads {
		switch {
		case r.Table != "" || r.Query != "" || r.relation != nil:
			return nil, fmt.Errorf("incremental: source %s is a table or query, which has no files to record; an incremental merge takes files only", r.Name)
		case r.patterns || len(r.Paths) != 1:
			return nil, fmt.Errorf("incremental: source %s is read as one dataset, not file by file, so its files cannot be recorded; give its files or directory unnamed", r.Name)
		}
		p := r.Paths[0]
		if f, ok := listed[p]; ok {
			out = append(out, incrementalFile{path: p, name: r.Name, size: f.size, modified: f.mtimeMillis})
			continue
		}
		info, err := os.Stat(localPath(p))
		if err != nil {
			return nil, fmt.Errorf("incremental: %s: %w", quoteName(p), err)
		}
		if info.IsDir() {
			return nil, fmt.Errorf("incremental: source %s is a directory read as one dataset, so its files cannot be recorded; give it unnamed, or its files", r.Name)
		}
		out = append(out, incrementalFile{path: p, name: r.Name, size: info.Size(), modified: info.ModTime().UnixMilli()})
	}
	return out, nil
}

// selectIncremental keeps of the expanded reads those the run merges
// (see [Job.Incremental]), after recovering a run that stopped before it
// recorded its files merged.
func (c *Client) selectIncremental(ctx context.Context, job Job, reads []*Read, listed map[string]remoteFile) ([]*Read, *IncrementalRun, error) {
	inc := job.Incremental
	files, err := listStamps(reads, listed)
	if err != nil {
		return nil, nil, err
	}
	rows, now, err := c.readState(ctx, inc.State)
	if err != nil {
		return nil, nil, err
	}
	run := &IncrementalRun{State: inc.State, RunID: uuid.NewString(), Listed: len(files), target: stateTargetID(job.Target)}
	if err := checkStateTarget(inc.State, run.target, rows); err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 && len(files) > 0 && !inc.NewState {
		if err := c.refuseLostState(ctx, inc.State, job.Target); err != nil {
			return nil, nil, err
		}
	}
	merged, pending := stateOf(rows)
	if err := refuseRunning(inc.State, pending, aliveRows(rows), now, inc.lease()); err != nil {
		return nil, nil, err
	}
	if len(pending) > 1 {
		return nil, nil, fmt.Errorf("incremental: %d runs (%s) recorded files pending in STATE %s and never their outcome; runs of one STATE must not overlap: check the target and STATE", len(pending), strings.Join(sortedKeys(pending), ", "), inc.State)
	}
	for runID, rows := range pending {
		if err := c.recoverRun(ctx, job, runID, rows, run, merged); err != nil {
			return nil, nil, err
		}
	}
	picked, already, changed, err := selectNew(inc.State, files, merged, inc.Changed)
	if err != nil {
		return nil, nil, err
	}
	run.files, run.AlreadyMerged, run.Changed = picked, already, changed
	keep := map[string]bool{}
	for _, f := range picked {
		keep[f.path] = true
		run.Merged = append(run.Merged, f.path)
	}
	var out []*Read
	for _, r := range reads {
		if keep[r.Paths[0]] {
			out = append(out, r)
		}
	}
	run.NothingNew = len(out) == 0
	return out, run, nil
}

// refuseLostState refuses a run whose STATE is new (it does not exist,
// or holds no file) into a target that already holds rows, unless
// Incremental.NewState: every listed file would be new to it, and rows
// of files earlier runs merged would be appended again, silently (found
// in the field: a STATE path spelled otherwise one night merged the
// whole landing directory a second time).
func (c *Client) refuseLostState(ctx context.Context, state string, target Target) error {
	has, err := c.targetHasRows(ctx, target)
	if err != nil {
		return fmt.Errorf("incremental: STATE %s is new: look for rows in the target %s: %w", state, targetName(target), err)
	}
	if !has {
		return nil
	}
	return fmt.Errorf("incremental: STATE %s holds no file (it does not exist), and the target %s already holds rows: a new STATE would take every listed file as new and append again the rows of files earlier runs merged; give the STATE the earlier runs kept (spelled as they spelled it), or, to start a new STATE for this target and append every listed file, say so (Incremental.NewState)",
		state, targetName(target))
}

// targetHasRows reports whether target t exists and holds a row.
func (c *Client) targetHasRows(ctx context.Context, t Target) (bool, error) {
	if t.Path != "" && c.absentOnServer(ctx, t.Path) {
		return false, nil
	}
	rows, err := targetFrame(c.sess, t).SelectExpr("1 AS one").Limit(1).Collect(ctx)
	switch errorClass(err) {
	case "":
		return len(rows.Values) > 0, nil
	case "PATH_NOT_FOUND", "TABLE_OR_VIEW_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA":
		return false, nil
	}
	return false, err
}

// checkStateTarget refuses a STATE whose rows record another target than
// the run's: a run recovers a stopped run by looking at its own target,
// and would judge another job's run by it. Rows of a STATE written before
// sparkmerge recorded targets count as the run's target's.
func checkStateTarget(state, target string, rows []stateRow) error {
	for _, r := range rows {
		if r.target != "" && r.target != target {
			return fmt.Errorf("incremental: STATE %s keeps the files merged into %s (run %s), and this run's target is %s: one STATE keeps the files of one target; give this job a STATE of its own", state, r.target, r.runID, target)
		}
	}
	return nil
}

// recoverRun finds out whether the rows of a run that recorded its files
// pending, and stopped, are in the target, and prepares the rows that
// record its outcome (written before this run records its own): merged,
// and then in merged, or abandoned.
func (c *Client) recoverRun(ctx context.Context, job Job, runID string, rows []stateRow, run *IncrementalRun, merged map[string]stateRow) error {
	landed, writeJob, err := c.runLanded(ctx, job, runID, rows)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for _, r := range rows {
		r.mergedAt, r.jobsBefore = now, ""
		if landed {
			r.status, r.writeJob = stateMerged, writeJob
			merged[r.path] = r
		} else {
			r.status = stateAbandoned
		}
		run.recovery = append(run.recovery, r)
	}
	run.Recovered = &RecoveredRun{RunID: runID, Files: len(rows), Landed: landed}
	return nil
}

// runLanded says whether a stopped run's rows are in the target: a Delta
// or Iceberg table's commit tagged with the run's id, or the files of one
// new write job in a file dataset holding the rows it counted.
func (c *Client) runLanded(ctx context.Context, job Job, runID string, rows []stateRow) (bool, string, error) {
	tt, err := c.describeTarget(ctx, job.Target)
	if err != nil {
		return false, "", err
	}
	switch {
	case tt.historyFormat():
		if !tt.Exists {
			return false, "", nil
		}
		found, err := c.committedWithTag(ctx, tt, runID)
		return found, "", err
	case job.Target.Path != "" && identifiesWriteJobs(job.Target.Format):
	default:
		return false, "", fmt.Errorf("incremental: run %s stopped before it recorded its files merged, and whether its rows are in %s cannot be told (a %s target keeps no history of its writes): check the target, then record the run's files yourself or remove its rows", runID, targetName(job.Target), targetFormat(job.Target, tt))
	}
	now, err := c.targetFiles(ctx, job.Target)
	if err != nil {
		return false, "", err
	}
	writeJob, err := landedJob(targetName(job.Target), runID, jobsBefore(rows), now)
	if err != nil || writeJob == "" {
		return false, "", err
	}
	// All of its rows, or the run stopped while its files were moved in.
	jobs, _ := writeJobsOf(now)
	var literal []string
	for _, f := range jobs[writeJob] {
		literal = append(literal, literalPath(f))
	}
	sort.Strings(literal)
	got, err := targetFilesFrame(c.sess, job.Target, literal).Count(ctx)
	if err != nil {
		return false, "", fmt.Errorf("incremental: count the rows run %s wrote to %s: %w", runID, targetName(job.Target), err)
	}
	var want int64
	for _, r := range rows {
		want += r.rows
	}
	if got != want {
		return false, "", fmt.Errorf("incremental: run %s stopped while its rows went into %s: its files there (%s) hold %d rows of the %d it read; remove those files, and the next run merges its files again", runID, targetName(job.Target), strings.Join(literal, ", "), got, want)
	}
	return true, writeJob, nil
}

// jobsBefore is what a run's pending rows recorded of the target's write
// jobs before it wrote: its first row carries them (see
// IncrementalRun.rows), and STATE's rows come back in no given order.
func jobsBefore(rows []stateRow) string {
	longest := ""
	for _, r := range rows {
		if len(r.jobsBefore) > len(longest) {
			longest = r.jobsBefore
		}
	}
	return longest
}

// targetFormat names a target's format for messages.
func targetFormat(t Target, tt *TargetTable) string {
	switch {
	case tt != nil && tt.Format != "":
		return tt.Format
	case t.Format != "":
		return t.Format
	}
	return "parquet"
}

// committedWithTag says whether a Delta or Iceberg table has a commit
// tagged tag (see tagCommit).
func (c *Client) committedWithTag(ctx context.Context, tt *TargetTable, tag string) (bool, error) {
	if tt.Format == sparkmerge.FormatDelta {
		// DESCRIBE HISTORY is no relation to select from.
		rows, err := c.sess.SQL(fmt.Sprintf("DESCRIBE HISTORY %s LIMIT %d", tt.Name, historyDepth)).Collect(ctx)
		if err != nil {
			return false, fmt.Errorf("incremental: read the history of %s: %w", tt.Name, err)
		}
		meta := slices.Index(rows.Columns, "userMetadata")
		if meta < 0 {
			return false, fmt.Errorf("incremental: read the history of %s: no userMetadata column in %v", tt.Name, rows.Columns)
		}
		return slices.ContainsFunc(rows.Values, func(row []any) bool { return row[meta] == "sparkmerge "+tag }), nil
	}
	q := fmt.Sprintf("SELECT count(1) FROM %s.snapshots WHERE summary[%s] = %s", tt.Name, sparkmerge.QuoteString(commitTagKey), sparkmerge.QuoteString(tag))
	rows, err := c.sess.SQL(q).Collect(ctx)
	if err != nil {
		return false, fmt.Errorf("incremental: read the snapshots of %s: %w", tt.Name, err)
	}
	n, _ := rows.Values[0][0].(int64)
	return n > 0, nil
}

// targetWriteJobs are the write jobs of a file dataset target's files,
// joined by commas ("" for a table, or a target that does not exist).
func (c *Client) targetWriteJobs(ctx context.Context, t Target) (string, error) {
	if t.Path == "" || !identifiesWriteJobs(t.Format) {
		return "", nil
	}
	files, err := c.targetFiles(ctx, t)
	if err != nil {
		return "", err
	}
	jobs, _ := writeJobsOf(files)
	return strings.Join(sortedKeys(jobs), ","), nil
}

// recordPending records the run's files pending in STATE (with what a
// file dataset target held before), after the outcome of a recovered
// run: from here a run that stops is recovered by the next.
func (c *Client) recordPending(ctx context.Context, job Job, run *IncrementalRun, counts map[string]int64) error {
	if err := c.writeState(ctx, run.State, run.recovery); err != nil {
		return err
	}
	run.recovery = nil
	if run.NothingNew {
		return nil
	}
	before, err := c.targetWriteJobs(ctx, job.Target)
	if err != nil {
		return err
	}
	run.before = strings.Split(before, ",")
	if err := fault(job, "recording"); err != nil {
		return err
	}
	// A run of this process is running from before its pending rows can
	// be read (see runAlive).
	activeRuns.Store(run.RunID, true)
	if err := c.writeState(ctx, run.State, run.rows(statePending, counts, "", before)); err != nil {
		return err
	}
	if err := c.checkAlone(ctx, job, run); err != nil {
		return err
	}
	// Renewals start once the run's own writes to STATE are done: two
	// writes at once to a Parquet dataset can fail each other.
	c.renewLease(ctx, job, run)
	return fault(job, "pending")
}

// recordMerged records the run's files merged in STATE, with the write
// job that holds their rows in a file dataset target.
func (c *Client) recordMerged(ctx context.Context, job Job, run *IncrementalRun, counts map[string]int64) error {
	if err := fault(job, "written"); err != nil {
		return err
	}
	// No renewal is written together with the run's last rows.
	if run.stopRenewal != nil {
		run.stopRenewal()
		run.stopRenewal = nil
	}
	if err := c.checkNotTaken(ctx, job, run); err != nil {
		return err
	}
	writeJob := ""
	if job.Target.Path != "" && identifiesWriteJobs(job.Target.Format) {
		files, err := c.targetFiles(ctx, job.Target)
		if err != nil {
			return err
		}
		before := strings.Join(run.before, ",")
		if writeJob, err = landedJob(targetName(job.Target), run.RunID, before, files); err != nil {
			return err
		}
	}
	if err := c.writeState(ctx, run.State, run.rows(stateMerged, counts, writeJob, "")); err != nil {
		return fmt.Errorf("%w\n  note: the rows are in %s; the next run finds run %s's files pending and records them merged", err, targetName(job.Target), run.RunID)
	}
	run.Recorded = true
	return nil
}

// rows are STATE's rows for the run's files.
func (run *IncrementalRun) rows(status string, counts map[string]int64, writeJob, jobsBefore string) []stateRow {
	now := time.Now().UnixMilli()
	out := make([]stateRow, len(run.files))
	for i, f := range run.files {
		out[i] = stateRow{path: f.path, size: f.size, modified: f.modified, runID: run.RunID, rows: counts[f.name],
			mergedAt: now, status: status, writeJob: writeJob, target: run.target}
	}
	if len(out) > 0 {
		// Once per run: a target appended to every night has a write
		// job per night.
		out[0].jobsBefore = jobsBefore
	}
	return out
}

// fault calls the job's test seam at a step of an incremental run.
func fault(job Job, step string) error {
	if job.Incremental == nil || job.Incremental.Fault == nil {
		return nil
	}
	return job.Incremental.Fault(step)
}

// checkIncremental refuses an incremental job that cannot append, or
// whose STATE is its target or lies among its sources.
func checkIncremental(job Job) (Job, error) {
	inc := job.Incremental
	if inc == nil {
		return job, nil
	}
	switch strings.ToLower(job.Target.Mode) {
	case "":
		job.Target.Mode = "append"
	case "append":
	default:
		return job, fmt.Errorf("incremental: a run appends the files no earlier run merged to the target, and the mode %s would not keep the earlier runs' rows: use the mode append (or none)", job.Target.Mode)
	}
	switch {
	case strings.TrimSpace(inc.State) == "" || inc.State == "table:":
		return job, fmt.Errorf("incremental: give STATE, a path or table:NAME where the merged files are recorded")
	case discards(job.Target) || job.DryRun && job.Target.Path == "" && job.Target.Table == "":
		return job, fmt.Errorf("incremental: a run records the files it wrote to a target: give a path or a table")
	}
	st := stateTarget(inc.State)
	if st.Path != "" {
		abs, err := clientTarget(st)
		if err != nil {
			return job, err
		}
		inc2 := *inc
		inc2.State = abs.Path
		job.Incremental = &inc2
		st = abs
	}
	if st.Path != "" && job.Target.Path != "" && (within(st.Path, job.Target.Path) || within(job.Target.Path, st.Path)) {
		return job, fmt.Errorf("incremental: STATE %s and the target %s overlap: keep STATE apart", st.Path, job.Target.Path)
	}
	if st.Table != "" && strings.EqualFold(st.Table, job.Target.Table) {
		return job, fmt.Errorf("incremental: STATE %s is the target table: keep STATE apart", st.Table)
	}
	for _, s := range job.Sources {
		for _, p := range s.Paths {
			if st.Path != "" && (within(p, st.Path) || within(st.Path, p)) {
				return job, fmt.Errorf("incremental: STATE %s lies among the source %s: its files would be merged; keep STATE apart", st.Path, p)
			}
		}
	}
	return job, nil
}
