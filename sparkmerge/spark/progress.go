package spark

import (
	"context"
	"fmt"
	"sync"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// Phase is a stage of a job, as [Progress] reports it, in the order a
// merge goes through them.
type Phase string

// A merge's phases. Plan and Schemas go through list, discover and plan.
const (
	// PhaseList finds the files of directory and pattern sources.
	PhaseList Phase = "list"
	// PhaseDiscover types every file: on the client where it may, by
	// Spark otherwise.
	PhaseDiscover Phase = "discover"
	// PhasePlan is the plan made, before any row is read.
	PhasePlan Phase = "plan"
	// PhaseCount is Spark counting the rows each source holds, before the
	// write: for an incremental run, which records them, or a verified
	// merge that cannot count them with the rows written (a distinct
	// merge, a Delta or Iceberg table's commit, a table written in place,
	// sources that are tables or queries); a verified merge otherwise
	// counts them with the rows written, in PhaseVerify.
	PhaseCount Phase = "count"
	// PhaseWrite is Spark reading, projecting and writing the rows.
	PhaseWrite Phase = "write"
	// PhaseVerify is Spark counting the rows written, per source, and
	// the rows read with them where PhaseCount did not.
	PhaseVerify Phase = "verify"
	// PhaseInstall is Spark copying staged rows over the target: an
	// overwrite of a path the client cannot rename (see
	// [RolledForward]), or one an earlier run left unfinished.
	PhaseInstall Phase = "install"
)

// Progress is one report of a job's progress, sent to [Job.OnProgress].
type Progress struct {
	Phase Phase
	// Finished: the phase ended (Done is then its count).
	Finished bool
	// Done and Total count the phase's work where it is known: files found
	// (list, Total 0), files typed of the files to type (discover), tasks
	// completed of the tasks of Spark's stages so far (write, verify;
	// Spark adds stages as it goes).
	Done, Total int64
	// Stages are Spark's stages of the operation running (write, verify),
	// as Spark 4 streams its execution progress.
	Stages []StageProgress
	// Planned is the plan, in the PhasePlan report.
	Planned *Planned
}

// StageProgress is one Spark stage's progress: its id, its tasks and
// those completed, the bytes its tasks read, and whether it is done.
type StageProgress = connect.StageProgress

// progressReporter sends a job's progress to its OnProgress, one report
// at a time (discovery reports from many goroutines), and, for
// Job.Progress, discovery's counts as lines.
type progressReporter struct {
	mu sync.Mutex
	on func(Progress)
}

type reporterKey struct{}

// withProgress is ctx carrying the job's reporter, made once per run of a
// job (Merge's Plan reuses Merge's), and the reporter.
func withProgress(ctx context.Context, j Job) (context.Context, *progressReporter) {
	if r, ok := ctx.Value(reporterKey{}).(*progressReporter); ok {
		return ctx, r
	}
	r := j.reporter()
	return context.WithValue(ctx, reporterKey{}, r), r
}

// progressIn is the reporter withProgress put in ctx, or nil (which
// reports nothing).
func progressIn(ctx context.Context) *progressReporter {
	r, _ := ctx.Value(reporterKey{}).(*progressReporter)
	return r
}

func (j Job) reporter() *progressReporter {
	on := j.OnProgress
	if on == nil && j.Progress != nil {
		w := j.Progress
		on = func(p Progress) {
			// The lines Job.Progress always had: schema requests of a
			// large discovery, every 100 and at the end.
			if p.Phase == PhaseDiscover && !p.Finished && p.Done > 0 && p.Total >= 50 && (p.Done%100 == 0 || p.Done == p.Total) {
				fmt.Fprintf(w, "schemas: %d/%d\n", p.Done, p.Total)
			}
		}
	}
	return &progressReporter{on: on}
}

// report sends p (nothing without a receiver).
func (r *progressReporter) report(p Progress) {
	if r == nil || r.on == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on(p)
}

// sparkProgress is ctx reporting the execution progress of the
// operations run with it as phase.
func (r *progressReporter) sparkProgress(ctx context.Context, phase Phase) context.Context {
	if r == nil || r.on == nil {
		return ctx
	}
	return connect.WithProgress(ctx, func(p connect.Progress) {
		var done, total int64
		for _, s := range p.Stages {
			done += s.CompletedTasks
			total += s.Tasks
		}
		r.report(Progress{Phase: phase, Done: done, Total: total, Stages: p.Stages})
	})
}

// discovered reports discovery's files typed: done of total, after
// already typed (on the client) before Spark's requests began. It is
// fetchSchemas's progress.
func (r *progressReporter) discovered(already, total int) func(done int) {
	if r == nil || r.on == nil {
		return nil
	}
	return func(done int) {
		r.report(Progress{Phase: PhaseDiscover, Done: int64(already + done), Total: int64(total)})
	}
}
