package infer

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

// The expected types follow Spark 4.0's CSVInferSchema; the integration
// test TestLocalCSVInferenceMatchesSpark checks the same cases against a
// real server.
func TestInferCSV(t *testing.T) {
	tests := []struct {
		name, csv, want string
	}{
		{"ints", "a,b\n1,-2\n+3,007\n", "a int, b int"},
		{"int bounds", "a,b\n2147483647,-2147483648\n", "a int, b int"},
		{"past int", "a,b\n2147483648,-2147483649\n", "a bigint, b bigint"},
		{"int then bigint", "a\n1\n9223372036854775807\n", "a bigint"},
		{"past bigint is decimal", "a,b\n9223372036854775808,-00000000000000000009223372036854775809\n", "a decimal(19,0), b decimal(19,0)"},
		{"38 digits", "a\n" + strings.Repeat("9", 38) + "\n", "a decimal(38,0)"},
		{"39 digits is double", "a\n" + strings.Repeat("9", 39) + "\n", "a double"},
		{"decimal then int", "a\n99999999999999999999\n5\n", "a decimal(20,0)"},
		{"bigint then decimal", "a\n5000000000\n9223372036854775808\n", "a decimal(20,0)"},
		{"int then decimal", "a\n5\n9223372036854775808\n", "a decimal(19,0)"},
		{"fraction", "a,b\n1.5,2\n-0.25,3.0\n", "a double, b double"},
		{"decimal then fraction", "a\n9223372036854775808\n1.5\n", "a double"},
		{"booleans", "a,b\ntrue,FALSE\nTrue,false\n", "a boolean, b boolean"},
		{"boolean then int", "a\ntrue\n1\n", "a string"},
		{"int then boolean", "a\n1\ntrue\n", "a string"},
		{"text", "city,n\nTokyo,1\nabc,2\n", "city string, n int"},
		{"number then text", "a\n1\nx1\n", "a string"},
		{"text then number", "a\nx1\n1\n", "a string"},
		{"all null is string", "a,b\n,1\n,\n", "a string, b int"},
		{"header only", "a,b\n", "a string, b string"},
		{"repeated header lines are skipped", "a,b\n1,2\na,b\n3,4\n", "a int, b int"},
		{"crlf and empty lines", "a,b\r\n\r\n1,x\r\n\n2,y", "a int, b string"},
		{"case kept", "Id,NAME\n1,x\n", "Id int, NAME string"},
		// Quoted values: the text between the quotes, typed as any value.
		{"quoted values", "a,b,c,d,e\n\"x,y\",\"2\",\"2024-01-31\",\"true\",\"a;b\"\n\"z\",3,2024-02-01 10:00:00,false,\"c\"\n", "a string, b int, c timestamp, d boolean, e string"},
		{"quoted last value, crlf", "a,b\r\n1,\"x,y\"\r\n", "a int, b string"},
		// Spark's writer escapes a quote in a quoted value with a backslash.
		{"escaped quotes", "a,b,c\n\"say \\\"hi\\\", x\",\"a\\\",b\",\"x\\\"\"\n", "a string, b string, c string"},
		{"quoted empty value between", "a,b,c\n\"1\",,\"2\"\n", "a int, b string, c int"},
		// Dates and timestamps (Spark 3.5-4.3 with prefersDate, recorded
		// in testdata/spark/csv-datetime-gen-*.csv).
		{"dates", "a,b\n2024-01-31,0000-02-29\n2024-02-29,1582-10-10\n", "a date, b date"},
		{"timestamps", "a,b,c,d\n2024-01-31 10:20,2024-01-31T10:20:30Z,2024-01-31 10:20:30.123456789,2024-01-31T00:00:00+18:00\n", "a timestamp, b timestamp, c timestamp, d timestamp"},
		{"date then timestamp", "a,b\n2024-01-31,2024-01-31 10:20:30\n2024-01-31 10:20:30,2024-01-31\n", "a timestamp, b timestamp"},
		{"date or timestamp then text", "a,b,c,d\n2024-01-31,2024-01-31 10:20:30,2024-01-31,2024-01-31\nx,true,1.5,7\n", "a string, b string, c string, d string"},
		{"number or boolean then date", "a,b,c,d\n1,1.5,true,2024-01-31\n2024-01-31,2024-01-31,2024-01-31,abc\n", "a string, b string, c string, d string"},
		// Order: a year after a date or a timestamp is a timestamp, and a
		// year first is an int, which a timestamp after it makes a string.
		{"year after a date", "a,b\n2024-01-31,2024-01-31 10:20:30\n2020,0000\n", "a timestamp, b timestamp"},
		{"year first", "a\n2020\n2024-01-31 10:20:30\n", "a string"},
		{"short integer after a date", "a\n2024-01-31\n999\n", "a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, _, err := inferCSV([]byte(tt.csv), ',')
			if err != nil {
				t.Fatalf("not inferred locally: %v", err)
			}
			if got := schema.String(); got != tt.want {
				t.Errorf("schema = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestInferCSVTab(t *testing.T) {
	schema, _, err := inferCSV([]byte("a\tb\n1\tx,y\n"), '\t')
	if err != nil {
		t.Fatalf("not inferred locally: %v", err)
	}
	if got, want := schema.String(), "a int, b string"; got != want {
		t.Errorf("schema = %s, want %s", got, want)
	}
}

// Anything whose inference is not certain is left to Spark.
func TestInferCSVLeavesToSpark(t *testing.T) {
	tests := []struct{ name, csv, why string }{
		{"backslash", "a\nx\\y\n", `"a"`},
		{"escaped quote unquoted", "a\nx\\\"y\n", `"a"`},
		{"escaped backslash in quotes", "a\n\"x\\\\y\"\n", `"a"`},
		{"other escape in quotes", "a\n\"x\\by\"\n", `"a"`},
		{"escape before the line's end", "a\n\"x\\\"\n", `"a"`},
		{"NUL", "a\nx\x00\n", "NUL"},
		{"escaped quote after a number", "a\n\"7\\\"\"\n", `"a"`},
		{"backslash in the header", "a\\b\n1\n", "header"},
		{"quoted header", "\"a\",b\n1,2\n", "header"},
		{"doubled quotes", "a,b\n\"say \"\"hi\"\"\",1\n", `"a"`},
		{"empty quotes", "a,b\n\"\",1\n", `"a"`},
		{"space before a quote", "a,b\n1, \"2\"\n", `"b"`},
		{"space after a quote", "a,b\n\"1\" ,2\n", `"a"`},
		{"quote inside a value", "a,b\nx\"y,1\n", `"a"`},
		{"unclosed quote", "a,b\n1,\"x,y\n", `"b"`},
		{"quoted line break", "a,b\n1,\"x\ny\"\n", `"b"`},
		{"quoted spaces", "a,b\n\" 12\",1\n", `"a"`},
		{"impossible day", "a\n2021-02-29\n", `"a"`},
		{"date of one-digit month", "a\n2024-1-31\n", `"a"`},
		{"signed year", "a\n+2024-01-31\n", `"a"`},
		{"five-digit year", "a\n12024-01-31\n", `"a"`},
		{"hour 24", "a\n2024-01-31 24:00:00\n", `"a"`},
		{"leap second", "a\n2024-01-31 23:59:60\n", `"a"`},
		{"hour alone", "a\n2024-01-31T10\n", `"a"`},
		{"ten fraction digits", "a\n2024-01-31 10:00:00.1234567891\n", `"a"`},
		{"zone name", "a\n2024-01-31 10:00:00 UTC\n", `"a"`},
		{"offset past 18:00", "a\n2024-01-31 10:00:00+18:01\n", `"a"`},
		{"offset without colon", "a\n2024-01-31 10:00:00+0100\n", `"a"`},
		{"zone after minutes", "a\n2024-01-31 10:00Z\n", `"a"`},
		{"trailing space", "a\n2024-01-31 \n", `"a"`},
		{"time alone", "a\n10:00:00\n", `"a"`},
		{"signed year after a date", "a\n2024-01-31\n-2020\n", `"a"`},
		{"five-digit year after a timestamp", "a\n2024-01-31 10:00\n20200\n", `"a"`},
		{"time of day", "a\nT10:00\n", `"a"`},
		{"exponent", "a\n1e5\n", `"a"`},
		{"trailing dot", "a\n1.\n", `"a"`},
		{"padded number", "a\n 12\n", `"a"`},
		{"NaN", "a\nNaN\n", `"a"`},
		{"Infinity", "a\nInfinity\n", `"a"`},
		{"non-ASCII digits", "a\n١٢\n", `"a"`},
		{"short row", "a,b\n1\n", "width"},
		{"long row", "a,b\n1,2,3\n", "width"},
		{"empty column name", "a,,c\n1,2,3\n", "column name"},
		{"repeated column name", "id,ID\n1,2\n", "column name"},
		{"padded column name", "a, b\n1,2\n", "column name"},
		{"blank line", "a\n  \n1\n", "blanks"},
		{"lone carriage return", "a\r1\n", "carriage return"},
		{"byte order mark", "\ufeffa\n1\n", "byte order mark"},
		{"not utf-8", "a\n\xff\n", "UTF-8"},
		{"no header", "\n\n", "no header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, _, err := inferCSV([]byte(tt.csv), ',')
			if err == nil {
				t.Fatalf("inferred locally as %s; want it left to Spark", schema)
			}
			if why := err.Error(); !strings.Contains(why, tt.why) {
				t.Errorf("reason %q does not mention %q", why, tt.why)
			}
			want := UnsupportedContents
			if tt.name == "not utf-8" {
				want = NotUTF8
			}
			if u, ok := err.(*Unsupported); !ok || u.Reason != want {
				t.Errorf("error %#v: want an *Unsupported of reason %d", err, want)
			}
		})
	}
}

// The options and files whose inference the CSV rules reproduce; which
// paths the executor hands them is its own test
// (TestLocalCSVFileOptionsAndFiles).
func TestCSVFileOptionsAndFiles(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csv, []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	semi := filepath.Join(dir, "semi.csv")
	if err := os.WriteFile(semi, []byte("a;b\n1;x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte("a\n"+strings.Repeat("1\n", MaxFileBytes/2)), 0o644); err != nil {
		t.Fatal(err)
	}
	latin1 := filepath.Join(dir, "latin1.csv")
	if err := os.WriteFile(latin1, []byte("a\nZ\xfcrich\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	with := func(k, v string) map[string]string {
		return map[string]string{"header": "true", "inferSchema": "true", "mode": "FAILFAST", k: v}
	}
	defaults := with("mode", "FAILFAST")
	tests := []struct {
		name    string
		path    string
		options map[string]string
		reason  Reason // 0: inferred
	}{
		{"defaults", csv, defaults, 0},
		{"semicolon", semi, with("sep", ";"), 0},
		{"delimiter", semi, with("delimiter", ";"), 0},
		{"mode is irrelevant", csv, with("mode", "PERMISSIVE"), 0},
		{"enforceSchema is irrelevant", csv, with("enforceSchema", "false"), 0},
		{"other option", csv, with("nullValue", "NA"), UnsupportedOptions},
		{"odd separator", csv, with("sep", "::"), UnsupportedOptions},
		{"no header", csv, with("header", "false"), UnsupportedOptions},
		{"no inference", csv, with("inferSchema", "false"), UnsupportedOptions},
		{"too big", big, defaults, UnsupportedFile},
		{"missing", filepath.Join(dir, "missing.csv"), defaults, UnsupportedFile},
		{"directory", dir, defaults, UnsupportedFile},
		{"not utf-8", latin1, defaults, NotUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Spark40.CSVFile(tt.path, tt.options)
			var reason Reason
			if err != nil {
				u, ok := err.(*Unsupported)
				if !ok {
					t.Fatalf("error %#v is no *Unsupported", err)
				}
				reason = u.Reason
			}
			if reason != tt.reason {
				t.Errorf("reason %d (%v), want %d", reason, err, tt.reason)
			}
			if err == nil && f.Schema.String() != "a int, b string" {
				t.Errorf("schema %s", f.Schema)
			}
		})
	}
	if _, err := (Rules{}).CSVFile(csv, defaults); err == nil || err.(*Unsupported).Reason != NoRules {
		t.Errorf("zero Rules: %v, want NoRules", err)
	}
}

// A file read whose contents are left to Spark still tells whether its
// numbers are short, and bytes are typed as the file of them is.
func TestCSVShortNumbers(t *testing.T) {
	options := map[string]string{"header": "true", "inferSchema": "true"}
	f, err := Spark40.CSV([]byte("a,b\n\"1\"\"\",2\n"), options)
	if err == nil || !f.ShortNumbers {
		t.Errorf("quoted file: %+v, %v: want refused with ShortNumbers", f, err)
	}
	f, err = Spark40.CSV([]byte("a,b\n1,12345678901234567\n"), options)
	if err != nil || f.ShortNumbers || f.Schema.String() != "a int, b bigint" {
		t.Errorf("long number: %+v, %v", f, err)
	}
	if f, err = Spark40.CSV([]byte("a\n\xff\n"), options); err == nil || f.ShortNumbers {
		t.Errorf("not UTF-8: %+v, %v: want refused without ShortNumbers", f, err)
	}
	if _, err = Spark40.CSV([]byte("a\n1\n"), nil); err == nil {
		t.Error("without header and inferSchema: inferred")
	}
}

func TestShortNumbers(t *testing.T) {
	for data, want := range map[string]bool{
		"id,v\n1,900719925474099\n":       true,  // 15 digits
		"id,v\n1,9007199254740993\n":      false, // 16
		"{\"v\":1.2345678901234567}\n":    false, // 17 digits after the point
		"id,v\n123,x4567890123456789\n":   false, // digits of text count too
		"":                                true,
		"1234567890123456":                false, // the whole input, one word and a half
		"x1234567890123456":               false, // unaligned
		"123456789012345x123456789012345": true,
		"12345678/12345678":               true, // '/' and ':' are the bytes around the digits
		"12345678:12345678":               true,
		"\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xb0\xb1\xb2\xb3\xb4\xb5": true, // digits with the high bit set
	} {
		if got := shortNumbers([]byte(data)); got != want {
			t.Errorf("shortNumbers(%q) = %v, want %v", data, got, want)
		}
	}
}

// The word-at-a-time test agrees with a regexp on every input.
func FuzzShortNumbers(f *testing.F) {
	for _, seed := range []string{"", "1234567890123456", "a123456789012345b", "9876543210987654321", "12345678:1234567"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := shortNumbers(data), shortNumbersByRegexp(data); got != want {
			t.Errorf("shortNumbers(%q) = %v, want %v", data, got, want)
		}
	})
}

// The header line comes back as written when no later line repeats it:
// only then may a reader drop every line equal to it. A file with a quoted
// value says so: its lines must be parsed, not split at the separator.
func TestCSVHeader(t *testing.T) {
	tests := []struct {
		name, csv, want string
		quoted          bool
	}{
		{"plain", "a,b\n1,2\n", "a,b", false},
		{"after empty lines, with CRLF", "\n\r\nId,NAME\r\n1,x\r\n", "Id,NAME", false},
		{"header only", "a,b", "a,b", false},
		{"repeated", "a,b\n1,2\na,b\n3,4\n", "", false},
		{"repeated with CRLF", "a,b\n1,2\r\na,b\r\n", "", false},
		{"a data line like it but for case", "a,b\nA,B\n", "a,b", false},
		// A positional scan parses such lines with Spark's CSV parser
		// (a quoted value may hold the separator).
		{"a quoted value", "a,b\n1,\"x,y\"\n", "a,b", true},
		{"a quoted value, the header repeated", "a,b\n1,\"x\\\"y\"\na,b\n", "", true},
	}
	for _, tt := range tests {
		f, err := Spark40.CSV([]byte(tt.csv), map[string]string{"header": "true", "inferSchema": "true"})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if f.Header != tt.want || f.Quoted != tt.quoted {
			t.Errorf("%s: header %q, quoted %v; want %q, %v", tt.name, f.Header, f.Quoted, tt.want, tt.quoted)
		}
	}
}

// A file of its header alone has no row to Spark's reader: its types say
// nothing. A line repeating the header is a row to the reader (only
// inference skips it).
func TestCSVNoRows(t *testing.T) {
	tests := []struct {
		csv  string
		want bool
	}{
		{"a,b\n", true},
		{"a,b", true},
		{"\r\na,b\r\n\r\n\n", true},
		{"a,b\n1,2\n", false},
		{"a,b\na,b\n", false},
		{"a,b\n,\n", false},
	}
	for _, tt := range tests {
		f, err := csvFile([]byte(tt.csv), ',')
		if err != nil {
			t.Fatalf("%q: %v", tt.csv, err)
		}
		if f.NoRows != tt.want {
			t.Errorf("%q: NoRows = %v, want %v", tt.csv, f.NoRows, tt.want)
		}
	}
}

// A year after a date or timestamp types the column as Spark's fold of a
// partition does, not as its merge of two: so only in a file Spark reads
// in one partition. Larger, the file is Spark's.
func TestInferCSVYearAfterDatetimeOnlyInOnePartition(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("2024-01-31,x\n", n/len("2024-01-31,x\n")+1) }
	small := "d,t\n" + pad(splitFreeBytes-100) + "2020,y\n"
	if schema, _, err := inferCSV([]byte(small), ','); err != nil || schema.String() != "d timestamp, t string" {
		t.Errorf("under %d bytes: %v, %v; want d timestamp, t string", splitFreeBytes, schema, err)
	}
	large := "d,t\n" + pad(splitFreeBytes) + "2020,y\n"
	if schema, _, err := inferCSV([]byte(large), ','); err == nil || !strings.Contains(err.Error(), "partitions") {
		t.Errorf("over %d bytes: %v, %v; want it left to Spark", splitFreeBytes, schema, err)
	}
	// Dates alone in a large file are no fold of order.
	dates := "d,t\n" + pad(splitFreeBytes) + "2024-02-01,y\n"
	if schema, _, err := inferCSV([]byte(dates), ','); err != nil || schema.String() != "d date, t string" {
		t.Errorf("dates over %d bytes: %v, %v; want d date, t string", splitFreeBytes, schema, err)
	}
}

func TestCSVValueOfType(t *testing.T) {
	dec := func(p, s int) sparkmerge.DataType { return sparkmerge.NewDecimal(p, s) }
	simple := sparkmerge.Simple
	for _, tc := range []struct {
		v    string
		t    sparkmerge.DataType
		want bool
	}{
		{"7", simple(sparkmerge.KindInt), true},
		{"-7", simple(sparkmerge.KindLong), true},
		{"3000000000", simple(sparkmerge.KindInt), false}, // a bigint
		{"3000000000", simple(sparkmerge.KindLong), true},
		{"7", simple(sparkmerge.KindDouble), true},
		{"1.5", simple(sparkmerge.KindDouble), true},
		{"1.5", simple(sparkmerge.KindInt), false},
		{"12345678901234567890", dec(20, 0), true},
		{"7", dec(20, 0), true},
		{"7", dec(10, 2), false}, // no CSV value infers a scale
		{"TRUE", simple(sparkmerge.KindBoolean), true},
		{"2024-01-02", simple(sparkmerge.KindDate), true},
		{"2024-01-02", simple(sparkmerge.KindTimestamp), true},
		{"2024-01-02 10:00:00", simple(sparkmerge.KindTimestamp), true},
		{"2024-01-02 10:00:00", simple(sparkmerge.KindDate), false},
		{"id", simple(sparkmerge.KindInt), false},
		{"amount", simple(sparkmerge.KindString), false},
		{"7", simple(sparkmerge.KindString), false}, // says nothing
		{"", simple(sparkmerge.KindInt), false},
		{"NaN", simple(sparkmerge.KindDouble), false}, // Spark decides
	} {
		if got := CSVValueOfType(tc.v, tc.t); got != tc.want {
			t.Errorf("CSVValueOfType(%q, %s) = %v, want %v", tc.v, tc.t, got, tc.want)
		}
	}
}

// An integer written with leading zeros in a column typed as a number is
// noted, its first value a column: Spark reads the number and the zeros
// are lost. Not in a column of text, nor for 0, a fraction or a date.
func TestCSVZeroPadded(t *testing.T) {
	tests := []struct {
		csv  string
		want map[int]string
	}{
		{"id,zip\n1,94105\n2,02134\n3,00501\n", map[int]string{1: "02134"}},
		{"id,zip\n1,-012\n2,+007\n", map[int]string{1: "-012"}},
		{"id,zip\n1,\"02134\"\n", map[int]string{1: "02134"}}, // quoted, still an int to Spark
		{"id,zip\n1,007\n2,A1\n", nil},                        // a string: kept as written
		{"id,x\n0,0\n-0,0.5\n", nil},
		{"id,x\n1,00.5\n2,2024-01-05\n", nil},
		{"id,x\n10,7\n", nil},
		{"id,big\n1,012345678901\n", map[int]string{1: "012345678901"}}, // a bigint
	}
	for _, tt := range tests {
		f, err := csvFile([]byte(tt.csv), ',')
		if err != nil {
			t.Fatalf("%q: %v", tt.csv, err)
		}
		if !maps.Equal(f.ZeroPadded, tt.want) {
			t.Errorf("%q: ZeroPadded = %v, want %v", tt.csv, f.ZeroPadded, tt.want)
		}
	}
}

// A number with more significant digits than a double keeps, in a column
// typed as double, is noted, its first value a column: Spark reads the
// nearest double and the digits are lost. Not where the double is the
// text's value (0.1, trailing zeros), in a column of big integers
// (decimal(20,0) keeps them) or of text.
func TestCSVRounded(t *testing.T) {
	tests := []struct {
		csv  string
		want map[int]string
	}{
		{"id,pi\n1,1.5\n2,3.14159265358979323846\n3,2.71828182845904523536\n", map[int]string{1: "3.14159265358979323846"}},
		{"id,x\n1,0.1000000000000000055511151231257827\n", map[int]string{1: "0.1000000000000000055511151231257827"}},
		{"id,x\n1,12345678901234567.5\n", map[int]string{1: "12345678901234567.5"}},
		{"id,x\n1,12345678901234567\n2,0.5\n", map[int]string{1: "12345678901234567"}}, // an integer in a double column
		{"id,x\n1,1.50000000000000000000\n2,0.1\n", nil},
		{"id,x\n1,0.12345678901234\n", nil},                                                   // 14 digits: a double's
		{"id,x\n1,12345678901234567890\n", nil},                                               // decimal(20,0)
		{"id,x\n1,3.14159265358979323846\n2,pi\n", nil},                                       // a string: kept as written
		{"id,x\n1,\"3.14159265358979323846\"\n", map[int]string{1: "3.14159265358979323846"}}, // quoted, still a double to Spark
	}
	for _, tt := range tests {
		f, err := csvFile([]byte(tt.csv), ',')
		if err != nil {
			t.Fatalf("%q: %v", tt.csv, err)
		}
		if !maps.Equal(f.Rounded, tt.want) {
			t.Errorf("%q: Rounded = %v (schema %s), want %v", tt.csv, f.Rounded, f.Schema, tt.want)
		}
	}
}

// A column typed as a timestamp whose times have digits past the
// microsecond (which Spark drops) is noted with its first such value; a
// fraction of six digits or fewer, zeros past the sixth, or a column that
// is a string is not.
func TestCSVPastMicros(t *testing.T) {
	tests := []struct {
		csv  string
		want map[int]string
	}{
		{"id,ts\n1,2024-01-05T10:00:00.5\n2,2024-01-05T10:00:00.123456789\n3,2024-01-05T10:00:00.9999999\n", map[int]string{1: "2024-01-05T10:00:00.123456789"}},
		{"id,ts\n1,2024-01-05 10:00:00.1234567Z\n", map[int]string{1: "2024-01-05 10:00:00.1234567Z"}},
		{"id,ts\n1,2024-01-05T10:00:00.123456\n2,2024-01-05T10:00:00.123456000\n", nil},
		{"id,ts\n1,2024-01-05T10:00:00.123456789\n2,soon\n", nil}, // a string: kept as written
		{"id,d\n1,2024-01-05\n", nil},
	}
	for _, tt := range tests {
		f, err := csvFile([]byte(tt.csv), ',')
		if err != nil {
			t.Fatalf("%q: %v", tt.csv, err)
		}
		if !maps.Equal(f.PastMicros, tt.want) {
			t.Errorf("%q: PastMicros = %v (schema %s), want %v", tt.csv, f.PastMicros, f.Schema, tt.want)
		}
	}
	for v, want := range map[string]string{"2024-01-05T10:00:00.123456789": "2024-01-05T10:00:00.123456", "2024-01-05 10:00:00.1234567+05:00": "2024-01-05 10:00:00.123456+05:00"} {
		if got, ok := PastMicros([]byte(v)); !ok || got != want {
			t.Errorf("PastMicros(%q) = %q, %v; want %q", v, got, ok, want)
		}
	}
}

// A column that is a string only for texts that say "no value" ("NA",
// "N/A", "null") is noted with those texts and the type of its other
// values; a column with text of its own is not.
func TestCSVNullTokens(t *testing.T) {
	str := func(k sparkmerge.Kind) sparkmerge.DataType { return sparkmerge.Simple(k) }
	tests := []struct {
		csv  string
		want map[int]NullTokens
	}{
		{"id,amount\n1,10\n2,NA\n3,12\n", map[int]NullTokens{1: {Tokens: []string{"NA"}, Type: str(sparkmerge.KindInt)}}},
		{"id,amount\n1,NA\n2,\n3,1.5\n4,N/A\n5,null\n", map[int]NullTokens{1: {Tokens: []string{"NA", "N/A", "null"}, Type: str(sparkmerge.KindDouble)}}},
		{"id,day\n1,None\n2,2024-01-05\n", map[int]NullTokens{1: {Tokens: []string{"None"}, Type: str(sparkmerge.KindDate)}}},
		{"id,amount\n1,NA\n2,ten\n", nil},                                 // text of its own
		{"id,amount\n1,ten\n2,NA\n", nil},                                 // text first
		{"id,amount\n1,NA\n2,NA\n", nil},                                  // no other value
		{"id,amount\n1,na\n2,nil\n3,none\n4,missing\n5,NULL\n6,7\n", nil}, // five texts: values, not tokens
		{"id,amount\n1,10\n", nil},
	}
	for _, tt := range tests {
		f, err := csvFile([]byte(tt.csv), ',')
		if err != nil {
			t.Fatalf("%q: %v", tt.csv, err)
		}
		if !reflect.DeepEqual(f.NullTokens, tt.want) {
			t.Errorf("%q: NullTokens = %+v, want %+v", tt.csv, f.NullTokens, tt.want)
		}
	}
}
