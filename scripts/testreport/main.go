// Command testreport reads `go test -json` on its standard input and
// prints what a run without -json would (each package's result line, and
// the whole output of every failed test), the reasons of skipped tests,
// the counts, and the slowest tests, so that a suite's time stays in view.
//
//	go test -json ./... | testreport [-top N] [-save FILE]
//
// It exits 1 when a test, a package or a build failed.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type testKey struct{ pkg, test string }

// timing is a finished test's time.
type timing struct {
	testKey
	action  string
	elapsed float64
}

// report accumulates a run.
type report struct {
	out      io.Writer
	pending  map[testKey][]string // output of tests still running
	timings  []timing
	counts   map[string]int // pass, fail, skip
	failed   bool
	packages []timing // packages' own times
	// began is when each test began running: its run event, or its cont
	// event when it paused first (a parallel test waits there for the
	// sequential ones).
	began map[testKey]time.Time
}

func main() {
	top := flag.Int("top", 15, "how many of the slowest tests to list")
	save := flag.String("save", "", "also write the input, unchanged, to this file")
	flag.Parse()
	in := io.Reader(os.Stdin)
	if *save != "" {
		f, err := os.Create(*save)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		defer f.Close()
		in = io.TeeReader(in, f)
	}
	r := newReport(os.Stdout)
	if err := r.read(in); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	r.summary(*top)
	if r.failed {
		os.Exit(1)
	}
}

func newReport(out io.Writer) *report {
	return &report{out: out, pending: map[testKey][]string{}, counts: map[string]int{}, began: map[testKey]time.Time{}}
}

// read handles every line; a line that is not an event (the go command's
// own messages) is printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(r.out, "%s\n", line)
			continue
		}
		r.handle(e)
	}
	return sc.Err()
}

func (r *report) handle(e event) {
	k := testKey{e.Package, e.Test}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(r.out, e.Output)
	case e.Action == "build-fail":
		r.failed = true
	case e.Test == "" && e.Action == "output":
		// The package's own lines: its result, and what TestMain prints
		// (not the bare PASS a run without -json leaves out too).
		if e.Output != "PASS\n" {
			fmt.Fprint(r.out, e.Output)
		}
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		if e.Action == "fail" {
			r.failed = true
		}
		r.packages = append(r.packages, timing{k, e.Action, e.Elapsed})
	case e.Action == "run" || e.Action == "cont":
		r.began[k] = e.Time
	case e.Action == "output":
		r.pending[k] = append(r.pending[k], e.Output)
	case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
		r.counts[e.Action]++
		elapsed := e.Elapsed
		if began, ok := r.began[k]; ok && !began.IsZero() && !e.Time.IsZero() {
			// From the time it began to its end: a test whose cases run
			// in parallel reports less than the wall time they took (0
			// s when they all ran after its function returned).
			elapsed = max(elapsed, e.Time.Sub(began).Seconds())
		}
		r.timings = append(r.timings, timing{k, e.Action, elapsed})
		lines := r.pending[k]
		delete(r.pending, k)
		switch e.Action {
		case "fail":
			r.failed = true
			fmt.Fprint(r.out, strings.Join(lines, ""))
		case "skip":
			// The reason, without the run and result lines.
			for _, l := range lines {
				if t := strings.TrimSpace(l); !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- SKIP") {
					fmt.Fprintf(r.out, "SKIP %s %s: %s", shortPackage(e.Package), e.Test, strings.TrimLeft(l, " "))
				}
			}
		}
	}
}

// summary prints the counts and the slowest top-level tests.
func (r *report) summary(top int) {
	// A test still running when the input ended (a timeout, a crash)
	// shows what it printed.
	for _, k := range slices.SortedFunc(func(yield func(testKey) bool) {
		for k := range r.pending {
			if !yield(k) {
				return
			}
		}
	}, func(a, b testKey) int { return cmp.Or(cmp.Compare(a.pkg, b.pkg), cmp.Compare(a.test, b.test)) }) {
		fmt.Fprintf(r.out, "unfinished %s %s:\n%s", shortPackage(k.pkg), k.test, strings.Join(r.pending[k], ""))
	}
	var tops []timing
	for _, t := range r.timings {
		if !strings.Contains(t.test, "/") {
			tops = append(tops, t)
		}
	}
	slices.SortStableFunc(tops, func(a, b timing) int { return cmp.Compare(b.elapsed, a.elapsed) })
	if len(tops) > top {
		tops = tops[:top]
	}
	if len(tops) > 0 {
		fmt.Fprintf(r.out, "slowest tests:\n")
		for _, t := range tops {
			fmt.Fprintf(r.out, "  %7.1fs  %-4s %s %s\n", t.elapsed, t.action, shortPackage(t.pkg), t.test)
		}
	}
	fmt.Fprintf(r.out, "%d passed, %d failed, %d skipped\n", r.counts["pass"], r.counts["fail"], r.counts["skip"])
}

// shortPackage drops the module's path from an import path.
func shortPackage(pkg string) string {
	return strings.TrimPrefix(strings.TrimPrefix(pkg, "github.com/sparkmerge/sparkmerge/"), "github.com/sparkmerge/")
}
