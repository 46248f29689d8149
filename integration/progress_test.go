//go:build integration && linux

package integration

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the follower, which the command writes
// to as to a shell's terminal, and the leader, which reads what it shows.
func openPTY(t *testing.T) (follower, leader *os.File) {
	t.Helper()
	leader, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { leader.Close() })
	if err := unix.IoctlSetPointerInt(int(leader.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(leader.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	follower, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follower.Close() })
	return follower, leader
}

// TestCLIProgressOnATerminal merges 200 drifting CSV files with --verify,
// the command's stdout and stderr a pseudo-terminal, as a person runs it:
// a live status line for each phase (connect, list, discover, plan, write,
// verify, which counts the rows read with the rows written) with Spark's
// own stage and task progress while it writes,
// a line that stays for each phase done, and the plan shown before any
// row is written. Off a terminal the same merge prints one line per
// phase and no control characters.
func TestCLIProgressOnATerminal(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	for i := range 200 {
		var b strings.Builder
		header := "id,name,amount"
		if i%3 == 0 {
			header += ",extra"
		}
		b.WriteString(header + "\n")
		for r := range 2000 {
			fmt.Fprintf(&b, "%d,n%d,%d.%d", i*10000+r, r, r, i%10)
			if i%3 == 0 {
				b.WriteString(",x")
			}
			b.WriteString("\n")
		}
		files[fmt.Sprintf("f%03d.csv", i)] = []byte(b.String())
	}
	dir := localFiles(t, files)
	out := filepath.Join(workDir(t), "merged")

	follower, leader := openPTY(t)
	cmd := osexec.CommandContext(testContext(t), cliBinary(t), "merge", dir, "--out", out, "--verify", "--remote", requireSpark(t))
	cmd.Env = append(os.Environ(), "SPARK_REMOTE=")
	cmd.Stdout, cmd.Stderr = follower, follower
	var shown bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := leader.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	if err := cmd.Run(); err != nil {
		t.Fatalf("merge: %v\n%s", err, shown.String())
	}
	follower.Close()
	select {
	case <-readDone:
	case <-time.After(10 * time.Second):
	}
	screen := strings.ReplaceAll(shown.String(), "\r\n", "\n")

	// Live status lines, rewritten in place.
	for _, want := range []string{"\r\x1b[K… connect", "\r\x1b[K… discover", "\r\x1b[K… write"} {
		if !strings.Contains(screen, want) {
			t.Errorf("no live status line %q", want)
		}
	}
	// Spark's own progress of the write: stages and tasks.
	if !regexp.MustCompile(`… write +stage \d+: \d+/\d+ tasks`).MatchString(screen) {
		t.Errorf("no stage and task progress from Spark while writing:\n%s", tail(screen))
	}
	// One lasting line per phase, in order, with the plan before the write.
	// (Spaces collapsed: the phase names are padded.)
	lasting := regexp.MustCompile(` {2,}`).ReplaceAllString(screen, " ")
	last := -1
	for _, want := range []string{"✓ connect ", "✓ list 200 files to read", "✓ discover 200 files typed", "✓ plan 4 columns", "target: 4 columns", "✓ write done", "✓ verify 400000 rows written = rows read", "wrote 400000 rows", "verified: 400000 rows written = 400000 rows read from 200 sources"} {
		i := strings.Index(lasting, want)
		if i < 0 {
			t.Errorf("the terminal never showed %q:\n%s", want, tail(lasting))
			continue
		}
		if i < last {
			t.Errorf("%q came before what precedes it", want)
		}
		last = i
	}

	// Off a terminal: one line per phase, no control characters.
	code, stdout, stderr := cliRun(t, "merge", dir, "--out", out+"-piped", "--verify")
	if code != 0 {
		t.Fatalf("piped merge: exit %d:\n%s", code, stderr)
	}
	if strings.ContainsAny(stderr, "\r\x1b") {
		t.Errorf("piped progress has control characters: %q", stderr)
	}
	var phases []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		phases = append(phases, strings.Fields(line)[0])
	}
	if got, want := strings.Join(phases, " "), "connect list discover plan write verify"; got != want {
		t.Errorf("piped progress phases %q, want %q:\n%s", got, want, stderr)
	}
	if !strings.Contains(stdout, "wrote 400000 rows") {
		t.Errorf("piped stdout:\n%s", stdout)
	}
}

// tail is the end of a long screen, for messages.
func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}
