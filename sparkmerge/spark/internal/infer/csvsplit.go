package infer

import (
	"bytes"
	"unicode/utf8"

	"github.com/sparkmerge/sparkmerge"
)

// Spark types a CSV file larger than its split by folding each split's
// values from no type and merging the splits' types; a year ("2024")
// folded into a date or timestamp column is a timestamp, but first in a
// split an int, which a timestamp then makes a string (see
// inferDatetimeField). Where Spark types many files in one inference
// (typeCSVByHeader in package spark), their splits differ from each
// file's read alone, so a timestamp column's type holds for a file only
// if each of its splits starts its fold as the file does: on a date or a
// timestamp.

// CSVSplitStart reports whether, in each of columns (indexes into the
// header's names), the first value of a split of a CSV file read under
// options is a date or a timestamp by the rules' classes. data is the
// file's bytes from the split's start, the part of a line Spark's reader
// skips there already cut off; only its whole lines are read. Lines
// Spark's inference skips (empty ones, those equal to header) are
// skipped; it is false where a line is one the rules refuse (blanks only,
// a quote they do not reproduce, a width other than the header's), where
// a column's first value is anything else (a year, a number, text), and
// where data ends before a column has a value.
func (r Rules) CSVSplitStart(data []byte, options map[string]string, header string, columns []int) bool {
	sep, err := r.csvSeparator(options)
	if err != nil || len(columns) == 0 {
		return err == nil
	}
	if end := bytes.LastIndexByte(data, '\n'); end >= 0 {
		data = data[:end+1]
	} else {
		return false
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	width := len(bytes.Split([]byte(header), []byte{sep}))
	pending := map[int]bool{}
	for _, c := range columns {
		if c < 0 || c >= width {
			return false
		}
		pending[c] = true
	}
	for len(data) > 0 && len(pending) > 0 {
		line, rest, ok := nextLine(data)
		if !ok {
			return false
		}
		data = rest
		switch {
		case len(line) == 0, string(line) == header:
			continue
		case len(bytes.TrimLeft(line, javaWhitespace)) == 0:
			return false
		}
		if !splitStartRow(line, sep, width, pending) {
			return false
		}
	}
	return len(pending) == 0
}

// splitStartRow settles, from one row, the pending columns it holds a
// value of (deleting them), and is false when the row is one the rules
// refuse or a pending column's value is neither a date nor a timestamp.
func splitStartRow(line []byte, sep byte, width int, pending map[int]bool) bool {
	rest := line
	for i := 0; i < width; i++ {
		v, after, _, ok := nextCSVValue(rest, sep)
		if !ok || (after == nil) != (i == width-1) {
			return false
		}
		rest = after
		if !pending[i] {
			continue
		}
		switch classify(v) {
		case classEmpty:
		case classDate, classTimestamp:
			delete(pending, i)
		default:
			return false
		}
	}
	return true
}

// CSVStart is what Spark's inference folds the columns of a CSV file's
// start into: each column's name and type so far, and whether it had a
// value. Types only widen as a fold goes on, so each type is the least the
// whole file's column can be.
type CSVStart struct {
	Names  []string
	Types  []sparkmerge.DataType
	Valued []bool
}

// CSVStartOf is the CSVStart of data, whole lines from a CSV file's first
// byte, read under options; the error is an [*Unsupported] where the
// rules refuse the lines or the options.
func (r Rules) CSVStartOf(data []byte, options map[string]string) (CSVStart, error) {
	sep, err := r.csvSeparator(options)
	if err != nil {
		return CSVStart{}, err
	}
	f, err := inferCSVFolds(data, sep)
	if err != nil {
		return CSVStart{}, err
	}
	start := CSVStart{Names: f.schema.Names(), Types: make([]sparkmerge.DataType, len(f.schema.Fields)), Valued: make([]bool, len(f.schema.Fields))}
	for i, field := range f.schema.Fields {
		start.Types[i], start.Valued[i] = field.Type, true
	}
	for _, i := range f.noValues {
		start.Valued[i] = false
	}
	return start, nil
}
