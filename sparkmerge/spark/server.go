package spark

import (
	"context"
	"fmt"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// server is everything planning ([Client.Plan], [Client.Schemas]) asks of
// the Spark server: schemas, settings, and the files only the server
// sees. It is the seam that lets the planning stages run without Spark:
// [Connect] sets a [sessionServer], unit tests a fake that records what
// was asked. Running a merge talks to the session itself.
type server interface {
	// sparkVersion is the server's Spark version, which chooses the
	// inference rules the client may apply.
	sparkVersion() string
	// readSchema is the schema Spark gives read r (an analysis: no rows
	// are read, except what Spark's schema inference reads).
	readSchema(ctx context.Context, r *Read) (sparkmerge.Schema, error)
	// tableSchema is the schema of a table or view.
	tableSchema(ctx context.Context, table string) (sparkmerge.Schema, error)
	// targetSchema is the schema of target t read back (see targetFrame).
	targetSchema(ctx context.Context, t Target) (sparkmerge.Schema, error)
	// conf is the values of session settings (the server's defaults for
	// those the session has not set).
	conf(ctx context.Context, keys ...string) (map[string]string, error)
	// setConf sets session settings.
	setConf(ctx context.Context, values map[string]string) error
	// listFiles lists the data files path given means on the server (see
	// [Client.listFiles]), named as Spark lists them, in Spark's order.
	listFiles(ctx context.Context, given string, options map[string]string) ([]remoteFile, error)
	// fetchFiles returns the contents of files only the server sees (see
	// [Client.fetchRemoteCopies]).
	fetchFiles(ctx context.Context, f fileFetch) ([]fetchedFile, error)
}

// fileFetch names the files of one fetchFiles call: when paths is nil, a
// listing read again (given and its listing options, files up to maxSize
// bytes); otherwise those files one by one (as Spark reads paths: escaped
// by literalPath).
type fileFetch struct {
	given   string
	options map[string]string
	// minSize and maxSize bound the sizes of the listing's files fetched.
	minSize, maxSize int64
	paths            []string
}

// fetchedFile is one file's contents as fetchFiles returns it, with its
// listing facts (path as Spark lists it) and the server's clock at the
// fetch, in Unix milliseconds.
type fetchedFile struct {
	remoteFile
	// content is the file's bytes; of a .parquet file over
	// parquetTailBytes, only its end: its footer, or its last
	// parquetTailBytes (see fetchedContent).
	content   []byte
	nowMillis int64
}

// parquetTailBytes is how much of a large Parquet file is fetched to type
// it: its end, where the footer is. The client reads nothing else of a
// Parquet file, so fetching it whole cost 200 MB of transfer for 200
// files of 1 MB (5.1 s of discovery of a 12 s merge).
const parquetTailBytes = 64 << 10

// fetchedContent is the SQL of fetchedFile.content over binaryFile's
// columns: a file whole, but a .parquet file over parquetTailBytes only
// its footer (the footer, its 4-byte little-endian length and the PAR1
// magic end the file) when that fits in parquetTailBytes, else its last
// parquetTailBytes. A footer is a few KiB: 28 MB to transfer for the
// benchmark's 2,000 Parquet files, where their last 64 KiB were 123 MB.
var fetchedContent = func() string {
	le := "hex(substring(content, length - 7, 4))" // the length, least significant byte first
	footer := "CAST(conv(concat(substr(" + le + ", 7, 2), substr(" + le + ", 5, 2), substr(" + le + ", 3, 2), substr(" + le + ", 1, 2)), 16, 10) AS BIGINT) + 8"
	return fmt.Sprintf("CASE WHEN NOT (lower(path) LIKE '%%.parquet' AND length > %[1]d) THEN content"+
		" WHEN substring(content, length - 3, 4) = X'50415231' AND %[2]s <= %[1]d THEN substring(content, length - (%[2]s) + 1, %[2]s)"+
		" ELSE substring(content, length - %[3]d, %[1]d) END",
		parquetTailBytes, footer, parquetTailBytes-1)
}()

// sessionServer is the [server] of a Spark Connect session.
type sessionServer struct {
	sess *connect.Session
}

func (s sessionServer) sparkVersion() string { return s.sess.SparkVersion() }

func (s sessionServer) readSchema(ctx context.Context, r *Read) (sparkmerge.Schema, error) {
	return readFrame(s.sess, r).Schema(ctx)
}

func (s sessionServer) tableSchema(ctx context.Context, table string) (sparkmerge.Schema, error) {
	return s.sess.Table(table, nil).Schema(ctx)
}

func (s sessionServer) targetSchema(ctx context.Context, t Target) (sparkmerge.Schema, error) {
	return targetFrame(s.sess, t).Schema(ctx)
}

func (s sessionServer) conf(ctx context.Context, keys ...string) (map[string]string, error) {
	return s.sess.Conf(ctx, keys...)
}

func (s sessionServer) setConf(ctx context.Context, values map[string]string) error {
	return s.sess.SetConf(ctx, values)
}

// listedColumns are the binaryFile columns a remoteFile is read from,
// followed by more; listedFile reads them back from a row.
func listedColumns(more ...string) []string {
	return append([]string{"path", "length", "unix_millis(modificationTime)"}, more...)
}

// listedFile is the remoteFile of a row whose first columns are
// listedColumns.
func listedFile(row []any) remoteFile {
	path, _ := row[0].(string)
	size, _ := row[1].(int64)
	mtime, _ := row[2].(int64)
	return remoteFile{path: path, size: size, mtimeMillis: mtime}
}

// listFiles reads the files through the binaryFile source without their
// contents: only the path, length and modification time columns are
// selected. It is one small Spark job.
func (s sessionServer) listFiles(ctx context.Context, given string, options map[string]string) ([]remoteFile, error) {
	rows, err := s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: []string{given}, Options: options}).
		SelectExpr(listedColumns()...).
		Collect(ctx)
	if err != nil {
		return nil, err
	}
	files := make([]remoteFile, 0, len(rows.Values))
	for _, row := range rows.Values {
		files = append(files, listedFile(row))
	}
	return files, nil
}

// fetchFiles is one binaryFile job. A listing is read again rather than
// its files named: Spark lists a directory or pattern at once, where
// thousands of paths named one by one cost a listing task each; binaryFile
// skips files by length before reading them.
func (s sessionServer) fetchFiles(ctx context.Context, f fileFetch) ([]fetchedFile, error) {
	var frame connect.Frame
	if f.paths != nil {
		frame = s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: f.paths})
	} else {
		frame = s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: []string{f.given}, Options: f.options}).
			Filter(fmt.Sprintf("length >= %d AND length <= %d", f.minSize, f.maxSize))
	}
	rows, err := frame.SelectExpr(listedColumns(fetchedContent, "unix_millis(current_timestamp())")...).Collect(ctx)
	if err != nil {
		return nil, err
	}
	files := make([]fetchedFile, 0, len(rows.Values))
	for _, row := range rows.Values {
		content, _ := row[3].([]byte)
		now, _ := row[4].(int64)
		files = append(files, fetchedFile{remoteFile: listedFile(row), content: content, nowMillis: now})
	}
	return files, nil
}
