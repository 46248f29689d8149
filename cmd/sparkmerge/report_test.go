package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// TestReportOfANightWithNothingNew: an incremental merge with nothing new
// has no plan (spark.IncrementalRun.NothingNew); --report writes a report
// of no source and no column instead of failing.
func TestReportOfANightWithNothingNew(t *testing.T) {
	planned := &spark.Planned{Incremental: &spark.IncrementalRun{NothingNew: true}}
	data := buildReport(planned, nil, "nightly")
	if len(data.Columns) != 0 || data.Title != "nightly" {
		t.Errorf("report %+v, want no column", data)
	}
	path := filepath.Join(t.TempDir(), "r.html")
	if err := writeReport(path, data); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "nightly") {
		t.Errorf("report file: %v", err)
	}
}
