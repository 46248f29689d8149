package spark

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Spark's CSV reader takes a file's bytes as they are: a byte that is not
// UTF-8 (a Latin-1 ü) reaches the output as U+FFFD, without an error, and
// its JSON reader takes a record holding one for a malformed one. The
// client refuses such a file, naming the encoding to give, when it reads
// the file whole to type it (infer's checkText); the job that cuts the
// heads and split starts of CSV files Spark splits out of their whole
// contents says whether each is UTF-8 (fileSlices), and the inference
// that types JSON files together marks a file's line that is not
// (typeJSONTogether). Every other CSV or JSON file read as UTF-8 is
// checked by checkUTF8, before Spark types the rest: the files Spark
// types (with --spark-inference, on a server whose rules the client
// lacks, past the client's size limits, held for their header line's
// inference, refused by the client's rules), and those read with the
// user's schema. A file the client reads itself (a local file, plain or
// gzip) it reads through once, without a Spark job (checkUTF8Locally);
// the others one Spark job reads as text where they live (the text source
// hands a line's bytes as they are; UTF-8 holds of a file exactly when it
// holds of each of its lines, split at bytes that are ASCII), returning
// only the files that hold a line that is not UTF-8.

// checkUTF8 refuses, before the merge, a read of reads whose files hold
// bytes that are not UTF-8 (see above), naming the file and the encoding
// option to give.
func (c *Client) checkUTF8(ctx context.Context, reads []*Read) error {
	var checked []*Read
	for _, r := range reads {
		if needsUTF8Check(r) {
			checked = append(checked, r)
		}
	}
	onServer, err := checkUTF8Locally(ctx, checked, maxLocalUTF8Total)
	if err != nil {
		return err
	}
	if err := c.checkUTF8OnServer(ctx, onServer); err != nil {
		return err
	}
	return checkEncodings(checked)
}

// checkUTF8OnServer reads the files of checked as text where they live, in
// one Spark job, and marks each read whose files hold a line that is not
// UTF-8 (Read.encodingProblem).
func (c *Client) checkUTF8OnServer(ctx context.Context, checked []*Read) error {
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
		r.encodingProblem = notUTF8Lines(f.lines, what)
	}
	return nil
}

// notUTF8Lines is the problem (Read.encodingProblem) of a read whose file
// (what) Spark found to hold lines that are not UTF-8.
func notUTF8Lines(lines int64, what string) string {
	n := "a line"
	if lines > 1 {
		n = fmt.Sprintf("%d lines", lines)
	}
	return fmt.Sprintf("not UTF-8: Spark found %s of %s holding bytes that are not valid UTF-8 (read where it lives)", n, what)
}

// maxLocalUTF8Total bounds the bytes checkUTF8Locally reads in a plan:
// past it a cluster's parallel read of files it shares with the client
// may beat one client's. The client read lake-csv's 1 GB through in 0.24
// s of CPU (page cache), where Spark's text job on one machine took 3.2 s.
const maxLocalUTF8Total = 4 << 30

// checkUTF8Locally reads through each file of checked that the client
// reads itself (readsUTF8Locally), in input order within budget bytes, a
// few at once, and marks its read UTF-8 (Read.validUTF8) or not
// (Read.encodingProblem). It returns the reads left to the server: the
// others, and any with a file it could not read.
func checkUTF8Locally(ctx context.Context, checked []*Read, budget int64) (onServer []*Read, err error) {
	type file struct {
		r       *Read
		path    string
		problem string
		read    bool
	}
	var files []*file
	var local []*Read
	for _, r := range checked {
		size, ok := readsUTF8Locally(r)
		if !ok || size > budget {
			onServer = append(onServer, r)
			continue
		}
		budget -= size
		local = append(local, r)
		for _, p := range r.Paths {
			files = append(files, &file{r: r, path: p})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range files {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return sourceError(f.r, err)
			}
			file := ""
			if len(f.r.Paths) > 1 {
				file = f.path // named among the read's files
			}
			problem, err := localUTF8Problem(f.path, file)
			f.problem, f.read = problem, err == nil // else the server checks it
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	unread := map[*Read]bool{}
	for _, f := range files {
		switch {
		case !f.read:
			unread[f.r] = true
		case f.problem != "" && f.r.encodingProblem == "":
			f.r.encodingProblem = f.problem // its first such file in order
		}
	}
	for _, r := range local {
		switch {
		case r.encodingProblem != "":
		case unread[r]:
			onServer = append(onServer, r)
		default:
			r.validUTF8 = true
		}
	}
	return onServer, nil
}

// readsUTF8Locally reports whether the client reads r's files itself to
// check them, and their bytes: local files named one by one (no
// directory, pattern or file only the server sees), plain or gzip by
// their names, as Spark's text source reads them (another codec is
// Spark's to decode).
func readsUTF8Locally(r *Read) (size int64, ok bool) {
	if r.listed || r.patterns || len(r.Paths) == 0 {
		return 0, false
	}
	isPlain := isPlainCSV
	if r.Format == "json" {
		isPlain = isPlainJSON
	}
	for _, p := range r.Paths {
		if IsGlob(p) || !isLocalPath(p) || kindOf(p, isPlain) == notPlain {
			return 0, false
		}
		info, err := os.Stat(localPath(p))
		if err != nil || !info.Mode().IsRegular() {
			return 0, false
		}
		size += info.Size()
	}
	return size, true
}

// localUTF8Problem reads the local file at path (gunzipped where its name
// ends in .gz) and says where it first is not UTF-8 (in its file named,
// unless named is ""), or "" where it is.
func localUTF8Problem(path, named string) (string, error) {
	f, err := os.Open(localPath(path))
	if err != nil {
		return "", err
	}
	defer f.Close()
	var src io.Reader = f
	what := ""
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return "", err
		}
		defer z.Close()
		src, what = z, " of its decompressed contents"
	}
	off, b, bad, err := firstNotUTF8(src)
	if err != nil || !bad {
		return "", err
	}
	in := ""
	if named != "" {
		in = fmt.Sprintf("in its file %q ", named)
	}
	return fmt.Sprintf("not UTF-8: %sthe byte at offset %d%s (0x%02x) is not valid UTF-8", in, off, what, b), nil
}

// firstNotUTF8 reads src through and reports the offset and value of its
// first byte that is not part of valid UTF-8, if any (bad).
func firstNotUTF8(src io.Reader) (off int64, b byte, bad bool, err error) {
	buf := make([]byte, 1<<20)
	var base int64 // the offset of buf[0] in src
	carry := 0     // bytes of an unfinished sequence kept at buf[0:]
	for {
		n, err := io.ReadFull(src, buf[carry:])
		end := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !end {
			return 0, 0, false, err
		}
		data := buf[:carry+n]
		whole := len(data)
		if !end {
			whole = completeRunes(data)
		}
		if !utf8.Valid(data[:whole]) {
			i := infer.FirstNotUTF8(data[:whole])
			return base + int64(i), data[i], true, nil
		}
		if end {
			return 0, 0, false, nil
		}
		carry = copy(buf, data[whole:])
		base += int64(whole)
	}
}

// completeRunes is the length of data without a sequence its last bytes
// begin but do not finish (at most 3 bytes): where a read may have cut a
// character.
func completeRunes(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-3; i-- {
		c := data[i]
		switch {
		case c < 0x80:
			return len(data)
		case c >= 0xC0:
			need := 4
			if c < 0xE0 {
				need = 2
			} else if c < 0xF0 {
				need = 3
			}
			if len(data)-i < need {
				return i
			}
			return len(data)
		}
	}
	return len(data)
}

// needsUTF8Check reports whether checkUTF8 checks r's files: a
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
