package spark

import (
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

// A lane's type is kept for a file past the split only where its
// witnesses show every split gives it.
func TestSplitInvariant(t *testing.T) {
	typ := func(s string) sparkmerge.DataType {
		schema, err := sparkmerge.ParseSchema("c " + s)
		if err != nil {
			t.Fatal(err)
		}
		return schema.Fields[0].Type
	}
	rev := func(class int) int {
		if class == 0 {
			return 0 // no values: the reversed lane is empty too
		}
		return witnessClasses + 1 - class
	}
	for _, tc := range []struct {
		typ       string
		high, low int
		invariant bool
		why       string
	}{
		{"STRING", 0, 0, true, "no values"},
		{"INT", witnessPlainNumber, witnessPlainNumber, true, "plain numbers"},
		{"DOUBLE", witnessPlainNumber, witnessPlainNumber, true, "plain numbers"},
		{"DECIMAL(25,0)", witnessPlainNumber, witnessPlainNumber, true, "plain numbers"},
		{"DOUBLE", witnessMaybeNumber, witnessPlainNumber, false, "NaN among numbers"},
		{"BOOLEAN", witnessBoolean, witnessBoolean, true, "booleans"},
		{"BOOLEAN", witnessBoolean, witnessPlainNumber, false, "booleans and numbers"},
		{"DATE", witnessNoColon, witnessNoColon, true, "dates"},
		{"DATE", witnessColon, witnessNoColon, false, "dates and timestamps"},
		{"TIMESTAMP", witnessColon, witnessColon, true, "timestamps"},
		{"TIMESTAMP", witnessColon, witnessPlainNumber, false, "a timestamp then years"},
		{"TIMESTAMP", witnessColon, witnessNoColon, false, "a timestamp then dates"},
		{"STRING", witnessNoParser, witnessPlainNumber, true, "a word among anything"},
		{"STRING", witnessColon, witnessPlainNumber, false, "string by a merge of numbers and timestamps"},
		{"INT", witnessColon, witnessPlainNumber, false, "int by merges of timestamps and numbers"},
	} {
		if got := splitInvariant(typ(tc.typ), tc.high, rev(tc.low)); got != tc.invariant {
			t.Errorf("%s, %s (classes %d to %d): invariant %v, want %v", tc.why, tc.typ, tc.low, tc.high, got, tc.invariant)
		}
	}
	// The witness codes' types read back as their classes.
	for class, want := range []string{"STRING", "INT", "BIGINT", "DECIMAL(20,0)", "DECIMAL(21,0)", "DECIMAL(22,0)", "DOUBLE"} {
		if got := witnessOf(typ(want)); got != class {
			t.Errorf("%s: class %d, want %d", want, got, class)
		}
	}
	if got := witnessOf(typ("DATE")); got != -1 {
		t.Errorf("date: class %d, want -1", got)
	}
}

// Files past the split are witnessed only under options whose parsers
// the witnesses know.
func TestWitnessOptions(t *testing.T) {
	if !witnessOptions(map[string]string{"header": "true", "sep": ";", "nullValue": "NA", "prefersDate": "false"}) {
		t.Error("tokenizer options not witnessed")
	}
	for _, k := range []string{"dateFormat", "timestampFormat", "locale", "timeZone", "nanValue"} {
		if witnessOptions(map[string]string{"header": "true", k: "x"}) {
			t.Errorf("%s witnessed", k)
		}
	}
	if expr := witnessLanes(2, "s"); !strings.Contains(expr, "s.c1") || strings.Count(expr, "CASE CASE") != 2 {
		t.Errorf("witness lanes %s", expr)
	}
}
