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
	const hinted = "id int, amount decimal(10,2), f float, day date"
	for _, tc := range []struct {
		name   string
		r      *Read
		policy sparkmerge.Options
		pinned string
	}{
		{"csv", read("csv", nil), sparkmerge.Options{Hints: hints}, exactCSV},
		{"csv with a date format", read("csv", map[string]string{"dateFormat": "dd.MM.yyyy"}), sparkmerge.Options{Hints: hints}, exact},
		{"json", read("json", nil), sparkmerge.Options{Hints: hints}, exact},
		{"failfast", read("csv", map[string]string{"mode": "failFast"}), sparkmerge.Options{Hints: hints}, exactCSV},
		{"lossy widening", read("csv", nil), sparkmerge.Options{Hints: hints, LossyWidening: true}, hinted},
		{"permissive", read("csv", map[string]string{"mode": "PERMISSIVE"}), sparkmerge.Options{Hints: hints}, hinted},
		{"dropmalformed", read("json", map[string]string{"mode": "DROPMALFORMED"}), sparkmerge.Options{Hints: hints}, hinted},
	} {
		applyHints([]*Read{tc.r}, tc.policy)
		pinSchemas([]*Read{tc.r})
		if got := tc.r.Schema.String(); !strings.EqualFold(got, hinted) {
			t.Errorf("%s: the plan's schema %s, want the hints' %s", tc.name, got, hinted)
		}
		if !strings.EqualFold(tc.r.pinned, tc.pinned) {
			t.Errorf("%s: read as %s, want %s", tc.name, tc.r.pinned, tc.pinned)
		}
	}
	r := read("csv", nil)
	r.overlapExprs = []string{"id", "amount", "f", "day"}
	applyHints([]*Read{r}, sparkmerge.Options{Hints: hints})
	if len(r.exact) != 0 {
		t.Errorf("a partitioned tree's file: exact reads %v, want none", r.exact)
	}
}
