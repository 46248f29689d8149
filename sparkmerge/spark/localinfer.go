package spark

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Asking Spark for a file's schema runs a Spark job or two per file (a
// CSV file's header, then a pass over every row; a Parquet group's
// footers), a fixed cost of server time per file: most of a merge of many
// small files. For small local files, and client-side copies of small
// files only the server sees (fetchRemoteCopies), the client infers the
// schema itself by the server's own rules (package infer, rules chosen by
// the server's version), and leaves to Spark every file those rules refuse.
// A CSV read inferred so carries enforceSchema=false, so that Spark checks
// each file's header against the names inferred here and fails, rather
// than maps columns by position, if the server's file is not the client's.

// errNotPlainLocal refuses a path the client does not read to infer its
// schema: not local, a glob, or not of its format's plain extension (a
// file compressed otherwise than with gzip, say).
var errNotPlainLocal = errors.New("not a plain local file of its format")

// fileKind is how the client may read a file to type it.
type fileKind int

const (
	// notPlain: Spark types the file.
	notPlain fileKind = iota
	// plain: the file's bytes are its text.
	plain
	// gzipped: a file of a plain extension compressed with gzip
	// (a.csv.gz), which Spark reads decompressed (Hadoop's GzipCodec,
	// chosen by the suffix) and never splits; the client types its text,
	// up to maxGzipText of it, as a plain file's: a local file, or a
	// copy of one only the server sees, fetched compressed (see
	// copyKeeper.screen for its head).
	gzipped
)

// maxGzipText bounds the text the client decompresses from a gzip file to
// type it: past it Spark types the file. A positional scan reads such a
// file as one string (batchFileLimit, by the file's compressed size), so
// its text stays within a plain CSV file's bound there.
const maxGzipText = 8 << 20

// kindOf is the kind of the file at path, plain when its name ends with
// one of a plain extension (isPlain).
func kindOf(path string, isPlain func(string) bool) fileKind {
	switch {
	case isPlain(path):
		return plain
	case strings.HasSuffix(strings.ToLower(path), ".gz") && isPlain(path[:len(path)-len(".gz")]):
		return gzipped
	}
	return notPlain
}

// isPlainJSON reports whether p names a JSON lines file by its extension.
func isPlainJSON(p string) bool {
	lower := strings.ToLower(p)
	return strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".jsonl")
}

// localCSVFile infers the schema of the plain local .csv or .tsv file at
// path (a path or file: URI as the read names it) by rules; or, when
// fetched is not nil, of the remote file at path whose contents those are.
func localCSVFile(rules infer.Rules, path string, fetched []byte, options map[string]string) (infer.CSVFile, error) {
	return inferFile(path, fetched, kindOf(path, isPlainCSV),
		func(data []byte) (infer.CSVFile, error) { return rules.CSV(data, options) },
		func(local string) (infer.CSVFile, error) { return rules.CSVFile(local, options) })
}

// localJSONFile infers the raw schema of the plain local .json or .jsonl
// file at path by rules; or, when fetched is not nil, of the remote file at
// path whose contents those are.
func localJSONFile(rules infer.Rules, path string, fetched []byte, options map[string]string) (infer.JSONFile, error) {
	return inferFile(path, fetched, kindOf(path, isPlainJSON),
		func(data []byte) (infer.JSONFile, error) { return rules.JSONLines(data, options) },
		func(local string) (infer.JSONFile, error) { return rules.JSONFile(local, options) })
}

// inferFile infers what a file of its format's plain extension holds:
// from fetched, a remote file's contents, when not nil, else from the
// local file at path (decompressed when gzipped).
func inferFile[T any](path string, fetched []byte, kind fileKind, fromContents func([]byte) (T, error), fromFile func(string) (T, error)) (T, error) {
	var none T
	switch {
	case kind == notPlain || IsGlob(path):
		// A name with glob characters is Spark's to type, fetched or
		// local (isLocalFile), so that both plan alike.
		return none, errNotPlainLocal
	case kind == gzipped && fetched != nil:
		text, err := gunzip(bytes.NewReader(fetched), maxGzipText)
		if err != nil {
			return none, err
		}
		return fromContents(text)
	case kind == gzipped && !isLocalFile(path):
		return none, errNotPlainLocal
	case kind == gzipped:
		text, err := gunzipLocal(localPath(path), maxGzipText)
		if err != nil {
			return none, err
		}
		return fromContents(text)
	case fetched != nil:
		return fromContents(fetched)
	case !isLocalFile(path):
		return none, errNotPlainLocal
	}
	return fromFile(localPath(path))
}

// gunzipLocal is the text of the gzip file at path, every member of it
// (as Hadoop's GzipCodec reads concatenated members), or an
// *infer.Unsupported when it is not a regular file, not gzip, or holds
// more than limit bytes: Spark types such a file.
func gunzipLocal(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &infer.Unsupported{Reason: infer.UnsupportedFile, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, &infer.Unsupported{Reason: infer.UnsupportedFile, Msg: "not a regular local file"}
	}
	return gunzip(bufio.NewReader(f), limit)
}

// gunzip is the text of the gzip stream in, every member of it, or an
// *infer.Unsupported when it is not gzip or holds more than limit bytes.
func gunzip(in io.Reader, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, &infer.Unsupported{Reason: infer.UnsupportedContents, Msg: "not gzip: " + err.Error(), Err: err}
	}
	text, err := io.ReadAll(io.LimitReader(zr, limit+1))
	switch {
	case err != nil:
		return nil, &infer.Unsupported{Reason: infer.UnsupportedContents, Msg: "not gzip: " + err.Error(), Err: err}
	case int64(len(text)) > limit:
		return nil, &infer.Unsupported{Reason: infer.UnsupportedFile, Msg: fmt.Sprintf("more than %d bytes decompressed", limit)}
	}
	return text, nil
}

// gunzipHead is the text the head of a gzip file (its first bytes)
// decompresses to, cut at its last line break: what a plain file's head
// is to headRefused. ok is false when head is not the start of gzip.
func gunzipHead(head []byte) (text []byte, ok bool) {
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return nil, false
	}
	text, err = io.ReadAll(io.LimitReader(zr, maxGzipText))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, false
	}
	return text[:bytes.LastIndexByte(text, '\n')+1], true
}

// localParquetFile types the plain local .parquet file at path from its
// footer by rules, under the server's settings conf.
func localParquetFile(rules infer.Rules, path string, options map[string]string, conf infer.ParquetConf) (infer.ParquetSchema, error) {
	if !isLocalFile(path) || InferFormat(path) != "parquet" {
		return infer.ParquetSchema{}, errNotPlainLocal
	}
	return rules.ParquetFileSchema(localPath(path), options, conf)
}

// localORCFile types the plain local .orc file at path from its footer by
// rules, under the server's settings conf.
func localORCFile(rules infer.Rules, path string, options map[string]string, conf infer.ORCConf) (sparkmerge.Schema, error) {
	if !isLocalFile(path) || InferFormat(path) != "orc" {
		return sparkmerge.Schema{}, errNotPlainLocal
	}
	return rules.ORCFile(localPath(path), options, conf)
}

// footerConf holds the session settings under which the client types
// Parquet and ORC files from their footers; a nil one leaves that
// format's files to Spark.
type footerConf struct {
	parquet *infer.ParquetConf
	orc     *infer.ORCConf
}

// footerConfFor fetches, in one call, the settings Spark's schema
// conversion of the footers of the single local (or fetched) Parquet and
// ORC files among reads depends on. A format none of whose reads is such
// a file, or whose settings the server does not say or the rules do not
// reproduce, gets none: Spark types its files, as before.
func (c *Client) footerConfFor(ctx context.Context, reads []*Read) footerConf {
	var keys []string
	needed := map[string]bool{}
	for _, r := range reads {
		if (r.Format == "parquet" || r.Format == "orc") && !needed[r.Format] && len(r.Paths) == 1 && !r.relational() && r.UserSchema == "" && (isLocalPath(r.Paths[0]) || r.copy != nil) {
			needed[r.Format] = true
			if r.Format == "parquet" {
				keys = append(keys, infer.ParquetConfKeys()...)
			} else {
				keys = append(keys, infer.ORCConfKeys()...)
			}
		}
	}
	var conf footerConf
	if len(keys) == 0 {
		return conf
	}
	values, err := c.server.conf(ctx, keys...)
	if err != nil {
		return conf
	}
	if pq, err := infer.ParquetConfFrom(values); err == nil && needed["parquet"] {
		conf.parquet = &pq
	}
	if orc, err := infer.ORCConfFrom(values); err == nil && needed["orc"] {
		conf.orc = &orc
	}
	return conf
}
