package infer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"maps"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sparkmerge/sparkmerge"
)

// Files are untrusted input. The fuzz targets below check that client
// inference never panics, is deterministic, gives the same schema when the
// file's records come twice (a join of types is idempotent), and, when it
// accepts a file, that an independent reading of the bytes agrees with
// what it claims: a reference splitter and Go's strconv for CSV, Go's
// encoding/json for JSON lines. CI runs each for a few seconds (make
// fuzz); the seeds run with every go test.

func FuzzInferCSV(f *testing.F) {
	for _, seed := range []string{
		"id,qty,price\n1,007,1.50\n2,+3,2\n3,,0.1000\n",
		"a;b\r\n1;x\r\n\r\n2;true\r\n",
		"x\n99999999999999999999\n-0\n",
		"k,v\n1, 2\nk,v\n3,4\n",
		"a,b\n1\n",
		"\ufeffa\n1\n",
		"a,a\n1,2\n",
		"h\n\n \n",
		"d,t,y\n2024-02-29,2024-01-31 10:20:30.5Z,1999-12-31\n2020,2024-01-31T10:20,2020\n",
		"q,n\n\"x,y\",\"2\"\n\"a\"\"b\",3\n\"z\",\"\"\n",
		"q,n\n\"say \\\"hi\\\", x\",\"2\"\n\"a\\\"\",3\n",
	} {
		f.Add([]byte(seed), false)
	}
	f.Add([]byte("a\tb\n1\t2.5e3\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, tab bool) {
		sep := byte(',')
		options := map[string]string{"header": "true", "inferSchema": "true"}
		if tab {
			sep, options["sep"] = '\t', "\t"
		}
		file, err := Spark40.CSV(data, options)
		checkCSVDeterministic(t, data, options, file, err)
		if file.ShortNumbers && !shortNumbersByRegexp(data) || !file.ShortNumbers && utf8.Valid(data) && !bytes.HasPrefix(data, []byte("\ufeff")) && shortNumbersByRegexp(data) {
			t.Fatalf("short numbers %v for %q", file.ShortNumbers, data)
		}
		if err != nil {
			if u, isUnsupported := err.(*Unsupported); !isUnsupported || u.Error() == "" || u.Reason == 0 {
				t.Fatalf("refused without a reason: %#v", err)
			}
			return
		}
		checkCSVAgainstReference(t, data, sep, file.Schema)
		doubled := append(append(append([]byte{}, data...), '\n'), data...)
		if twice, _, err := inferCSV(doubled, sep); err != nil || !twice.Equal(file.Schema) {
			t.Fatalf("the records twice: %v (%v), once: %v", twice, err, file.Schema)
		}
	})
}

// checkCSVDeterministic infers data again and fails unless it finds what
// the first inference found (file, err).
func checkCSVDeterministic(t *testing.T, data []byte, options map[string]string, file CSVFile, err error) {
	t.Helper()
	again, errAgain := Spark40.CSV(data, options)
	ok, okAgain := err == nil, errAgain == nil
	if ok != okAgain || ok && !file.Schema.Equal(again.Schema) || file.ShortNumbers != again.ShortNumbers {
		t.Fatalf("not deterministic: %v %v / %v %v", file.Schema, ok, again.Schema, okAgain)
	}
}

// checkCSVAgainstReference fails unless an independent reading of data
// (referenceCSV) has the columns of schema, named by the header, and
// every row's values parse as their column's type.
func checkCSVAgainstReference(t *testing.T, data []byte, sep byte, schema sparkmerge.Schema) {
	t.Helper()
	header, rows := referenceCSV(t, data, sep)
	if len(schema.Fields) != len(header) {
		t.Fatalf("%d columns, the header has %d", len(schema.Fields), len(header))
	}
	for j, fld := range schema.Fields {
		if fld.Name != header[j] {
			t.Fatalf("column %d is %q, the header says %q", j, fld.Name, header[j])
		}
		for _, row := range rows {
			if len(row) != len(header) {
				t.Fatalf("accepted a row of %d values under a header of %d", len(row), len(header))
			}
			if !csvValueFits(row[j], fld.Type) {
				t.Fatalf("column %q typed %s holds %q", fld.Name, fld.Type, row[j])
			}
		}
	}
}

// referenceCSV splits data as Spark's reader sees a file without quotes:
// lines end at \n or \r\n, empty lines are skipped, the first line is the
// header and data lines equal to it are skipped (as inference does).
func referenceCSV(t *testing.T, data []byte, sep byte) (header []string, rows [][]string) {
	t.Helper()
	var first string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		if header == nil {
			first, header = line, strings.Split(line, string(sep))
			continue
		}
		if line == first {
			continue
		}
		// Values quoted whole ("x,y", the only quotes the rules take,
		// with a quote inside escaped as \") are read as encoding/csv
		// reads them with the quote escaped as "".
		r := csv.NewReader(strings.NewReader(strings.ReplaceAll(line, `\"`, `""`)))
		r.Comma, r.FieldsPerRecord = rune(sep), -1
		row, err := r.Read()
		if err != nil {
			t.Fatalf("accepted a line encoding/csv cannot read: %q: %v", line, err)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// csvValueFits says whether Spark's parse of v under type t succeeds, by
// Go's own parsers: the empty string is null; an int is a 32-bit integer,
// a bigint a 64-bit one, a decimal(p,0) an integer of at most p digits
// (Java's parsers take a leading + as Go's do); a double a float; a
// boolean true or false in any case.
func csvValueFits(v string, t sparkmerge.DataType) bool {
	if v == "" {
		return true
	}
	switch t.Kind {
	case sparkmerge.KindNull:
		return false
	case sparkmerge.KindInt:
		_, err := strconv.ParseInt(v, 10, 32)
		return err == nil
	case sparkmerge.KindLong:
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case sparkmerge.KindDecimal:
		n, ok := new(big.Int).SetString(v, 10)
		return ok && t.Scale == 0 && len(strings.TrimLeft(n.String(), "-")) <= t.Precision
	case sparkmerge.KindDouble:
		_, err := strconv.ParseFloat(v, 64)
		return err == nil || err.(*strconv.NumError).Err == strconv.ErrRange
	case sparkmerge.KindBoolean:
		return strings.EqualFold(v, "true") || strings.EqualFold(v, "false")
	case sparkmerge.KindString:
		return true
	case sparkmerge.KindDate:
		return isoDate(v)
	case sparkmerge.KindTimestamp:
		// A date, a year alone (stringToTimestamp's shortest date), or
		// a date and a time of day.
		if isoDate(v) || len(v) == 4 && strings.Trim(v, "0123456789") == "" {
			return true
		}
		m := isoTimestamp.FindStringSubmatch(v)
		return m != nil && isoDate(m[1]) && m[2] < "24" && m[3] < "60" && m[4] < "60"
	}
	return false
}

var isoTimestamp = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]{1,9})?(?:Z|[+-](?:0[0-9]|1[0-7]):[0-5][0-9]|[+-]18:00)?)?$`)

// isoDate says whether v is yyyy-MM-dd, a day of the proleptic Gregorian
// calendar (Go's time.Parse takes year 0).
func isoDate(v string) bool {
	_, err := time.Parse("2006-01-02", v)
	return len(v) == 10 && err == nil
}

func FuzzInferJSONLines(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"qty":7,"price":1.50,"ok":true}` + "\n\n" + `{"id":2,"qty":-0,"price":2,"ok":null}` + "\n",
		`{"ID":3,"Qty":"x","price":1e3}` + "\r\n",
		`{"id":5,"note":"é \"q\" \u00e9","big":99999999999999999999}` + "\n   \n",
		`{"a":{"x":1,"y":[1,2.5]},"b":[{"c":true}]}` + "\n",
		`{"a":1,"A":2}` + "\n",
		`{'a':1}` + "\n",
		`{"a":NaN}` + "\n",
		`[1,2]` + "\n",
		`{"a":1} {"a":2}` + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Spark40.JSONLines(data, nil)
		again, errAgain := Spark40.JSONLines(data, nil)
		ok, okAgain := err == nil, errAgain == nil
		if ok != okAgain || ok && (!file.Raw.Equal(again.Raw) || !maps.Equal(file.Reprinted, again.Reprinted) || file.ShortNumbers != again.ShortNumbers) {
			t.Fatalf("not deterministic: %v %v / %v %v", file.Raw, ok, again.Raw, okAgain)
		}
		if !ok {
			if u, isUnsupported := err.(*Unsupported); !isUnsupported || u.Error() == "" || u.Reason == 0 {
				t.Fatalf("refused without a reason: %#v", err)
			}
			return
		}
		if file.ShortNumbers != shortNumbersByRegexp(data) {
			t.Fatalf("short numbers %v for %q", file.ShortNumbers, data)
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.Trim(line, " \t") == "" {
				continue
			}
			if !json.Valid([]byte(line)) || strings.TrimLeft(line, " \t")[0] != '{' {
				t.Fatalf("accepted %q, which is no JSON object", line)
			}
			var record map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &record); err != nil {
				t.Fatalf("accepted %q: %v", line, err)
			}
			for _, fld := range file.Raw.Fields {
				if v, ok := record[fld.Name]; ok && !jsonValueFits(v, fld.Type) {
					t.Fatalf("key %q typed %s holds %s", fld.Name, fld.Type, v)
				}
			}
		}
		doubled := append(append(append([]byte{}, data...), '\n'), data...)
		if twice, err := scanJSONLines(doubled); err != nil || !twice.Raw.Equal(file.Raw) {
			t.Fatalf("the records twice: %v (%v), once: %v", twice.Raw, err, file.Raw)
		}
	})
}

// jsonValueFits says whether a JSON value belongs in a column of type t
// as Spark's JSON reader types columns: any scalar may be a string; a
// bigint or decimal(p,0) is an integer; a double any number; a struct an
// object; an array an array; null and the empty string fit every type.
func jsonValueFits(v json.RawMessage, t sparkmerge.DataType) bool {
	v = bytes.TrimSpace(v)
	// Spark infers an empty string as it infers null (NullType), "to deal
	// with JSON generators that do not distinguish between the two"
	// (JsonInferSchema), so it fits every type too.
	if string(v) == "null" || string(v) == `""` {
		return true
	}
	switch c := v[0]; {
	case c == '{':
		return t.Kind == sparkmerge.KindStruct || t.Kind == sparkmerge.KindString
	case c == '[':
		return t.Kind == sparkmerge.KindArray || t.Kind == sparkmerge.KindString
	case c == '"':
		return t.Kind == sparkmerge.KindString
	case c == 't' || c == 'f':
		return t.Kind == sparkmerge.KindBoolean || t.Kind == sparkmerge.KindString
	}
	integer := !bytes.ContainsAny(v, ".eE")
	switch t.Kind {
	case sparkmerge.KindLong:
		_, err := strconv.ParseInt(string(v), 10, 64)
		return integer && err == nil
	case sparkmerge.KindDecimal:
		return integer && t.Scale == 0
	case sparkmerge.KindDouble, sparkmerge.KindString:
		return true
	}
	return false
}

// longDigitRun is a run of more than 15 digits, which shortNumbers looks
// for byte by byte.
var longDigitRun = regexp.MustCompile(`[0-9]{16}`)

func shortNumbersByRegexp(data []byte) bool { return !longDigitRun.Match(data) }
