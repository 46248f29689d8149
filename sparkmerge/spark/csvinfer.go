package spark

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/sparkmerge/sparkmerge"
)

// Asking Spark for a CSV file's schema runs two Spark jobs (the header,
// then a pass over every row), about 0.1 s of server time per file: most
// of a merge of many small files. For small local files the client infers
// the schema itself, exactly as Spark's CSV inference would
// (CSVInferSchema in Spark 4.0), and falls back to Spark whenever a file
// holds anything outside the cases it reproduces exactly: quotes, escapes,
// values that could be dates or timestamps, numbers in other notations,
// rows whose width differs from the header, and so on. The read then
// carries enforceSchema=false, so that Spark checks each file's header
// against the names inferred here and fails, rather than maps columns by
// position, if the server's file is not the client's.

// maxLocalInferBytes bounds the files inferred on the client, which reads
// each whole into memory (one per core at a time). Spark splits a file
// over 4 MiB into partitions whose types it infers apart and then merges;
// the client folds the records in order. Both merges are the same joins
// of types, so the schemas agree (integration test
// TestLocalInferenceOfSplitFilesMatchesSpark; and the benchmark's 10 MB
// CSV and 25 MB JSON files, checked against Spark's inference).
const maxLocalInferBytes = 64 << 20

// maxCSVColumns is the CSV reader's default maxColumns.
const maxCSVColumns = 20480

// localCSVSchema infers the schema of the local CSV file at path as Spark
// does with header=true and inferSchema=true, under the given reader
// options. It returns ok=false, with the reason, when the options or the
// file are outside what it reproduces exactly; then Spark must infer it.
func localCSVSchema(path string, options map[string]string) (schema sparkmerge.Schema, why string, ok bool) {
	schema, _, why, ok = localCSVFile(path, options)
	return schema, why, ok
}

// localCSVFile is localCSVSchema, also telling whether every number in
// the file has at most 15 digits (see shortNumbers).
func localCSVFile(path string, options map[string]string) (schema sparkmerge.Schema, short bool, why string, ok bool) {
	sep, why, ok := localInferSep(options)
	if !ok {
		return schema, false, why, false
	}
	if !isLocalFile(path) || !isPlainCSV(path) {
		return schema, false, "not a plain local .csv/.tsv file", false
	}
	data, why, ok := readSmallLocal(path)
	if !ok {
		return schema, false, why, false
	}
	schema, why, ok = inferCSV(data, sep)
	return schema, shortNumbers(data), why, ok
}

// shortNumbers reports whether data holds no run of more than 15 digits:
// then no integer (or decimal) in it has more than 15 digits, and every
// one becomes a double exactly, so the merge need not check such casts
// value by value (sparkmerge.RoundsValues). Digits of text count too,
// which can only make the answer false.
func shortNumbers(data []byte) bool {
	run := 0
	for _, c := range data {
		if c >= '0' && c <= '9' {
			if run++; run > 15 {
				return false
			}
			continue
		}
		run = 0
	}
	return true
}

// readSmallLocal reads a local text file for client-side inference: a
// regular file of at most maxLocalInferBytes, valid UTF-8 without a byte
// order mark (Spark's readers keep the mark in the first value).
func readSmallLocal(path string) (data []byte, why string, ok bool) {
	p := localPath(path)
	info, err := os.Stat(p)
	if err != nil || !info.Mode().IsRegular() {
		return nil, "not a regular local file", false
	}
	if info.Size() > maxLocalInferBytes {
		return nil, fmt.Sprintf("larger than %d bytes", maxLocalInferBytes), false
	}
	if data, err = os.ReadFile(p); err != nil {
		return nil, err.Error(), false
	}
	return checkText(data)
}

func checkText(data []byte) ([]byte, string, bool) {
	switch {
	case !utf8.Valid(data):
		return nil, notUTF8(data), false
	case bytes.HasPrefix(data, []byte("\ufeff")):
		return nil, "starts with a byte order mark", false
	}
	return data, "", true
}

// nextLine cuts the first line off data as Hadoop's line reader does for
// Spark (\n or \r\n); ok is false for a lone \r, which it would also take
// for a line end and this does not follow.
func nextLine(data []byte) (line, rest []byte, ok bool) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line, rest = data[:i], data[i+1:]
	} else {
		line = data
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, rest, bytes.IndexByte(line, '\r') < 0
}

// localInferSep is the separator when the reader options are ones whose
// inference localCSVSchema reproduces: header and inferSchema on, and
// otherwise defaults, except mode (which does not affect inference),
// enforceSchema and a plain separator.
func localInferSep(options map[string]string) (byte, string, bool) {
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
				return 0, "separator " + quoteName(v), false
			}
			sep = v[0]
		default:
			return 0, "reader option " + k, false
		}
	}
	if !header || !infer {
		return 0, "header or inferSchema off", false
	}
	return sep, "", true
}

// inferCSV is localCSVSchema on a file's bytes.
func inferCSV(data []byte, sep byte) (sparkmerge.Schema, string, bool) {
	var schema sparkmerge.Schema
	if _, why, ok := checkText(data); !ok {
		return schema, why, false
	}
	if bytes.ContainsAny(data, "\"\\\x00") {
		return schema, "has quotes, backslashes or NUL bytes", false
	}
	var (
		header    string
		names     []string
		types     []csvType
		haveFirst bool
	)
	for len(data) > 0 {
		var line []byte
		var ok bool
		if line, data, ok = nextLine(data); !ok {
			return schema, "has a carriage return that does not end a line", false
		}
		if len(line) == 0 {
			continue // skipped by Spark's reader and its inference
		}
		if line[0] <= ' ' && len(bytes.TrimLeft(line, javaWhitespace)) == 0 {
			return schema, "has a line of only blanks", false
		}
		if !haveFirst {
			haveFirst = true
			header = string(line)
			names = strings.Split(header, string(sep))
			if len(names) > maxCSVColumns {
				return schema, "has more columns than the reader's maxColumns", false
			}
			seen := make(map[string]bool, len(names))
			for _, n := range names {
				// Spark names empty headers _c<i> and renames duplicates;
				// the Spark path reports those.
				if n == "" || strings.Trim(n, javaWhitespace) != n || seen[strings.ToLower(n)] {
					return schema, "has an empty, padded or repeated column name", false
				}
				seen[strings.ToLower(n)] = true
			}
			types = make([]csvType, len(names))
			continue
		}
		// Spark's inference skips every line equal to the header.
		if string(line) == header {
			continue
		}
		// The line's values one by one, without splitting it.
		rest := line
		for i := range types {
			v := rest
			j := bytes.IndexByte(rest, sep)
			switch {
			case j >= 0 && i < len(types)-1:
				v, rest = rest[:j], rest[j+1:]
			case j >= 0 || i < len(types)-1:
				return schema, "has a row whose width differs from the header", false
			}
			t, ok := inferCSVField(types[i], v)
			if !ok {
				return schema, fmt.Sprintf("column %s has a value whose type only Spark can tell", quoteName(names[i])), false
			}
			types[i] = t
		}
	}
	if !haveFirst {
		return schema, "has no header line", false
	}
	fields := make([]sparkmerge.Field, len(names))
	for i, n := range names {
		fields[i] = sparkmerge.NewField(n, types[i].dataType())
	}
	return sparkmerge.NewSchema(fields...), "", true
}

// javaWhitespace is what Java's String.trim removes at the ends of a line
// that Spark's inference checks for blankness (and a header name).
const javaWhitespace = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "

// csvType is the part of Spark's inferred-type lattice that local
// inference can reach: null (no value yet), int, bigint, decimal(p,0),
// double, boolean and string.
type csvType struct {
	kind      sparkmerge.Kind
	precision int // decimal only
}

var (
	csvNull    = csvType{kind: sparkmerge.KindNull}
	csvInt     = csvType{kind: sparkmerge.KindInt}
	csvLong    = csvType{kind: sparkmerge.KindLong}
	csvDouble  = csvType{kind: sparkmerge.KindDouble}
	csvBoolean = csvType{kind: sparkmerge.KindBoolean}
	csvString  = csvType{kind: sparkmerge.KindString}
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
	classEmpty    valueClass = iota // null: keeps the type so far
	classInteger                    // [+-]?[0-9]+
	classFraction                   // [+-]?[0-9]+\.[0-9]+: BigDecimal scale > 0, so double
	classBoolean                    // true or false, any case
	classText                       // starts with a letter and parses as no number, date, timestamp or boolean
	classUnknown                    // anything else: Spark decides
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
// after one more value. ok is false for a value of classUnknown.
func inferCSVField(soFar csvType, v []byte) (csvType, bool) {
	if soFar.kind == sparkmerge.KindString {
		return soFar, true // Spark parses nothing once a column is a string
	}
	class := classify(v)
	switch class {
	case classEmpty:
		return soFar, true
	case classUnknown:
		return soFar, false
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
		return t, true
	}
	return csvString, true
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

// tryParseDouble: numbers parse as double; text and booleans fail the
// double, date and timestamp parsers and end at tryParseBoolean.
func tryParseDouble(class valueClass) csvType {
	if class == classInteger || class == classFraction {
		return csvDouble
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

// notUTF8Prefix starts the reason client inference gives for a file that
// is not valid UTF-8; Plan refuses such a file unless the user gave its
// encoding, since Spark would turn every invalid byte into U+FFFD.
const notUTF8Prefix = "not UTF-8"

func notUTF8(data []byte) string {
	off := 0
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	return fmt.Sprintf("%s: the byte at offset %d (0x%02x) is not valid UTF-8", notUTF8Prefix, off, data[min(off, len(data)-1)])
}
