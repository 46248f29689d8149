package spark

import "testing"

// Which reads checkUTF8OnServer reads: CSV and JSON files read as UTF-8
// that the client did not find UTF-8 as a whole; a multi-line CSV file
// too (only JSON detects a multi-line file's encoding).
func TestNeedsUTF8Check(t *testing.T) {
	csv := func(options map[string]string) *Read {
		return &Read{Format: "csv", Paths: []string{"/d/a.csv"}, Options: options}
	}
	json := func(options map[string]string) *Read {
		return &Read{Format: "json", Paths: []string{"/d/a.json"}, Options: options}
	}
	typed := csv(nil)
	typed.validUTF8 = true
	refused := csv(nil)
	refused.encodingProblem = "not UTF-8"
	for _, tc := range []struct {
		name string
		r    *Read
		want bool
	}{
		{"csv", csv(nil), true},
		{"csv, multiLine", csv(map[string]string{"multiLine": "true"}), true},
		{"csv, encoding UTF-8", csv(map[string]string{"encoding": "utf8"}), true},
		{"csv, charset Latin-1", csv(map[string]string{"charset": "ISO-8859-1"}), false},
		{"csv, encoding wins over charset", csv(map[string]string{"encoding": "windows-1252", "charset": "UTF-8"}), false},
		{"csv the client typed", typed, false},
		{"csv the client refused as not UTF-8", refused, false},
		{"json", json(nil), true},
		{"json, multiLine (Jackson detects its encoding)", json(map[string]string{"multiLine": "true"}), false},
		{"json, multiLine, UTF-8", json(map[string]string{"multiLine": "true", "encoding": "UTF-8"}), true},
		{"json, UTF-16", json(map[string]string{"encoding": "UTF-16LE", "lineSep": "\n"}), false},
		{"parquet", &Read{Format: "parquet", Paths: []string{"/d/a.parquet"}}, false},
		{"table", &Read{Format: "csv", Table: "db.t"}, false},
	} {
		if got := needsUTF8Check(tc.r); got != tc.want {
			t.Errorf("%s: needsUTF8Check = %v, want %v", tc.name, got, tc.want)
		}
	}
}
