package spark

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunAlive: a run's pending rows tell a running run from a stopped
// one: a run of this process while the process has it among its runs; a
// run of another process on this machine while that process runs; a run
// on another machine until its lease ends, on the Spark server's clock
// (found in the field: a running run was recovered as a stopped one and
// its files merged twice).
func TestRunAlive(t *testing.T) {
	me := parseOwner(processOwner())
	if me.boot == "" || me.pidns == "" || me.start == "" {
		t.Skip("this system does not tell boot id, PID namespace and process start")
	}
	now := time.Now().UnixMilli()
	lease := 10 * time.Minute
	pendingOf := func(owner string, recordedAt int64) []stateRow {
		return []stateRow{{path: "/l/a.csv", runID: "r", status: statePending, owner: owner, recordedAt: recordedAt}}
	}
	elsewhere := "host=other boot=another pidns=1 pid=1 start=1"

	if l := runAlive("r", pendingOf(processOwner(), now-time.Hour.Milliseconds()), now, lease); l.alive {
		t.Errorf("a run of this process that ended: alive (%s)", l.why)
	}
	activeRuns.Store("r", true)
	if l := runAlive("r", pendingOf(processOwner(), now-time.Hour.Milliseconds()), now, lease); !l.alive {
		t.Errorf("a run of this process that runs, its lease long past: stopped (%s)", l.why)
	}
	activeRuns.Delete("r")

	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(sleep.Process.Pid)
	sibling := strings.Join([]string{"host=" + me.host, "boot=" + me.boot, "pidns=" + me.pidns, "pid=" + pid, "start=" + processStart(pid)}, " ")
	if l := runAlive("r", pendingOf(sibling, now-time.Hour.Milliseconds()), now, lease); !l.alive {
		t.Errorf("a run of a running process on this machine: stopped (%s)", l.why)
	}
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	if l := runAlive("r", pendingOf(sibling, now), now, lease); l.alive {
		t.Errorf("a run of a process on this machine that ended, its lease fresh: alive (%s)", l.why)
	}

	if l := runAlive("r", pendingOf(elsewhere, now-time.Minute.Milliseconds()), now, lease); !l.alive || l.owner.host != "other" {
		t.Errorf("a run elsewhere, renewed a minute ago: stopped (%s)", l.why)
	}
	renewed := append(pendingOf(elsewhere, now-time.Hour.Milliseconds()), stateRow{runID: "r", status: stateAlive, recordedAt: now - time.Minute.Milliseconds()})
	if l := runAlive("r", renewed, now, lease); !l.alive {
		t.Errorf("a run elsewhere that started an hour ago, renewed a minute ago: stopped (%s)", l.why)
	}
	if l := runAlive("r", pendingOf(elsewhere, now-11*time.Minute.Milliseconds()), now, lease); l.alive {
		t.Errorf("a run elsewhere, silent for 11 minutes: alive (%s)", l.why)
	}
	// An older STATE: no owner, no server time; its own clock's merged_at.
	old := []stateRow{{path: "/l/a.csv", runID: "r", status: statePending, mergedAt: now - time.Minute.Milliseconds()}}
	if l := runAlive("r", old, now, lease); !l.alive {
		t.Errorf("an older STATE's run a minute ago: stopped (%s)", l.why)
	}
}

// TestRefuseRunning names the running run, when it started and what to do.
func TestRefuseRunning(t *testing.T) {
	now := time.Now().UnixMilli()
	pending := map[string][]stateRow{
		"r1": {{path: "/l/a.csv", runID: "r1", status: statePending, owner: "host=other boot=another pidns=1 pid=7 start=1", recordedAt: now - 1000}},
	}
	err := refuseRunning("/lake/state", pending, nil, now, defaultLease)
	var running *RunningRunError
	if !errors.As(err, &running) || running.RunID != "r1" || running.Host != "other" || running.PID != "7" {
		t.Fatalf("err = %v, want r1 refused as running", err)
	}
	for _, want := range []string{"run r1 of STATE /lake/state", "on host other (pid 7)", "may still be running", "must not overlap", "Wait for that run to end", "when its lease has ended"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if err := refuseRunning("/lake/state", pending, nil, now+defaultLease.Milliseconds(), defaultLease); err != nil {
		t.Errorf("a run whose lease ended: %v, want it left to recover", err)
	}
}

// TestCheckStateTarget: a STATE of another target is refused, naming both
// (found in the field: a shared STATE's run was recovered by another
// job's target); rows of an older STATE, with no target, are this one's.
func TestCheckStateTarget(t *testing.T) {
	rows := []stateRow{{path: "/l/a.csv", runID: "old", status: stateMerged}, {path: "/l/b.csv", runID: "r1", status: stateMerged, target: "/lake/a"}}
	if err := checkStateTarget("/s", "/lake/a", rows); err != nil {
		t.Errorf("its own STATE: %v", err)
	}
	err := checkStateTarget("/s", "/lake/b", rows)
	if err == nil || !strings.Contains(err.Error(), "/lake/a") || !strings.Contains(err.Error(), "/lake/b") || !strings.Contains(err.Error(), "one STATE keeps the files of one target") {
		t.Errorf("another target's STATE: %v, want it refused naming both", err)
	}
	for in, want := range map[string]string{"/lake/a/": "/lake/a", "/lake//a": "/lake/a", "s3a://b/lake/": "s3a://b/lake"} {
		if got := stateTargetID(Target{Path: in}); got != want {
			t.Errorf("stateTargetID(%q) = %q, want %q", in, got, want)
		}
	}
	if got := stateTargetID(Target{Table: "Lake.Orders"}); got != "table:lake.orders" {
		t.Errorf("a table's identity: %q", got)
	}
}

// TestStateOfLeavesAliveRows: a run's lease renewals are neither files
// nor an outcome: the run stays pending.
func TestStateOfLeavesAliveRows(t *testing.T) {
	merged, pending := stateOf([]stateRow{
		{path: "/l/a.csv", runID: "r1", status: statePending},
		{runID: "r1", status: stateAlive},
	})
	if len(merged) != 0 || len(pending["r1"]) != 1 {
		t.Errorf("merged %v, pending %v; want r1 pending with its one file", merged, pending)
	}
	if alive := aliveRows([]stateRow{{runID: "r1", status: stateAlive}, {runID: "r1", status: statePending}}); len(alive["r1"]) != 1 {
		t.Errorf("alive rows %v", alive)
	}
}
