// The pseudo-terminal these tests write to is opened as Linux does it.

//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openTerminal opens a new pseudo-terminal: the follower side, as a
// shell's stdout is, and the leader, which reads what is written to it.
// /dev/ptmx gives the leader, unlocked and numbered by ioctl (what
// posix_openpt, unlockpt and ptsname do).
func openTerminal(t *testing.T) (follower, leader *os.File) {
	t.Helper()
	leader, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { leader.Close() })
	if err := unix.IoctlSetPointerInt(int(leader.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(leader.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("number the pseudo-terminal: %v", err)
	}
	follower, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { follower.Close() })
	return follower, leader
}

func TestIsTerminal(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	terminal, _ := openTerminal(t)
	for _, tc := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"a terminal", terminal, true},
		{"a pipe", w, false},
		{"a file", file, false},
		// A character device, as a terminal is, but not one.
		{"/dev/null", devNull, false},
		{"a buffer", &bytes.Buffer{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isTerminal(tc.w); got != tc.want {
				t.Errorf("isTerminal = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWriteOutputJSON: -o json is compact for a pipe or a file (one line a
// pipeline parses quickly, half the bytes of a large plan) and indented
// for a person at a terminal: the same document, as v marshals.
func TestWriteOutputJSON(t *testing.T) {
	v := map[string]any{"strategy": "auto", "reads": []any{map[string]any{"name": "a.csv"}}, "rows_written": 3}
	text := func() string { t.Error("text asked for under -o json"); return "" }

	var piped bytes.Buffer
	if err := writeOutput(&piped, "json", v, text); err != nil {
		t.Fatal(err)
	}
	if want := `{"reads":[{"name":"a.csv"}],"rows_written":3,"strategy":"auto"}` + "\n"; piped.String() != want {
		t.Errorf("piped output:\n%s\nwant:\n%s", piped.String(), want)
	}

	// At a terminal: what the terminal's leader side reads, its line ends
	// back from the terminal's "\r\n" to "\n".
	terminal, leader := openTerminal(t)
	if err := writeOutput(terminal, "json", v, text); err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	// The write is done and the terminal holds it: read until it is all
	// there, or for at most 10 s, and compare what came.
	chunks := make(chan []byte)
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := leader.Read(buf)
			if err != nil {
				return // the leader closed at cleanup
			}
			chunks <- buf[:n]
		}
	}()
	var shown []byte
	timeout := time.After(10 * time.Second)
read:
	for len(shown) < len(want)+bytes.Count(want, []byte("\n")) {
		select {
		case c := <-chunks:
			shown = append(shown, c...)
		case <-timeout:
			break read
		}
	}
	got := strings.ReplaceAll(string(shown), "\r\n", "\n")
	if !strings.Contains(got, "\n  \"reads\": [\n") || got != string(want) {
		t.Errorf("terminal output:\n%s\nwant:\n%s", got, want)
	}
}
