package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/spark"
)

// fakeClock advances by step at each reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// Off a terminal: one line per phase, what it did and how long it took,
// nothing for the reports in between.
func TestProgressLinesOffATerminal(t *testing.T) {
	var w bytes.Buffer
	v := newProgressView("auto", &w)
	v.now = fakeClock(time.Second)
	v.start("connect")
	v.finish("connect", "sc://h:15002, Spark 4.0.1")
	for _, p := range []spark.Progress{
		{Phase: spark.PhaseList},
		{Phase: spark.PhaseList, Finished: true, Done: 200},
		{Phase: spark.PhaseDiscover, Total: 200},
		{Phase: spark.PhaseDiscover, Done: 100, Total: 200},
		{Phase: spark.PhaseDiscover, Finished: true, Done: 200, Total: 200},
		{Phase: spark.PhaseWrite},
		{Phase: spark.PhaseWrite, Done: 3, Total: 8, Stages: []spark.StageProgress{{ID: 4, Tasks: 8, CompletedTasks: 3}}},
		{Phase: spark.PhaseWrite, Finished: true, Done: 400000},
	} {
		v.report(p)
	}
	v.close()
	want := "connect   sc://h:15002, Spark 4.0.1 (1s)\n" +
		"list      200 files to read (1s)\n" +
		"discover  200 files typed (1s)\n" +
		"write     400000 rows written (1s)\n"
	if got := w.String(); got != want {
		t.Errorf("lines:\n%s\nwant:\n%s", got, want)
	}
}

// At a terminal: a status line rewritten in place, with Spark's stage
// and tasks, and an estimate where the total is known; the lasting line
// replaces it when the phase ends.
func TestProgressLiveAtATerminal(t *testing.T) {
	var w bytes.Buffer
	v := newProgressView("always", &w)
	defer v.close()
	v.now = fakeClock(2 * time.Second)
	v.report(spark.Progress{Phase: spark.PhaseDiscover, Total: 200})
	v.report(spark.Progress{Phase: spark.PhaseDiscover, Done: 50, Total: 200})
	v.report(spark.Progress{Phase: spark.PhaseDiscover, Finished: true, Done: 200, Total: 200})
	v.report(spark.Progress{Phase: spark.PhaseWrite, Done: 3, Total: 8, Stages: []spark.StageProgress{
		{ID: 2, Tasks: 1, CompletedTasks: 1, Done: true}, {ID: 4, Tasks: 8, CompletedTasks: 3, InputBytesRead: 3 << 20}}})
	got := w.String()
	for _, want := range []string{
		"\r\x1b[K… discover  50/200 files typed · 4s · ~12s left",
		"\r\x1b[K✓ discover  200 files typed (6s)\n",
		"\r\x1b[K… write     stage 4: 3/8 tasks · 1 stage done · 3.0 MiB read · 2s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output %q lacks %q", got, want)
		}
	}
	if newProgressView("never", &w) != nil {
		t.Error("--progress never shows progress")
	}
}

// A phase that starts right after another is shown at once: the rate
// limit of redraws does not hide a phase's first report.
func TestProgressShowsEveryPhaseStart(t *testing.T) {
	var w bytes.Buffer
	v := newProgressView("always", &w)
	defer v.close()
	v.now = fakeClock(0) // every report at the same instant
	v.report(spark.Progress{Phase: spark.PhaseList})
	v.report(spark.Progress{Phase: spark.PhaseDiscover, Total: 2})
	v.report(spark.Progress{Phase: spark.PhaseDiscover, Done: 1, Total: 2})
	got := w.String()
	if !strings.Contains(got, "… discover  0/2 files typed") {
		t.Errorf("the discover phase's start was not shown: %q", got)
	}
	if strings.Contains(got, "1/2 files typed") {
		t.Errorf("a redraw within the rate limit was shown: %q", got)
	}
}
