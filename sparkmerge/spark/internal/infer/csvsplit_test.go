package infer

import (
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

// A split's start holds for a timestamp column only where the column's
// first value there is a date or a timestamp: a year (an int to Spark
// first in a split), a number or text does not, nor a value the rules do
// not know; lines Spark's inference skips are skipped.
func TestCSVSplitStart(t *testing.T) {
	options := map[string]string{"header": "true", "inferSchema": "true"}
	for _, c := range []struct {
		name    string
		data    string
		columns []int
		want    bool
	}{
		{"a timestamp first", "1,2024-01-02 03:04:05\n2,2024\n", []int{1}, true},
		{"a date first", "1,2024-01-02\n", []int{1}, true},
		{"empty values before", "1,\n2,\n3,2024-01-02T03:04:05Z\n", []int{1}, true},
		{"the header and empty lines skipped", "id,at\n\n1,2024-01-02 03:04\n", []int{1}, true},
		{"a quoted timestamp", "1,\"2024-01-02 03:04:05\"\n", []int{1}, true},
		{"a year first", "1,2024\n2,2024-01-02 03:04:05\n", []int{1}, false},
		{"a number first", "1,7\n", []int{1}, false},
		{"text first", "1,soon\n", []int{1}, false},
		{"a spelling the rules leave to Spark", "1,2024/01/02 03:04\n", []int{1}, false},
		{"no value before the end", "1,\n2,\n", []int{1}, false},
		{"no whole line", "1,2024-01-02 03:04:05", []int{1}, false},
		{"the last line cut off", "1,\n2,2024-01-02 03:04:05", []int{1}, false},
		{"a line of blanks", "  \n1,2024-01-02\n", []int{1}, false},
		{"a wider row", "1,2024-01-02,x\n", []int{1}, false},
		{"two columns, one settled late", "2024-01-02,\n,2024-01-03 10:00\n", []int{0, 1}, true},
		{"two columns, one never", "2024-01-02,\n", []int{0, 1}, false},
		{"no columns", "anything\n", nil, true},
	} {
		header := "id,at"
		if c.name == "two columns, one settled late" || c.name == "two columns, one never" {
			header = "a,b"
		}
		if got := Spark40.CSVSplitStart([]byte(c.data), options, header, c.columns); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A file's start gives each column's type so far, and which columns had
// no value (their type is no bound).
func TestCSVStartOf(t *testing.T) {
	options := map[string]string{"header": "true", "inferSchema": "true"}
	start, err := Spark40.CSVStartOf([]byte("id,at,x,s\n1,2024-01-02,,a\n3000000000,2024-01-02 10:00,,b\n"), options)
	if err != nil {
		t.Fatal(err)
	}
	want := []sparkmerge.DataType{{Kind: sparkmerge.KindLong}, {Kind: sparkmerge.KindTimestamp}, {Kind: sparkmerge.KindString}, {Kind: sparkmerge.KindString}}
	for i, name := range []string{"id", "at", "x", "s"} {
		if start.Names[i] != name || !start.Types[i].Equal(want[i]) || start.Valued[i] != (name != "x") {
			t.Errorf("column %d: %s %s valued %v, want %s %s valued %v", i, start.Names[i], start.Types[i], start.Valued[i], name, want[i], name != "x")
		}
	}
	if _, err := Spark40.CSVStartOf([]byte("a\n1\n"), map[string]string{"header": "true", "inferSchema": "true", "comment": "#"}); err == nil {
		t.Error("an option the rules do not take: no error")
	}
}
