package spark

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Two runs of one STATE must not overlap: a run that took another's
// pending files for a stopped run's would merge them again while that run
// still writes them. So a run tells a running run from a stopped one
// before it recovers it (runAlive):
//
//   - A run of the same process (a library user's goroutine) is running
//     while the process has it among its runs (activeRuns).
//   - A run of another process on the same machine is running while that
//     process is: every STATE row names the process that wrote it
//     (processOwner: host, boot, PID namespace, PID and start time).
//   - A run on another machine is running until its lease ends: while it
//     writes, it appends an "alive" row every fifth of Incremental.Lease
//     (renewLease), and STATE's recorded_at is the Spark server's clock,
//     so that the machines' clocks do not matter. A run that has given no
//     sign of life for a whole lease counts as stopped.
//
// And a run re-reads STATE once it recorded its files pending: another
// run's pending files there (two runs started together, each reading
// STATE before the other recorded anything) make it record its own
// abandoned and stop before it writes a row.

// defaultLease is Incremental.Lease when not given.
const defaultLease = 10 * time.Minute

func (inc *Incremental) lease() time.Duration {
	if inc.Lease > 0 {
		return inc.Lease
	}
	return defaultLease
}

// activeRuns are the runs of this process between recording their files
// pending and their end.
var activeRuns sync.Map

// processOwner names this process in STATE's owner column:
// "host=H boot=B pidns=N pid=P start=S", where boot (the kernel's boot id),
// pidns (its PID namespace) and start (its start in clock ticks since
// boot) are empty where the system does not tell them.
var processOwner = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("host=%s boot=%s pidns=%s pid=%d start=%s", strings.ReplaceAll(host, " ", "_"), bootID(), pidNamespace("self"), os.Getpid(), processStart("self"))
})

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func pidNamespace(pid string) string {
	ns, err := os.Readlink("/proc/" + pid + "/ns/pid")
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
}

// processStart is the start of a process in clock ticks since boot (the
// 22nd field of /proc/PID/stat), "" where it cannot be read, and "Z" for
// a process that ended but was not waited for.
func processStart(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return ""
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return "Z"
	}
	return fields[19]
}

// owner is an owner column read back.
type owner struct {
	host, boot, pidns, pid, start string
}

func parseOwner(s string) owner {
	var o owner
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "host":
			o.host = v
		case "boot":
			o.boot = v
		case "pidns":
			o.pidns = v
		case "pid":
			o.pid = v
		case "start":
			o.start = v
		}
	}
	return o
}

// sameMachine says whether o ran on this machine, in this PID namespace,
// since its last boot: where its PID can be looked up.
func (o owner) sameMachine(me owner) bool {
	return o.boot != "" && o.pidns != "" && o.pid != "" && o.boot == me.boot && o.pidns == me.pidns
}

// liveness is what a run's rows in STATE tell of whether it still runs.
type liveness struct {
	alive bool
	// why says how it was told, for messages.
	why string
	// started and lastSign are its first and last rows' times (Unix
	// milliseconds, the server's clock where STATE has it).
	started, lastSign int64
	owner             owner
}

// runAlive tells whether the run of rows (its pending and alive rows) may
// still be running, at now on the Spark server's clock (see the comment
// at the top of this file).
func runAlive(runID string, rows []stateRow, now int64, lease time.Duration) liveness {
	var l liveness
	for _, r := range rows {
		at := r.recordedAt
		if at == 0 {
			at = r.mergedAt // an older STATE: the run's own clock
		}
		if l.started == 0 || at < l.started {
			l.started = at
		}
		if at > l.lastSign {
			l.lastSign = at
		}
		if r.owner != "" {
			l.owner = parseOwner(r.owner)
		}
	}
	me := parseOwner(processOwner())
	switch {
	case l.owner.sameMachine(me) && l.owner.pid == me.pid && l.owner.start == me.start:
		_, l.alive = activeRuns.Load(runID)
		l.why = "a run of this process"
		if !l.alive {
			l.why = "a run of this process that ended"
		}
	case l.owner.sameMachine(me) && l.owner.start != "":
		start := processStart(l.owner.pid)
		l.alive = start == l.owner.start
		l.why = fmt.Sprintf("its process %s on this machine is running", l.owner.pid)
		if !l.alive {
			l.why = fmt.Sprintf("its process %s on this machine has ended", l.owner.pid)
		}
	default:
		l.alive = l.lastSign+lease.Milliseconds() > now
		l.why = fmt.Sprintf("its lease of %s from its last sign of life ends at %s", lease, millisUTC(l.lastSign+lease.Milliseconds()))
		if !l.alive {
			l.why = fmt.Sprintf("its lease of %s from its last sign of life ended at %s", lease, millisUTC(l.lastSign+lease.Milliseconds()))
		}
	}
	return l
}

func millisUTC(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// RunningRunError is another run of STATE that recorded files pending and
// may still be running: a run that recovered it would merge its files a
// second time.
type RunningRunError struct {
	State, RunID, Host, PID string
	Started, LastSign       time.Time
	Why                     string
	// Together is true when the two runs recorded their files pending at
	// the same time, and this run recorded its own abandoned.
	Together bool
}

func (e *RunningRunError) Error() string {
	who := ""
	if e.Host != "" {
		who = fmt.Sprintf(" on host %s (pid %s)", e.Host, e.PID)
	}
	what := "this run leaves STATE and the target untouched"
	if e.Together {
		what = "both recorded their files pending at once; this run recorded its own abandoned and wrote no row"
	}
	return fmt.Sprintf("incremental: run %s of STATE %s, started %s%s (last sign of life %s), may still be running (%s): runs of one STATE must not overlap, and %s. "+
		"Wait for that run to end and run again; if it was stopped (killed, its host lost), the next run recovers it once it is known stopped: "+
		"at once on the machine it ran on, from any other machine when its lease has ended",
		e.RunID, e.State, e.Started.UTC().Format(time.RFC3339), who, e.LastSign.UTC().Format(time.RFC3339), e.Why, what)
}

func runningRunError(state, runID string, l liveness, together bool) *RunningRunError {
	return &RunningRunError{State: state, RunID: runID, Host: l.owner.host, PID: l.owner.pid,
		Started: time.UnixMilli(l.started), LastSign: time.UnixMilli(l.lastSign), Why: l.why, Together: together}
}

// aliveRows are the alive rows of STATE by run (see renewLease).
func aliveRows(rows []stateRow) map[string][]stateRow {
	out := map[string][]stateRow{}
	for _, r := range rows {
		if r.status == stateAlive {
			out[r.runID] = append(out[r.runID], r)
		}
	}
	return out
}

// refuseRunning refuses pending runs that may still be running; the
// others are stopped, for recoverRun.
func refuseRunning(state string, pending, alive map[string][]stateRow, now int64, lease time.Duration) error {
	ids := sortedKeys(pending)
	for _, id := range ids {
		l := runAlive(id, append(slices0(pending[id]), alive[id]...), now, lease)
		if l.alive {
			return runningRunError(state, id, l, false)
		}
	}
	return nil
}

func slices0(rows []stateRow) []stateRow { return append([]stateRow(nil), rows...) }

// checkAlone re-reads STATE once the run recorded its files pending:
// another run's pending files without an outcome (a run that started
// together with this one) make the run record its own files abandoned
// and stop before it writes a row. Of two runs that record at once, one
// at least sees the other's rows.
func (c *Client) checkAlone(ctx context.Context, job Job, run *IncrementalRun) error {
	rows, now, err := c.readState(ctx, run.State)
	if err != nil {
		return err
	}
	_, pending := stateOf(rows)
	alive := aliveRows(rows)
	var others []string
	for id := range pending {
		if id != run.RunID && ownTarget(pending[id], run.target) {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return nil
	}
	sort.Strings(others)
	if err := c.writeState(ctx, run.State, run.rows(stateAbandoned, nil, "", "")); err != nil {
		return err
	}
	l := runAlive(others[0], append(slices0(pending[others[0]]), alive[others[0]]...), now, job.Incremental.lease())
	return runningRunError(run.State, others[0], l, true)
}

// ownTarget says whether rows are of target (or of a STATE that did not
// record targets).
func ownTarget(rows []stateRow, target string) bool {
	for _, r := range rows {
		if r.target != "" && r.target != target {
			return false
		}
	}
	return true
}

// renewLease has the run append an alive row to STATE every fifth of its
// lease (at least a second apart) until stopRenewal, so that a run on
// another machine does not take it for stopped.
func (c *Client) renewLease(ctx context.Context, job Job, run *IncrementalRun) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	every := max(job.Incremental.lease()/5, time.Second)
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			// A renewal that fails is retried at the next tick; a run
			// whose lease lapsed finds out at recordMerged (checkNotTaken).
			_ = c.writeState(ctx, run.State, []stateRow{{runID: run.RunID, status: stateAlive, target: run.target,
				mergedAt: time.Now().UnixMilli()}})
		}
	}()
	run.stopRenewal = func() {
		cancel()
		<-done
	}
}

// endRun stops the renewal of the run's lease: it no longer runs.
func (run *IncrementalRun) endRun() {
	if run.stopRenewal != nil {
		run.stopRenewal()
		run.stopRenewal = nil
	}
	activeRuns.Delete(run.RunID)
}

// checkNotTaken refuses to record the run merged when another run, taking
// it for stopped (its lease lapsed: a renewal that could not be written
// for a whole lease), recorded its files abandoned and merged them again.
func (c *Client) checkNotTaken(ctx context.Context, job Job, run *IncrementalRun) error {
	rows, _, err := c.readState(ctx, run.State)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.runID == run.RunID && r.status == stateAbandoned {
			return fmt.Errorf("incremental: STATE %s records this run (%s) abandoned: another run took it for stopped (no sign of life for its lease of %s) and merged its files again, so their rows may be in %s twice: check the target for the rows of %s",
				run.State, run.RunID, job.Incremental.lease(), targetName(job.Target), strings.Join(run.Merged, ", "))
		}
	}
	return nil
}
