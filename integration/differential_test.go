//go:build integration

package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The differential suite: generated drifting corpora with nasty values,
// every shape of them merged through every read path sparkmerge has (each
// corpus through the four paths that differ most and half the others),
// compared cell by cell with Spark reading each file alone (union with
// Spark's inference).
// The merged table must not depend on the path: strategy, inference side,
// positional scans or per-file reads, files the client reads or only
// Spark sees, and files Spark types alone or together with others
// (typed each as alone: spark's typeCSVTogether). Seeded: a failure names its seed and files.
//
// SPARKMERGE_DIFF_CORPORA sets how many corpora per format (default 2 in
// CI; the longer run is a larger number), SPARKMERGE_DIFF_FIRST the first
// corpus's index (default 0): a long run from, say, 100 tries seeds no
// earlier run has. The default run's corpora (TestDifferentialReadPaths)
// keep what its cleanup checks: CSV and TSV files with quoted values read
// in positional scans and gzip files typed on the client, locally and
// only on the server, and most corpora merging; and every shape has a
// corpus that merges.

// diffColumn is a generated column: a name and a generator of its text.
type diffColumn struct {
	name  string
	value func(r *rand.Rand) string // "" is a missing value
}

// nastyValues are the values a column may hold, by kind. Each kind's
// values are read by Spark's CSV and JSON inference as one type or widened
// across files.
var nastyValues = map[string][]string{
	"int":    {"0", "-0", "7", "007", "-12", "2147483647", "-2147483648"},
	"bigint": {"9007199254740992", "2147483648", "-9223372036854775808", "1152921504606846976"},
	"double": {"1.5", "-0.0", "1e3", "2.50", "3.14159", "-1.25E-3"},
	"bool":   {"true", "false", "True", "FALSE"},
	"text":   {"x", "hello world", "a;b", "N/A", "-", "é", `say "hi"`, "a,b", " padded ", "tab\there", `ref 1; "w", Oslo`, `x"`},
	"date":   {"2024-12-31", "2020-02-29"},
	"ts":     {"2024-01-02 03:04:05", "2024-01-02T03:04:05.123", "1999-12-31 23:59:59"},
	// A year alone: an int first in a CSV column, a timestamp after a
	// date or timestamp (Spark's inference folds a column's values in
	// order).
	"year":    {"2020", "1999", "0000"},
	"decimal": {"12345678901234567890", "99999999999999999999"},
	// Only in corpora read with multiLine (CSV) and in JSON.
	"lines": {"line one\nline two", "crlf\r\nend", "x"},
	// JSON only: nested values, drifting in shape and type.
	"object":   {`{"a":1}`, `{"a":2,"b":"x"}`, `{}`, `{"b":null}`, `{"c":{"d":[1,2.50]}}`, `{"e":1.5}`},
	"array":    {`[1,2]`, `[3]`, `[]`, `["x"]`, `[null]`, `[-0]`},
	"objarray": {`[{"k":1}]`, `[{}]`, `[{"j":"x","k":2}]`, `[]`},
}

// driftPartners are the kinds a column of a kind may drift to in another
// file: its family, whose types Spark widens (a drift across families,
// say boolean to date, is a conflict under every path and proves little).
var driftPartners = map[string][]string{
	"int":      {"int", "bigint", "double", "decimal", "text"},
	"bigint":   {"int", "bigint", "double", "decimal", "text"},
	"double":   {"int", "bigint", "double", "text"},
	"decimal":  {"int", "bigint", "decimal", "text"},
	"bool":     {"bool", "text"},
	"text":     {"text", "int", "double", "bool", "date", "lines"},
	"date":     {"date", "ts", "text", "year"},
	"ts":       {"date", "ts", "text", "year"},
	"year":     {"year", "date", "ts", "int"},
	"lines":    {"lines", "text"},
	"object":   {"object"},
	"array":    {"array"},
	"objarray": {"objarray"},
}

// corpusShape is what a generated corpus may contain besides its values.
type corpusShape struct {
	format string // csv, tsv, json, parquet or orc
	// multiLine corpora (CSV) have values with line breaks, read with
	// multiLine=true on every path.
	multiLine bool
	// partitioned corpora lie in the partition directories of a tree
	// (see partitionCorpus), merged as the tree.
	partitioned bool
}

func (c corpusShape) kinds() []string {
	kinds := []string{"int", "bigint", "double", "bool", "text", "date", "ts", "decimal"}
	if c.format == "csv" || c.format == "tsv" {
		// A year after a date or timestamp is CSV inference's own
		// order-dependent case; elsewhere (JSON numbers, the columnar
		// files' fixed types) it only makes int and timestamp meet, a
		// conflict every path refuses alike.
		kinds = append(kinds, "year")
	}
	if c.format == "json" {
		kinds = append(kinds, "object", "array", "objarray", "lines")
	}
	if c.multiLine {
		kinds = append(kinds, "lines")
	}
	return kinds
}

// columnar: Parquet or ORC, generated as CSV and written by Spark.
func (c corpusShape) columnar() bool { return c.format == "parquet" || c.format == "orc" }

// readerOptions are the options every path reads the corpus with.
func (c corpusShape) readerOptions() map[string]string {
	if c.multiLine {
		return map[string]string{"multiLine": "true"}
	}
	return nil
}

// diffCorpus writes n drifting files of a corpus shape and returns their
// contents by name (Parquet and ORC files are written as CSV, for
// columnarCorpus).
// CSV files start now and then with a byte-order mark or blank lines, end
// lines with CRLF, or repeat a column name.
func diffCorpus(seed uint64, shape corpusShape, n int) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	kinds := shape.kinds()
	// A pool of columns; each file takes a subset in its own order, with
	// the case of a name changing now and then.
	pool := make([]diffColumn, 6)
	for i := range pool {
		colKinds := []string{kinds[r.IntN(len(kinds))]}
		if r.IntN(3) == 0 {
			// Drifts in type, within its family and the corpus's kinds.
			var partners []string
			for _, k := range driftPartners[colKinds[0]] {
				if slices.Contains(kinds, k) {
					partners = append(partners, k)
				}
			}
			colKinds = append(colKinds, partners[r.IntN(len(partners))])
		}
		pool[i] = diffColumn{name: fmt.Sprintf("col%d", i), value: func(r *rand.Rand) string {
			vs := nastyValues[colKinds[r.IntN(len(colKinds))]]
			if r.IntN(8) == 0 {
				return ""
			}
			return vs[r.IntN(len(vs))]
		}}
	}
	csv := shape.format == "csv" || shape.format == "tsv"
	files := map[string][]byte{}
	for f := range n {
		cols := []diffColumn{{name: "id"}}
		for _, i := range r.Perm(len(pool))[:2+r.IntN(len(pool)-1)] {
			c := pool[i]
			if r.IntN(5) == 0 {
				c.name = strings.ToUpper(c.name)
			}
			cols = append(cols, c)
		}
		if csv && r.IntN(30) == 0 {
			// A repeated name (Spark numbers repeated CSV headers).
			dup := cols[1+r.IntN(len(cols)-1)]
			dup.name = strings.ToUpper(dup.name)
			cols = append(cols, dup)
		}
		r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
		rows := 1 + r.IntN(4)
		var b strings.Builder
		sep, eol := ",", "\n"
		if shape.format == "tsv" {
			sep = "\t"
		}
		if csv && !shape.columnar() {
			if r.IntN(6) == 0 {
				b.WriteString("\ufeff")
			}
			if r.IntN(4) == 0 {
				eol = "\r\n"
			}
			if r.IntN(6) == 0 && !strings.HasPrefix(b.String(), "\ufeff") {
				b.WriteString(eol + eol)
			}
		}
		if shape.format != "json" {
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.name
			}
			b.WriteString(strings.Join(names, sep) + eol)
		}
		for row := range rows {
			id := fmt.Sprint(f*100 + row)
			var cells []string
			for _, c := range cols {
				v := id
				if c.value != nil {
					v = c.value(r)
				}
				if shape.format == "json" {
					if v == "" {
						if r.IntN(2) == 0 {
							cells = append(cells, fmt.Sprintf("%q:null", c.name))
						}
						continue // else the key is absent
					}
					cells = append(cells, fmt.Sprintf("%q:%s", c.name, jsonValue(v)))
				} else {
					cell := csvCell(v, sep)
					switch {
					case cell == v && v != "" && r.IntN(8) == 0:
						// Quoted though it need not be, as some writers
						// quote every value: "7" is still an int.
						cell = `"` + v + `"`
					case strings.Contains(v, `"`) && r.IntN(2) == 0:
						// A quote escaped as Spark's writer escapes it.
						cell = `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
					}
					cells = append(cells, cell)
				}
			}
			if shape.format == "json" {
				b.WriteString("{" + strings.Join(cells, ",") + "}\n")
			} else {
				b.WriteString(strings.Join(cells, sep) + eol)
			}
		}
		ext := shape.format
		if shape.columnar() {
			ext = "csv"
		}
		files[fmt.Sprintf("f%02d.%s", f, ext)] = []byte(b.String())
	}
	return files
}

// partitionLayouts are the partition directories a partitioned corpus's
// files are put in, one layout per corpus, in turn: dates and timestamps
// (escaped colons), which Spark types as timestamps, and a null; nested
// ints with leading zeros and a null; ints, doubles and text, escaped,
// which Spark types as text; dates and a null.
var partitionLayouts = [][]string{
	{"at=2024-01-01", "at=2024-02-29 10%3A00%3A00.5", "at=__HIVE_DEFAULT_PARTITION__"},
	{"year=2024/month=01", "year=2024/month=12", "year=2025/month=__HIVE_DEFAULT_PARTITION__"},
	{"k=1", "k=2.5", "k=x", "k=007", "k=a%20b"},
	{"day=2024-01-01", "day=2024-02-29", "day=__HIVE_DEFAULT_PARTITION__"},
}

// partitionCorpus puts the files of the corpus of index k into the
// partition directories of one of partitionLayouts, each file into one
// of them chosen by seed.
func partitionCorpus(k int, seed uint64, files map[string][]byte) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, seed*13+5))
	dirs := partitionLayouts[k%len(partitionLayouts)]
	out := make(map[string][]byte, len(files))
	for _, name := range treeFiles(files) {
		out[dirs[r.IntN(len(dirs))]+"/"+name] = files[name]
	}
	return out
}

// withEmptyDrops adds a landing zone's empty drops to a corpus of shape
// (files as diffCorpus and partitionCorpus write them): a file of 0 bytes, and in CSV and
// TSV corpora a file of its header alone (columns of the pool, one only
// it has), whose columns take the other files' types. Drawn from a
// generator of their own, so that the corpus's own files stay what its
// seed made them. Columnar corpora get theirs once converted
// (columnarCorpus converts CSV text).
func withEmptyDrops(seed uint64, shape corpusShape, files map[string][]byte) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, seed*31+3))
	ext := shape.format
	if shape.columnar() {
		return files
	}
	dir := "" // a partitioned corpus's drops lie in its partition directories
	if shape.partitioned {
		names := treeFiles(files)
		dir = path.Dir(names[r.IntN(len(names))]) + "/"
	}
	out := maps.Clone(files)
	out[dir+"empty."+ext] = []byte{}
	if shape.format == "json" {
		return out
	}
	sep, eol := ",", "\n"
	if shape.format == "tsv" {
		sep = "\t"
	}
	if r.IntN(3) == 0 {
		eol = "\r\n"
	}
	names := []string{"id", "only_header"}
	for _, i := range r.Perm(6)[:1+r.IntN(4)] {
		name := fmt.Sprintf("col%d", i)
		if r.IntN(5) == 0 {
			name = strings.ToUpper(name)
		}
		names = append(names, name)
	}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	if shape.partitioned {
		dir = path.Dir(treeFiles(files)[r.IntN(len(files))]) + "/"
	}
	out[dir+"header."+ext] = []byte(strings.Join(names, sep) + eol)
	return out
}

// withGzipped compresses about half of a CSV, TSV or JSON corpus's data
// files with gzip (name.csv.gz), as landing zones hold them, one of them
// in two gzip members (a file appended to, which Spark's codec reads
// whole); the empty drops (withEmptyDrops) stay as they are. Spark reads
// each decompressed and never splits it; the client types local ones
// from their text.
func withGzipped(seed uint64, shape corpusShape, files map[string][]byte) map[string][]byte {
	if shape.columnar() || shape.partitioned {
		return files
	}
	r := rand.New(rand.NewPCG(seed, seed*17+5))
	out := map[string][]byte{}
	members := 2
	for _, name := range sortedNames(files) {
		content := files[name]
		base := path.Base(name)
		if len(content) == 0 || strings.HasPrefix(base, "header.") || strings.HasPrefix(base, "empty.") || r.IntN(2) == 0 {
			out[name] = content
			continue
		}
		var b bytes.Buffer
		cut := len(content)
		if members == 2 {
			// The second member starts at a line.
			if i := bytes.IndexByte(content[len(content)/2:], '\n'); i >= 0 {
				cut = len(content)/2 + i + 1
			}
			members = 1
		}
		for _, part := range [][]byte{content[:cut], content[cut:]} {
			if len(part) == 0 {
				continue
			}
			zw := gzip.NewWriter(&b)
			zw.Write(part)
			zw.Close()
		}
		out[name+".gz"] = b.Bytes()
	}
	return out
}

// gunzipped is the text of a corpus file: content, decompressed when
// name ends with .gz (withGzipped).
func gunzipped(t *testing.T, name string, content []byte) []byte {
	t.Helper()
	if !strings.HasSuffix(name, ".gz") {
		return content
	}
	zr, err := gzip.NewReader(bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// sawEmptyDrops checks that a merge of files listed their files of 0
// bytes as empty and planned their header-only file (withEmptyDrops) as
// a source without rows.
func sawEmptyDrops(t *testing.T, res *spark.Result, files map[string][]byte) {
	t.Helper()
	var empty, headerOnly int
	for name, content := range files {
		if len(content) == 0 {
			empty++
		}
		if strings.HasPrefix(path.Base(name), "header.") {
			headerOnly++
		}
	}
	if len(res.Planned.Empty) != empty {
		t.Errorf("the plan lists %d empty files (%v), want %d", len(res.Planned.Empty), res.Planned.Empty, empty)
	}
	noRows := 0
	for _, sp := range res.Planned.Plan.Sources {
		if sp.NoRows {
			noRows++
		}
	}
	if noRows != headerOnly {
		t.Errorf("%d sources planned without rows, want %d (the header-only file)", noRows, headerOnly)
	}
}

// csvCell quotes a CSV value that needs it, as Spark's writer would.
func csvCell(v, sep string) string {
	if strings.ContainsAny(v, sep+"\"\r\n") {
		return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
	}
	return v
}

// jsonValue writes a generated text as JSON: as itself when it is JSON
// other than a string (1e3, -0, true, an object), else as a string (007,
// 2024-12-31).
func jsonValue(v string) string {
	if json.Valid([]byte(v)) && !strings.HasPrefix(v, `"`) {
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// columnarCorpus turns CSV files into Parquet or ORC files (format), one
// each, typed by Spark's CSV inference (int, bigint, double, boolean,
// date, timestamp, decimal, string): Spark writes each into a directory of
// the shared work area, whose one data file is then renamed.
func columnarCorpus(t *testing.T, format string, csvFiles map[string][]byte) map[string][]byte {
	t.Helper()
	dir := localFiles(t, csvFiles)
	out := map[string][]byte{}
	for name := range csvFiles {
		in := filepath.Join(dir, name)
		written := filepath.Join(dir, format+"-"+name)
		// One request a file (a read of the CSV file alone, inferred, and
		// its write), where a view made, written from and dropped by SQL
		// cost six.
		df, err := testSessionOf(t).Read().Format("csv").Option("header", "true").Option("inferSchema", "true").Load(in)
		if err == nil {
			err = df.Coalesce(testContext(t), 1).Write().Format(format).Mode("overwrite").Save(testContext(t), written)
		}
		if err != nil {
			t.Fatalf("write %s as %s: %v", name, format, err)
		}
		parts, err := filepath.Glob(filepath.Join(written, "part-*."+format))
		if err != nil || len(parts) != 1 {
			t.Fatalf("%s of %s: %v %v", format, name, parts, err)
		}
		content, err := os.ReadFile(parts[0])
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(name, ".csv")+"."+format] = content
	}
	return out
}

// linkedCorpus writes files where every path to them passes a link, and
// returns the source to give: a link to a directory of links, one per file
// (data/NAME, links/NAME -> ../data/NAME, dirlink -> links). With cluster,
// only Spark sees them. Each file is reached once, by a path that is not
// its real one.
func linkedCorpus(t *testing.T, files map[string][]byte, cluster bool) string {
	t.Helper()
	host := workDir(t)
	root := host
	if cluster {
		host, root = sparktest.ClusterDir(t)
	}
	putFiles(t, filepath.Join(host, "data"), files)
	if err := os.Mkdir(filepath.Join(host, "links"), 0o777); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		// A partitioned corpus's links lie in its partition directories.
		link := filepath.Join(host, "links", name)
		if err := os.MkdirAll(filepath.Dir(link), 0o777); err != nil {
			t.Fatal(err)
		}
		target, err := filepath.Rel(filepath.Dir(link), filepath.Join(host, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("links", filepath.Join(host, "dirlink")); err != nil {
		t.Fatal(err)
	}
	return root + "/dirlink"
}

func TestDifferentialReadPaths(t *testing.T) {
	t.Parallel()
	// Two corpora a shape: a third (the default until 2026-12-07) proved
	// no property the first two do not (see docs/testing.md), and its
	// seven corpora were a third of the test's merges.
	corpora, first := 2, 0
	if s := os.Getenv("SPARKMERGE_DIFF_CORPORA"); s != "" {
		fmt.Sscan(s, &corpora)
	}
	if s := os.Getenv("SPARKMERGE_DIFF_FIRST"); s != "" {
		fmt.Sscan(s, &first)
	}
	type path struct {
		name           string
		strategy       spark.Strategy
		sparkInference bool
		cluster        bool // files only Spark sees, in a mounted directory
		objectStore    bool // files only Spark sees, in an S3 bucket
		linked         bool // the files reached through links (linkedCorpus)
		// casts: the cast probes' corpora take the path (castProbes), a
		// positional scan; the other scanning paths make the same casts.
		casts bool
		// turn: a path every corpus takes (0), or one a shape's corpora
		// take in turns (1 or 2: the corpora of even or odd index), so
		// that each shape still goes through every path in a run
		// (rotated below).
		turn int
	}
	paths := []path{
		{"auto", spark.StrategyAuto, false, false, false, false, true, 0},
		{"union", spark.StrategyUnion, false, false, false, false, false, 0},
		{"auto --spark-inference", spark.StrategyAuto, true, false, false, false, false, 0},
		{"auto, cluster files", spark.StrategyAuto, false, true, false, false, false, 0},
		// CSV and JSON files typed by Spark together, each as alone, where only
		// the server sees them.
		{"union --spark-inference, cluster files", spark.StrategyUnion, true, true, false, false, false, 1},
		{"auto, through links", spark.StrategyAuto, false, false, false, true, false, 1},
		{"union, object store files", spark.StrategyUnion, false, false, true, false, false, 2},
		{"auto, cluster files through links", spark.StrategyAuto, false, true, false, true, false, 2},
	}
	// takes says whether corpus k of its shape goes through path p. The
	// four paths that differ most (client or Spark inference, positional
	// scans or per-file reads, files the client reads or only Spark sees)
	// take every corpus; the other four, which repeat one of those
	// differences in another place (the object store, links, Spark's
	// inference of files only it sees), take every other corpus: a
	// quarter fewer merges, every shape still on every path. A run of
	// one corpus a shape (the version matrix's) takes all eight.
	takes := func(p path, k int) bool {
		return p.turn == 0 || corpora == 1 || (k-first)%2 == p.turn-1
	}
	// Counted by the corpora, which run in parallel; checked once they all
	// have (a cleanup runs after the subtests).
	var (
		countMu        sync.Mutex
		total, refused int
		// By where the files lie ("local", "server only"): the files of
		// CSV and TSV corpora merges read in positional scans, and those
		// of them with quoted values, whose lines Spark's CSV parser reads
		// there (not a split at the separator).
		csvScanned, quotedScanned = map[string]int{}, map[string]int{}
		// Reads of gzip files (withGzipped) the client typed, by where
		// the files lie.
		gzipTyped = map[string]int{}
	)
	t.Cleanup(func() {
		for _, where := range []string{"local", "server only"} {
			if !t.Failed() && csvScanned[where] > 0 && quotedScanned[where] == 0 {
				t.Errorf("merges of CSV and TSV corpora (%s) read %d files in positional scans, none with quoted values: the suite does not prove the scans' parse", where, csvScanned[where])
			}
			t.Logf("%s: merges of CSV and TSV corpora read %d files in positional scans, %d of them with quoted values", where, csvScanned[where], quotedScanned[where])
		}
		for _, where := range []string{"local", "server only"} {
			if !t.Failed() && total > 0 && gzipTyped[where] == 0 {
				t.Errorf("no gzip file (%s) was typed on the client: the suite does not prove its typing", where)
			}
			t.Logf("%s: %d reads of gzip files typed on the client", where, gzipTyped[where])
		}
		// Corpora every path refuses alike prove little: most must merge.
		if !t.Failed() && total == 0 {
			t.Errorf("no corpus was merged (SPARKMERGE_DIFF_CORPORA=%d): the run proves nothing", corpora)
		}
		if !t.Failed() && refused*2 > total {
			t.Errorf("%d of %d corpora fail to merge at all: make the generator's values mergeable", refused, total)
		}
		t.Logf("%d corpora, %d merged on every path, %d refused on every path", total, total-refused, refused)
	})
	shapes := []corpusShape{{format: "csv"}, {format: "csv", multiLine: true}, {format: "tsv"}, {format: "json"}, {format: "parquet"}, {format: "orc"}, {format: "csv", partitioned: true}}
	// A corpus, named by its shape and seed; casts: a corpus of cast
	// probes, merged on the paths that read positional scans.
	type diffRun struct {
		name  string
		shape corpusShape
		files map[string][]byte
		casts bool
		k     int // the corpus's index in its shape (first, first+1, ...)
	}
	var runs []diffRun
	for _, shape := range shapes {
		for k := first; k < first+corpora; k++ {
			seed := uint64(1000*k + len(shape.format))
			if shape.multiLine {
				// One index later (1503, 2503, ...): the multiLine
				// corpora of 503 and 1503 both repeat a header name,
				// which every path refuses, so the default run's two
				// would merge none.
				seed += 1500
			}
			if shape.format == "orc" {
				seed += 250 // not the CSV corpora's values
			}
			if shape.format == "tsv" {
				seed += 100 // "tsv" and "csv" are as long: not the CSV corpora's values
			}
			if shape.partitioned {
				seed += 750
			}
			files := diffCorpus(seed, shape, 4+int(seed%4))
			name := shape.format
			if shape.multiLine {
				name += " multiLine"
			}
			if shape.partitioned {
				files = partitionCorpus(k, seed, files)
				name += " partitioned"
			}
			files = withGzipped(seed, shape, withEmptyDrops(seed, shape, files))
			runs = append(runs, diffRun{fmt.Sprintf("%s seed %d", name, seed), shape, files, false, k})
		}
	}
	// The cast probes (castProbes): a corpus of two files per format
	// whose columns the scans cast, once a run, on a path that scans.
	for i, format := range []string{"csv", "json"} {
		seed := uint64(1000*first + 900 + i)
		runs = append(runs, diffRun{fmt.Sprintf("%s casts seed %d", format, seed), corpusShape{format: format}, castProbes(seed, format), true, first})
	}
	for _, run := range runs {
		shape, files := run.shape, run.files
		t.Run(run.name, func(t *testing.T) {
			// Corpora in parallel, each on a session of its own; its
			// paths one after another, compared with one oracle.
			t.Parallel()
			c := newClient(t)
			if shape.columnar() {
				files = columnarCorpus(t, shape.format, files)
				files["empty."+shape.format] = []byte{} // see withEmptyDrops
			}
			local := localFiles(t, files)
			remote := clusterFiles(t, files)
			store := uploadEarly(t, files)
			policy := sparkmerge.Options{SourceColumn: "_source"}
			skipSource := func(col string) bool { return strings.HasPrefix(col, "_source ") }
			job := spark.Job{Sources: pathSources(local), Strategy: spark.StrategyUnion, SparkInference: true, InferEachFileAlone: true, Policy: policy, ReaderOptions: shape.readerOptions()}
			var (
				reference *oracle
				refErr    error
			)
			if shape.partitioned {
				// Each file read alone by Spark, with its partition
				// values as Spark's read of the tree types them.
				reference, refErr = partitionOracle(t, c, shape.format, local, treeFiles(files), shape.readerOptions())
			} else {
				reference, refErr = newMergedOracle(t, c, job)
			}
			countMu.Lock()
			if refErr != nil {
				refused++
				t.Logf("Spark reading each file alone fails: %v", refErr)
			}
			total++
			countMu.Unlock()
			// Every path's output, compared with the reference in one
			// query once all have merged (sameAsEach).
			var outs []compared
			for _, p := range paths {
				if run.casts && !p.casts || !takes(p, run.k) {
					continue
				}
				runOnParentSession(t, p.name, func(t *testing.T) {
					root := local
					switch {
					case p.linked:
						root = linkedCorpus(t, files, p.cluster)
					case p.cluster:
						root = remote
					case p.objectStore:
						// A machine without the store skips this path
						// alone, not the corpus.
						root = store.settled(t)
					}
					job := spark.Job{Sources: pathSources(root), Strategy: p.strategy, SparkInference: p.sparkInference, Policy: policy, Verify: true, ReaderOptions: shape.readerOptions(),
						Target: spark.Target{Path: filepath.Join(workDir(t), "out")}}
					res, err := c.Merge(context.Background(), job)
					if err == nil {
						sawEmptyDrops(t, res, files)
						// What discovery asked of Spark, to compare runs by.
						t.Logf("planned: %d files typed together in %d requests; %d Spark requests (%+v)",
							res.Planned.TypedTogether, res.Planned.TogetherRequests, res.Planned.Requests.SparkRequests(), res.Planned.Requests)
					}
					if csv := shape.format == "csv" || shape.format == "tsv"; err == nil && csv && !p.sparkInference {
						where := "local"
						if p.cluster || p.objectStore {
							where = "server only"
						}
						scanned, quoted := 0, 0
						for _, f := range res.Planned.PositionalFiles() {
							if castProbeName(filepath.Base(f)) {
								continue // the generated files' scans are counted
							}
							scanned++
							for name, content := range files {
								if strings.HasSuffix(f, "/"+name) && strings.Contains(string(gunzipped(t, name, content)), `"`) {
									quoted++
								}
							}
						}
						countMu.Lock()
						csvScanned[where] += scanned
						quotedScanned[where] += quoted
						countMu.Unlock()
					}
					if err == nil && run.casts {
						sawCastProbesScanned(t, res, files)
					}
					if err == nil && !p.sparkInference && !p.linked && !p.objectStore {
						// Gzip files the client typed from their text.
						where := "local"
						if p.cluster {
							where = "server only"
						}
						typed := 0
						for _, r := range res.Planned.Reads {
							if r.InferredLocally && slices.ContainsFunc(r.Paths, func(p string) bool { return strings.HasSuffix(p, ".gz") }) {
								typed++
							}
						}
						countMu.Lock()
						gzipTyped[where] += typed
						countMu.Unlock()
					}
					switch {
					case refErr != nil && err == nil:
						t.Errorf("merged where Spark reading each file alone fails (%v)", refErr)
					case refErr == nil && err != nil:
						t.Errorf("%v (Spark reading each file alone merges)", err)
					case err == nil && shape.partitioned:
						outs = append(outs, compared{p.name, job.Target.Path, root})
					case err == nil:
						outs = append(outs, compared{p.name, job.Target.Path, ""})
					}
				})
			}
			if shape.partitioned {
				// A partition column comes after the columns of the
				// file that brings it first, in the reference after
				// every file's columns.
				reference.sameAsEach(t, c, outs, nil, local, true)
			} else {
				reference.sameAsEach(t, c, outs, skipSource, "", false)
			}
			if (t.Failed() || refErr != nil && os.Getenv("SPARKMERGE_DIFF_SHOW_REFUSED") != "") && !shape.columnar() {
				for name, content := range files {
					t.Logf("%s:\n%q", name, content)
				}
			}
		})
	}
}

// sparkRefusedJSON are JSON-lines files of the shapes Spark's reader may
// refuse read alone (or read in a way a client typer might not), each
// merged beside a plain file: a corpus of their own, as the generated
// corpora keep to mergeable values. Issue 33 item 17 reported a merge
// that succeeded (auto) where Spark alone fails; these are the shapes
// searched for it, kept so that every path stays one meaning for them.
var sparkRefusedJSON = map[string]string{
	"corrupt line":           "{\"a\":2.5,\"b\":\"y\"}\n{\"a\":\n",
	"truncated last line":    "{\"a\":2.5,\"b\":\"y\"}\n{\"a\":3,\"b\":\"z\"",
	"keys differing by case": "{\"a\":2.5,\"b\":\"y\",\"A\":3}\n",
	"key repeated":           "{\"a\":2.5,\"a\":3,\"b\":\"y\"}\n",
	"key escaped to another": "{\"\\u0061\":2.5,\"b\":\"y\",\"a\":4}\n",
	"only {}":                "{}\n",
	"only {} lines":          "{}\n{}\n",
	"scalar then object":     "{\"a\":2.5,\"b\":\"y\"}\n{\"a\":{\"k\":1},\"b\":\"z\"}\n",
	"object then scalar":     "{\"a\":{\"k\":1},\"b\":\"z\"}\n{\"a\":2.5,\"b\":\"y\"}\n",
	"array then scalar":      "{\"a\":[1],\"b\":\"z\"}\n{\"a\":2.5,\"b\":\"y\"}\n",
	"BOM":                    "\uFEFF{\"a\":2.5,\"b\":\"y\"}\n",
	"invalid UTF-8":          "{\"a\":2.5,\"b\":\"y\xff\xfe\"}\n",
	"top-level array":        "[{\"a\":2.5,\"b\":\"y\"}]\n",
	"top-level array of two": "[{\"a\":2.5,\"b\":\"y\"},{\"a\":3,\"b\":\"z\"}]\n",
	"NaN":                    "{\"a\":NaN,\"b\":\"y\"}\n",
	"Infinity":               "{\"a\":2.5,\"b\":\"y\"}\n{\"a\":-Infinity,\"b\":\"z\"}\n",
	"1e400":                  "{\"a\":1e400,\"b\":\"y\"}\n",
	"huge integer":           "{\"a\":123456789012345678901234567890,\"b\":\"y\"}\n",
	"leading zeros":          "{\"a\":007,\"b\":\"y\"}\n",
	"unquoted keys":          "{a:2.5,b:\"y\"}\n",
	"line comment":           "{\"a\":2.5,\"b\":\"y\"} // c\n",
	"block comment":          "/* c */ {\"a\":2.5,\"b\":\"y\"}\n",
	"single quotes":          "{'a':2.5,'b':'y'}\n",
	"trailing comma":         "{\"a\":2.5,\"b\":\"y\",}\n",
	"a line of null":         "{\"a\":2.5,\"b\":\"y\"}\nnull\n",
	"only null":              "null\n",
	"a scalar line":          "{\"a\":2.5,\"b\":\"y\"}\n42\n",
	"a string line":          "{\"a\":2.5,\"b\":\"y\"}\n\"s\"\n",
	"two objects on a line":  "{\"a\":2.5,\"b\":\"y\"}{\"a\":3,\"b\":\"z\"}\n",
	"pretty-printed":         "{\n  \"a\": 2.5,\n  \"b\": \"y\"\n}\n",
	"raw control character":  "{\"a\":2.5,\"b\":\"y\x01\"}\n",
	"blank lines":            "\n{\"a\":2.5,\"b\":\"y\"}\n\n   \n",
	"CRLF":                   "{\"a\":2.5,\"b\":\"y\"}\r\n{\"a\":3,\"b\":\"z\"}\r\n",
	"empty key":              "{\"\":1,\"a\":2.5,\"b\":\"y\"}\n",
	"nested keys by case":    "{\"a\":2.5,\"b\":\"y\",\"o\":{\"k\":1,\"K\":2}}\n",
	"deep":                   "{\"a\":2.5,\"b\":\"y\",\"d\":" + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "}\n",
	"UTF-16":                 "\xff\xfe{\x00\"\x00a\x00\"\x00:\x002\x00}\x00\n\x00",
}

// sparkRefusedJSONPairs are shapes that need both files: the plain file
// of the pair given too.
var sparkRefusedJSONPairs = map[string][2]string{
	"nested keys by case across files": {"{\"a\":1,\"b\":\"x\",\"o\":{\"k\":1}}\n", "{\"a\":2.5,\"b\":\"y\",\"o\":{\"K\":2}}\n"},
	"keys by case across files":        {"{\"a\":1,\"b\":\"x\"}\n", "{\"A\":2.5,\"b\":\"y\"}\n"},
	"scalar and object across files":   {"{\"a\":1,\"b\":\"x\"}\n", "{\"a\":{\"k\":2.5},\"b\":\"y\"}\n"},
}

// Each file of sparkRefusedJSON beside {"a":1,"b":"x"}: every path merges
// it as Spark reading each file alone does, or refuses it as Spark alone
// does.
func TestDifferentialJSONSparkRefusesAlone(t *testing.T) {
	t.Parallel()
	type path struct {
		name           string
		strategy       spark.Strategy
		sparkInference bool
		cluster        bool
	}
	paths := []path{
		{"auto", spark.StrategyAuto, false, false},
		{"union", spark.StrategyUnion, false, false},
		{"auto --spark-inference", spark.StrategyAuto, true, false},
		{"union --spark-inference", spark.StrategyUnion, true, false},
		{"auto, cluster files", spark.StrategyAuto, false, true},
		{"union, cluster files", spark.StrategyUnion, false, true},
		{"auto --spark-inference, cluster files", spark.StrategyAuto, true, true},
	}
	if s := os.Getenv("SPARKMERGE_DIFF_CORPORA"); s == "" || s == "3" {
		// The suite's run: the four paths that differ most (client or
		// Spark inference, positional scan or per-file reads, files the
		// client reads or only Spark sees); the long run takes all seven.
		paths = []path{paths[0], paths[1], paths[2], paths[4]}
	}
	policy := sparkmerge.Options{SourceColumn: "_source"}
	skipSource := func(col string) bool { return strings.HasPrefix(col, "_source ") }
	pairs := maps.Clone(sparkRefusedJSONPairs)
	for shape, odd := range sparkRefusedJSON {
		pairs[shape] = [2]string{"{\"a\":1,\"b\":\"x\"}\n", odd}
	}
	for _, shape := range slices.Sorted(maps.Keys(pairs)) {
		files := map[string][]byte{"good.json": []byte(pairs[shape][0]), "odd.json": []byte(pairs[shape][1])}
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			local := localFiles(t, files)
			remote := clusterFiles(t, files)
			reference, refErr := newMergedOracle(t, c, spark.Job{Sources: pathSources(local), Strategy: spark.StrategyUnion, SparkInference: true, InferEachFileAlone: true, Policy: policy})
			outcomes := []string{fmt.Sprintf("Spark alone: %v", refErr)}
			var outs []compared // compared once all paths have merged
			for _, p := range paths {
				runOnParentSession(t, p.name, func(t *testing.T) {
					root := local
					if p.cluster {
						root = remote
					}
					job := spark.Job{Sources: pathSources(root), Strategy: p.strategy, SparkInference: p.sparkInference, Policy: policy, Verify: true,
						Target: spark.Target{Path: filepath.Join(workDir(t), "out")}}
					_, err := c.Merge(context.Background(), job)
					outcomes = append(outcomes, fmt.Sprintf("%s: %v", p.name, err))
					switch {
					case refErr != nil && err == nil:
						t.Errorf("merged where Spark reading each file alone fails (%v)", refErr)
					case refErr == nil && err != nil:
						t.Errorf("%v (Spark reading each file alone merges)", err)
					case err == nil:
						outs = append(outs, compared{p.name, job.Target.Path, ""})
					}
				})
			}
			reference.sameAsEach(t, c, outs, skipSource, "", false)
			if t.Failed() || os.Getenv("SPARKMERGE_DIFF_SHOW_REFUSED") != "" {
				t.Logf("odd.json %q:\n  %s", files["odd.json"], strings.Join(outcomes, "\n  "))
			}
		})
	}
}
