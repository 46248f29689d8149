//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Hinted CSV and JSON values that Spark's reader would round or cut
// (found in the field: 4.999 hinted decimal(10,2) came out 5.00, 1e40
// hinted float Infinity, a timestamp hinted date its time, with --verify
// passing). The hinted columns of the corpus and their hints: a decimal
// with a scale, one without, a float, a date, and (CSV files only) a
// decimal(38,s), which has no wider decimal.
var exactHints = map[string]string{"d3": "decimal(7,3)", "d0": "decimal(10,0)", "fl": "float", "dt": "date", "dw": "decimal(38,4)"}

var exactColumns = []string{"d3", "d0", "fl", "dt", "dw"}

// dateToken is a generated date as a CSV or JSON file may write it, and
// whether the hint date cuts anything from it (a time of day other than
// midnight, whatever the session's time zone, or text after the date):
// the forms Spark's date and timestamp readers were compared on. With
// seconds (a JSON file's) some are numbers of seconds since 1970, which
// JSON's timestamp reader reads and its date reader refuses, some at
// midnight.
func dateToken(r *rand.Rand, seconds bool) (string, bool) {
	y, m, d := 1900+r.Intn(150), 1+r.Intn(12), 1+r.Intn(28)
	day := fmt.Sprintf("%04d-%02d-%02d", y, m, d)
	clock := fmt.Sprintf("%02d:%02d:%02d", 1+r.Intn(23), r.Intn(60), 1+r.Intn(59))
	// (No day that does not exist: Spark 3.5 fails the whole read on it,
	// INCONSISTENT_BEHAVIOR_CROSS_VERSION, rather than the value.)
	switch n := r.Intn(10); {
	case seconds && n == 0 && r.Intn(2) == 0:
		return strconv.Itoa(86400 * r.Intn(20000)), true
	case n == 1:
		return fmt.Sprintf("%d-%d-%d", y, m, d), false
	case n == 2:
		return day + " 00:00:00", false
	case n == 3:
		return day + "T00:00", false
	case n == 4:
		return fmt.Sprintf("%04d", y), false
	case n == 5:
		return day + "T" + clock, true
	case n == 6:
		return day + " " + clock + "." + strconv.Itoa(1+r.Intn(999)), true
	case n == 7:
		return day + "T" + clock + "+05:00", true
	case n == 8:
		return day + " end of day", true // the date reader drops the rest
	}
	return day, false
}

// dateSeconds reports whether dateToken wrote a JSON date as a number of
// seconds (its years have four digits; its numbers 0 or five and more).
func dateSeconds(v string) bool {
	_, err := strconv.Atoi(v)
	return err == nil && len(v) != 4
}

// exactToken is a generated value of column col as written: most keep
// their value in the hinted type, some have digits past its scale or a
// float's precision or range, and where bad, some do not fit at all.
func exactToken(r *rand.Rand, col string, bad bool) string {
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + r.Intn(10)))
		}
		return b.String()
	}
	// An integer part: no leading zero, which JSON forbids.
	integer := func(n int) string {
		if n == 1 {
			return digits(1)
		}
		return string(byte('1'+r.Intn(9))) + digits(n-1)
	}
	sign := ""
	if r.Intn(4) == 0 {
		sign = "-"
	}
	switch col {
	case "d3", "d0", "dw":
		intDigits, fracDigits := 1+r.Intn(4), r.Intn(4)
		switch {
		case col == "dw":
			intDigits, fracDigits = 1+r.Intn(30), r.Intn(5)
			if r.Intn(3) == 0 {
				fracDigits += 2 + r.Intn(6) // past the scale, often rounding
			}
		case col == "d0":
			intDigits, fracDigits = 1+r.Intn(9), 0
			if r.Intn(3) == 0 {
				fracDigits = 1 + r.Intn(5) // past the scale, often rounding
			}
		case r.Intn(3) == 0:
			fracDigits += 3 + r.Intn(5) // past the scale, often rounding
		}
		if bad && r.Intn(3) == 0 {
			intDigits += 8 // too large for the hint
		}
		t := sign + integer(intDigits)
		if fracDigits > 0 {
			t += "." + digits(fracDigits)
		}
		if fracDigits > 0 && r.Intn(8) == 0 {
			t += "000" // trailing zeros: the same value
		}
		if r.Intn(10) == 0 {
			// Exponent form: the same digits moved.
			if v, ok := new(big.Rat).SetString(t); ok {
				t = strings.TrimRight(strings.TrimRight(v.FloatString(12), "0"), ".") + "e0"
			}
		}
		return t
	default:
		switch r.Intn(12) {
		case 0:
			return []string{"NaN", "Infinity", "-Infinity", "0.1", "16777217", "3.4028235e38", "3.5e38", "1e-50", "1e40", "-0.0"}[r.Intn(10)]
		case 1, 2, 3:
			// More digits than a float holds.
			return sign + digits(1) + "." + digits(8+r.Intn(6)) + "e" + strconv.Itoa(r.Intn(20)-10)
		}
		t := sign + digits(1)
		if n := r.Intn(7); n > 0 {
			t += "." + digits(n)
		}
		return t + "e" + strconv.Itoa(r.Intn(40)-20)
	}
}

// exactCorpus writes two CSV and two JSON files of rows with generated
// values, and returns every value as written by id and column. The
// second file of each format also holds values too large for a hint.
func exactCorpus(t *testing.T, dir string, seed int64, jsonWide bool) (values map[int]map[string]string, cut map[int]bool) {
	r := rand.New(rand.NewSource(seed))
	values, cut = map[int]map[string]string{}, map[int]bool{}
	files := map[string]string{}
	id := 0
	for _, f := range []struct {
		name string
		bad  bool
	}{{"a.csv", false}, {"b.csv", true}, {"a.json", false}, {"b.json", true}} {
		cols := exactFileColumns(f.name, jsonWide)
		var b strings.Builder
		if strings.HasSuffix(f.name, ".csv") {
			b.WriteString(strings.Join(cols, ",") + "\n")
		}
		for range 60 {
			id++
			row := map[string]string{}
			var fields []string
			for _, c := range cols {
				v := strconv.Itoa(id)
				switch c {
				case "extra":
					v = "x"
				case "dt":
					v, cut[id] = dateToken(r, strings.HasSuffix(f.name, ".json") && f.bad)
					row[c] = v
				case "id":
				default:
					v = exactToken(r, c, f.bad)
					row[c] = v
				}
				if strings.HasSuffix(f.name, ".json") {
					if c == "extra" || (c == "fl" && strings.ContainsAny(v, "NI")) || (c == "dt" && !dateSeconds(v)) {
						v = strconv.Quote(v) // NaN and Infinity are strings in JSON, so are dates
					}
					v = strconv.Quote(c) + ":" + v
				}
				fields = append(fields, v)
			}
			values[id] = row
			if strings.HasSuffix(f.name, ".json") {
				b.WriteString("{" + strings.Join(fields, ",") + "}\n")
			} else {
				b.WriteString(strings.Join(fields, ",") + "\n")
			}
		}
		files[f.name] = b.String()
	}
	writeFiles(t, dir, files, "a.csv", "b.csv", "a.json", "b.json")
	return values, cut
}

// exactFileColumns are the columns of a file of exactCorpus, in order;
// with jsonWide, the JSON files hold the decimal(38,s) column too.
func exactFileColumns(name string, jsonWide bool) []string {
	switch {
	case name == "a.csv":
		return []string{"id", "d3", "dt", "d0", "fl", "dw"}
	case name == "b.csv":
		return []string{"fl", "id", "dw", "extra", "d0", "dt", "d3"}
	case name == "a.json" && jsonWide:
		return []string{"id", "dw", "d3", "d0", "fl", "dt"}
	case name == "a.json":
		return []string{"id", "d3", "d0", "fl", "dt"}
	case jsonWide:
		return []string{"fl", "dt", "id", "extra", "d0", "d3", "dw"}
	}
	return []string{"fl", "dt", "id", "extra", "d0", "d3"}
}

// exactOracle is what Spark reading each file alone makes of every
// hinted value: its text read as a string, and the hinted type's value,
// or failed: the value does not parse into the type (a PERMISSIVE read
// gives null for it and keeps the record as corrupt).
type exactOracleValue struct {
	text   string
	typed  any // the hinted type's value as Spark prints it; nil: failed
	failed bool
	// stamp: a date's text read as a timestamp (Spark's text of it), or
	// nil: what a value whose time is cut is rescued as, where the text
	// reads as one.
	stamp any
}

func exactOracle(t *testing.T, dir string, jsonWide bool) map[int]map[string]exactOracleValue {
	out := map[int]map[string]exactOracleValue{}
	for _, name := range []string{"a.csv", "b.csv", "a.json", "b.json"} {
		format := strings.TrimPrefix(filepath.Ext(name), ".")
		// A CSV file's columns by position, as exactCorpus writes them.
		cols := exactFileColumns(name, jsonWide)
		var hinted, strs, stamps []string
		for _, c := range cols {
			typ := exactHints[c]
			switch c {
			case "id":
				typ = "INT"
			case "extra":
				typ = "STRING"
			}
			hinted = append(hinted, c+" "+typ)
			if c == "dt" && format == "json" {
				stamps = append(stamps, c+" TIMESTAMP_NTZ")
			} else if c == "dt" {
				stamps = append(stamps, c+" TIMESTAMP")
			} else {
				stamps = append(stamps, c+" "+typ)
			}
			if c != "id" {
				typ = "STRING"
			}
			strs = append(strs, c+" "+typ)
		}
		path := sparkmerge.QuoteString(filepath.Join(dir, name))
		view := func(v, schema string) string {
			return fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s (%s) USING %s OPTIONS (path %s, header 'true', mode 'PERMISSIVE', columnNameOfCorruptRecord '_bad')",
				v, schema, format, path)
		}
		base := strings.NewReplacer(".", "_").Replace(name)
		exec(t, view("exact_typed_"+base, strings.Join(hinted, ", ")+", _bad STRING"),
			view("exact_text_"+base, strings.Join(strs, ", ")+", _bad STRING"),
			view("exact_stamp_"+base, strings.Join(stamps, ", ")+", _bad STRING"))
		var sel []string
		for _, c := range exactColumns {
			if slices.Contains(cols, c) {
				sel = append(sel, "CAST(t."+c+" AS STRING)", "s."+c, "CAST(p."+c+" AS STRING)")
			} else {
				sel = append(sel, "CAST(NULL AS STRING)", "CAST(NULL AS STRING)", "CAST(NULL AS STRING)")
			}
		}
		rows := queryRows(t, fmt.Sprintf("SELECT s.id, %s FROM exact_typed_%s t JOIN exact_text_%s s ON t.id = s.id JOIN exact_stamp_%s p ON p.id = s.id", strings.Join(sel, ", "), base, base, base))
		if len(rows) != 60 {
			t.Fatalf("%s: the oracle read %d rows, want 60", name, len(rows))
		}
		for _, r := range rows {
			id := int(r[0].(int32))
			out[id] = map[string]exactOracleValue{}
			for k, c := range exactColumns {
				typed, text := r[1+3*k], r[2+3*k]
				o := exactOracleValue{typed: typed, stamp: r[3+3*k]}
				if text != nil {
					o.text = text.(string)
				}
				o.failed = typed == nil && text != nil
				out[id][c] = o
			}
		}
	}
	return out
}

// exactChanged reports whether typed, Spark's value of text in the hinted
// type, is not the value text says, worked out here without Spark:
// decimals exactly, a float by whether, rounded to as many significant
// digits as the text's double has, it is that double (0.1 and 7.3e10 are
// kept; 0.123456789 as 0.12345679, 1e40 as Infinity or 1e-50 as 0 are
// not), as a double's value narrowed to a float is checked.
func exactChanged(t *testing.T, col, text, typed string) bool {
	if col != "fl" {
		x, ok1 := new(big.Rat).SetString(asciiDigits(strings.ReplaceAll(text, ",", "")))
		y, ok2 := new(big.Rat).SetString(typed)
		if !ok1 || !ok2 {
			t.Fatalf("%s: cannot compare %q with Spark's %q", col, text, typed)
		}
		return x.Cmp(y) != 0
	}
	d, err := strconv.ParseFloat(text, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		t.Fatalf("%s: %q: %v", col, text, err)
	}
	f, err := strconv.ParseFloat(strings.Replace(typed, "E", "e", 1), 32)
	if err != nil && !strings.Contains(err.Error(), "range") {
		t.Fatalf("%s: Spark's %q: %v", col, typed, err)
	}
	switch {
	case math.IsNaN(d) || math.IsNaN(f):
		return math.IsNaN(d) != math.IsNaN(f)
	case math.IsInf(d, 0) || math.IsInf(f, 0):
		return d != f
	}
	if d == 0 || f == 0 {
		return d != f
	}
	// The double's significant digits, as Java prints them (shortest).
	mantissa := strings.SplitN(strconv.FormatFloat(math.Abs(d), 'e', -1, 64), "e", 2)[0]
	k := len(strings.TrimRight(strings.Replace(mantissa, ".", "", 1), "0"))
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'e', max(k-1, 0), 64), 64)
	return rounded != d
}

// asciiDigits writes the digits of other scripts that Java's BigDecimal
// reads (fullwidth ２４, Arabic-Indic ٤٢) as ASCII digits: a digit's value
// is how many digits precede it in its block of ten.
func asciiDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 || !unicode.IsDigit(r) {
			return r
		}
		v := rune(0)
		for v < 9 && unicode.IsDigit(r-v-1) {
			v++
		}
		return '0' + v
	}, s)
}

// TestHintedTextIsNeverRoundedSilently: a CSV or JSON value that Spark's
// reader would round or cut into its column's hinted type (digits past a
// decimal's scale, a float's precision or range) is rescued, or fails the
// merge naming it and its file, and every other value is what Spark reads
// from its file alone into the hint: generated values, compared with Spark
// reading each file alone and exact arithmetic, on every path (client
// typing, Spark's inference, files only the server sees). With
// --lossy-widening every value is Spark's reader's.
func TestHintedTextIsNeverRoundedSilently(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	const seed = 20261207
	// A JSON file's decimal(38,s) is read exactly where the server reads
	// a JSON number as written (Spark 4; a known gap on Spark 3.5).
	jsonWide := !strings.HasPrefix(c.SparkVersion(), "3.")
	written, cut := exactCorpus(t, dir, seed, jsonWide)
	oracle := exactOracle(t, dir, jsonWide)
	hints := map[string]sparkmerge.DataType{}
	for col, typ := range exactHints {
		h, err := sparkmerge.ParseType(typ)
		if err != nil {
			t.Fatal(err)
		}
		hints[col] = h
	}
	// want: per id and column, whether the merge must rescue the value.
	rescue := map[int]map[string]bool{}
	counts := map[string]int{}
	for id, cols := range oracle {
		rescue[id] = map[string]bool{}
		for col, o := range cols {
			if o.text != written[id][col] && !sameNumber(o.text, written[id][col]) {
				// (Spark 3.5 reads a JSON number into a string as the
				// number it parses, 5e0 as 5.0.)
				t.Fatalf("id %d %s: Spark reads %q as the text %q", id, col, written[id][col], o.text)
			}
			var r bool
			switch {
			case col == "dt":
				r = o.failed || cut[id]
			case o.text != "":
				r = o.failed || exactChanged(t, col, o.text, fmt.Sprint(o.typed))
			}
			rescue[id][col] = r
			if r {
				counts[col]++
			}
		}
	}
	t.Logf("seed %d: %d rows; values to rescue by column: %v", seed, len(oracle), counts)
	for _, col := range exactColumns {
		if counts[col] == 0 || counts[col] > len(oracle)/2 {
			t.Fatalf("column %s: %d of %d values change: the corpus must hold both kinds", col, counts[col], len(oracle))
		}
	}

	run := func(t *testing.T, in string, sparkInference bool, options map[string]string) {
		sources := []spark.SourceSpec{{Paths: []string{in + "/*.csv"}, Options: options}, {Paths: []string{in + "/*.json"}, Options: options}}
		res, out := merge(t, c, spark.Job{Sources: sources, Verify: true, SparkInference: sparkInference,
			Policy: sparkmerge.Options{Hints: hints, Rescue: "_rescued"}})
		if !res.Verified {
			t.Error("not verified")
		}
		rows := parquetRows(t, out, append(append([]string{"id"}, exactColumns...), "_rescued"), "CAST(`_0` AS INT)")
		if len(rows) != len(oracle) {
			t.Fatalf("%d rows merged, want %d", len(rows), len(oracle))
		}
		got := map[string]int{}
		for _, r := range rows {
			id, _ := strconv.Atoi(r[0].(string))
			var rescued map[string]string
			if last := r[len(r)-1]; last != nil {
				if err := json.Unmarshal([]byte(last.(string)), &rescued); err != nil {
					t.Fatalf("id %d: rescue column %v: %v", id, last, err)
				}
			}
			for k, col := range exactColumns {
				o, value := oracle[id][col], r[1+k]
				text, isRescued := rescued[col]
				switch {
				case rescue[id][col] && !isRescued:
					t.Errorf("id %d %s: %q is %v as %s (Spark's reader: %v), merged as %v without rescue", id, col, o.text, o.typed, exactHints[col], o.failed, value)
				case !rescue[id][col] && isRescued:
					t.Errorf("id %d %s: %q rescued as %q, but Spark reads it as %v, the value it says", id, col, o.text, text, o.typed)
				case isRescued:
					got[col]++
					if value != nil || !sameNumber(text, o.text) && text != o.stamp {
						t.Errorf("id %d %s: %q merged as %v and rescued as %q; want null and its value", id, col, o.text, value, text)
					}
				case value != o.typed:
					t.Errorf("id %d %s: %q merged as %v; Spark reads %v", id, col, o.text, value, o.typed)
				}
			}
		}
		diff(t, "rescued values by column", counts, got)
		reported := map[string]int{}
		for _, v := range res.Rescued {
			reported[v.Column] += int(v.Values)
		}
		diff(t, "rescued values reported", counts, reported)
	}
	t.Run("client typing", func(t *testing.T) { t.Parallel(); run(t, dir, false, nil) })
	t.Run("spark inference", func(t *testing.T) { t.Parallel(); run(t, dir, true, nil) })
	t.Run("read with a time zone", func(t *testing.T) {
		// The zone sets how a timestamp's text is read, not a date's: the
		// dates are the same days, the same values cut.
		t.Parallel()
		run(t, dir, false, map[string]string{"timeZone": "America/New_York"})
	})
	t.Run("only the server sees them", func(t *testing.T) {
		t.Parallel()
		host, sparkDir := sparktest.ClusterDir(t)
		exactCorpus(t, host, seed, jsonWide)
		run(t, sparkDir, false, nil)
	})
	t.Run("fails naming the value", func(t *testing.T) {
		t.Parallel()
		// The files without values too large for a hint: each changed
		// value fails the merge, which names one of them and its file.
		out := filepath.Join(workDir(t), "out")
		_, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{dir + "/a.csv"}}, {Paths: []string{dir + "/a.json"}}},
			Target: spark.Target{Path: out}, Policy: sparkmerge.Options{Hints: hints}})
		if err == nil {
			t.Fatal("merged values the hints round")
		}
		// (Spark 3.5 cuts the error's text short after the file.)
		msg := err.Error()
		named := false
		for _, col := range exactColumns {
			named = named || strings.Contains(msg, "column "+col+": the value ")
		}
		if !named || !strings.Contains(msg, filepath.Join(dir, "a.")) {
			t.Errorf("the error does not name a changed value, its column and file, and what to do: %v", err)
		}
	})
	t.Run("a date with a zone fails naming it", func(t *testing.T) {
		// Spark's date reader takes the day of a text with a zone; the
		// timestamp_ntz a JSON date is read as refuses the zone, and the
		// error says what the day would drop. A number of seconds is no
		// date to either.
		t.Parallel()
		in := workDir(t)
		writeFiles(t, in, map[string]string{"zone.json": `{"id":1,"dt":"2024-01-05"}` + "\n" + `{"id":2,"dt":"2024-01-06T00:00:00Z"}` + "\n",
			"secs.json": `{"id":3,"dt":86400}` + "\n"}, "zone.json", "secs.json")
		for name, want := range map[string]string{"zone.json": `the value "2024-01-06T00:00:00Z" is not a date as written`, "secs.json": `the value "86400" is not a date`} {
			_, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{filepath.Join(in, name)}}},
				Target: spark.Target{Path: filepath.Join(in, "out-"+name)}, Policy: sparkmerge.Options{Hints: map[string]sparkmerge.DataType{"dt": hints["dt"]}}})
			var hv *spark.HintValueError
			if !errors.As(err, &hv) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want a HintValueError: %s", name, err, want)
			}
		}
	})
	t.Run("lossy widening takes the reader's values", func(t *testing.T) {
		t.Parallel()
		res, out := merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{dir + "/a.csv"}}, {Paths: []string{dir + "/a.json"}}}, Verify: true,
			Policy: sparkmerge.Options{Hints: hints, LossyWidening: true}})
		if !res.Verified {
			t.Error("not verified")
		}
		rows := parquetRows(t, out, append([]string{"id"}, exactColumns...), "CAST(`_0` AS INT)")
		if len(rows) != 120 {
			t.Fatalf("%d rows merged, want 120", len(rows))
		}
		for _, r := range rows {
			id, _ := strconv.Atoi(r[0].(string))
			for k, col := range exactColumns {
				if o := oracle[id][col]; r[1+k] != o.typed {
					t.Errorf("id %d %s: %q merged as %v; Spark reads %v", id, col, o.text, r[1+k], o.typed)
				}
			}
		}
	})
}

// sameNumber reports whether two texts are the same number (or the same
// text): a rescued value is printed from the type it was read in exactly
// (4.9990 as 4.999, 1e40 as 1.0E40).
// A JSON value its reader could not parse is rescued as Spark's JSON
// functions print it, a number as a double (-643865776328765.48 as
// -6.438657763287655E14): the same double is the same number too.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	x, ok1 := new(big.Rat).SetString(strings.Replace(a, "E", "e", 1))
	y, ok2 := new(big.Rat).SetString(strings.Replace(b, "E", "e", 1))
	if ok1 && ok2 && x.Cmp(y) == 0 {
		return true
	}
	f, err1 := strconv.ParseFloat(a, 64)
	g, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && (f == g || math.IsNaN(f) && math.IsNaN(g))
}

// TestHintedStringsAreNeverRoundedSilently: a typed source's string
// column cast to a hinted decimal, float or date (found in the field: a
// Parquet string "12.345" hinted decimal(5,2) came out 12.35, and a
// timestamp's text hinted date lost its time) is checked value by value:
// a value the cast would change is rescued or fails the merge naming it,
// text that is no value of the type fails as such, and every other value
// is Spark's cast of it. Generated values, against Spark's cast and exact
// arithmetic; the dates by how they were written.
func TestHintedStringsAreNeverRoundedSilently(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	r := rand.New(rand.NewSource(20261207))
	type dated struct {
		text string
		cut  bool // written with a time that is not midnight
	}
	var rows []string
	tokens := map[int]map[string]string{}
	dates := map[int]dated{}
	for id := 1; id <= 150; id++ {
		d := dated{text: fmt.Sprintf("%04d-%02d-%02d", 1990+r.Intn(40), 1+r.Intn(12), 1+r.Intn(28))}
		switch r.Intn(4) {
		case 0:
			d.text += " 00:00:00"
		case 1:
			d.text += fmt.Sprintf("T%02d:%02d:%02d", r.Intn(24), r.Intn(60), 1+r.Intn(59))
			d.cut = true
		}
		if id%37 == 0 {
			d.text = "not a date"
		}
		tokens[id] = map[string]string{"d3": exactToken(r, "d3", id > 120), "fl": exactToken(r, "fl", false), "dw": exactToken(r, "dw", id > 120)}
		if id%41 == 0 {
			tokens[id]["d3"] = "12x"
		}
		dates[id] = d
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s)", id, sparkmerge.QuoteString(tokens[id]["d3"]), sparkmerge.QuoteString(tokens[id]["fl"]), sparkmerge.QuoteString(d.text), sparkmerge.QuoteString(tokens[id]["dw"])))
	}
	pq := filepath.Join(dir, "pq")
	exec(t, "INSERT OVERWRITE DIRECTORY "+sparkmerge.QuoteString(pq)+" USING parquet SELECT * FROM VALUES "+strings.Join(rows, ", ")+" AS t(id, d3, fl, dt, dw)")
	hints := map[string]sparkmerge.DataType{"d3": {Kind: sparkmerge.KindDecimal, Precision: 7, Scale: 3}, "fl": sparkmerge.Simple(sparkmerge.KindFloat), "dt": sparkmerge.Simple(sparkmerge.KindDate),
		"dw": {Kind: sparkmerge.KindDecimal, Precision: 38, Scale: 4}}
	// Spark's cast of every value; null where it fails.
	cast := queryRows(t, "SELECT id, CAST(try_cast(d3 AS decimal(7,3)) AS STRING), CAST(try_cast(fl AS float) AS STRING), CAST(try_cast(dt AS date) AS STRING), CAST(try_cast(dw AS decimal(38,4)) AS STRING) FROM parquet."+backquote(pq))
	typed := map[int][]any{}
	for _, row := range cast {
		typed[int(row[0].(int32))] = row[1:]
	}
	cols := []string{"d3", "fl", "dt", "dw"}
	want := map[int]map[string]bool{} // rescued
	counts := map[string]int{}
	for id := range tokens {
		want[id] = map[string]bool{}
		for k, col := range cols {
			v := typed[id][k]
			switch {
			case v == nil:
				want[id][col] = true
			case col == "dt":
				want[id][col] = dates[id].cut
			default:
				want[id][col] = exactChanged(t, col, strings.TrimSpace(tokens[id][col]), v.(string))
			}
			if want[id][col] {
				counts[col]++
			}
		}
	}
	t.Logf("values to rescue by column: %v of %d", counts, len(tokens))
	for _, col := range cols {
		if counts[col] == 0 || counts[col] > len(tokens)/2 {
			t.Fatalf("column %s: %d of %d values change or fail: the corpus must hold both kinds", col, counts[col], len(tokens))
		}
	}
	res, out := merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{pq}, Format: "parquet"}}, Verify: true,
		Policy: sparkmerge.Options{Hints: hints, Rescue: "_rescued"}})
	if !res.Verified {
		t.Error("not verified")
	}
	got := map[string]int{}
	for _, row := range parquetRows(t, out, []string{"id", "d3", "fl", "dt", "dw", "_rescued"}, "CAST(`_0` AS INT)") {
		id, _ := strconv.Atoi(row[0].(string))
		var rescued map[string]string
		if row[5] != nil {
			if err := json.Unmarshal([]byte(row[5].(string)), &rescued); err != nil {
				t.Fatal(err)
			}
		}
		for k, col := range cols {
			text, isRescued := rescued[col]
			switch {
			case want[id][col] != isRescued:
				t.Errorf("id %d %s: %q (Spark's cast: %v) rescued: %v, want %v", id, col, map[string]string{"d3": tokens[id]["d3"], "fl": tokens[id]["fl"], "dt": dates[id].text, "dw": tokens[id]["dw"]}[col], typed[id][k], isRescued, want[id][col])
			case isRescued:
				got[col]++
				if written := map[string]string{"d3": tokens[id]["d3"], "fl": tokens[id]["fl"], "dt": dates[id].text, "dw": tokens[id]["dw"]}[col]; row[1+k] != nil || text != written {
					t.Errorf("id %d %s: merged %v, rescued %q; want null and %q as written", id, col, row[1+k], text, written)
				}
			case row[1+k] != typed[id][k]:
				t.Errorf("id %d %s: merged %v, Spark's cast %v", id, col, row[1+k], typed[id][k])
			}
		}
	}
	diff(t, "rescued values by column", counts, got)

	// Without --rescue: a date's time cut fails the merge naming it.
	_, err := c.Merge(testContext(t), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{pq}, Format: "parquet"}},
		Policy: sparkmerge.Options{Hints: map[string]sparkmerge.DataType{"dt": hints["dt"]}}, Target: spark.Target{Path: filepath.Join(dir, "out-dt")}})
	if err == nil || !strings.Contains(err.Error(), "column dt: the value ") {
		t.Errorf("dates hinted date: err = %v, want one naming a value whose time is cut, or that is no date", err)
	}
	// With --lossy-widening every value is Spark's cast, text that is no
	// value of the type still failing.
	clean := filepath.Join(dir, "clean")
	exec(t, "INSERT OVERWRITE DIRECTORY "+sparkmerge.QuoteString(clean)+" USING parquet SELECT * FROM parquet."+backquote(pq)+
		" WHERE try_cast(d3 AS decimal(7,3)) IS NOT NULL AND try_cast(fl AS float) IS NOT NULL AND try_cast(dt AS date) IS NOT NULL AND try_cast(dw AS decimal(38,4)) IS NOT NULL")
	res, out = merge(t, c, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{clean}, Format: "parquet"}}, Verify: true,
		Policy: sparkmerge.Options{Hints: hints, LossyWidening: true}})
	n := 0
	for _, row := range parquetRows(t, out, []string{"id", "d3", "fl", "dt", "dw"}, "CAST(`_0` AS INT)") {
		id, _ := strconv.Atoi(row[0].(string))
		n++
		for k := range cols {
			if row[1+k] != typed[id][k] {
				t.Errorf("lossy: id %d %s: merged %v, Spark's cast %v", id, cols[k], row[1+k], typed[id][k])
			}
		}
	}
	if n == 0 || int64(n) != res.RowsWritten {
		t.Errorf("lossy: %d rows read back, %d written", n, res.RowsWritten)
	}
}
