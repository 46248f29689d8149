package spark

import (
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

// A hinted CSV or JSON column whose hint's parse may round (a decimal
// with digits to spare, a float; a CSV date, its time) is read exactly
// and narrowed with a check; the plan still sees the hint. Not where the user accepts the
// rounding, chose what becomes of bad values (PERMISSIVE, DROPMALFORMED),
// or the pinned schema is not the read's (a partitioned tree's file).
func TestApplyHintsReadsExactly(t *testing.T) {
	field := func(name string, k sparkmerge.Kind) sparkmerge.Field {
		return sparkmerge.Field{Name: name, Type: sparkmerge.Simple(k), Nullable: true}
	}
	read := func(format string, options map[string]string) *Read {
		return &Read{Name: "/in/a." + format, Sources: []string{"/in/a." + format}, Format: format, Options: options,
			Schema: sparkmerge.Schema{Fields: []sparkmerge.Field{field("id", sparkmerge.KindInt), field("amount", sparkmerge.KindDouble), field("f", sparkmerge.KindDouble), field("day", sparkmerge.KindString)}}}
	}
	hints := map[string]sparkmerge.DataType{
		"amount": {Kind: sparkmerge.KindDecimal, Precision: 10, Scale: 2},
		"f":      sparkmerge.Simple(sparkmerge.KindFloat),
		"day":    sparkmerge.Simple(sparkmerge.KindDate),
	}
	const exact = "id int, amount decimal(38,30), f double, day date"
	const exactCSV = "id int, amount decimal(38,30), f double, day timestamp"
	const exactNTZ = "id int, amount decimal(38,30), f double, day timestamp_ntz"
	const hinted = "id int, amount decimal(10,2), f float, day date"
	for _, tc := range []struct {
		name   string
		r      *Read
		policy sparkmerge.Options
		pinned string
	}{
		{"csv", read("csv", nil), sparkmerge.Options{Hints: hints}, exactCSV},
		{"csv with a date format", read("csv", map[string]string{"dateFormat": "dd.MM.yyyy"}), sparkmerge.Options{Hints: hints}, exact},
		{"csv with a time zone", read("csv", map[string]string{"timeZone": "Asia/Kolkata"}), sparkmerge.Options{Hints: hints}, exactNTZ},
		{"csv with a timestamp format", read("csv", map[string]string{"TIMESTAMPFORMAT": "yyyy-MM-dd HH:mm"}), sparkmerge.Options{Hints: hints}, exactNTZ},
		{"csv with the parsing fallback", read("csv", map[string]string{"enableDateTimeParsingFallback": "true"}), sparkmerge.Options{Hints: hints}, exact},
		{"json", read("json", nil), sparkmerge.Options{Hints: hints}, exactNTZ},
		{"json with a time zone", read("json", map[string]string{"timeZone": "UTC"}), sparkmerge.Options{Hints: hints}, exactNTZ},
		{"json with a timestamp_ntz format", read("json", map[string]string{"timestampNTZFormat": "yyyy-MM-dd HH:mm"}), sparkmerge.Options{Hints: hints}, exact},
		{"failfast", read("csv", map[string]string{"mode": "failFast"}), sparkmerge.Options{Hints: hints}, exactCSV},
		{"lossy widening", read("csv", nil), sparkmerge.Options{Hints: hints, LossyWidening: true}, hinted},
		{"permissive", read("csv", map[string]string{"mode": "PERMISSIVE"}), sparkmerge.Options{Hints: hints}, hinted},
		{"dropmalformed", read("json", map[string]string{"mode": "DROPMALFORMED"}), sparkmerge.Options{Hints: hints}, hinted},
	} {
		applyHints([]*Read{tc.r}, tc.policy, true)
		pinSchemas([]*Read{tc.r})
		if got := tc.r.Schema.String(); !strings.EqualFold(got, hinted) {
			t.Errorf("%s: the plan's schema %s, want the hints' %s", tc.name, got, hinted)
		}
		if !strings.EqualFold(tc.r.pinned, tc.pinned) {
			t.Errorf("%s: read as %s, want %s", tc.name, tc.r.pinned, tc.pinned)
		}
	}
	// A decimal(38,s) has no wider decimal: CSV and (on Spark 4, which
	// reads a JSON number into a string as written) JSON values are read
	// as their text.
	wide := map[string]sparkmerge.DataType{"amount": {Kind: sparkmerge.KindDecimal, Precision: 38, Scale: 2}}
	for _, tc := range []struct {
		format  string
		spark4  bool
		options map[string]string
		pinned  string
	}{
		{"csv", false, nil, "id int, amount string, f double, day string"},
		{"csv", false, map[string]string{"locale": "de-DE"}, "id int, amount decimal(38,2), f double, day string"},
		{"json", true, nil, "id int, amount string, f double, day string"},
		{"json", false, nil, "id int, amount decimal(38,2), f double, day string"},
	} {
		r := read(tc.format, tc.options)
		applyHints([]*Read{r}, sparkmerge.Options{Hints: wide}, tc.spark4)
		pinSchemas([]*Read{r})
		if !strings.EqualFold(r.pinned, tc.pinned) {
			t.Errorf("decimal(38,2), %s %v (Spark 4: %v): read as %s, want %s", tc.format, tc.options, tc.spark4, r.pinned, tc.pinned)
		}
	}

	// A partitioned tree's file with a column of its own named as a
	// partition column (day) is read without the tree's columns: its own
	// schema is pinned, hinted and read exactly like any other, but for
	// that column, whose value is its directory's.
	r := read("csv", nil)
	tree := &partitionTree{schema: sparkmerge.Schema{Fields: []sparkmerge.Field{field("day", sparkmerge.KindString)}}}
	r.partition = &partitionFile{tree: tree, values: []string{"x"}}
	r.dataSchema = r.Schema
	r.overlapExprs = []string{"id", "amount", "f", "'x' AS day"}
	applyHints([]*Read{r}, sparkmerge.Options{Hints: hints}, true)
	pinSchemas([]*Read{r})
	if got, want := r.pinned, "id int, amount decimal(38,30), f double, day string"; !strings.EqualFold(got, want) {
		t.Errorf("a partitioned tree's file: read as %s, want %s", got, want)
	}
	if got := r.Schema.String(); !strings.EqualFold(got, hinted) {
		t.Errorf("a partitioned tree's file: the plan's schema %s, want the hints' %s", got, hinted)
	}
}
