package spark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A JSON read's charset is read by the nesting measure as Spark decodes
// it: UTF-8 and the charsets whose ASCII bytes are only ASCII as bytes,
// UTF-16 and UTF-32 decoded by Spark's decode (a byte order's mark put
// first where decode has no such charset), the multi-byte charsets
// Spark's SQL does not decode bounded by their bracket bytes, any other
// refused, and with multiLine and none, as Jackson detects it; by Java's names and aliases, case-insensitively, encoding
// before charset.
func TestJSONCharsetOf(t *testing.T) {
	type got struct {
		Value        string
		Bound, Known bool
	}
	for _, tc := range []struct {
		options map[string]string
		want    got
	}{
		{nil, got{"value", false, true}},
		{map[string]string{"multiLine": "true"}, got{detectedValue, false, true}},
		{map[string]string{"multiLine": "true", "encoding": "UTF-8"}, got{"value", false, true}},
		{map[string]string{"encoding": "UTF-8"}, got{"value", false, true}},
		{map[string]string{"Encoding": "iso-8859-15"}, got{"value", false, true}},
		{map[string]string{"charset": "windows-1252"}, got{"value", false, true}},
		{map[string]string{"encoding": "EUC-JP"}, got{"value", false, true}},
		{map[string]string{"encoding": "UTF-16LE"}, got{"decode(CAST(value AS BINARY), 'UTF-16LE')", false, true}},
		{map[string]string{"charset": "utf-16le", "encoding": "UTF-16BE"}, got{"decode(CAST(value AS BINARY), 'UTF-16BE')", false, true}},
		{map[string]string{"CHARSET": "UnicodeLittleUnmarked"}, got{"decode(CAST(value AS BINARY), 'UTF-16LE')", false, true}},
		{map[string]string{"encoding": "UTF-16"}, got{"decode(CAST(value AS BINARY), 'UTF-16')", false, true}},
		{map[string]string{"encoding": "UTF-32"}, got{"decode(CAST(value AS BINARY), 'UTF-32')", false, true}},
		{map[string]string{"encoding": "UTF-32LE"}, got{"decode(concat(X'FFFE0000', CAST(value AS BINARY)), 'UTF-32')", false, true}},
		{map[string]string{"encoding": "utf-32be"}, got{"decode(concat(X'0000FEFF', CAST(value AS BINARY)), 'UTF-32')", false, true}},
		{map[string]string{"encoding": "Shift_JIS"}, got{"decode(CAST(value AS BINARY), 'ISO-8859-1')", true, true}},
		{map[string]string{"encoding": "GBK"}, got{"decode(CAST(value AS BINARY), 'ISO-8859-1')", true, true}},
		{map[string]string{"encoding": "IBM037"}, got{"value", false, false}},
		{map[string]string{"encoding": "ISO-2022-JP"}, got{"value", false, false}},
		{map[string]string{"encoding": "iso-8859-"}, got{"value", false, false}},
	} {
		cs := jsonCharsetOf(tc.options)
		if diff := cmp.Diff(tc.want, got{cs.value(), cs.bound, cs.known}); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.options, diff)
		}
	}
}

// Line by line, the text read splits a file at the bytes Spark's JSON
// reader splits it at: lineSep in the read's charset, given to the text
// read as the UTF-8 text of those bytes; where they are not UTF-8, or a
// charset of one byte a character has a separator past ASCII, the read is
// refused instead.
func TestJSONCharsetTextLineSep(t *testing.T) {
	for _, tc := range []struct {
		encoding, lineSep, want string
	}{
		{"", "\n", "\n"},
		{"UTF-8", "é;", "é;"},
		{"ISO-8859-1", ";", ";"},
		{"Shift_JIS", "\r\n", "\r\n"},
		{"UTF-16LE", "\n", "\n\x00"},
		{"UTF-16BE", "\r\n", "\x00\r\x00\n"},
		{"UTF-32LE", "\n", "\n\x00\x00\x00"},
		{"UTF-32BE", "\u2028", "\x00\x00\x20\x28"},
		{"UTF-16LE", "\u00e9", ""},
		{"ISO-8859-1", "\u00e9", ""},
		{"GBK", "\u00e9", ""},
	} {
		cs := jsonCharsetOf(map[string]string{"encoding": tc.encoding})
		got, err := cs.textLineSep(tc.lineSep)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "cannot split at") {
				t.Errorf("%s %q: %q, %v, want refused", tc.encoding, tc.lineSep, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v, want %q", tc.encoding, tc.lineSep, got, err, tc.want)
		}
	}
}

// Spark refuses a JSON read line by line of UTF-16 or UTF-32 with no
// byte order, or of a charset other than UTF-8 without lineSep, before
// it reads a record; the measure leaves those to Spark's refusal.
func TestJSONCharsetSparkRefuses(t *testing.T) {
	for _, tc := range []struct {
		options map[string]string
		want    bool
	}{
		{map[string]string{}, false},
		{map[string]string{"encoding": "UTF-16"}, true},
		{map[string]string{"encoding": "UTF-16", "lineSep": "\n"}, true},
		{map[string]string{"encoding": "UTF-32", "lineSep": "\n"}, true},
		{map[string]string{"encoding": "UTF-16", "multiLine": "true"}, false},
		{map[string]string{"encoding": "UTF-16LE"}, true},
		{map[string]string{"encoding": "UTF-16LE", "lineSep": "\n"}, false},
		{map[string]string{"encoding": "UTF-32LE", "lineSep": "\n"}, false},
		{map[string]string{"encoding": "ISO-8859-1"}, true},
		{map[string]string{"encoding": "utf8"}, false},
	} {
		if got := jsonCharsetOf(tc.options).sparkRefuses(tc.options); got != tc.want {
			t.Errorf("%v: Spark refuses %v, want %v", tc.options, got, tc.want)
		}
	}
}

// Files of one text reading but other charsets are measured in text
// reads of their own, each decoding as its charset, all in one request.
func TestNestingMeasuresByCharset(t *testing.T) {
	reads := []*Read{
		{Format: "json", Paths: []string{"/d/a.json"}, Options: map[string]string{"multiLine": "true"}},
		{Format: "json", Paths: []string{"/d/b.json"}, Options: map[string]string{"multiLine": "true", "encoding": "UTF-16LE"}},
		{Format: "json", Paths: []string{"/d/c.json"}, Options: map[string]string{"multiLine": "true", "charset": "utf-16le"}},
		{Format: "json", Paths: []string{"/d/d.json"}, Options: map[string]string{"lineSep": "\n", "encoding": "UTF-16LE"}},
		{Format: "json", Paths: []string{"/d/e.json"}, Options: map[string]string{"lineSep": "\n", "encoding": "GBK"}},
	}
	want := []nestingMeasure{
		{paths: []string{"/d/a.json"}, options: map[string]string{"wholetext": "true"}, byKey: map[string]int{"/d/a.json": 0}, value: detectedValue},
		{paths: []string{"/d/b.json", "/d/c.json"}, options: map[string]string{"wholetext": "true"}, byKey: map[string]int{"/d/b.json": 1, "/d/c.json": 2}, value: "decode(CAST(value AS BINARY), 'UTF-16LE')"},
		{paths: []string{"/d/d.json"}, options: map[string]string{"lineSep": "\n\x00"}, byKey: map[string]int{"/d/d.json": 3}, value: "decode(CAST(value AS BINARY), 'UTF-16LE')"},
		{paths: []string{"/d/e.json"}, options: map[string]string{"lineSep": "\n"}, byKey: map[string]int{"/d/e.json": 4}, value: "decode(CAST(value AS BINARY), 'ISO-8859-1')", bound: true},
	}
	if diff := cmp.Diff(want, nestingMeasures(reads), cmp.AllowUnexported(nestingMeasure{})); diff != "" {
		t.Errorf("measures (-want +got):\n%s", diff)
	}
}

// A JSON file of a charset the measure cannot read is refused before
// Spark is asked anything, naming the source, the charset and what to
// do; one Spark refuses itself is not measured; one bounded by its
// bracket bytes is refused saying so.
func TestPlanRefusesJSONOfAnUnmeasurableCharset(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := os.WriteFile(path, []byte(jsonC), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		options   map[string]string
		depth     int
		wantErr   []string
		wantCalls int
	}{
		{map[string]string{"encoding": "IBM037", "multiLine": "true"}, 0, []string{`source "` + path + `"`, "encoding IBM037", "re-encode the file as UTF-8", "was not asked"}, 0},
		{map[string]string{"encoding": "UTF-16LE", "lineSep": "\u00e9"}, 0, []string{`source "` + path + `"`, "cannot split at", "re-encode it as UTF-8"}, 0},
		{map[string]string{"encoding": "Shift_JIS", "multiLine": "true"}, 300, []string{"up to 300 levels deep", "does not decode its encoding Shift_JIS", "bytes of { and ["}, 1},
		{map[string]string{"encoding": "UTF-16LE", "multiLine": "true"}, 300, []string{"nests objects and arrays 300 levels deep"}, 1},
	} {
		client, fake := newFakeClient()
		if tc.depth > 0 {
			fake.jsonDepths = map[string]int{path: tc.depth}
		}
		_, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{path}, Options: tc.options}}, SparkInference: true})
		for _, want := range tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v: err = %v, want it to say %q", tc.options, err, want)
			}
		}
		var measures int
		for _, call := range fake.recorded() {
			if strings.HasPrefix(call, "jsonNesting ") {
				measures++
			}
		}
		if measures != tc.wantCalls {
			t.Errorf("%v: %d measures (%q), want %d", tc.options, measures, fake.recorded(), tc.wantCalls)
		}
	}
	// Line by line in UTF-16 Spark refuses the read itself: not measured.
	client, fake := newFakeClient()
	_, _ = client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{path}, Options: map[string]string{"encoding": "UTF-16"}}}, SparkInference: true})
	for _, call := range fake.recorded() {
		if strings.HasPrefix(call, "jsonNesting ") {
			t.Errorf("a read Spark refuses was measured: %q", fake.recorded())
		}
	}
}
