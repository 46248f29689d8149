package main

import (
	"strings"
	"testing"
)

// A run's report: the failed test's whole output, a skip's reason, the
// package lines, the slowest top-level tests first, the counts, and a
// failure noted.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"m/p","Test":"TestSlow"}`,
		`{"Action":"output","Package":"m/p","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}`,
		`{"Action":"pass","Package":"m/p","Test":"TestSlow","Elapsed":12.5}`,
		`{"Action":"output","Package":"m/p","Test":"TestBad","Output":"    bad_test.go:9: want 2, got 3\n"}`,
		`{"Action":"fail","Package":"m/p","Test":"TestBad/sub","Elapsed":30}`,
		`{"Action":"fail","Package":"m/p","Test":"TestBad","Elapsed":3}`,
		`{"Action":"output","Package":"m/p","Test":"TestNoSpark","Output":"=== RUN   TestNoSpark\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestNoSpark","Output":"    x_test.go:3: no Spark\n"}`,
		`{"Action":"output","Package":"m/p","Test":"TestNoSpark","Output":"--- SKIP: TestNoSpark (0.00s)\n"}`,
		`{"Action":"skip","Package":"m/p","Test":"TestNoSpark","Elapsed":0}`,
		`{"Action":"output","Package":"m/p","Output":"PASS\n"}`,
		`{"Action":"output","Package":"m/p","Output":"FAIL\tm/p\t16.0s\n"}`,
		`{"Action":"fail","Package":"m/p","Elapsed":16}`,
		`go: a line of the go command's own`,
	}, "\n")
	var out strings.Builder
	r := newReport(&out)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.summary(2)
	want := "    bad_test.go:9: want 2, got 3\n" +
		"SKIP m/p TestNoSpark: x_test.go:3: no Spark\n" +
		"FAIL\tm/p\t16.0s\n" +
		"go: a line of the go command's own\n" +
		"slowest tests:\n" +
		"     12.5s  pass m/p TestSlow\n" +
		"      3.0s  fail m/p TestBad\n" +
		"1 passed, 2 failed, 1 skipped\n"
	if got := out.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	if !r.failed {
		t.Error("a failed run not noted as failed")
	}
}

// A test whose cases run in parallel after its function returned reports
// 0 s of its own: its time is from when it ran (after its pause) to its
// end.
func TestReportTimesParallelCases(t *testing.T) {
	in := strings.Join([]string{
		`{"Time":"2026-12-04T10:00:00Z","Action":"run","Package":"m/p","Test":"TestCases"}`,
		`{"Time":"2026-12-04T10:00:00Z","Action":"pause","Package":"m/p","Test":"TestCases"}`,
		`{"Time":"2026-12-04T10:00:05Z","Action":"cont","Package":"m/p","Test":"TestCases"}`,
		`{"Time":"2026-12-04T10:00:05Z","Action":"run","Package":"m/p","Test":"TestCases/a"}`,
		`{"Time":"2026-12-04T10:00:45Z","Action":"pass","Package":"m/p","Test":"TestCases/a","Elapsed":40}`,
		`{"Time":"2026-12-04T10:00:45Z","Action":"pass","Package":"m/p","Test":"TestCases","Elapsed":0}`,
		`{"Time":"2026-12-04T10:00:46Z","Action":"run","Package":"m/p","Test":"TestQuick"}`,
		`{"Time":"2026-12-04T10:00:47Z","Action":"pass","Package":"m/p","Test":"TestQuick","Elapsed":1.5}`,
	}, "\n")
	var out strings.Builder
	r := newReport(&out)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r.summary(5)
	want := "slowest tests:\n" +
		"     40.0s  pass m/p TestCases\n" +
		"      1.5s  pass m/p TestQuick\n" +
		"3 passed, 0 failed, 0 skipped\n"
	if got := out.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}
