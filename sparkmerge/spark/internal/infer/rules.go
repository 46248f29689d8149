// Package infer types files on the client exactly as Spark would: CSV and
// JSON-lines files from their bytes, Parquet files from their footers.
//
// Asking Spark for a file's schema costs a Spark job or two per file, most
// of a merge of many small files; for files it can read, the client infers
// the schema itself, by Spark's own rules. The rules differ between Spark
// versions, so they come by name ([Spark40], [Spark41], ...), and [RulesFor] gives the
// executor only the rules of the server it talks to. Whatever the rules do
// not reproduce exactly (an option, a file or a value Spark might read
// otherwise) is refused with an [*Unsupported] error: Spark must infer that
// schema.
//
// The package is pure: it reads local files and nothing else, and knows
// nothing of Spark Connect or of the executor's reads.
package infer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// Rules are one Spark version's schema inference rules as this package
// reproduces them: CSVInferSchema, JsonInferSchema and the Parquet schema
// converter. The zero Rules reproduce none: every method refuses with
// [NoRules].
type Rules struct {
	version string // the Spark major.minor version, e.g. "4.0"
}

// Spark35 are Spark 3.5's rules: the same as 4.0's. Spark 3.5.7 gives the
// recorded corpus (testdata/spark/schemas-3.5.json) the schemas 4.0.1
// gives, but for the malformed JSON line, which both refuse (3.5 with a
// SparkException of no error class, 4.0 with
// MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION), and the version matrix
// passes on it with these rules on.
var Spark35 = Rules{version: "3.5"}

// Spark40 are Spark 4.0's rules.
var Spark40 = Rules{version: "4.0"}

// Spark41 are Spark 4.1's rules: the same as 4.0's. Spark 4.1.4 gives the
// recorded corpus (testdata/spark/schemas-4.1.json) the schemas 4.0.1
// gives, and the version matrix (scripts/test-matrix.sh: the differential
// suite's corpora and the CSV, JSON, Parquet and ORC inference tests)
// passes on it with these rules on.
var Spark41 = Rules{version: "4.1"}

// Spark42 are Spark 4.2's rules: the same as 4.0's, checked on 4.2.1 as
// Spark41 on 4.1.4 (testdata/spark/schemas-4.2.json).
var Spark42 = Rules{version: "4.2"}

// Spark43 are Spark 4.3's rules: the same as 4.0's, checked on 4.3.0 as
// Spark41 on 4.1.4 (testdata/spark/schemas-4.3.json). A server before
// 3.5, or of a line after 4.3, infers every schema itself.
var Spark43 = Rules{version: "4.3"}

// known are the rule sets the package has, one per Spark line
// (major.minor) whose inference they are known to reproduce.
var known = []Rules{Spark35, Spark40, Spark41, Spark42, Spark43}

// Known lists the Spark lines (major.minor) the package has rules for,
// oldest first: "4.0", ...
func Known() []string {
	lines := make([]string, len(known))
	for i, r := range known {
		lines[i] = r.version
	}
	return lines
}

// RulesFor returns the rules by which a server of sparkVersion (as Spark
// reports it, "4.0.1") infers schemas, and false when the package has no
// rules for that version: then Spark must infer every schema, since it
// might type the same file otherwise.
func RulesFor(sparkVersion string) (Rules, bool) {
	for _, r := range known {
		if sparkVersion == r.version || strings.HasPrefix(sparkVersion, r.version+".") {
			return r, true
		}
	}
	return Rules{}, false
}

// Version is the Spark version whose rules r are, major.minor ("4.0"), or
// "" for the zero Rules.
func (r Rules) Version() string { return r.version }

// String names the rules for people: "Spark 4.0".
func (r Rules) String() string {
	if r.version == "" {
		return "no rules"
	}
	return "Spark " + r.version
}

// check refuses the zero Rules.
func (r Rules) check() error {
	if r.version == "" {
		return unsupported(NoRules, "no inference rules for this Spark version")
	}
	return nil
}

// Reason says why a schema is left to Spark.
type Reason int

// The reasons of an [Unsupported] error.
const (
	// UnsupportedOptions: a reader option the rules do not reproduce.
	UnsupportedOptions Reason = iota + 1
	// UnsupportedFile: not a regular file, larger than [MaxFileBytes], or
	// unreadable.
	UnsupportedFile
	// NotUTF8: the file is not valid UTF-8. Spark would turn every invalid
	// byte into U+FFFD, so the executor refuses such a file unless its
	// encoding is given.
	NotUTF8
	// UnsupportedContents: something in the file Spark may type otherwise
	// than the rules here (a quote, a date, a nested Parquet column, ...).
	UnsupportedContents
	// NoRules: the zero [Rules].
	NoRules
)

// Unsupported is the error of a file, or reader options, outside what the
// rules reproduce exactly: Spark must infer that schema.
type Unsupported struct {
	// Reason sorts the cause.
	Reason Reason
	// Msg says what the rules do not reproduce.
	Msg string
	// Err is the underlying error of a file that could not be read, or nil.
	Err error
}

// Error is Msg.
func (e *Unsupported) Error() string { return e.Msg }

// Unwrap is Err.
func (e *Unsupported) Unwrap() error { return e.Err }

func unsupported(reason Reason, format string, args ...any) error {
	return &Unsupported{Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// MaxFileBytes bounds the CSV and JSON files the rules read, each whole
// into memory (the executor reads one per core at a time). Spark splits a
// file over 4 MiB into partitions whose types it infers apart and then
// merges; the rules fold the records in order. Both merges are the same
// joins of types, so the schemas agree (integration test
// TestLocalInferenceOfSplitFilesMatchesSpark; and the benchmark's 10 MB
// CSV and 25 MB JSON files, checked against Spark's inference), but for
// one fold that is no join (a year after a CSV date or timestamp, see
// inferDatetimeField), which the rules take only in a file Spark does
// not split (splitFreeBytes).
const MaxFileBytes = 64 << 20

// splitFreeBytes is the largest file Spark reads in one partition under
// its default settings: a split is at least spark.sql.files.openCostInBytes
// (4 MiB) long.
const splitFreeBytes = 4 << 20

// readSmall reads a local text file to infer its schema: a regular file of
// at most MaxFileBytes, valid UTF-8 without a byte order mark (Spark's
// readers keep the mark in the first value).
func readSmall(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil, unsupported(UnsupportedFile, "not a regular local file")
	}
	if info.Size() > MaxFileBytes {
		return nil, unsupported(UnsupportedFile, "larger than %d bytes", MaxFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Unsupported{Reason: UnsupportedFile, Msg: err.Error(), Err: err}
	}
	if err := checkText(data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkText refuses data that is not UTF-8 or starts with a byte order mark.
func checkText(data []byte) error {
	switch {
	case !utf8.Valid(data):
		return unsupported(NotUTF8, "%s", notUTF8(data))
	case bytes.HasPrefix(data, []byte("\ufeff")):
		return unsupported(UnsupportedContents, "starts with a byte order mark")
	}
	return nil
}

// FirstNotUTF8 is the offset of data's first byte that is not part of
// valid UTF-8 (len(data) where there is none).
func FirstNotUTF8(data []byte) int {
	off := 0
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	return off
}

// notUTF8 says where data first is not UTF-8, for people who must give
// the file's encoding.
func notUTF8(data []byte) string {
	off := FirstNotUTF8(data)
	return fmt.Sprintf("not UTF-8: the byte at offset %d (0x%02x) is not valid UTF-8", off, data[min(off, len(data)-1)])
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

// shortNumbers reports whether data holds no run of more than 15 digits:
// then no integer (or decimal) in it has more than 15 digits, and every
// one becomes a double exactly, so a merge need not check such casts
// value by value (sparkmerge.RoundsValues). Digits of text count too,
// which can only make the answer false.
//
// It looks at 8 bytes at a time: a run of 16 digits holds a whole 8-byte
// word of digits at an offset that is a multiple of 8, so only around
// such words are digits counted one by one: several times faster than
// byte by byte (BenchmarkShortNumbers). The byte loop was
// a sixth of the client's CPU planning the benchmark's 519 MB of
// JSON lines; the plan's wall time did not move measurably, as the
// transfer of the files (remote) or the typing around it bounds it.
func shortNumbers(data []byte) bool {
	for i := 0; i+8 <= len(data); i += 8 {
		if digitWord(binary.LittleEndian.Uint64(data[i:])) && digitRun(data, i) > 15 {
			return false
		}
	}
	return true
}

// digitWord says whether each byte of w is an ASCII digit. A byte is one
// when, XORed with '0', it is below 10: adding 0x76 to its low 7 bits
// then leaves the high bit clear (no carry leaves a byte), and so must
// the byte's own high bit.
func digitWord(w uint64) bool {
	const low7, high, below10 = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080, 0x7676767676767676
	v := w ^ 0x3030303030303030
	return ((v&low7)+below10|v)&high == 0
}

// digitRun is the length of the run of digits through data[i].
func digitRun(data []byte, i int) int {
	start := i
	for start > 0 && data[start-1] >= '0' && data[start-1] <= '9' {
		start--
	}
	return i - start + leadingDigits(data[i:])
}
