package infer

import (
	"bytes"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// The CSV rules infer a schema exactly as Spark's CSVInferSchema does with
// header=true and inferSchema=true (Spark 3.5 to 4.3, which agree on every
// case here), and refuse whatever file holds anything outside the cases
// they reproduce exactly. They type ints, bigints, decimals, doubles,
// booleans and text; ISO dates (yyyy-MM-dd) and timestamps (a date, ' '
// or 'T', HH:mm, or HH:mm:ss with up to 9 fraction digits and then
// nothing, Z or an offset ±HH:mm up to 18:00), folded value by value in
// Spark's order, a bare year after a date or timestamp included (see
// inferDatetimeField); and values quoted whole ("x,y": see nextCSVValue).
// They refuse backslashes and quotes of any other shape, impossible days,
// other spellings of dates and times, numbers in other notations, rows
// whose width differs from the header, and so on.

// maxCSVColumns is the CSV reader's default maxColumns.
const maxCSVColumns = 20480

// CSVFile is what the rules learn from a CSV file.
type CSVFile struct {
	// Schema is the schema Spark infers for the file alone.
	Schema sparkmerge.Schema
	// ShortNumbers: no number in the file has more than 15 digits, so
	// every one becomes a double exactly (see sparkmerge.RoundsValues).
	ShortNumbers bool
	// Header is the file's header line as written (without its line
	// break), when no other line of the file is equal to it; else "".
	// Spark's reader drops the first line only, and its inference skips
	// every line equal to the header, so a reader that drops the lines
	// equal to Header reads exactly the rows Spark's does: a positional
	// scan may read the file's lines. No value the rules accept spans
	// lines (a quoted value ends on its line), so each line is one row.
	Header string
	// Quoted: a value is quoted. A split of a line at the separator then
	// does not give the values Spark's parser does (a quoted value may
	// hold the separator, an escaped quote); without quotes it does.
	Quoted bool
	// NoRows: the file is its header line and no other line but empty
	// ones, so Spark's reader gives no row of it. Its columns' types were
	// inferred from no value (every one a string) and say nothing.
	NoRows bool
	// NoValues are the columns (indexes into Schema.Fields) without a
	// value in any row (every one empty, which Spark reads as null): a
	// string to Spark's inference, inferred from no value. Not set when
	// NoRows says so of every column.
	NoValues []int
	// SplitSensitive: a column's type holds only if Spark reads the file
	// in one partition (a year after a date or timestamp, see
	// inferDatetimeField): under the default settings a file of up to 4
	// MiB, which is all the rules take of such files; a session with a
	// smaller spark.sql.files.openCostInBytes or maxPartitionBytes splits
	// smaller files, which Spark must then type.
	SplitSensitive bool
	// ZeroPadded are the columns typed as numbers that hold an integer
	// written with leading zeros ("02134", a ZIP code, an account
	// number): Spark reads it as the number (2134), and the zeros are
	// lost. By column index, the first such value.
	ZeroPadded map[int]string
	// Rounded are the columns typed as double that hold a number with
	// more significant digits than a double keeps
	// (3.14159265358979323846, 12345678901234567.5): Spark reads the
	// nearest double, and the digits are lost. By column index, the first
	// such value.
	Rounded map[int]string
	// PastMicros are the columns typed as timestamps that hold a time
	// with digits past the microsecond (2024-01-05T10:00:00.123456789):
	// Spark keeps microseconds and drops the rest. By column index, the
	// first such value.
	PastMicros map[int]string
	// NullTokens are the columns that are strings only for texts that
	// say "no value" ("NA", "N/A", "null", "None"): without them, Spark
	// would type the column as NullTokens' Type. By column index.
	NullTokens map[int]NullTokens
}

// NullTokens are the texts that say "no value" of a column that holds
// them, and the type of its other values.
type NullTokens struct {
	// Tokens are the distinct texts, in the order of the file.
	Tokens []string
	// Type is the type of the column's other values, as Spark would
	// infer it with the tokens read as null (the reader option
	// nullValue, when there is one token).
	Type sparkmerge.DataType
}

// CSVFile infers the schema of the CSV file at path, a path of this
// machine's file system, under the given reader options. The error is an
// [*Unsupported] when the options or the file are outside what the rules
// reproduce; when the file was read and only its contents are refused,
// ShortNumbers is still set, since it holds whoever infers the schema.
func (r Rules) CSVFile(path string, options map[string]string) (CSVFile, error) {
	sep, err := r.csvSeparator(options)
	if err != nil {
		return CSVFile{}, err
	}
	data, err := readSmall(path)
	if err != nil {
		return CSVFile{}, err
	}
	return csvFile(data, sep)
}

// CSV is [Rules.CSVFile] on a file's bytes.
func (r Rules) CSV(data []byte, options map[string]string) (CSVFile, error) {
	sep, err := r.csvSeparator(options)
	if err != nil {
		return CSVFile{}, err
	}
	if err := checkText(data); err != nil {
		return CSVFile{}, err
	}
	return csvFile(data, sep)
}

// csvFile is what the rules learn from a CSV file's text, which
// checkText accepted.
func csvFile(data []byte, sep byte) (CSVFile, error) {
	f, err := inferCSVFolds(data, sep)
	noRows := err == nil && headerOnly(data)
	if noRows {
		f.noValues = nil // said of every column by NoRows
	}
	return CSVFile{Schema: f.schema, ShortNumbers: shortNumbers(data), Header: f.onlyHeader, Quoted: f.quoted, NoRows: noRows, SplitSensitive: f.splitSensitive, NoValues: f.noValues, ZeroPadded: f.zeroPadded, Rounded: f.rounded, PastMicros: f.pastMicros, NullTokens: f.nullTokens}, err
}

// headerOnly reports whether data, a CSV file inferCSV accepts, holds one
// line that is not empty: its header. A line equal to the header after it
// is a row to Spark's reader (only inference skips it).
func headerOnly(data []byte) bool {
	lines := 0
	for len(data) > 0 {
		var line []byte
		line, data, _ = nextLine(data)
		if len(line) > 0 {
			lines++
		}
	}
	return lines == 1
}

// csvSeparator is the separator when the reader options are ones whose
// inference the rules reproduce: header and inferSchema on, and otherwise
// defaults, except mode (which does not affect inference), enforceSchema
// and a plain separator.
func (r Rules) csvSeparator(options map[string]string) (byte, error) {
	if err := r.check(); err != nil {
		return 0, err
	}
	sep := byte(',')
	var header, infer bool
	for k, v := range options {
		switch strings.ToLower(k) {
		case "header":
			header = strings.EqualFold(v, "true")
		case "inferschema":
			infer = strings.EqualFold(v, "true")
		case "mode", "enforceschema":
		case "sep", "delimiter":
			if len(v) != 1 || !strings.Contains(",;|\t", v) {
				return 0, unsupported(UnsupportedOptions, "separator %q", v)
			}
			sep = v[0]
		default:
			return 0, unsupported(UnsupportedOptions, "reader option %s", k)
		}
	}
	if !header || !infer {
		return 0, unsupported(UnsupportedOptions, "header or inferSchema off")
	}
	return sep, nil
}

// inferCSV is the schema of a CSV file's bytes with separator sep, and
// its header line when no other line repeats it (see CSVFile.Header).
func inferCSV(data []byte, sep byte) (schema sparkmerge.Schema, onlyHeader string, err error) {
	f, err := inferCSVFolds(data, sep)
	return f.schema, f.onlyHeader, err
}

// csvFolds is what inferCSVFolds learns of a file: inferCSV's schema and
// header, whether a value is quoted (CSVFile.Quoted), whether a column's
// type holds only if Spark reads the file in one partition
// (CSVFile.SplitSensitive) and the columns without a value
// (CSVFile.NoValues).
type csvFolds struct {
	schema                 sparkmerge.Schema
	onlyHeader             string
	quoted, splitSensitive bool
	noValues               []int
	zeroPadded             map[int]string
	rounded                map[int]string
	pastMicros             map[int]string
	nullTokens             map[int]NullTokens
}

// inferCSVFolds is inferCSV and what else its folds learn (csvFolds).
func inferCSVFolds(data []byte, sep byte) (csvFolds, error) {
	if err := checkText(data); err != nil {
		return csvFolds{}, err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return csvFolds{}, unsupported(UnsupportedContents, "has NUL bytes")
	}
	fold := csvFold{sep: sep, size: len(data)}
	for len(data) > 0 {
		var line []byte
		var ok bool
		if line, data, ok = nextLine(data); !ok {
			return csvFolds{}, unsupported(UnsupportedContents, "has a carriage return that does not end a line")
		}
		if err := fold.line(line); err != nil {
			return csvFolds{}, err
		}
	}
	if !fold.haveHeader {
		return csvFolds{}, unsupported(UnsupportedContents, "has no header line")
	}
	out := csvFolds{quoted: fold.quoted, splitSensitive: fold.splitSensitive}
	out.schema, out.onlyHeader = fold.result()
	for i, t := range fold.types {
		if t.kind == sparkmerge.KindNull {
			out.noValues = append(out.noValues, i)
		}
		if v, ok := fold.zeroPadded[i]; ok && t.kind != sparkmerge.KindString {
			if out.zeroPadded == nil {
				out.zeroPadded = map[int]string{}
			}
			out.zeroPadded[i] = v
		}
		if v, ok := fold.rounded[i]; ok && t.kind == sparkmerge.KindDouble {
			if out.rounded == nil {
				out.rounded = map[int]string{}
			}
			out.rounded[i] = v
		}
		if v, ok := fold.pastMicros[i]; ok && (t.kind == sparkmerge.KindTimestamp || t.kind == sparkmerge.KindTimestampNTZ) {
			if out.pastMicros == nil {
				out.pastMicros = map[int]string{}
			}
			out.pastMicros[i] = v
		}
		if t.kind == sparkmerge.KindString && i < len(fold.shadows) {
			if sh := fold.shadows[i]; sh != nil && sh != noShadow && sh.t.kind != sparkmerge.KindNull {
				if out.nullTokens == nil {
					out.nullTokens = map[int]NullTokens{}
				}
				out.nullTokens[i] = NullTokens{Tokens: sh.tokens, Type: sh.t.dataType()}
			}
		}
	}
	return out, nil
}

// csvFold is Spark's CSV inference over a file's lines so far: its header,
// then each column's type folded over the rows, in order.
type csvFold struct {
	sep  byte
	size int // the file's, which decides whether Spark may split it
	// haveHeader: the first line with content was read, as the header.
	haveHeader bool
	header     string
	names      []string
	types      []csvType
	// repeated: a line after the first equals the header, so a scan
	// cannot drop the header line by its text (CSVFile.Header).
	repeated bool
	// quoted: a value is quoted (CSVFile.Quoted).
	quoted         bool
	splitSensitive bool
	// zeroPadded are, by column, the first integer written with leading
	// zeros (CSVFile.ZeroPadded, once the column is a number).
	zeroPadded map[int]string
	// rounded are, by column, the first number with more significant
	// digits than a double keeps (CSVFile.Rounded, once the column is a
	// double).
	rounded map[int]string
	// pastMicros are, by column, the first time with digits past the
	// microsecond (CSVFile.PastMicros, once the column is a timestamp).
	pastMicros map[int]string
	// shadows are, by column, the type of the values other than texts
	// that say "no value" (CSVFile.NullTokens), from the value that made
	// the column a string, if one such text did; noShadow where another
	// value did. nil until a column is a string.
	shadows []*shadow
}

// shadow is the type of a column's values other than the texts that say
// "no value", and those texts.
type shadow struct {
	t      csvType
	tokens []string
}

// noShadow is the shadow of a column that is a string for other texts.
var noShadow = &shadow{}

// maxNullTokens is the most distinct texts a shadow keeps: more are not
// a way of saying "no value" but values.
const maxNullTokens = 4

// nullToken reports whether v is a text that commonly says "no value" in
// CSV files, and that the rules read as a string (an unquoted "NaN" and
// "#N/A" are Spark's to type).
func nullToken(v []byte) bool {
	switch len(v) {
	case 2, 3, 4, 7:
	default:
		return false
	}
	switch strings.ToLower(string(v)) {
	case "na", "n/a", "nan", "nil", "null", "none", "missing":
		return true
	}
	return false
}

// shadowValue folds v into column i's shadow, where v made the column a
// string or came after (before is the column's type before v).
func (f *csvFold) shadowValue(i int, before csvType, v []byte) {
	if f.shadows == nil {
		f.shadows = make([]*shadow, len(f.types))
	}
	sh := f.shadows[i]
	switch {
	case sh == noShadow:
		return
	case sh == nil && (before.kind == sparkmerge.KindString || !nullToken(v)):
		f.shadows[i] = noShadow // text of its own
		return
	case sh == nil:
		sh = &shadow{t: before}
		f.shadows[i] = sh
	}
	if nullToken(v) {
		if !slices.Contains(sh.tokens, string(v)) {
			if len(sh.tokens) == maxNullTokens {
				f.shadows[i] = noShadow
				return
			}
			sh.tokens = append(sh.tokens, string(v))
		}
		return
	}
	t, ok, orderDependent := inferCSVField(sh.t, v)
	if !ok || orderDependent || t.kind == sparkmerge.KindString {
		f.shadows[i] = noShadow
		return
	}
	sh.t = t
}

// line folds one line of the file in: the header, a repeat of it, or a
// row.
func (f *csvFold) line(line []byte) error {
	switch {
	case len(line) == 0:
		return nil // skipped by Spark's reader and its inference
	case line[0] <= ' ' && len(bytes.TrimLeft(line, javaWhitespace)) == 0:
		return unsupported(UnsupportedContents, "has a line of only blanks")
	case !f.haveHeader:
		return f.readHeader(line)
	case string(line) == f.header:
		// Spark's inference skips every line equal to the header.
		f.repeated = true
		return nil
	}
	return f.foldRow(line)
}

// readHeader takes the column names of the file's first line, refusing
// the names Spark would change (which the Spark path reports).
func (f *csvFold) readHeader(line []byte) error {
	f.haveHeader = true
	f.header = string(line)
	if strings.ContainsAny(f.header, "\"\\") {
		return unsupported(UnsupportedContents, "has a quote or backslash in its header line")
	}
	f.names = strings.Split(f.header, string(f.sep))
	if len(f.names) > maxCSVColumns {
		return unsupported(UnsupportedContents, "has more columns than the reader's maxColumns")
	}
	seen := make(map[string]bool, len(f.names))
	for _, n := range f.names {
		// Spark names empty headers _c<i> and renames duplicates;
		// the Spark path reports those.
		if n == "" || strings.Trim(n, javaWhitespace) != n || seen[strings.ToLower(n)] {
			return unsupported(UnsupportedContents, "has an empty, padded or repeated column name")
		}
		seen[strings.ToLower(n)] = true
	}
	f.types = make([]csvType, len(f.names))
	return nil
}

// foldRow folds a row's values into the columns' types, one by one,
// without splitting the line.
func (f *csvFold) foldRow(line []byte) error {
	rest := line
	for i := range f.types {
		v, after, wasQuoted, ok := nextCSVValue(rest, f.sep)
		if !ok {
			return unsupported(UnsupportedContents, "column %q has a quote or backslash Spark's parser may read otherwise than the rules", f.names[i])
		}
		last := i == len(f.types)-1
		if (after == nil) != last {
			return unsupported(UnsupportedContents, "has a row whose width differs from the header")
		}
		rest = after
		f.quoted = f.quoted || wasQuoted
		t, ok, orderDependent := inferCSVField(f.types[i], v)
		if !ok {
			return unsupported(UnsupportedContents, "column %q has a value whose type only Spark can tell", f.names[i])
		}
		if t.kind == sparkmerge.KindString && (f.shadows == nil || f.shadows[i] != noShadow) {
			f.shadowValue(i, f.types[i], v)
		}
		f.splitSensitive = f.splitSensitive || orderDependent
		f.noteLosses(i, v, t.kind)
		if orderDependent && f.size > splitFreeBytes {
			return unsupported(UnsupportedContents, "column %q has a year after a date or timestamp, which Spark types by the partitions it splits the file into", f.names[i])
		}
		f.types[i] = t
	}
	return nil
}

// noteLosses notes v, a value of column i typed kind so far, where
// Spark's reading of it as that type loses part of it: the zeros of an
// integer written with leading zeros (CSVFile.ZeroPadded), a number's
// digits past a double's (CSVFile.Rounded), a time's past the
// microsecond (CSVFile.PastMicros). Each check runs on the rare values
// that can need it, told by their length or first byte.
func (f *csvFold) noteLosses(i int, v []byte, kind sparkmerge.Kind) {
	if kind == sparkmerge.KindString {
		return
	}
	if len(v) > 1 && (v[0] == '0' || v[0] == '-' || v[0] == '+') && zeroPadded(v) {
		f.notePadded(i, v)
	}
	if len(v) > 16 && f.rounded[i] == "" && roundedByDouble(v) {
		if f.rounded == nil {
			f.rounded = map[int]string{}
		}
		f.rounded[i] = string(v)
	}
	if (kind == sparkmerge.KindTimestamp || kind == sparkmerge.KindTimestampNTZ) && len(v) > 20 && f.pastMicros[i] == "" {
		if _, past := PastMicros(v); past {
			if f.pastMicros == nil {
				f.pastMicros = map[int]string{}
			}
			f.pastMicros[i] = string(v)
		}
	}
}

// notePadded keeps v as column i's first integer with leading zeros.
func (f *csvFold) notePadded(i int, v []byte) {
	if _, ok := f.zeroPadded[i]; ok {
		return
	}
	if f.zeroPadded == nil {
		f.zeroPadded = map[int]string{}
	}
	f.zeroPadded[i] = string(v)
}

// PastMicros reports whether v, a time's text, has digits past the
// microsecond that are not all zeros (2024-01-05T10:00:00.123456789,
// where Spark keeps .123456), and the time as Spark keeps it: the same
// text with the fraction cut to six digits.
func PastMicros(v []byte) (string, bool) {
	colon := bytes.IndexByte(v, ':')
	if colon < 0 {
		return "", false
	}
	dot := bytes.IndexByte(v[colon:], '.')
	if dot < 0 {
		return "", false
	}
	start := colon + dot + 1
	n := 0
	for start+n < len(v) && v[start+n] >= '0' && v[start+n] <= '9' {
		n++
	}
	if n <= 6 || len(bytes.Trim(v[start+6:start+n], "0")) == 0 {
		return "", false
	}
	return string(v[:start+6]) + string(v[start+n:]), true
}

// roundedByDouble reports whether v, a number's text, has more significant
// digits than the double nearest to it (the shortest text that reads as
// that double): 3.14159265358979323846 is 3.141592653589793, and
// 12345678901234567 is 12345678901234568. Texts of at most 15 significant
// digits are every one a double's (the caller passes only longer ones, by
// length: the check is for the rare long value, not every cell).
func roundedByDouble(v []byte) bool {
	digits, significant := 0, false
	for _, c := range v {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '1' && c <= '9' || c == '0' && significant {
			significant = true
			digits++
		}
	}
	if digits <= 15 {
		return false
	}
	d, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(d, 0) {
		return false
	}
	exact, ok1 := new(big.Rat).SetString(string(v))
	read, ok2 := new(big.Rat).SetString(strconv.FormatFloat(d, 'g', -1, 64))
	return ok1 && ok2 && exact.Cmp(read) != 0
}

// zeroPadded reports whether v is an integer written with a leading zero
// that a number does not keep: "007", "-012", not "0" or "0.5".
func zeroPadded(v []byte) bool {
	digits := v
	if v[0] == '+' || v[0] == '-' {
		digits = v[1:]
	}
	return len(digits) > 1 && digits[0] == '0' && leadingDigits(digits) == len(digits)
}

// result is the file's schema, and its header line when a scan may drop
// it by its text (see CSVFile.Header), else "".
func (f *csvFold) result() (sparkmerge.Schema, string) {
	fields := make([]sparkmerge.Field, len(f.names))
	for i, n := range f.names {
		fields[i] = sparkmerge.NewField(n, f.types[i].dataType())
	}
	if f.repeated {
		return sparkmerge.NewSchema(fields...), ""
	}
	return sparkmerge.NewSchema(fields...), f.header
}

// nextCSVValue cuts the first value off a line's rest, as Spark's CSV
// parser (univocity, quote " and escape \) reads it under the default
// options, in the cases the rules reproduce: a value without quotes or
// backslashes, or one quoted whole, "text", where the text is not empty,
// holds a quote only escaped by a backslash (\", Spark's writer's
// escape: the value holds a quote there) and no other backslash (nor a
// line break or NUL, which inferCSV refuses in the whole file), and the
// closing quote ends the line or is followed by the separator. Its value
// is the text between the quotes, separators included, unescaped, which
// Spark's inference then types as any value: "2" is an int, "2024-01-31"
// a date (checked on Spark: testdata/spark, csv-quoted-gen-*.csv). ok is
// false for any other quote or backslash: around spaces (" 2" is a value
// with its quotes, "2" followed by a space is 2), an empty "" (null), a
// quote inside an unquoted value, quotes doubled (which Spark's default
// escape does not unescape: "x""y" is x""y), \\ and other escapes. after
// is what follows the value's separator, nil when the value ends the
// line.
func nextCSVValue(rest []byte, sep byte) (v, after []byte, quoted, ok bool) {
	if len(rest) == 0 || rest[0] != '"' {
		v = rest
		if j := bytes.IndexByte(rest, sep); j >= 0 {
			v, after = rest[:j], rest[j+1:]
		}
		return v, after, false, bytes.IndexByte(v, '"') < 0 && bytes.IndexByte(v, '\\') < 0
	}
	escaped := false
	end := 1
	for ; end < len(rest) && rest[end] != '"'; end++ {
		if rest[end] == '\\' {
			if end+1 == len(rest) || rest[end+1] != '"' {
				return nil, nil, true, false
			}
			escaped = true
			end++
		}
	}
	if end == 1 || end == len(rest) {
		return nil, nil, true, false // "", or no closing quote
	}
	v, after = rest[1:end], rest[end+1:]
	if escaped {
		v = bytes.ReplaceAll(v, []byte(`\"`), []byte(`"`))
	}
	switch {
	case len(after) == 0:
		return v, nil, true, true
	case after[0] == sep:
		return v, after[1:], true, true
	}
	return nil, nil, true, false
}

// javaWhitespace is what Java's String.trim removes at the ends of a line
// that Spark's inference checks for blankness (and a header name).
const javaWhitespace = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "

// csvType is the part of Spark's inferred-type lattice that local
// inference can reach: null (no value yet), int, bigint, decimal(p,0),
// double, boolean, date, timestamp and string.
type csvType struct {
	kind      sparkmerge.Kind
	precision int // decimal only
}

var (
	csvInt     = csvType{kind: sparkmerge.KindInt}
	csvLong    = csvType{kind: sparkmerge.KindLong}
	csvDouble  = csvType{kind: sparkmerge.KindDouble}
	csvBoolean = csvType{kind: sparkmerge.KindBoolean}
	csvString  = csvType{kind: sparkmerge.KindString}
	// A date or timestamp meets no other type of the lattice: with any
	// it makes a string (compatibleCSVType finds no common type).
	csvDate      = csvType{kind: sparkmerge.KindDate}
	csvTimestamp = csvType{kind: sparkmerge.KindTimestamp}
)

func csvDecimal(precision int) csvType {
	return csvType{kind: sparkmerge.KindDecimal, precision: precision}
}

func (t csvType) dataType() sparkmerge.DataType {
	switch t.kind {
	case sparkmerge.KindNull:
		return sparkmerge.Simple(sparkmerge.KindString) // a column with no value is a string
	case sparkmerge.KindDecimal:
		return sparkmerge.NewDecimal(t.precision, 0)
	}
	return sparkmerge.Simple(t.kind)
}

// valueClass sorts a CSV value into the classes whose outcome in every
// step of Spark's inference is certain.
type valueClass int

const (
	classEmpty     valueClass = iota // null: keeps the type so far
	classInteger                     // [+-]?[0-9]+
	classFraction                    // [+-]?[0-9]+\.[0-9]+: BigDecimal scale > 0, so double
	classBoolean                     // true or false, any case
	classText                        // starts with a letter and parses as no number, date, timestamp or boolean
	classDate                        // yyyy-MM-dd, a day of the proleptic Gregorian calendar
	classTimestamp                   // a classDate, ' ' or 'T', then HH:mm[:ss[.f{1,9}]], then nothing, Z or ±HH:mm up to 18:00
	classUnknown                     // anything else: Spark decides
)

func classify(v []byte) valueClass {
	if len(v) == 0 {
		return classEmpty
	}
	digits := v
	if v[0] == '+' || v[0] == '-' {
		digits = v[1:]
	}
	if n := leadingDigits(digits); n > 0 {
		switch {
		case n == len(digits):
			return classInteger
		case digits[n] == '.' && n+1 < len(digits) && leadingDigits(digits[n+1:]) == len(digits)-n-1:
			return classFraction
		case n == 4 && len(v) == len(digits):
			return classifyDatetime(v)
		}
		return classUnknown
	}
	if !isASCIILetter(v[0]) {
		return classUnknown
	}
	switch {
	case bytes.EqualFold(v, []byte("true")), bytes.EqualFold(v, []byte("false")):
		return classBoolean
	case bytes.HasPrefix(v, []byte("NaN")), bytes.HasPrefix(v, []byte("Inf")):
		// Java's Double parser takes "NaN" and "Infinity" with trailing
		// blanks; Spark's nanValue and positiveInf are "NaN" and "Inf".
		return classUnknown
	case v[0] == 'T' && (len(v) == 1 || !isASCIILetter(v[1])):
		// Spark's timestamp parser reads a leading T as a time of day.
		return classUnknown
	}
	return classText
}

func leadingDigits(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// inferCSVField is CSVInferSchema.inferField: the type of a column so far
// after one more value. ok is false for a value of classUnknown, or one
// whose type after a date or timestamp the rules do not know.
// orderDependent is true when the value gives a type that Spark's merge
// of two partitions' types would not: a year after a date or timestamp
// (see inferDatetimeField).
func inferCSVField(soFar csvType, v []byte) (t csvType, ok, orderDependent bool) {
	if soFar.kind == sparkmerge.KindString {
		return soFar, true, false // Spark parses nothing once a column is a string
	}
	class := classify(v)
	switch class {
	case classEmpty:
		return soFar, true, false
	case classUnknown:
		return soFar, false, false
	}
	if soFar.kind == sparkmerge.KindDate || soFar.kind == sparkmerge.KindTimestamp {
		return inferDatetimeField(soFar, class, v)
	}
	var elem csvType
	switch soFar.kind {
	case sparkmerge.KindNull, sparkmerge.KindInt:
		elem = tryParseInteger(class, v)
	case sparkmerge.KindLong:
		elem = tryParseLong(class, v)
	case sparkmerge.KindDecimal:
		elem = tryParseDecimal(class, v)
	case sparkmerge.KindDouble:
		elem = tryParseDouble(class)
	case sparkmerge.KindBoolean:
		elem = tryParseBoolean(class)
	default:
		elem = csvString
	}
	if t, ok := compatibleCSVType(soFar, elem); ok {
		return t, true, false
	}
	return csvString, true, false
}

// inferDatetimeField is inferField on a column that is a date or a
// timestamp so far, as Spark 3.5-4.3 do it (recorded in
// testdata/spark/csv-datetime-*.csv): a date column parses the value as a
// date (yyyy-MM-dd, strictly), else as a timestamp by
// SparkDateTimeUtils.stringToTimestamp, which is lenient; a timestamp
// column parses it as a timestamp only. A date and a timestamp make a
// timestamp; whatever parses as neither makes a string (a boolean, a
// number, text). stringToTimestamp takes a year alone ("2020", also
// signed, 4 to 6 digits up to 294247): the column stays or becomes a
// timestamp, where the same value first in a column is an int, and an
// int and a timestamp make a string. That is the fold's order showing
// through: Spark folds a partition's values in order, but merges two
// partitions' types by compatibleType, so a file Spark splits may type
// the column otherwise (orderDependent). The rules take unsigned years of
// 4 digits and integers of 1 to 3 (too short for a year) and leave other
// integers to Spark.
func inferDatetimeField(soFar csvType, class valueClass, v []byte) (t csvType, ok, orderDependent bool) {
	switch class {
	case classDate:
		return soFar, true, false // a date is a date, and a timestamp too
	case classTimestamp:
		return csvTimestamp, true, false
	case classInteger:
		switch {
		case v[0] == '+' || v[0] == '-' || len(v) > 4:
			return soFar, false, false
		case len(v) == 4:
			return csvTimestamp, true, true
		}
		return csvString, true, false
	case classFraction, classBoolean, classText:
		return csvString, true, false
	}
	return soFar, false, false
}

// classifyDatetime sorts v, which starts with 4 ASCII digits and is not a
// number, into classDate, classTimestamp or classUnknown. Spark's strict
// date parser (the pattern yyyy-MM-dd) takes exactly the days of the
// proleptic Gregorian calendar (0000-02-29 and 1582-10-10 included) and
// refuses 2021-02-29; the timestamp parsers take a date followed by a
// time and a zone in many more spellings than these, and refuse an hour
// 24, a second 60 and an offset past 18:00. The rules leave every other
// spelling to Spark, as well as impossible days (Spark types them as
// strings).
func classifyDatetime(v []byte) valueClass {
	if !isCalendarDay(v) {
		return classUnknown
	}
	if len(v) == 10 {
		return classDate
	}
	if isTimeOfDay(v[10:]) {
		return classTimestamp
	}
	return classUnknown
}

// isCalendarDay says whether v starts with yyyy-MM-dd naming a day of
// the proleptic Gregorian calendar: what Spark's strict date parser takes.
func isCalendarDay(v []byte) bool {
	if len(v) < 10 || v[4] != '-' || v[7] != '-' || !twoDigits(v[5:]) || !twoDigits(v[8:]) {
		return false
	}
	year := int(v[0]-'0')*1000 + int(v[1]-'0')*100 + int(v[2]-'0')*10 + int(v[3]-'0')
	month, day := num2(v[5:]), num2(v[8:])
	return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

// isTimeOfDay says whether t, what follows a date, is a time the rules
// know stringToTimestamp takes: ' ' or 'T' and HH:mm, then nothing, or
// :ss[.f{1,9}] and an optional zone (stringToTimestamp refuses a zone
// right after HH:mm).
func isTimeOfDay(t []byte) bool {
	t, ok := cutHourMinute(t)
	if !ok {
		return false
	}
	if len(t) == 0 {
		return true
	}
	if t, ok = cutSeconds(t); !ok {
		return false
	}
	return isZone(t)
}

// cutHourMinute cuts ' ' or 'T' and HH:mm (hour up to 23: Spark refuses
// 24) off the start of t.
func cutHourMinute(t []byte) (rest []byte, ok bool) {
	if len(t) < 6 || (t[0] != ' ' && t[0] != 'T') || !twoDigits(t[1:]) || t[3] != ':' || !twoDigits(t[4:]) ||
		num2(t[1:]) > 23 || num2(t[4:]) > 59 {
		return nil, false
	}
	return t[6:], true
}

// cutSeconds cuts :ss (up to 59: Spark refuses a second 60) and an
// optional fraction of 1 to 9 digits off the start of t.
func cutSeconds(t []byte) (rest []byte, ok bool) {
	if len(t) < 3 || t[0] != ':' || !twoDigits(t[1:]) || num2(t[1:]) > 59 {
		return nil, false
	}
	t = t[3:]
	if len(t) > 0 && t[0] == '.' {
		n := leadingDigits(t[1:])
		if n < 1 || n > 9 {
			return nil, false
		}
		t = t[1+n:]
	}
	return t, true
}

// isZone says whether t is nothing, Z, or an offset ±HH:mm up to 18:00
// (Spark refuses one past it).
func isZone(t []byte) bool {
	switch {
	case len(t) == 0, len(t) == 1 && t[0] == 'Z':
		return true
	case len(t) == 6 && (t[0] == '+' || t[0] == '-') && twoDigits(t[1:]) && t[3] == ':' && twoDigits(t[4:]):
		h, m := num2(t[1:]), num2(t[4:])
		return m <= 59 && h*60+m <= 18*60
	}
	return false
}

// twoDigits says whether b starts with two ASCII digits.
func twoDigits(b []byte) bool {
	return len(b) >= 2 && b[0] >= '0' && b[0] <= '9' && b[1] >= '0' && b[1] <= '9'
}

// num2 is the number of b's first two digits.
func num2(b []byte) int { return int(b[0]-'0')*10 + int(b[1]-'0') }

// daysIn is the number of days of a month of the proleptic Gregorian
// calendar (year 0 is a leap year).
func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func tryParseInteger(class valueClass, v []byte) csvType {
	if class == classInteger && fitsInt(v, 32) {
		return csvInt
	}
	return tryParseLong(class, v)
}

func tryParseLong(class valueClass, v []byte) csvType {
	if class == classInteger && fitsInt(v, 64) {
		return csvLong
	}
	return tryParseDecimal(class, v)
}

// tryParseDecimal: new BigDecimal(v) of an integer has scale 0 and a
// precision of its significant digits; DecimalType refuses more than 38.
// A fraction has scale > 0 and goes on to double, like text.
func tryParseDecimal(class valueClass, v []byte) csvType {
	if class == classInteger {
		if p := significantDigits(v); p <= sparkmerge.MaxDecimalPrecision {
			return csvDecimal(p)
		}
	}
	return tryParseDouble(class)
}

// tryParseDouble: numbers parse as double; then, as prefersDate is on,
// dates parse as dates (strictly, yyyy-MM-dd) and timestamps as
// timestamps (without a zone as TIMESTAMP_NTZ, which is the session's
// timestamp type, TIMESTAMP; with one as TIMESTAMP); text and booleans
// fail the double, date and timestamp parsers and end at tryParseBoolean.
func tryParseDouble(class valueClass) csvType {
	switch class {
	case classInteger, classFraction:
		return csvDouble
	case classDate:
		return csvDate
	case classTimestamp:
		return csvTimestamp
	}
	return tryParseBoolean(class)
}

func tryParseBoolean(class valueClass) csvType {
	if class == classBoolean {
		return csvBoolean
	}
	return csvString
}

// fitsInt reports whether the integer literal v parses as Java's int (32)
// or long (64).
func fitsInt(v []byte, bits int) bool {
	neg := v[0] == '-'
	if v[0] == '+' || v[0] == '-' {
		v = v[1:]
	}
	limit := uint64(1)<<(bits-1) - 1 // max
	if neg {
		limit++ // min is one further from zero
	}
	var n uint64
	for _, c := range v {
		d := uint64(c - '0')
		if n > (limit-d)/10 {
			return false
		}
		n = n*10 + d
	}
	return true
}

// significantDigits is BigDecimal's precision of an integer literal: its
// digits without sign and leading zeros, at least 1.
func significantDigits(v []byte) int {
	if v[0] == '+' || v[0] == '-' {
		v = v[1:]
	}
	v = bytes.TrimLeft(v, "0")
	if len(v) == 0 {
		return 1
	}
	return len(v)
}

// compatibleCSVType is CSVInferSchema.compatibleType on the local lattice:
// TypeCoercion.findTightestCommonType, then the CSV-specific rules.
func compatibleCSVType(a, b csvType) (csvType, bool) {
	switch {
	case a == b:
		return a, true
	case a.kind == sparkmerge.KindNull:
		return b, true
	case b.kind == sparkmerge.KindNull:
		return a, true
	}
	// An integral type next to a decimal wide enough for it.
	if isIntegral(a) && b.kind == sparkmerge.KindDecimal && decimalWider(b, decimalFor(a)) {
		return b, true
	}
	if a.kind == sparkmerge.KindDecimal && isIntegral(b) && decimalWider(a, decimalFor(b)) {
		return a, true
	}
	// Numeric precedence int < bigint < double.
	if isNonDecimalNumber(a) && isNonDecimalNumber(b) {
		if a.kind > b.kind {
			return a, true
		}
		return b, true
	}
	// findCompatibleTypeForCSV.
	switch {
	case a.kind == sparkmerge.KindString || b.kind == sparkmerge.KindString:
		return csvString, true
	case isIntegral(a) && b.kind == sparkmerge.KindDecimal:
		return compatibleCSVType(decimalFor(a), b)
	case a.kind == sparkmerge.KindDecimal && isIntegral(b):
		return compatibleCSVType(a, decimalFor(b))
	case a.kind == sparkmerge.KindDouble && b.kind == sparkmerge.KindDecimal,
		a.kind == sparkmerge.KindDecimal && b.kind == sparkmerge.KindDouble:
		return csvDouble, true
	case a.kind == sparkmerge.KindDecimal && b.kind == sparkmerge.KindDecimal:
		// Both have scale 0: the range is the larger precision.
		return csvDecimal(max(a.precision, b.precision)), true
	}
	return csvType{}, false
}

func isIntegral(t csvType) bool { return t.kind == sparkmerge.KindInt || t.kind == sparkmerge.KindLong }

func isNonDecimalNumber(t csvType) bool { return isIntegral(t) || t.kind == sparkmerge.KindDouble }

// decimalFor is DecimalType.forType: int is decimal(10,0), bigint (20,0).
func decimalFor(t csvType) csvType {
	if t.kind == sparkmerge.KindInt {
		return csvDecimal(10)
	}
	return csvDecimal(20)
}

// decimalWider is DecimalType.isWiderThan for two scale-0 decimals.
func decimalWider(a, b csvType) bool { return a.precision >= b.precision }

// CSVValueOfType reports whether v, as a CSV value, is a value of a column
// of type t to Spark's inference: its own type (the one Spark's inference
// gives a column of v alone) widens to t. A header name that is a value of
// its column's type suggests the header line is a row of data. It is
// false for a type the rules do not reach and for a value whose type
// Spark alone decides.
func CSVValueOfType(v string, t sparkmerge.DataType) bool {
	own, ok, _ := inferCSVField(csvType{}, []byte(v))
	if !ok || own.kind == sparkmerge.KindNull || own.kind == sparkmerge.KindString {
		return false
	}
	var want csvType
	switch t.Kind {
	case sparkmerge.KindInt, sparkmerge.KindLong, sparkmerge.KindDouble, sparkmerge.KindBoolean,
		sparkmerge.KindDate, sparkmerge.KindTimestamp:
		want = csvType{kind: t.Kind}
	case sparkmerge.KindDecimal:
		if t.Scale != 0 {
			return false
		}
		want = csvDecimal(t.Precision)
	default:
		return false
	}
	if own.kind == sparkmerge.KindDate && want.kind == sparkmerge.KindTimestamp {
		return true // a date parses as a timestamp (its midnight)
	}
	wider, ok := compatibleCSVType(own, want)
	return ok && wider == want
}
