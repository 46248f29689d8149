package spark

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Spark's CSV reader takes a file's bytes as they are: a byte that is not
// UTF-8 (a Latin-1 ü) reaches the output as U+FFFD, without an error, and
// its JSON reader takes a record holding one for a malformed one. The
// client refuses such a file, naming the encoding to give, when it reads
// the file whole to type it (infer's checkText); the job that cuts the
// heads and split starts of CSV files Spark splits out of their whole
// contents says whether each is UTF-8 (fileSlices). Every other CSV or
// JSON file read as UTF-8 is checked where it lives, before Spark types
// the rest, by checkUTF8OnServer: the files Spark types (with
// --spark-inference, on a server whose rules the client lacks, past the
// client's size limits, held for their header line's inference, refused
// by the client's rules), and those read with the user's schema. One
// Spark job reads them as text (the text source hands a line's bytes as
// they are; UTF-8 holds of a file exactly when it holds of each of its
// lines, split at bytes that are ASCII) and returns only the files that
// hold a line that is not UTF-8.

// checkUTF8OnServer refuses, before the merge, a read of reads whose
// files hold bytes that are not UTF-8 (see above), naming the file and
// the encoding option to give.
func (c *Client) checkUTF8OnServer(ctx context.Context, reads []*Read) error {
	var checked []*Read
	for _, r := range reads {
		if needsUTF8Check(r) {
			checked = append(checked, r)
		}
	}
	if len(checked) == 0 {
		return nil
	}
	measures := nestingMeasures(checked)
	for i := range measures {
		// Lines or whole files: UTF-8 holds of both alike, and a
		// lake's file read whole would be one row of its size.
		delete(measures[i].options, "wholetext")
		measures[i].value, measures[i].bound = "", false
	}
	found, err := c.server.notUTF8Files(ctx, measures, validUTF8Expr(c.SparkVersion(), "value"))
	if err != nil {
		return measuresError(checked, "check that the CSV and JSON files Spark reads are UTF-8", err)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].path < found[j].path })
	for _, f := range found {
		i, ok := measuredRead(measures, f.measure, f.path)
		if !ok {
			return fmt.Errorf("the file %s holds bytes that are not UTF-8 and is none of the sources as Spark names it", f.path)
		}
		r := checked[i]
		if r.encodingProblem != "" {
			continue // its first such file, by name, is named
		}
		what := "a file"
		if len(r.Paths) != 1 || r.patterns || sparkPathKey(r.Paths[0]) != f.path {
			what = fmt.Sprintf("its file %q", f.path)
		}
		lines := "a line"
		if f.lines > 1 {
			lines = fmt.Sprintf("%d lines", f.lines)
		}
		r.encodingProblem = fmt.Sprintf("not UTF-8: Spark found %s of %s holding bytes that are not valid UTF-8 (read where it lives)", lines, what)
	}
	return checkEncodings(checked)
}

// needsUTF8Check reports whether checkUTF8OnServer checks r's files: a
// CSV or JSON read of files (not a relation) read as UTF-8 (no encoding
// option, or UTF-8; a multi-line JSON read without one is Jackson's to
// decode as it detects), not yet found UTF-8 as a whole (Read.validUTF8)
// nor refused already.
func needsUTF8Check(r *Read) bool {
	if r.Format != "csv" && r.Format != "json" || r.relational() || r.validUTF8 || r.encodingProblem != "" {
		return false
	}
	// (CSV takes the encoding and charset options as JSON does; only
	// JSON detects a multi-line file's.)
	cs := jsonCharsetOf(r.Options)
	return cs.isUTF8 && !(cs.detect && r.Format == "json")
}

// validUTF8Expr is the SQL of whether the string expr (a text read's
// line, a file's content) is UTF-8: is_valid_utf8 from Spark 4.0; on
// Spark 3.5, whether its bytes stay the same decoded and encoded again (a
// Java decoder puts U+FFFD, three bytes, for every byte sequence that is
// not UTF-8).
func validUTF8Expr(sparkVersion, expr string) string {
	if strings.HasPrefix(sparkVersion, "3.") {
		return fmt.Sprintf("encode(%s, 'UTF-8') = CAST(%s AS BINARY)", expr, expr)
	}
	return "is_valid_utf8(" + expr + ")"
}

// notUTF8File is a file of a measure (an index of the measures) as Spark
// names it (sparkPathKey) and how many of its lines are not UTF-8.
type notUTF8File struct {
	measure int
	path    string
	lines   int64
}
