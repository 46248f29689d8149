//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/apache/spark-connect-go/spark/sql"
	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The hinted columns of the rescue corpus: each file holds one value, the
// same text in every one of them, so that one value meets every type.
var rescueHints = map[string]string{"vi": "int", "vd": "decimal(5,2)", "vt": "date"}

var rescueColumns = []string{"vi", "vd", "vt"}

// rescueCSVTokens are CSV fields as written: numbers that overflow, round
// or carry spaces, signs, exponents, hex, grouping, other digits, quoted
// and unquoted empties, dates that do not exist or are written otherwise,
// and text.
var rescueCSVTokens = []string{
	"42", " 42", "42 ", "+7", "-0", "007", "2147483648", "-2147483649", "1e3", "4.5",
	"12.345", "999.995", "1000", "0x1F", `"1,000"`, `""`, "", "NaN", "Infinity", "abc",
	"２４", "٤٢", "2024-01-05", "2024-1-5", "2024-02-30", "2024-01-05T10:00:00", "20240105",
	"true", "💥", `"a""b"`, "\u00a042",
}

// rescueJSONTokens are JSON values as written.
var rescueJSONTokens = []string{
	`42`, `"42"`, `4.5`, `-0`, `1e3`, `2147483648`, `12.345`, `999.995`, `"1,000"`, `""`,
	`null`, `true`, `"abc"`, `[1]`, `{"a":1}`, `"2024-01-05"`, `"2024-02-30"`,
	`"2024-01-05T10:00:00"`, `"NaN"`, `1E400`, `"  42"`, `"٤٢"`, `-1.5e-3`,
}

// rescueParquetValues are the string values of the Parquet part, cast to
// the hinted types by the plan (no reader parses them).
var rescueParquetValues = []string{
	"42", " 42 ", "2147483648", "4.5", "12.345", "999.995", "1e3", "abc", "", "2024-01-05",
	"2024-02-30", "NaN", "-0", "٤٢", "1,000",
}

// rescueCorpus writes the corpus into dir (CSV and JSON files of one row
// each, ids from 1 and from 1001) and returns the files by id.
func rescueCorpus(t *testing.T, dir string) map[int]string {
	files := map[string]string{}
	var names []string
	byID := map[int]string{}
	for i, tok := range rescueCSVTokens {
		id := i + 1
		name := fmt.Sprintf("c%02d.csv", id)
		files[name] = fmt.Sprintf("id,vi,vd,vt\n%d,%s,%s,%s\n", id, tok, tok, tok)
		names = append(names, name)
		byID[id] = filepath.Join(dir, name)
	}
	for i, tok := range rescueJSONTokens {
		id := 1001 + i
		name := fmt.Sprintf("j%02d.json", i+1)
		files[name] = fmt.Sprintf(`{"id":%d,"vi":%s,"vd":%s,"vt":%s}`+"\n", id, tok, tok, tok)
		names = append(names, name)
		byID[id] = filepath.Join(dir, name)
	}
	// Files without hinted columns: read in positional scans, nothing to
	// rescue.
	for i, header := range []string{"id,other", "other,id", "id,other,more"} {
		name := fmt.Sprintf("plain%d.csv", i)
		files[name] = fmt.Sprintf("%s\n%d,%d,0\n", header, 3001+i, 3001+i)
		if i < 2 {
			files[name] = fmt.Sprintf("%s\n%d,%d\n", header, 3001+i, 3001+i)
		}
		names = append(names, name)
	}
	writeFiles(t, dir, files, names...)
	return byID
}

// oracleValue is what Spark makes of one value: its text read as a
// string, and whether a FAILFAST read (or, for Parquet, the cast) into
// each hinted type fails, else the typed value's text.
type oracleValue struct {
	text  any
	fails map[string]bool
	typed map[string]any
	// changed: the typed value is not the text's (12.345 hinted
	// decimal(5,2) is 12.35), which the merge rescues too, worked out
	// exactly (see exactChanged).
	changed map[string]bool
}

// TestRescueMatchesFailFast: with --rescue and hints, a value is rescued
// if and only if Spark's FAILFAST read of its file into the hinted type
// fails on it (for Parquet: the cast fails), compared value by value on
// generated nasty values in CSV, JSON and Parquet; a rescued value is
// null in its column and its text, as Spark reads it as a string, is in
// the rescue object with its file; every other value is the FAILFAST
// read's. Local files (client typing: positional scans for the files
// with nothing to rescue), Spark's inference, and files only the server
// sees; --verify holds.
func TestRescueMatchesFailFast(t *testing.T) {
	t.Parallel()
	s := upstreamSession(t) // temporary views
	c := newClient(t)
	dir := workDir(t)
	byID := rescueCorpus(t, dir)
	pq := filepath.Join(dir, "pq")
	writeParquetStrings(t, s, dir, pq)

	oracle := rescueOracle(t, s, dir, byID, pq)

	hints := map[string]sparkmerge.DataType{}
	for col, typ := range rescueHints {
		h, err := sparkmerge.ParseType(typ)
		if err != nil {
			t.Fatal(err)
		}
		hints[col] = h
	}
	run := func(t *testing.T, in string, sparkInference bool) {
		job := spark.Job{
			Sources:        []spark.SourceSpec{{Paths: []string{in + "/*.csv"}}, {Paths: []string{in + "/*.json"}}, {Paths: []string{pq}, Format: "parquet"}},
			Policy:         sparkmerge.Options{Hints: hints, Rescue: "_rescued"},
			Verify:         true,
			SparkInference: sparkInference,
		}
		res, out := merge(t, c, job)
		if !res.Verified {
			t.Error("not verified")
		}
		if !sparkInference && res.Scans >= len(res.Reads)-1 {
			t.Errorf("%d scans for %d reads: the files without hinted columns were not read in a positional scan", res.Scans, len(res.Reads))
		}
		rows := parquetRows(t, out, []string{"id", "vi", "vd", "vt", "_rescued"}, "CAST(`_0` AS INT)")
		counts := map[string]int64{}
		seen := 0
		for _, r := range rows {
			var id int
			fmt.Sscan(r[0].(string), &id)
			o, ok := oracle[id]
			if !ok {
				if r[4] != nil {
					t.Errorf("id %d (no hinted column): rescued %v", id, r[4])
				}
				continue
			}
			seen++
			var rescued map[string]string
			if r[4] != nil {
				if err := json.Unmarshal([]byte(r[4].(string)), &rescued); err != nil {
					t.Fatalf("id %d: rescue column %v: %v", id, r[4], err)
				}
			}
			for k, col := range rescueColumns {
				got := r[1+k]
				text, isRescued := rescued[col]
				switch {
				case o.fails[col] && !isRescued:
					t.Errorf("id %d %s (%v): FAILFAST fails on it, but it was not rescued (value %v)", id, col, o.text, got)
				case o.changed[col] && !isRescued:
					t.Errorf("id %d %s (%v): Spark's reader makes it %v, but it was not rescued (value %v)", id, col, o.text, o.typed[col], got)
				case !o.fails[col] && !o.changed[col] && isRescued:
					t.Errorf("id %d %s (%v): rescued %q, but FAILFAST reads it as %v", id, col, o.text, text, o.typed[col])
				case isRescued:
					counts[col]++
					// A value changed is rescued as the type it was read
					// in exactly prints it: 12.345, 2024-01-05 10:00:00.
					asRead := o.changed[col] && (sameNumber(text, fmt.Sprint(o.text)) || text == strings.Replace(fmt.Sprint(o.text), "T", " ", 1))
					if got != nil || text != o.text && !asRead {
						t.Errorf("id %d %s: value %v rescued as %q; want null and %q", id, col, got, text, o.text)
					}
				default:
					if got != o.typed[col] {
						t.Errorf("id %d %s (%v): merged %v, FAILFAST read %v", id, col, o.text, got, o.typed[col])
					}
				}
			}
			if rescued != nil && id < 2000 && !strings.HasSuffix(rescued[sparkmerge.RescueFilePath], filepath.Base(byID[id])) {
				t.Errorf("id %d: rescued from %q, want its file %s", id, rescued[sparkmerge.RescueFilePath], byID[id])
			}
		}
		if seen != len(oracle) {
			t.Errorf("%d rows with hinted columns, want %d", seen, len(oracle))
		}
		got := map[string]int64{}
		for _, v := range res.Rescued {
			got[v.Column] += v.Values
		}
		diff(t, "rescued counts per column", counts, got)
	}
	t.Run("local", func(t *testing.T) { run(t, dir, false) })
	t.Run("spark inference", func(t *testing.T) { run(t, dir, true) })
	t.Run("cluster", func(t *testing.T) {
		host, sparkDir := sparktest.ClusterDir(t)
		rescueCorpus(t, host)
		run(t, sparkDir, false)
	})
}

// writeParquetStrings writes the Parquet part: ids from 2001, every
// hinted column a string holding the value, in two files.
func writeParquetStrings(t *testing.T, s sql.SparkSession, dir, out string) {
	var rows []string
	for i, v := range rescueParquetValues {
		q := sparkmerge.QuoteString(v)
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s)", 2001+i, q, q, q))
	}
	sqlExec(t, s, fmt.Sprintf("INSERT OVERWRITE DIRECTORY %s USING parquet SELECT /*+ REPARTITION(2) */ * FROM VALUES %s AS t(id, vi, vd, vt)",
		sparkmerge.QuoteString(out), strings.Join(rows, ", ")))
}

// rescueOracle asks Spark, file by file and column by column, what a
// FAILFAST read of the file into the hinted type makes of its value (for
// Parquet, row by row, what the cast makes of it), and the value's text.
func rescueOracle(t *testing.T, s sql.SparkSession, dir string, byID map[int]string, pq string) map[int]*oracleValue {
	out := map[int]*oracleValue{}
	var mu sync.Mutex
	ctx := testContext(t)
	// Texts: every file read with string columns.
	texts := map[int]any{}
	view := func(name, format, path, schema string) string {
		return fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s (%s) USING %s OPTIONS (path %s, header 'true', mode 'FAILFAST')",
			name, schema, format, sparkmerge.QuoteString(path))
	}
	strs := "id INT, vi STRING, vd STRING, vt STRING"
	sqlExec(t, s, view("oracle_csv_text", "csv", dir+"/c*.csv", strs))
	for _, r := range collectRows(t, s, "SELECT id, vi FROM oracle_csv_text") {
		texts[int(r[0].(int32))] = r[1]
	}
	// A JSON value's text: Spark's JSON functions print a number as they
	// parse it (1e3 is 1000.0), which the rescue column keeps too; the
	// file reader into a string column would keep 1e3.
	for _, r := range collectRows(t, s, fmt.Sprintf("SELECT CAST(get_json_object(value, '$.id') AS INT), get_json_object(value, '$.vi') FROM text.%s", backquote(dir+"/j*.json"))) {
		texts[int(r[0].(int32))] = r[1]
	}
	for _, r := range collectRows(t, s, fmt.Sprintf("SELECT id, vi FROM parquet.%s", backquote(pq))) {
		texts[int(r[0].(int32))] = r[1]
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	record := func(id int, col string, fails bool, typed any) {
		mu.Lock()
		defer mu.Unlock()
		o := out[id]
		if o == nil {
			o = &oracleValue{text: texts[id], fails: map[string]bool{}, typed: map[string]any{}, changed: map[string]bool{}}
			out[id] = o
		}
		o.fails[col] = fails
		o.typed[col] = typed
		text, ok := texts[id].(string)
		switch {
		case !ok || fails || typed == nil:
		case strings.HasPrefix(rescueHints[col], "decimal"):
			// (Spark's cast of a Parquet string trims it.)
			o.changed[col] = exactChanged(t, col, strings.TrimSpace(text), typed.(string))
		case col == "vt" && id < 2001:
			// A CSV or JSON date written with a time of day: cut. A JSON
			// string of digits, which the date reader reads as days since
			// 1970 (Spark 1.5's dates; "42" is 1970-02-12), is not a date
			// as written: refused by the exact reading too.
			o.changed[col] = regexp.MustCompile(`[T ]0*[1-9][0-9]?:|[T ][0-9]{1,2}:0*[1-9]`).MatchString(text) ||
				id > 1000 && text != "" && strings.IndexFunc(text, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
		}
	}
	ids := make([]int, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		file := byID[id]
		format := "csv"
		if strings.HasSuffix(file, ".json") {
			format = "json"
		}
		for _, col := range rescueColumns {
			g.Go(func() error {
				var cols []string
				for _, c := range rescueColumns {
					typ := "STRING"
					if c == col {
						typ = rescueHints[c]
					}
					cols = append(cols, c+" "+typ)
				}
				name := fmt.Sprintf("oracle_%d_%s", id, col)
				if _, err := s.Sql(gctx, view(name, format, file, "id INT, "+strings.Join(cols, ", "))); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				rows, err := tryRows(gctx, s, fmt.Sprintf("SELECT CAST(%s AS STRING) FROM %s", col, name))
				if err != nil {
					record(id, col, true, nil)
					return nil
				}
				record(id, col, false, rows[0][0])
				return nil
			})
		}
	}
	for i := range rescueParquetValues {
		id := 2001 + i
		for _, col := range rescueColumns {
			g.Go(func() error {
				rows, err := tryRows(gctx, s, fmt.Sprintf("SELECT CAST(CAST(%s AS %s) AS STRING) FROM parquet.%s WHERE id = %d", col, rescueHints[col], backquote(pq), id))
				if err != nil {
					record(id, col, true, nil)
					return nil
				}
				record(id, col, false, rows[0][0])
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	fails := 0
	for _, o := range out {
		for _, f := range o.fails {
			if f {
				fails++
			}
		}
	}
	t.Logf("oracle: %d values, %d fail", len(out)*len(rescueColumns), fails)
	if fails == 0 || fails == len(out)*len(rescueColumns) {
		t.Fatalf("the corpus must hold values that fail and values that do not (%d of %d fail)", fails, len(out)*len(rescueColumns))
	}
	return out
}

func backquote(p string) string { return "`" + strings.ReplaceAll(p, "`", "``") + "`" }

// tryRows runs a query and returns its rows or its error.
func tryRows(ctx context.Context, s sql.SparkSession, q string) ([][]any, error) {
	df, err := s.Sql(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r.Values()
	}
	return out, nil
}

func collectRows(t *testing.T, s sql.SparkSession, q string) [][]any {
	t.Helper()
	rows, err := tryRows(testContext(t), s, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

func sqlExec(t *testing.T, s sql.SparkSession, q string) {
	t.Helper()
	if _, err := tryRows(testContext(t), s, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
