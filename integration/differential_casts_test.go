//go:build integration

package integration

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// Cast probes: a corpus of two files per format (CSV, JSON lines) in
// the differential suite, whose values make a wrong cast in a positional
// scan visible. A positional scan reads every value as a string and casts
// it to the target's type (spark's valueCast: the string as it is,
// CAST(raw AS to), CAST(CAST(raw AS from) AS to), or a checked cast), or,
// for a JSON key, parses it straight into the target's type (typedKeys).
// The generated corpora leave those casts unproven: a file with a value
// the client's rules leave to Spark (an exponent, a leading space) is read
// alone, not in a scan; a file repeating a column name makes every path
// refuse its corpus (with one corpus a shape, the CSV and TSV corpora and
// the partitioned one, so no CSV file was scanned at all); and a wrong
// cast is invisible on most values (1.5 is 1.5 however it is parsed).
// The probes' values are all typed on the client, so both files are read
// in one positional scan (auto's, the other paths that scan make the same
// casts), and each probe column
// drifts in type between the two files, so that each cast a merge of
// these formats makes is made, on values where a wrong one shows:
//
//   - -0.0, -0 and +0 into double: -0 parsed as an int is 0, then 0.0;
//     cast straight to double it would be -0.0; -0.0 read as a double
//     stays -0.0 (a cast that adds 0.0 makes it 0.0).
//   - text with leading and trailing spaces and tabs, quoted and not,
//     into string: the value as written, nothing trimmed.
//   - 007, -0 and +7 read as ints, True and FALSE as booleans, 2.50 and
//     -0.0 as doubles, into string: the file's value printed (7, 0, true,
//     2.5), not its text.
//   - ints into bigint and decimal(38,0), bigint and decimal(38,0) at
//     their edges; a bigint of more than 15 digits into double (a checked
//     cast), its -0 included.
//   - dates into timestamp beside timestamps with and without a zone.
//
// The oracle stays Spark reading each file alone. The seed shuffles the
// probes' columns and rows, the case of names and line ends.

// castProbe is a column of the probe files: its values in the first and
// in the second file, each list's first value first (it types the column
// as the client's rules type it: text before a value with a leading
// space), the others in an order the seed draws. In JSON the values are
// JSON text.
type castProbe struct {
	name string
	a, b []string
}

// csvCastProbes are the CSV and TSV probes; each comment says the
// target's type and, per file, its type and the scan's cast.
var csvCastProbes = []castProbe{
	// double: double (CAST(raw AS double)) and int (through int).
	{"zero_d", []string{"-0.0", "-0", "+0", "0.0"}, []string{"-0", "+0", "7"}},
	// bigint: int and bigint (CAST(raw AS bigint)), at the edges.
	{"neg_zero", []string{"-0", "+0", "007", "-2147483648"}, []string{"9223372036854775807", "-9223372036854775808", "-0"}},
	// string: string (the text as it is) and int (through int).
	{"code", []string{"x", "A1"}, []string{"007", "-0", "+7"}},
	// string: string in both, spaces and tabs kept.
	{"pad", []string{"x", " padded ", "\ttab\t", "trail "}, []string{"y", "  ", " lead"}},
	// double: bigint of more than 15 digits (a checked cast) and double.
	{"big", []string{"9007199254740992", "-0", "-9223372036854775808"}, []string{"1.5", "-0.0", "-0"}},
	// decimal(38,0): int and decimal(38,0) (CAST(raw AS decimal(38,0))).
	{"dec", []string{"-0", "7", "+0"}, []string{"-99999999999999999999999999999999999999", "12345678901234567890", "-0"}},
	// string: boolean (through boolean) and string.
	{"flag", []string{"True", "FALSE"}, []string{"maybe", "true"}},
	// timestamp: date (through date) and timestamp.
	{"when", []string{"2024-12-31", "2020-02-29"}, []string{"2024-01-02T03:04:05.123", "1999-12-31 23:59:59Z"}},
}

// jsonCastProbes are the JSON probes: JSON types its numbers as bigint,
// decimal(p,0) past a bigint, or double. A column is parsed straight into
// the target's type (typed) where every file's type is the target's, or
// bigint into double or string, with no checked cast; else its text is
// routed and cast. A checked cast is made only of a file with a number of
// more than 15 digits (the first file; the second has none).
var jsonCastProbes = []castProbe{
	// double, typed: double and bigint (-0 parsed into a double).
	{"zero_d", []string{"-0.0", "1.5"}, []string{"-0", "7"}},
	// double, routed: decimal(20,0) (a checked cast; 2^64 is a double
	// exactly) and double (CAST(raw AS double)).
	{"rd", []string{"18446744073709551616", "-0"}, []string{"-0.0", "2.50"}},
	// string, routed: string (the text as it is) and double (through
	// double).
	{"pad", []string{`" padded "`, `"\ttab\t"`, `"trail "`}, []string{"2.50", "-0.0"}},
	// string, typed: string in both, spaces and tabs kept.
	{"tpad", []string{`" x "`, `"y\t"`}, []string{`" z"`}},
	// string, typed: bigint and string.
	{"code", []string{"-0", "9223372036854775807"}, []string{`"007"`}},
	// string, routed: boolean (through boolean) and string.
	{"flag", []string{"true", "false"}, []string{`"maybe"`}},
	// decimal(38,0), routed: decimal(38,0) and bigint, at their edges.
	{"ld", []string{"-99999999999999999999999999999999999999", "-9223372036854775808"}, []string{"-0", "2147483648"}},
}

// castProbeName says whether a corpus file is a cast probe (castProbes).
func castProbeName(name string) bool { return strings.HasPrefix(name, "probe-") }

// castProbes is the cast probes' corpus of format (csv, tsv or json): two
// files, probe-a and probe-b.
func castProbes(seed uint64, format string) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, seed*37+11))
	out := map[string][]byte{}
	probes := csvCastProbes
	if format == "json" {
		probes = jsonCastProbes
	}
	for f, file := range []string{"a", "b"} {
		type column struct {
			name   string
			values []string
		}
		cols := []column{{name: "id"}}
		rows := 0
		for _, p := range probes {
			values := p.a
			if f == 1 {
				values = p.b
			}
			rest := append([]string(nil), values[1:]...)
			r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
			name := p.name
			if r.IntN(4) == 0 {
				name = strings.ToUpper(name)
			}
			cols = append(cols, column{name, append([]string{values[0]}, rest...)})
			rows = max(rows, len(values))
		}
		r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
		name := fmt.Sprintf("probe-%s.%s", file, format)
		var b strings.Builder
		if format == "json" {
			for row := range rows {
				var cells []string
				for _, c := range cols {
					v := fmt.Sprint(9000 + 100*f + row)
					if c.values != nil {
						if row >= len(c.values) {
							continue // the key is absent
						}
						v = c.values[row]
					}
					cells = append(cells, fmt.Sprintf("%q:%s", c.name, v))
				}
				b.WriteString("{" + strings.Join(cells, ",") + "}\n")
			}
			out[name] = []byte(b.String())
			continue
		}
		sep, eol := ",", "\n"
		if format == "tsv" {
			sep = "\t"
		}
		if r.IntN(2) == 0 {
			eol = "\r\n"
		}
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.name
		}
		b.WriteString(strings.Join(names, sep) + eol)
		for row := range rows {
			cells := make([]string, len(cols))
			for i, c := range cols {
				switch {
				case c.values == nil:
					cells[i] = fmt.Sprint(9000 + 100*f + row)
				case row < len(c.values):
					// A tab is quoted (in TSV it must be), so that a
					// line with a quote, which Spark's CSV parser reads
					// in the scan, carries spaces too; other values as
					// they are, split at the separator.
					cells[i] = csvCell(c.values[row], sep+"\t")
				}
			}
			b.WriteString(strings.Join(cells, sep) + eol)
		}
		out[name] = []byte(b.String())
	}
	return out
}

// sawCastProbesScanned checks that a merge read the corpus's cast probes
// (castProbes) in positional scans: a probe read alone would prove
// the per-file read's casts, not the scans'.
func sawCastProbesScanned(t *testing.T, res *spark.Result, files map[string][]byte) {
	t.Helper()
	scanned := res.Planned.PositionalFiles()
	var missed []string
	for name := range files {
		if castProbeName(name) && !slices.ContainsFunc(scanned, func(f string) bool { return strings.HasSuffix(f, "/"+name) }) {
			missed = append(missed, name)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("the cast probes %v were not read in positional scans (%d files were): the suite does not prove the scans' casts", missed, len(scanned))
	}
}
