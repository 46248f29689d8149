package infer

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

// inferJSONLines is the raw schema of a file's bytes.
func inferJSONLines(data []byte) (sparkmerge.DataType, error) {
	f, err := scanJSONLines(data)
	return f.Raw, err
}

// The expected schemas follow Spark 4.0's JsonInferSchema; the integration
// test TestLocalJSONInferenceMatchesSpark checks the same on a real server.
func TestInferJSONLines(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"scalars sorted by name", `{"b":1,"a":"x","c":true,"d":1.5}`, "a string, b bigint, c boolean, d double"},
		{"integer widths", `{"a":9223372036854775807,"b":9223372036854775808,"c":` + strings.Repeat("9", 39) + `}`, "a bigint, b decimal(19,0), c double"},
		{"exponent is double", `{"a":1e3}`, "a double"},
		{"bigint then double", "{\"a\":1}\n{\"a\":2.5}", "a double"},
		{"bigint then decimal", "{\"a\":1}\n{\"a\":99999999999999999999}", "a decimal(20,0)"},
		{"number then string", "{\"a\":1}\n{\"a\":\"x\"}", "a string"},
		{"boolean then number", "{\"a\":true}\n{\"a\":1}", "a string"},
		{"null and empty string are void", "{\"a\":null,\"b\":\"\",\"c\":\"\"}\n{\"c\":3}", "a string, b string, c bigint"},
		{"nested struct merge", "{\"s\":{\"y\":1}}\n{\"s\":{\"x\":\"q\",\"y\":2.0}}", "s struct<x:string,y:double>"},
		{"arrays", `{"a":[1,2.5],"b":[],"c":[{"k":1},{"j":true}]}`, "a array<double>, b array<string>, c array<struct<j:boolean,k:bigint>>"},
		{"empty struct vanishes", `{"a":{},"b":1,"c":[{}]}`, "b bigint"},
		{"struct then scalar", "{\"a\":{\"x\":1}}\n{\"a\":1}", "a string"},
		{"blank lines and crlf", "{\"a\":1}\r\n\r\n  \n{\"b\":2}", "a bigint, b bigint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := inferJSONLines([]byte(tt.json))
			if err != nil {
				t.Fatalf("not inferred locally: %v", err)
			}
			schema, ok := jsonSchemaOf(raw)
			if !ok {
				t.Fatal("no columns")
			}
			if got := schema.String(); got != tt.want {
				t.Errorf("schema = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestInferJSONLinesLeavesToSpark(t *testing.T) {
	tests := []struct{ name, json string }{
		{"record over two lines", "{\"a\":\n1}"},
		{"NaN", `{"a":NaN}`},
		{"single quotes", `{'a':1}`},
		{"leading zero", `{"a":01}`},
		{"duplicate key", `{"a":1,"A":2}`},
		{"key spelled two ways", "{\"a\":1}\n{\"A\":2}"},
		{"empty key", `{"":1}`},
		{"non-ASCII key", `{"é":1}`},
		{"array record", `[{"a":1}]`},
		{"two records on a line", `{"a":1} {"a":2}`},
		{"scalar record", `1`},
		{"not utf-8", "{\"a\":\"\xff\"}"},
		{"no records", "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := inferJSONLines([]byte(tt.json))
			if err == nil {
				t.Fatalf("inferred locally as %s; want it left to Spark", raw)
			}
			want := UnsupportedContents
			if tt.name == "not utf-8" {
				want = NotUTF8
			}
			if u, ok := err.(*Unsupported); !ok || u.Reason != want || u.Error() == "" {
				t.Errorf("error %#v: want an *Unsupported of reason %d", err, want)
			}
		})
	}
}

// Merging before canonicalising matters: a column null in one file and a
// number in another is a number, not a string.
func TestJSONGroupMergesRawTypes(t *testing.T) {
	a, errA := inferJSONLines([]byte(`{"id":1,"v":null}`))
	b, errB := inferJSONLines([]byte(`{"id":2,"v":2.5,"w":[]}`))
	if errA != nil || errB != nil {
		t.Fatal("not inferred")
	}
	schema, _ := jsonSchemaOf(jsonCompatible(a, b))
	if got, want := schema.String(), "id bigint, v double, w array<string>"; got != want {
		t.Errorf("merged = %s, want %s", got, want)
	}
}

// A file's facts: the keys from_json would print otherwise, and whether
// its numbers are short; the schema after canonicalisation; options.
func TestJSONFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	data := `{"id":1,"p":1.50,"s":"x","z":-0,"o":{"k":1},"a":[1],"e":{}}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Spark40.JSONFile(path, map[string]string{"mode": "FAILFAST"})
	if err != nil {
		t.Fatal(err)
	}
	// A fraction, -0, an object or an array: not an integer or a string.
	if want := map[string]bool{"p": true, "z": true, "o": true, "a": true, "e": true}; !maps.Equal(f.Reprinted, want) {
		t.Errorf("reprinted %v, want %v", f.Reprinted, want)
	}
	if !f.ShortNumbers {
		t.Error("short numbers: false")
	}
	schema, err := Spark40.JSONSchema(f.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := schema.String(), "a array<bigint>, id bigint, o struct<k:bigint>, p double, s string, z bigint"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if _, err := Spark40.JSONFile(path, map[string]string{"multiLine": "true"}); err == nil || err.(*Unsupported).Reason != UnsupportedOptions {
		t.Errorf("multiLine: %v, want refused for the option", err)
	}
	if _, err := Spark40.JSONFile(filepath.Join(dir, "missing.json"), nil); err == nil || err.(*Unsupported).Reason != UnsupportedFile {
		t.Errorf("missing file: %v, want refused for the file", err)
	}
	if f, err := Spark40.JSONLines([]byte(`{"v":12345678901234567}`), nil); err != nil || f.ShortNumbers {
		t.Errorf("a long number: %+v %v", f, err)
	}
	if f, err := Spark40.JSONLines([]byte(`{"v":1,"v":2}`), nil); err == nil || f.ShortNumbers {
		t.Errorf("a refused file: %+v %v, want no ShortNumbers", f, err)
	}
	raw, err := inferJSONLines([]byte(`{"e":{},"a":[{}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Spark40.JSONSchema(raw); err == nil || err.(*Unsupported).Reason != UnsupportedContents {
		t.Errorf("no column left: %v, want refused", err)
	}
	if _, err := (Rules{}).JSONSchema(f.Raw); err == nil {
		t.Error("zero Rules: no error")
	}
}

// nestedRecord is a record whose objects (or, with arrays, arrays under
// its one key) nest depth levels deep, the record counting one.
func nestedRecord(depth int, arrays bool) string {
	open, close := `{"a":`, `}`
	if arrays {
		open, close = `[`, `]`
	}
	return `{"id":1,"a":` + strings.Repeat(open, depth-1) + `"x"` + strings.Repeat(close, depth-1) + "}"
}

// A record nested MaxJSONDepth levels deep is typed; one level more, or
// 100,000 levels (a 600 KB file that took the client 10 GB), is refused
// as a TooDeepError naming its line and depth, in memory that does not
// grow with the depth.
func TestJSONDepthIsBounded(t *testing.T) {
	for _, arrays := range []bool{false, true} {
		at := nestedRecord(MaxJSONDepth, arrays)
		if _, err := scanJSONLines([]byte("{\"id\":0}\n" + at + "\n")); err != nil {
			t.Errorf("arrays %v: a record %d levels deep: %v", arrays, MaxJSONDepth, err)
		}
		for _, depth := range []int{MaxJSONDepth + 1, 100000} {
			data := []byte("{\"id\":0}\n\n" + nestedRecord(depth, arrays) + "\n")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := scanJSONLines(data)
			runtime.ReadMemStats(&after)
			var tooDeep *TooDeepError
			if !errors.As(err, &tooDeep) || *tooDeep != (TooDeepError{Line: 3, Depth: depth}) {
				t.Errorf("arrays %v: a record %d levels deep: err %v, want a TooDeepError of line 3, depth %d", arrays, depth, err, depth)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("arrays %v: scanning a record %d levels deep allocated %d KB", arrays, depth, grew>>10)
			}
		}
	}
	// Brackets in strings do not nest.
	if d := nestingDepth([]byte(`{"a":"[[{{\"[","b":[{}]}`)); d != 3 {
		t.Errorf("nestingDepth = %d, want 3", d)
	}
}

// A top-level number with more significant digits than a double keeps, in
// a key typed as double, is noted, its first value a key (see
// TestCSVRounded). Not in a key of longs, nor nested.
func TestJSONRounded(t *testing.T) {
	tests := []struct {
		json string
		want map[string]string
	}{
		{`{"pi": 1.5}` + "\n" + `{"pi": 3.14159265358979323846}` + "\n", map[string]string{"pi": "3.14159265358979323846"}},
		{`{"x": 12345678901234567}` + "\n" + `{"x": 0.5}` + "\n", map[string]string{"x": "12345678901234567"}},
		{`{"x": 12345678901234567}` + "\n", nil},
		{`{"x": 0.1, "y": 1.50000000000000000000}` + "\n", nil},
		{`{"a": {"b": 3.14159265358979323846}}` + "\n", nil},
	}
	for _, tt := range tests {
		f, err := jsonFile([]byte(tt.json))
		if err != nil {
			t.Fatalf("%q: %v", tt.json, err)
		}
		if !maps.Equal(f.Rounded, tt.want) {
			t.Errorf("%q: Rounded = %v, want %v", tt.json, f.Rounded, tt.want)
		}
	}
}
