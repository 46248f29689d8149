package spark

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A merge of 2,000 small CSV files with 2,000 different headers is 2,000
// reads, and Spark's cost per read dominates it: the driver plans each scan
// and compiles code for each read's projection (most of such a merge of
// 42,000 rows, measured). Files whose schemas the client inferred
// (so it has seen every value) are therefore read in positional scans
// instead, every value a string: all CSV files of one set of options in one
// load (each file whole, its header line checked, the rest split into lines
// and each line at the separator, or parsed by Spark's CSV parser where it
// holds a quote, which reads what the CSV reader would: see lineSeparator
// and csvScan), all JSON-lines
// files as text parsed with from_json under a schema of every key spelling
// (keys that may be, straight into their column's type; see typedKeys). Each row's file says, through a route table
// joined once per row, which position feeds which target column through
// which casts: CAST(CAST(raw AS <file's type>) AS <target type>). For the
// values client inference admits (see package infer) a string cast to the
// file's type is exactly what Spark's parser makes of it, so the rows are
// those of the reads one by one.
//
// Positional reading skips the header check of enforceSchema=false.
// Instead each row's file is matched on path, size and modification time as
// the client saw them when it inferred the schema, and a CSV file's header
// line, read with its rows, on the one the client planned with: a file that
// changed since, or that the server sees differently, fails the merge
// naming it instead of shifting values between columns.

// Columns of the batch scan.
const (
	rawColumn       = "__sparkmerge_raw"  // array<string>: the row's values by position
	positionsColumn = "__sparkmerge_pos"  // array<int>: per target column, the 1-based position in the file
	castsColumn     = "__sparkmerge_cast" // array<int>: per target column, its cast (0: null)
	sourceColumn    = "__sparkmerge_src"  // string: the row's source (scanBatch.sources)
	fileColumn      = "__sparkmerge_file" // string: the row's file, as the client names it
	jsonColumn      = "__sparkmerge_json" // struct: a JSON record's keys by position (typed keys in their column's type, the others strings)
)

// Columns of the scan before its rows find their file in the route table.
const (
	textColumn      = "__sparkmerge_text"     // string: a CSV file's whole text
	headColumn      = "__sparkmerge_head"     // string: a CSV file's header line (its first that is not empty)
	skipColumn      = "__sparkmerge_skip"     // int: the empty lines before a CSV file's header
	lineColumn      = "__sparkmerge_line"     // string: a CSV file's line
	linePosColumn   = "__sparkmerge_line_pos" // int: a CSV file's line's index, from 0
	parsedColumn    = "__sparkmerge_parsed"   // struct: a CSV line with a quote as Spark's parser reads it (see fromCSV)
	splitColumn     = "__sparkmerge_split"    // array<string>: in a batch with quoted values, a CSV line without a quote split at the separator, padded
	rowPathColumn   = "__sparkmerge_row_path"
	rowSizeColumn   = "__sparkmerge_row_size"
	rowMTimeColumn  = "__sparkmerge_row_mtime"
	routeKeyColumn  = "__sparkmerge_route_key" // string: the file as its rows name it (scanBatch.rowFiles)
	routeSizeColumn = "__sparkmerge_route_size"
	routeTimeColumn = "__sparkmerge_route_mtime"
	// routeHeaderColumn is a CSV file's header line as the client read it.
	routeHeaderColumn = "__sparkmerge_route_header"
	// routePadColumn is, in a CSV batch with quoted values, the separators
	// that make a line of the file as wide as the batch (see fromCSV).
	routePadColumn = "__sparkmerge_route_pad"
)

// batchRows is a batch's scan: its rows, and whether each carries its
// file's route and provenance (positionsColumn, castsColumn, sourceColumn,
// fileColumn), or its JSON record alone (an unrouted batch scanned without
// its source). project reads what the scan says rather than assuming how
// it was made.
type batchRows struct {
	connect.Frame
	routed bool
	// empties: the rows are a CSV batch's lines split at the separator
	// (see lineSeparator), whose values may be "" where the CSV reader
	// gives null.
	empties bool
	// inPlace: the rows are a CSV batch's lines whose values are null
	// wherever the reader's are and never "" (a batch with quoted values,
	// see csvScan): project takes each where its cast uses it.
	inPlace bool
}

// batchScan reads the batch's files positionally, in one load. An unrouted
// batch (every column from typed JSON keys) gives each row its record
// alone (jsonColumn), unless withSource; any other batch gives rows as
// follows. It reads them (CSV values as strings, JSON keys as keyTypes says)
// and gives each row its values as an array (rawColumn) and, from its
// file's row in a route table, how they feed the target (positionsColumn,
// castsColumn) and its provenance (sourceColumn, fileColumn). The route
// table is sent with the plan and broadcast, so a row finds its file by one
// hash lookup whatever the number of files, and the expressions (and the
// code Spark generates for them) do not grow with the files either. A row
// from a file whose path, size or modification time is not what the client
// saw fails the query.
//
// CSV files are read whole, one row per file (see csvScan). JSON lines are read as
// text and parsed with from_json under a schema of every key spelling:
// a typed key (layout.typed) into its column's type, so that the column
// is the first non-null of its keys, with no routing and no cast (about
// half the time of every key a string on 2,000 files, measured side by
// side); the others as strings (routed), for which
// Spark's JSON parser gives a number or boolean as its text (the number as
// parsed, then printed), which the casts parse back to the file's type.
// Blank lines are no records, as for the JSON reader.
func (c *Client) batchScan(reads []*Read, b scanBatch, withSource bool) batchRows {
	first := reads[b.reads[0]]
	paths := make([]string, len(b.files))
	for m, f := range b.files {
		paths[m] = literalPath(f.Paths[0])
	}
	rowPath, keys := b.rowFiles()
	row := []string{
		rowPath + " AS " + rowPathColumn,
		"_metadata.file_size AS " + rowSizeColumn,
		"unix_millis(_metadata.file_modification_time) AS " + rowMTimeColumn,
	}

	if b.format != "json" {
		return c.csvScan(reads, b, paths, keys, row)
	}
	types := b.keyTypes()
	parsed := make([]string, len(b.keys))
	renamed := make([]string, len(b.keys))
	for j, k := range b.keys {
		parsed[j] = ident(k) + " " + types[j]
		renamed[j] = fmt.Sprintf("f%d: %s", j, types[j])
	}
	refs := []string{"CAST(NULL AS STRING)"} // no routed key: an array<string> all the same
	if len(b.layout.routed) > 0 {
		refs = refs[:0]
	}
	for _, j := range b.layout.routed {
		refs = append(refs, fmt.Sprintf("%s.f%d", jsonColumn, j))
	}
	mode := "FAILFAST"
	for k, v := range first.Options {
		if strings.EqualFold(k, "mode") {
			mode = v
		}
	}
	// The struct cast renames the fields by position: keys spelled
	// alike but for case would be ambiguous by name.
	record := fmt.Sprintf("CAST(from_json(value, %s, map('mode', %s)) AS STRUCT<%s>) AS %s",
		sparkmerge.QuoteString(strings.Join(parsed, ", ")), sparkmerge.QuoteString(mode), strings.Join(renamed, ", "), jsonColumn)
	raw := c.sess.Read(connect.ReadSpec{Format: "text", Paths: paths}).
		Filter(notBlank).
		SelectExpr(append([]string{record}, row...)...).
		SelectExpr(append([]string{"array(" + strings.Join(refs, ", ") + ") AS " + rawColumn}, jsonColumn, rowPathColumn, rowSizeColumn, rowMTimeColumn)...)

	changed := b.changedError(rowPath)
	if b.layout.unrouted() && !withSource {
		// No row needs its file's route: the stamps are checked against
		// a set of literals (a hash lookup), with no join (on the
		// benchmark's JSON files within the noise, in the same direction
		// at both sizes; see docs/benchmarks-history.md#measurements-behind-the-code).
		stamps := make([]string, len(b.files))
		for m, f := range b.files {
			stamps[m] = sparkmerge.QuoteString(fmt.Sprintf("%s|%d|%d", keys[m], f.stamp.size, f.stamp.mtimeMillis))
		}
		stamp := "concat(" + rowPathColumn + ", '|', " + rowSizeColumn + ", '|', " + rowMTimeColumn + ")"
		return batchRows{Frame: raw.Filter("CASE WHEN " + stamp + " IN (" + strings.Join(stamps, ", ") + ") THEN true ELSE " + changed + " END").
			SelectExpr(jsonColumn)}
	}
	route := c.sess.LocalTable(b.routeTable(keys)...)
	return batchRows{Frame: raw.BroadcastLeftJoin(route, rowPathColumn+" = "+routeKeyColumn).
		Filter("CASE WHEN "+sameStamp+" THEN true ELSE "+changed+" END").
		SelectExpr(rawColumn, positionsColumn, castsColumn, sourceColumn, fileColumn, jsonColumn), routed: true}
}

// sameStamp is true when a row joined with its file's route (fileColumn
// not null) has the size and modification time the client saw.
const sameStamp = fileColumn + " IS NOT NULL AND " + rowSizeColumn + " = " + routeSizeColumn + " AND " + rowMTimeColumn + " = " + routeTimeColumn

// changedError fails a row of a file whose size or modification time is
// not what the client saw (or that the route does not know), naming the
// file as the client does.
func (b scanBatch) changedError(rowPath string) string {
	named := rowPathColumn // the row's file in the error, as the client names it
	if rowPath == sparkFilePath {
		named = rowFileOf(rowPathColumn, false) // evaluated only to fail
	}
	return "raise_error(concat('sparkmerge: ', " + named + ", ' changed after sparkmerge read it to plan the merge (its size or modification time differ, or the server sees another file at that path): rerun the merge'))"
}

// csvScan reads a CSV batch (every file readsAsLines): each file whole, as
// one row of text, so that its header line and its rows come from one
// read of the file. Spark's listing gives a file's size and modification
// time (_metadata), not the read: a file rewritten after Spark listed it
// (the same size, its columns in another order) kept the stamps the
// client saw, and its rows were read by position under the old header,
// exit 0. Here the file's first line that is not empty (the header, as
// Spark's CSV reader takes it) must be the header line the client planned
// with, or the merge fails naming the file; the rest is split into lines
// (at a line feed, carriage return and line feed, or carriage return, as
// the text and CSV readers break lines), the empty ones dropped, and each
// line split at the separator (see lineSeparator), or, in a batch of a
// file with quoted values, parsed by Spark's CSV parser where it holds a
// quote (see fromCSV). The route is joined once per file, before its lines
// are made.
func (c *Client) csvScan(reads []*Read, b scanBatch, paths, keys, row []string) batchRows {
	sep, _ := b.lineSeparator(reads) // batchable admits only such reads
	files := c.sess.Read(connect.ReadSpec{Format: "text", Paths: paths, Options: map[string]string{"wholetext": "true"}}).
		SelectExpr(append([]string{
			"value AS " + textColumn,
			`regexp_extract(value, '^[\\r\\n]*([^\\r\\n]*)', 1) AS ` + headColumn,
			// The empty lines before the header.
			`size(split(regexp_extract(value, '^[\\r\\n]*', 0), '\\r\\n|\\r|\\n', -1)) - 1 AS ` + skipColumn,
		}, row...)...)
	rowPath, _ := b.rowFiles()
	stale := "raise_error(concat('sparkmerge: ', " + fileColumn + ", ' changed after sparkmerge read it to plan the merge (its header line is now \"', left(" + headColumn + ", 200), '\", planned \"', left(" + routeHeaderColumn + ", 200), '\"): rerun the merge'))"
	routeTable, kept := b.routeTable(keys), []string{positionsColumn, castsColumn, sourceColumn, fileColumn}
	if b.quoted() {
		plain := csvSeparator(reads[b.reads[0]].Options)
		routeTable = append(routeTable, connect.LocalColumn{Name: routePadColumn, Strings: b.pads(plain)})
		kept = append(kept, routePadColumn)
	}
	route := c.sess.LocalTable(routeTable...)
	checked := files.BroadcastLeftJoin(route, rowPathColumn+" = "+routeKeyColumn).
		Filter("CASE WHEN NOT (" + sameStamp + ") THEN " + b.changedError(rowPath) + " WHEN " + headColumn + " = " + routeHeaderColumn + " THEN true ELSE " + stale + " END")
	// A file without a carriage return is split at its line feeds without
	// a regular expression (Java's split of one plain character).
	lines := `CASE WHEN contains(` + textColumn + `, '\r') THEN split(` + textColumn + `, '\\r\\n|\\r|\\n', -1) ELSE split(` + textColumn + `, '\n', -1) END`
	rows := checked.
		SelectExpr(append([]string{`posexplode(` + lines + `) AS (` + linePosColumn + `, ` + lineColumn + `)`, skipColumn}, kept...)...).
		Filter(linePosColumn + " > " + skipColumn + " AND " + lineColumn + " != ''")
	split := "split(" + lineColumn + ", " + sparkmerge.QuoteString(sep) + ", -1)"
	if !b.quoted() {
		return batchRows{Frame: rows.SelectExpr(append([]string{split + " AS " + rawColumn}, kept...)...), routed: true, empties: true}
	}
	// A line with a quote is parsed by Spark's CSV parser (from_csv),
	// under the read's options, as the reader parses each line of a file
	// without multiLine; a line without one holds no backslash either
	// (client inference admits a backslash only before a quote in a
	// quoted value), so its split is the parser's values. The parse is a
	// projection of its own, referenced once per value after it: Spark
	// does not inline an expression that costs more than a reference
	// into each of its uses.
	//
	// Either way the line's values array holds null where the reader's
	// value is null, and never "": the parser gives its nullValue ("" by
	// default and in every read client inference types) as null, and a
	// split line, padded as the parse is so that it is as wide as the
	// batch, has each empty value made null as its array is built. So
	// project takes each value as it is where its cast uses it
	// (batchRows.inPlace), with no projection of the values of
	// their own (see project): dated-csv's merge written to noop took
	// 11.9-13.4 s of task CPU so, against 14.1-14.3 s
	// (docs/benchmarks-history.md#dated-csvs-scan-cpu-by-stage-2026-12-05).
	hasQuote := "contains(" + lineColumn + `, '"')`
	padded := "split(concat(" + lineColumn + ", " + routePadColumn + "), " + sparkmerge.QuoteString(sep) + ", -1)"
	values, splitValues := make([]string, b.width), make([]string, b.width)
	for j := range values {
		values[j] = fmt.Sprintf("%s.c%d", parsedColumn, j)
		v := fmt.Sprintf("%s[%d]", splitColumn, j)
		splitValues[j] = "CASE WHEN " + v + " = '' THEN NULL ELSE " + v + " END"
	}
	kept = kept[:len(kept)-1] // the pad is parsed or split with the line, then dropped
	parsed := rows.SelectExpr(append([]string{
		"CASE WHEN " + hasQuote + " THEN " + b.fromCSV(reads) + " END AS " + parsedColumn,
		"CASE WHEN NOT " + hasQuote + " THEN " + padded + " END AS " + splitColumn,
	}, kept...)...)
	// A parse is never null (FAILFAST): a null one is a line split.
	rows = parsed.SelectExpr(append([]string{"CASE WHEN " + parsedColumn + " IS NOT NULL THEN array(" + strings.Join(values, ", ") + ") ELSE array(" + strings.Join(splitValues, ", ") + ") END AS " + rawColumn}, kept...)...)
	return batchRows{Frame: rows, routed: true, inPlace: true}
}

// pads are, per file of a CSV batch, the separators that make a line of
// the file as wide as the batch (see fromCSV): as many as the batch has
// columns more than the file's header line, which has no quote (client
// inference refuses one there), so that its split at the separator is its
// width.
func (b scanBatch) pads(sep string) []string {
	pads := make([]string, len(b.files))
	for m, f := range b.files {
		pads[m] = strings.Repeat(sep, b.width-len(strings.Split(f.headerLine, sep)))
	}
	return pads
}

// quoted says whether a file of the CSV batch has a quoted value.
func (b scanBatch) quoted() bool {
	return slices.ContainsFunc(b.files, func(f *Read) bool { return f.quotedValues })
}

// fromCSV parses a CSV batch's line (lineColumn) with Spark's CSV parser,
// as its reads' reader parses each line (the options are the reads': a
// batch's reads share them), into a struct of the batch's width in
// strings, c0, c1 and so on. A line is as wide as its file (client
// inference saw every row as wide as the header), which may be narrower
// than the batch: the line is parsed with its file's padding
// (routePadColumn, separators) after it, which adds empty values, null to
// the parser, at positions the file's route never reads. So every line
// parses to exactly the batch's width, and the parse is FAILFAST: a line
// the parser read otherwise than client inference did fails the merge
// rather than lose or shift a value. (Unpadded, a narrower line is a
// malformed record to the parser, which PERMISSIVE turns into its values
// and nulls by way of an exception per line.)
func (b scanBatch) fromCSV(reads []*Read) string {
	options := reads[b.reads[0]].Options
	keys := make([]string, 0, len(options))
	for k := range options {
		if !strings.EqualFold(k, "mode") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	args := make([]string, 0, 2*len(keys)+2)
	for _, k := range keys {
		args = append(args, sparkmerge.QuoteString(k), sparkmerge.QuoteString(options[k]))
	}
	args = append(args, "'mode'", "'FAILFAST'")
	fields := make([]string, b.width)
	for j := range fields {
		fields[j] = fmt.Sprintf("c%d STRING", j)
	}
	return fmt.Sprintf("from_csv(concat(%s, %s), %s, map(%s))", lineColumn, routePadColumn, sparkmerge.QuoteString(strings.Join(fields, ", ")), strings.Join(args, ", "))
}

// sparkFilePath is a row's file as Spark names it: a URI.
const sparkFilePath = "_metadata.file_path"

// rowFiles is how the batch's rows name their files (an expression, for
// rowPathColumn) and, per file, that name (its route key). Spark names a
// row's file by a URI (sparkFilePath). For a local file the client read,
// at a clean absolute path of plain characters (letters, digits and
// "/._-"), that URI is "file:" and the path: the rows keep Spark's name,
// and the route table holds the files so named, with no string work per
// row. Any other file (one only the server sees, a name Spark escapes)
// has every row's name decoded into the client's form (rowFileOf; a
// batch's files are named as that gives them, see namesRowFile). Decoding
// each row's name measurably slowed a scan of the benchmark's 200 CSV
// files in a new session (docs/benchmarks-history.md#measurements-behind-the-code).
func (b scanBatch) rowFiles() (expr string, keys []string) {
	asSpark := true
	for _, f := range b.files {
		asSpark = asSpark && f.copy == nil && !f.listed && plainLocalPath(f.Paths[0])
	}
	keys = make([]string, len(b.files))
	for m, f := range b.files {
		keys[m] = f.Paths[0]
		if asSpark {
			keys[m] = "file:" + f.Paths[0]
		}
	}
	if asSpark {
		return sparkFilePath, keys
	}
	return rowFileOf(sparkFilePath, false), keys
}

// plainLocalPath says whether p is a local path as rows name their files
// (namesRowFile: clean and absolute) of letters, digits and "/._-" only:
// one that Spark's file URI spells as it is.
func plainLocalPath(p string) bool {
	if !isLocalPath(p) || !namesRowFile(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/._-", c) >= 0) {
			return false
		}
	}
	return true
}

// lineSeparator says whether a CSV batch's files may be split into lines
// and values (every read of it readsAsLines), and returns the separator as
// a regular expression for split.
//
// A file may be read so when its header line is known and no other line
// equals it (Read.headerLine): client inference then saw that the file has
// no NUL bytes, no carriage return but before a line feed, no line of only
// blanks, no value spanning lines, no quote or backslash outside the
// values it quoted whole (each ends on its line), and every other
// non-empty line exactly as many values as the header; so its lines, but
// the empty ones and the header, are its rows, and a split of a line
// without a quote gives its values as the CSV reader does, an empty value
// as "" where the reader gives null (values maps it to null). A line with
// a quote is parsed by Spark's parser instead (csvScan, fromCSV). Measured with the benchmark's 200 CSV files of 1 MB in
// one load, text lines split so were clearly faster than the CSV reader,
// which raises an exception for each row narrower than the scan
// (docs/benchmarks-history.md#measurements-behind-the-code).
func (b scanBatch) lineSeparator(reads []*Read) (string, bool) {
	for _, i := range b.reads {
		if !readsAsLines(reads[i]) {
			return "", false
		}
	}
	return splitSeparator(reads[b.reads[0]].Options)
}

// readsAsLines says whether every file of a CSV read may be split into
// lines and values in a positional scan (see lineSeparator).
func readsAsLines(r *Read) bool {
	if r.Format != "csv" {
		return false
	}
	for _, f := range r.parts() {
		if f.headerLine == "" {
			return false
		}
	}
	_, ok := splitSeparator(r.Options)
	return ok
}

// splitSeparator is the CSV separator of the reader options as a regular
// expression for split, for the separators client inference admits.
func splitSeparator(options map[string]string) (string, bool) {
	sep := csvSeparator(options)
	switch sep {
	case ",", ";", "\t":
		return sep, true
	case "|":
		return "\\|", true
	}
	return "", false
}

// csvSeparator is the CSV separator of the reader options as given.
func csvSeparator(options map[string]string) string {
	sep := ","
	for k, v := range options {
		if strings.EqualFold(k, "sep") || strings.EqualFold(k, "delimiter") {
			sep = v
		}
	}
	return sep
}

// keyTypes are the types from_json parses a JSON batch's keys into: a
// typed column's (layout.typed), else STRING.
func (b scanBatch) keyTypes() []string {
	types := make([]string, len(b.keys))
	for j := range types {
		types[j] = "STRING"
	}
	// A typed key's type is its column's target type.
	for k, keys := range b.layout.typed {
		for _, j := range keys {
			types[j] = b.layout.casts[k][0].to.String()
		}
	}
	return types
}

// notBlank keeps the text lines that hold more than spaces and tabs: the
// lines Spark's JSON reader makes records of. Only a line that starts
// with a space or a tab is translated, which costs a map lookup per
// character: over every line of a 520 MB scan that cost several times the
// scan itself, this test about nothing (measured). octet_length
// and startswith look at a line's first bytes; length and left count its
// characters.
const notBlank = "octet_length(value) > 0 AND (NOT (startswith(value, ' ') OR startswith(value, '\\t')) OR length(translate(value, ' \\t', '')) > 0)"

// routeTable is the batch's route table: per file, its path, its name in
// its rows (keys, see rowFiles), the size and modification time the client
// saw, and its row of the batch's layout; for a CSV batch its header line.
func (b scanBatch) routeTable(keys []string) []connect.LocalColumn {
	n := len(b.files)
	files := make([]string, n)
	sizes, times := make([]int64, n), make([]int64, n)
	for m, f := range b.files {
		files[m] = f.Paths[0]
		sizes[m], times[m] = f.stamp.size, f.stamp.mtimeMillis
	}
	route := []connect.LocalColumn{
		{Name: fileColumn, Strings: files},
		{Name: routeKeyColumn, Strings: keys},
		{Name: routeSizeColumn, Longs: sizes},
		{Name: routeTimeColumn, Longs: times},
		{Name: positionsColumn, IntArrays: b.layout.positions},
		{Name: castsColumn, IntArrays: b.layout.codes},
		{Name: sourceColumn, Strings: b.sources},
	}
	if b.format == "csv" {
		headers := make([]string, n)
		for m, f := range b.files {
			headers[m] = f.headerLine
		}
		route = append(route, connect.LocalColumn{Name: routeHeaderColumn, Strings: headers})
	}
	return route
}

// project maps a batch scan onto target by the batch's layout: per target
// column, the value at the row's file's position through the file's cast.
//
// The values are taken in a projection of their own first (see values),
// but in a batch with quoted values, whose lines' values are null where
// the reader's are and never "" (see csvScan): there each value is taken
// from the row where its cast uses it (lineValue), in one step. A
// positional merge runs with whole-stage code off (tuning.operatorCode),
// so every projection copies its row, and the values' own projection (two,
// as Spark 4 rewrites nullif) copied each of the 53 values of dated-csv's
// 504,252 lines twice more, for taking a value that costs a pointer (an
// array's element, not copied): in one step, and the values null-correct
// in their array, that merge took 19.2-21.7 s of task CPU against
// 22.1-25.1 s (docs/benchmarks-history.md#dated-csvs-scan-cpu-by-stage-2026-12-05).
func (b scanBatch) project(target sparkmerge.Schema, scan batchRows) connect.Frame {
	l := b.layout
	out := make([]string, len(target.Fields))
	for k, tf := range target.Fields {
		var e string
		switch {
		case l.provenance[k]:
			e = sourceColumn
		case len(l.casts[k]) == 0:
			e = "NULL"
		case l.typed != nil && l.typed[k] != nil:
			e = valueColumn(k) // parsed into the target's type
		default:
			raw := valueColumn(k)
			if scan.inPlace {
				raw = lineValue(k)
			}
			uniform := true
			for m := range l.codes {
				uniform = uniform && l.codes[m][k] == 1
			}
			if uniform {
				e = l.casts[k][0].sql(raw, fileColumn)
				break
			}
			var cases strings.Builder
			fmt.Fprintf(&cases, "CASE element_at(%s, %d)", castsColumn, k+1)
			for t, cast := range l.casts[k] {
				fmt.Fprintf(&cases, " WHEN %d THEN %s", t+1, cast.sql(raw, fileColumn))
			}
			cases.WriteString(" END")
			e = cases.String()
		}
		out[k] = "CAST(" + e + " AS " + tf.Type.String() + ") AS " + ident(tf.Name)
	}
	if scan.inPlace {
		return scan.SelectExpr(out...)
	}
	return scan.SelectExpr(b.values(len(target.Fields), scan.routed, scan.empties)...).SelectExpr(out...)
}

// lineValue is a routed row's value for target column k: the value at the
// position the row's file gives (as it is, in a CSV batch's line whose
// values are null where the reader's are; see values for the others).
func lineValue(k int) string {
	return fmt.Sprintf("element_at(%s, element_at(%s, %d))", rawColumn, positionsColumn, k+1)
}

// values is project's first step, but for a batch with quoted values:
// each of the n target columns' values taken from the row once, in a
// projection of its own, rather than in every branch of its CASE: smaller
// generated code, and faster on the benchmark's 200 CSV files of 0.5 MB
// (measured; taken in the casts instead, each value tested for "" there,
// wide-drift-csv's merge cost 20.0-22.0 s of task CPU against 16.4-17.2
// s, docs/benchmarks-history.md#dated-csvs-scan-cpu-by-stage-2026-12-05).
// It keeps the route's casts and the provenance if the rows hold them
// (routed). A split line's empty value is null, as the CSV reader makes
// it (empties).
func (b scanBatch) values(n int, routed, empties bool) []string {
	l := b.layout
	var values []string
	if routed {
		values = []string{castsColumn, sourceColumn, fileColumn}
	}
	for k := range n {
		switch {
		case l.typed != nil && l.typed[k] != nil:
			keys := make([]string, len(l.typed[k]))
			for i, j := range l.typed[k] {
				keys[i] = fmt.Sprintf("%s.f%d", jsonColumn, j)
			}
			values = append(values, fmt.Sprintf("coalesce(%s) AS %s", strings.Join(keys, ", "), valueColumn(k)))
		case !l.provenance[k] && len(l.casts[k]) > 0:
			value := lineValue(k)
			if empties {
				value = "nullif(" + value + ", '')"
			}
			values = append(values, value+" AS "+valueColumn(k))
		}
	}
	return values
}

// unrouted says whether no row of the batch needs its file's route: every
// column takes typed JSON keys or is null, and none is the provenance
// column (each row's own source).
func (l batchLayout) unrouted() bool {
	if l.typed == nil {
		return false
	}
	for k := range l.casts {
		if l.provenance[k] || len(l.casts[k]) > 0 && l.typed[k] == nil {
			return false
		}
	}
	return true
}

// valueColumn holds target column k's string for the row, in project.
func valueColumn(k int) string { return fmt.Sprintf("__sparkmerge_v%d", k) }

// ident backquotes a column name (checked when the plan was made).
func ident(name string) string {
	q, err := sparkmerge.QuoteIdent(name)
	if err != nil {
		return "``"
	}
	return q
}
