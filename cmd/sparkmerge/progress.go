package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sparkmerge/sparkmerge/spark"
)

// progressView shows a job's progress on stderr: at a terminal, one status
// line rewritten in place (the phase, its counts, elapsed time and an
// estimate where one is known), and a line that stays for each phase
// done; elsewhere only those lines, one per phase.
type progressView struct {
	w    io.Writer
	live bool

	mu         sync.Mutex
	phase      string // the phase running, "" between phases
	began      time.Time
	last       spark.Progress
	shown      bool // a status line is on the screen
	lastDrawn  time.Time
	stopTicker chan struct{}
	closeOnce  sync.Once
	// onPlan, when set, gets the plan as soon as it is made (merge prints
	// it before any row is read).
	onPlan func(*spark.Planned)
	// now is the clock (tests set it).
	now func() time.Time
}

// newProgressView is the view for --progress mode (auto, always or
// never) on w; nil for never.
func newProgressView(mode string, w io.Writer) *progressView {
	live := false
	switch mode {
	case "never":
		return nil
	case "always":
		live = true
	default:
		live = isTerminal(w)
	}
	v := &progressView{w: w, live: live, now: time.Now}
	if live {
		// Elapsed time moves while Spark is silent (a long stage).
		v.stopTicker = make(chan struct{})
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-v.stopTicker:
					return
				case <-t.C:
					v.mu.Lock()
					if v.phase != "" {
						v.draw(true)
					}
					v.mu.Unlock()
				}
			}
		}()
	}
	return v
}

// start begins a phase the CLI runs itself (connect).
func (v *progressView) start(phase string) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enter(phase)
	v.draw(true)
}

// finish ends the CLI's own phase with what it did.
func (v *progressView) finish(phase, what string) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.phase != phase {
		v.enter(phase)
	}
	v.done(what)
}

// report is the job's OnProgress.
func (v *progressView) report(p spark.Progress) {
	v.mu.Lock()
	entered := string(p.Phase) != v.phase
	if entered {
		v.enter(string(p.Phase))
	}
	v.last = p
	var planned *spark.Planned
	if p.Finished {
		v.done(finishedText(p))
		planned = p.Planned
	} else {
		// A phase's first report is always shown: a quick phase would
		// otherwise pass unseen under the rate limit.
		v.draw(entered)
	}
	v.mu.Unlock()
	if planned != nil && v.onPlan != nil {
		v.onPlan(planned)
	}
}

// enter starts phase (the one before ends without its own line when it
// sent no Finished report).
func (v *progressView) enter(phase string) {
	v.phase, v.began, v.last = phase, v.now(), spark.Progress{Phase: spark.Phase(phase)}
}

// done writes the phase's lasting line: "✓ discover  200 files typed
// (20.1s)".
func (v *progressView) done(what string) {
	line := fmt.Sprintf("%-9s %s (%s)", v.phase, what, roundDuration(v.now().Sub(v.began)))
	if v.live {
		v.clear()
		line = "✓ " + line
	}
	fmt.Fprintln(v.w, line)
	v.phase = ""
}

// draw rewrites the status line (live views only), at most ten times a
// second unless forced.
func (v *progressView) draw(force bool) {
	if !v.live {
		return
	}
	now := v.now()
	if !force && now.Sub(v.lastDrawn) < 100*time.Millisecond {
		return
	}
	v.lastDrawn = now
	fmt.Fprintf(v.w, "\r\x1b[K… %-9s %s", v.phase, statusText(v.last, now.Sub(v.began)))
	v.shown = true
}

// clear removes the status line before other output.
func (v *progressView) clear() {
	if v.live && v.shown {
		fmt.Fprint(v.w, "\r\x1b[K")
		v.shown = false
	}
}

// pause clears the status line for output of the command's own, and
// keeps it off until the next report.
func (v *progressView) pause() {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clear()
}

// close stops the view, clearing its status line.
func (v *progressView) close() {
	if v == nil {
		return
	}
	v.closeOnce.Do(func() {
		if v.stopTicker != nil {
			close(v.stopTicker)
		}
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clear()
	v.phase = ""
}

// statusText is the live line's text for p, running for elapsed.
func statusText(p spark.Progress, elapsed time.Duration) string {
	var parts []string
	switch p.Phase {
	case spark.PhaseList:
		parts = append(parts, "listing sources")
	case spark.PhaseDiscover:
		if p.Total > 0 {
			parts = append(parts, fmt.Sprintf("%d/%d files typed", p.Done, p.Total))
		}
	case spark.PhaseCount, spark.PhaseWrite, spark.PhaseVerify, spark.PhaseInstall:
		if len(p.Stages) == 0 {
			parts = append(parts, "waiting for Spark")
			break
		}
		stagesDone := 0
		for _, s := range p.Stages {
			if s.Done {
				stagesDone++
			}
		}
		cur := p.Stages[len(p.Stages)-1]
		parts = append(parts, fmt.Sprintf("stage %d: %d/%d tasks", cur.ID, cur.CompletedTasks, cur.Tasks))
		if stagesDone > 0 {
			parts = append(parts, fmt.Sprintf("%d %s done", stagesDone, plural(stagesDone, "stage", "stages")))
		}
		var read int64
		for _, s := range p.Stages {
			read += s.InputBytesRead
		}
		if read > 0 {
			parts = append(parts, spark.ByteSize(read)+" read")
		}
	case "connect":
		parts = append(parts, "connecting")
	}
	parts = append(parts, roundDuration(elapsed))
	// An estimate where the total is known: discovery's files (Spark
	// adds stages to a write as it goes).
	if p.Phase == spark.PhaseDiscover && p.Total > 0 && p.Done > 0 && p.Done < p.Total && elapsed > 2*time.Second {
		left := time.Duration(float64(elapsed) * float64(p.Total-p.Done) / float64(p.Done))
		parts = append(parts, "~"+roundDuration(left)+" left")
	}
	return strings.Join(parts, " · ")
}

// finishedText says what a finished phase did.
func finishedText(p spark.Progress) string {
	switch p.Phase {
	case spark.PhaseList:
		return fmt.Sprintf("%d %s to read", p.Done, plural(int(p.Done), "file", "files"))
	case spark.PhaseDiscover:
		return fmt.Sprintf("%d %s typed", p.Done, plural(int(p.Done), "file", "files"))
	case spark.PhasePlan:
		if p.Planned != nil && p.Planned.Plan != nil {
			return fmt.Sprintf("%d columns from %d reads", len(p.Planned.Plan.Target.Fields), len(p.Planned.Reads))
		}
		return "made"
	case spark.PhaseWrite:
		if p.Done < 0 {
			return "done"
		}
		return fmt.Sprintf("%d rows written", p.Done)
	case spark.PhaseCount:
		return fmt.Sprintf("%d rows read", p.Done)
	case spark.PhaseVerify:
		return fmt.Sprintf("%d rows written = rows read", p.Done)
	case spark.PhaseInstall:
		return fmt.Sprintf("%d staged rows copied over the target", p.Done)
	}
	return "done"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// roundDuration rounds d for people: tenths of a second under a minute.
func roundDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
