package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
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

// The plan's warnings are in the report's data, in the CLI's terms, and
// its page has the list the script fills with them.
func TestReportHoldsTheWarnings(t *testing.T) {
	planned := &spark.Planned{Plan: &sparkmerge.Plan{}, Warnings: []string{"column zip is merged as int: type the column as a string (Options.Hints, zip=string)"}}
	data := buildReport(planned, nil, "drift")
	if want := []string{"column zip is merged as int: type the column as a string (--hint zip=string)"}; !slices.Equal(data.Warnings, want) {
		t.Errorf("warnings %q, want %q", data.Warnings, want)
	}
	path := filepath.Join(t.TempDir(), "r.html")
	if err := writeReport(path, data); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<ul class="warnings" id="warnings"></ul>`, `"warnings":["column zip is merged as int: type the column as a string (--hint zip=string)"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page does not hold %s", want)
		}
	}
}
