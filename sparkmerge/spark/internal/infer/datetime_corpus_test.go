package infer

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDatetimeCorpus = flag.Bool("update-datetime-corpus", false, "rewrite the generated CSV files of the inference corpus (then record Spark's schemas of them: scripts/record-spark-schemas.sh)")

// datetimeCorpusFiles is how many generated files the corpus holds.
const datetimeCorpusFiles = 12

// datetimeCorpus generates CSV files of short columns (1 to 4 values
// each, the rest empty) of dates, timestamps in every spelling the rules
// take, years, short integers, numbers, booleans and text, mixed in every
// order, so that each column is one fold of Spark's inference from null
// through a date or a timestamp and back to a string. Spark's schemas of
// them are recorded with the rest of the corpus (testdata/spark), and the
// rules must give each the recorded schema. Only columns the rules take
// are kept (a refused value refuses its whole file, which proves
// nothing), so the files exercise what the rules claim.
func datetimeCorpus() map[string][]byte {
	files := map[string][]byte{}
	for f := range datetimeCorpusFiles {
		r := rand.New(rand.NewPCG(uint64(f)+1, 34))
		const columns, rows = 300, 4
		cols := make([][]string, columns)
		for c := range cols {
			for {
				cols[c] = datetimeColumn(r, rows)
				if columnTaken(cols[c]) {
					break
				}
			}
		}
		files[fmt.Sprintf("csv-datetime-gen-%02d.csv", f)] = columnsCSV("c", cols, rows, func(v string) string { return v })
	}
	for f := range quotedCorpusFiles {
		files[fmt.Sprintf("csv-quoted-gen-%02d.csv", f)] = quotedFile(rand.New(rand.NewPCG(uint64(f)+1, 35)))
	}
	return files
}

// quotedCorpusFiles is how many generated files of quoted values the
// corpus holds.
const quotedCorpusFiles = 4

// quotedFile is a CSV file whose values are quoted now and then, as
// Spark's writer quotes them: text holding the separator or a quote
// always (the quote escaped by a backslash), and numbers,
// dates, timestamps, booleans and text sometimes, so that a quoted value
// is typed as the same value unquoted would be.
func quotedFile(r *rand.Rand) []byte {
	const columns, rows = 200, 4
	cols := make([][]string, columns)
	for c := range cols {
		for {
			cols[c] = datetimeColumn(r, rows)
			for i := range cols[c] {
				if r.IntN(5) == 0 {
					cols[c][i] = []string{"a,b", "Tokyo, JP", "x;y", "1,5", "2024-01-31,2024-02-01", `say "hi"`, `ref 1; "w", Oslo`, `x"`, `"x" y`, `a","b`}[r.IntN(10)]
				}
			}
			if columnTaken(cols[c]) {
				break
			}
		}
	}
	return columnsCSV("q", cols, rows, func(v string) string {
		if strings.ContainsAny(v, `,"`) || v != "" && r.IntN(2) == 0 {
			// As Spark's writer quotes: a quote inside escaped by a
			// backslash.
			v = `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
		}
		return v
	})
}

// columnsCSV writes columns of values (cols[c][row]) as a CSV file with a
// header of prefix and each column's index, each value as cell writes it
// (called row by row, left to right).
func columnsCSV(prefix string, cols [][]string, rows int, cell func(v string) string) []byte {
	var b bytes.Buffer
	for c := range cols {
		if c > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s%d", prefix, c)
	}
	b.WriteByte('\n')
	for row := range rows {
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(cell(cols[c][row]))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// columnTaken says whether the rules type a column of these values.
func columnTaken(values []string) bool {
	var t csvType
	for _, v := range values {
		var ok bool
		if t, ok, _ = inferCSVField(t, []byte(v)); !ok {
			return false
		}
	}
	return true
}

// datetimeColumn is rows values: dates and timestamps mostly, among the
// values they meet in a fold.
func datetimeColumn(r *rand.Rand, rows int) []string {
	values := make([]string, rows)
	n := 1 + r.IntN(rows)
	for i := range n {
		values[i] = datetimeValue(r)
	}
	return values
}

func datetimeValue(r *rand.Rand) string {
	switch k := r.IntN(100); {
	case k < 25:
		return genDate(r)
	case k < 50:
		return genTimestamp(r)
	case k < 62:
		return fmt.Sprintf("%04d", genYear(r)) // a year alone
	case k < 68:
		return fmt.Sprintf("%0*d", 1+r.IntN(3), r.IntN(1000)) // too short for a year
	case k < 74:
		return fmt.Sprintf("%d", r.Int64N(1<<40)-1<<39)
	case k < 80:
		return fmt.Sprintf("%d.%d", r.IntN(3000)-1000, r.IntN(100))
	case k < 86:
		return []string{"true", "false", "TRUE", "False"}[r.IntN(4)]
	case k < 92:
		return []string{"abc", "x1", "Tokyo", "now", "today", "epoch", "Z", "UTC"}[r.IntN(8)]
	}
	return ""
}

// genYear is a year of 0000 to 9999, often one of the calendar's edges.
func genYear(r *rand.Rand) int {
	if r.IntN(4) == 0 {
		return []int{0, 1, 4, 100, 1582, 1600, 1900, 1969, 1970, 2000, 2024, 2100, 2400, 9999}[r.IntN(14)]
	}
	return 1900 + r.IntN(200)
}

func genDate(r *rand.Rand) string {
	y, m := genYear(r), 1+r.IntN(12)
	d := 1 + r.IntN(daysIn(y, m))
	if r.IntN(3) == 0 {
		d = daysIn(y, m) // the month's last day: 02-29 of leap years
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

func genTimestamp(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(genDate(r))
	b.WriteByte(" T"[r.IntN(2)])
	fmt.Fprintf(&b, "%02d:%02d", r.IntN(24), r.IntN(60))
	if r.IntN(5) > 0 {
		fmt.Fprintf(&b, ":%02d", r.IntN(60))
		if r.IntN(2) == 0 {
			digits := 1 + r.IntN(9)
			fmt.Fprintf(&b, ".%0*d", digits, r.Int64N(1_000_000_000)%pow10(digits))
		}
	}
	switch r.IntN(6) {
	case 0:
		b.WriteByte('Z')
	case 1:
		offsets := []string{"+18:00", "-18:00", "+17:59", "-00:00", "+00:00", "+05:30", "-08:00", "+14:00"}
		b.WriteString(offsets[r.IntN(len(offsets))])
	case 2:
		fmt.Fprintf(&b, "%c%02d:%02d", "+-"[r.IntN(2)], r.IntN(18), r.IntN(60))
	}
	return b.String()
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// The generated files of the corpus are the generator's (regenerated
// with -update-datetime-corpus), so that what Spark's record covers is
// what the generator says.
func TestDatetimeCorpusIsGenerated(t *testing.T) {
	for name, want := range datetimeCorpus() {
		path := filepath.Join(sparkCorpus, name)
		if *updateDatetimeCorpus {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (regenerate with -update-datetime-corpus, then scripts/record-spark-schemas.sh)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the generator makes: regenerate it with -update-datetime-corpus and record Spark's schemas again", name)
		}
	}
}
