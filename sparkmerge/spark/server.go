package spark

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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
	// tableSchema is the schema of a table or view and the metadata
	// (JSON) of its columns that have some, by name (see filledColumns),
	// from one analysis.
	tableSchema(ctx context.Context, table string) (sparkmerge.Schema, map[string]string, error)
	// tableProperties are a table's properties (SHOW TBLPROPERTIES).
	tableProperties(ctx context.Context, table string) (map[string]string, error)
	// tableProvider is what DESCRIBE TABLE EXTENDED says of a table:
	// its format (delta, iceberg, parquet, ...), its type (a view?) and
	// its partition columns (see tableDescription).
	tableProvider(ctx context.Context, table string) (tableDescription, error)
	// catalogs are the session's current catalog and the implementation
	// class of every catalog the server's settings name
	// (spark.sql.catalog.NAME), by name.
	catalogs(ctx context.Context) (current string, classes map[string]string, err error)
	// targetSchema is the schema of target t read back (see targetFrame).
	targetSchema(ctx context.Context, t Target) (sparkmerge.Schema, error)
	// conf is the values of session settings (the server's defaults for
	// those the session has not set).
	conf(ctx context.Context, keys ...string) (map[string]string, error)
	// setConf sets session settings.
	setConf(ctx context.Context, values map[string]string) error
	// listFiles lists the data files path given means on the server (see
	// [Client.listFiles]), named as Spark lists them, in Spark's order,
	// with the heads of the files heads asks for (remoteFile.head; none
	// when heads is its zero value). Files of 0 bytes may be absent:
	// Spark's scans skip them.
	listFiles(ctx context.Context, given string, options map[string]string, heads listingHeads) ([]remoteFile, error)
	// inputFiles are the files path given means as Spark's file index
	// lists them, files of 0 bytes included, named as Spark lists them
	// (no Spark job: an analysis).
	inputFiles(ctx context.Context, given string, options map[string]string) ([]string, error)
	// fetchFiles returns the contents of files only the server sees (see
	// [Client.fetchRemoteCopies]).
	fetchFiles(ctx context.Context, f fileFetch) ([]fetchedFile, error)
	// realPaths are the real paths of paths on the server's own
	// filesystem, by path (see serverRealPath); paths it has none for
	// are absent.
	realPaths(ctx context.Context, paths []string) (map[string]string, error)
	// haveRows says, of each read, whether it has a row: one Spark job
	// reading at most the first row of each (see withoutColumnlessFiles).
	haveRows(ctx context.Context, reads []*Read) ([]bool, error)
	// columnsHaveValues says, of each probe, whether any of its reads
	// holds a value in its column, reading up to the first such value,
	// all in one Spark request (see [Client.markNoValues]).
	columnsHaveValues(ctx context.Context, probes []valueProbe) ([]bool, error)
	// jsonNesting measures how deep the records of JSON files nest, by
	// the measures' text reads, in one Spark request: of each read (an
	// index of the reads the measures were made of) with a file past
	// maxDepth, its deepest such file (see [Client.checkNestingOnServer]).
	jsonNesting(ctx context.Context, measures []nestingMeasure, maxDepth int) (map[int]deepJSONFile, error)
	// notUTF8Files reads the measures' files as text in one Spark
	// request and returns those holding a line of which valid (SQL of
	// a line, value) is false (see [Client.checkUTF8OnServer]).
	notUTF8Files(ctx context.Context, measures []nestingMeasure, valid string) ([]notUTF8File, error)
	// csvFileLines reads CSV files as text in one Spark job: each file's
	// header line and counts of its lines, and of those of which valid
	// (SQL of a line, value: UTF-8) is false (see
	// [Client.typeCSVTogether]).
	csvFileLines(ctx context.Context, paths []string, valid string) ([]csvFileLines, error)
	// csvHeaderNames is the schema Spark's CSV reader gives a file whose
	// header line is line, read with options: its names, every type
	// string.
	csvHeaderNames(ctx context.Context, line string, options map[string]string) (sparkmerge.Schema, error)
	// csvLaneTypes is the schema Spark's CSV inference gives the lanes
	// of CSV files (see [csvLanes]): one Spark inference over them all.
	csvLaneTypes(ctx context.Context, lanes csvLanes) (sparkmerge.Schema, error)
	// jsonLaneTypes is the schema Spark's JSON inference gives the
	// nested records of JSON files (see [jsonLanes]): one inference over
	// them all.
	jsonLaneTypes(ctx context.Context, lanes jsonLanes) (sparkmerge.Schema, error)
	// partitionSchema is the schema of the dataset path given means, with
	// the reader options, as a binaryFile dataset: its partition columns
	// are those Spark's read of it in any format has (see
	// [Client.typePartitions]).
	partitionSchema(ctx context.Context, given string, options map[string]string) (sparkmerge.Schema, error)
	// csvHeader is the first record of CSV read r's files as Spark's CSV
	// reader parses it with r's options but no header: the names Spark
	// takes r's columns from (see [Client.checkCSVHeaderNames]), and the
	// file that holds them, as Spark names it.
	csvHeader(ctx context.Context, r *Read) (file string, names []string, err error)
	// fileSplitSettings are the session's settings that decide where
	// Spark splits a file it reads alone (no Spark job; see fileSplits).
	fileSplitSettings(ctx context.Context) (fileSplits, error)
	// fileSlices returns, in one binaryFile job, up to head bytes of
	// each file at its first offset and up to window at the others, with
	// its size as Spark read it and whether its bytes are UTF-8 (valid,
	// SQL of its content) (see [Client.typeCSVByHeader]).
	fileSlices(ctx context.Context, files []sliceFetch, head, window int64, valid string) ([]fetchedSlices, error)
}

// sliceFetch is one file of a fileSlices call: its path as read and as
// Spark's listing names it, and the offsets of its slices.
type sliceFetch struct {
	path, sparkPath string
	offsets         []int64
}

// fetchedSlices are one file's slices, by the path Spark names it.
type fetchedSlices struct {
	path   string
	size   int64
	slices [][]byte
	// utf8: the file's bytes are UTF-8 (the job reads each file whole:
	// checking them there costs the server no second read,
	// checkUTF8's, of a lake's files).
	utf8 bool
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
	// head, when not 0, is the most of a CSV or JSON file fetched: its
	// first head bytes (see remoteHeadBytes).
	head int64
	// from, when not 0, skips a CSV or JSON file's first from bytes: the
	// rest of a file whose head was fetched.
	from int64
	// only, when not nil, are the files (as Spark lists them) whose
	// contents are fetched; the others come back without content.
	only []string
}

// fetchedFile is one file's contents as fetchFiles returns it, with its
// listing facts (path as Spark lists it) and the server's clock at the
// fetch, in Unix milliseconds.
type fetchedFile struct {
	remoteFile
	// content is the file's bytes; of a .parquet or .orc file over
	// footerTailBytes, only its end: its footer, or its last
	// footerTailBytes (see fetchedContent); of a CSV or JSON file, the
	// part fileFetch.head or fileFetch.from asks for.
	content   []byte
	nowMillis int64
}

// footerTailBytes is how much of a large Parquet or ORC file is fetched to
// type it: its end, where the footer is. The client reads nothing else of
// such a file, so fetching it whole cost 200 MB of transfer for 200
// Parquet files of 1 MB (discovery was then 40% of the merge).
const footerTailBytes = 64 << 10

// footerContent is the SQL of a .parquet or .orc file's part that
// fetchedContent returns: the file whole when no larger than
// footerTailBytes, else only the end its schema is in, when that fits in
// footerTailBytes, else its last footerTailBytes. A footer is a few KiB:
// 28 MB to transfer for the benchmark's 2,000 Parquet files, where their
// last 64 KiB were 123 MB.
//
//   - Parquet: the footer, its 4-byte little-endian length and the PAR1
//     magic end the file.
//   - ORC: the footer, the postscript and one byte holding the
//     postscript's length end the file; the postscript starts with the
//     footer's length (field 1: the tag byte 8, then a varint, read here up
//     to 4 bytes: footers under 256 MiB).
var footerContent = func() string {
	le := "hex(substring(content, length - 7, 4))" // the length, least significant byte first
	parquetEnd := "CAST(conv(concat(substr(" + le + ", 7, 2), substr(" + le + ", 5, 2), substr(" + le + ", 3, 2), substr(" + le + ", 1, 2)), 16, 10) AS BIGINT) + 8"
	byteAt := func(pos string) string {
		return "CAST(conv(hex(substring(content, " + pos + ", 1)), 16, 10) AS BIGINT)"
	}
	psLen := byteAt("length")
	postscript := "length - " + psLen // where the postscript starts
	v := func(i int) string { return byteAt(fmt.Sprintf("%s + %d", postscript, i)) }
	footerLen := fmt.Sprintf("CASE WHEN %[1]s < 128 THEN %[1]s"+
		" WHEN %[2]s < 128 THEN %[1]s - 128 + %[2]s * 128"+
		" WHEN %[3]s < 128 THEN %[1]s - 128 + (%[2]s - 128) * 128 + %[3]s * 16384"+
		" WHEN %[4]s < 128 THEN %[1]s - 128 + (%[2]s - 128) * 128 + (%[3]s - 128) * 16384 + %[4]s * 2097152 END",
		v(1), v(2), v(3), v(4))
	orcEnd := fmt.Sprintf("1 + %s + (%s)", psLen, footerLen)
	exact := func(end string) string { return "substring(content, length - (" + end + ") + 1, " + end + ")" }
	return fmt.Sprintf("CASE WHEN length <= %[1]d THEN content"+
		" WHEN lower(path) LIKE '%%.parquet' AND substring(content, length - 3, 4) = X'50415231' AND %[2]s <= %[1]d THEN %[3]s"+
		" WHEN lower(path) LIKE '%%.orc' AND %[4]s = 8 AND %[5]s <= %[1]d THEN %[6]s"+
		" ELSE substring(content, length - %[7]d, %[1]d) END",
		footerTailBytes, parquetEnd, exact(parquetEnd), byteAt(postscript), orcEnd, exact(orcEnd), footerTailBytes-1)
}()

// isFooterFile is the SQL condition of a file typed from its footer.
const isFooterFile = "(lower(path) LIKE '%.parquet' OR lower(path) LIKE '%.orc')"

// fetchedContent is the SQL of fetchedFile.content over binaryFile's
// columns: a Parquet or ORC file's footer (footerContent); a CSV or JSON
// file whole, or the part f asks for (its head, or its rest); nothing of a
// file not among f.only.
func fetchedContent(f fileFetch) string {
	text := "content"
	switch {
	case f.from > 0:
		text = fmt.Sprintf("substring(content, %d)", f.from+1)
	case f.head > 0:
		text = fmt.Sprintf("substring(content, 1, %d)", f.head)
	}
	content := "CASE WHEN " + isFooterFile + " THEN " + footerContent + " ELSE " + text + " END"
	if f.only == nil {
		return content
	}
	quoted := make([]string, len(f.only))
	for i, p := range f.only {
		quoted[i] = sparkmerge.QuoteString(p)
	}
	if len(quoted) == 0 {
		return "CAST(NULL AS BINARY)"
	}
	return "CASE WHEN path IN (" + strings.Join(quoted, ", ") + ") THEN " + content + " END"
}

// sessionServer is the [server] of a Spark Connect session.
type sessionServer struct {
	sess *connect.Session
}

func (s sessionServer) sparkVersion() string { return s.sess.SparkVersion() }

func (s sessionServer) readSchema(ctx context.Context, r *Read) (sparkmerge.Schema, error) {
	return readFrame(s.sess, r).Schema(ctx)
}

func (s sessionServer) csvHeader(ctx context.Context, r *Read) (string, []string, error) {
	options := withOption(withOption(r.Options, "header", "false"), "inferSchema", "false")
	rows, err := s.sess.Read(connect.ReadSpec{Format: "csv", Paths: r.readPaths(), Options: options}).
		SelectExpr("_metadata.file_path AS __sparkmerge_file", "*").
		Limit(1).
		Collect(ctx)
	if err != nil || len(rows.Values) == 0 {
		return "", nil, err
	}
	first := rows.Values[0]
	file, _ := first[0].(string)
	names := make([]string, len(first)-1)
	for i, v := range first[1:] {
		names[i], _ = v.(string) // null: an empty name
	}
	return file, names, nil
}

func (s sessionServer) tableSchema(ctx context.Context, table string) (sparkmerge.Schema, map[string]string, error) {
	return s.sess.Table(table, nil).SchemaAndFieldMetadata(ctx)
}

func (s sessionServer) tableProperties(ctx context.Context, table string) (map[string]string, error) {
	rows, err := s.sess.SQL("SHOW TBLPROPERTIES " + table).Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, row := range rows.Values {
		if len(row) == 2 {
			k, _ := row[0].(string)
			v, _ := row[1].(string)
			out[k] = v
		}
	}
	return out, nil
}

func (s sessionServer) tableProvider(ctx context.Context, table string) (tableDescription, error) {
	rows, err := s.sess.SQL("DESCRIBE TABLE EXTENDED " + table).Collect(ctx)
	if err != nil {
		return tableDescription{}, err
	}
	return tableDescription{provider: describedValue(rows.Values, "Provider"), kind: describedValue(rows.Values, "Type"), partitions: partitionColumnsOf(rows.Values)}, nil
}

func (s sessionServer) catalogs(ctx context.Context) (string, map[string]string, error) {
	rows, err := s.sess.SQL("SELECT current_catalog()").Collect(ctx)
	if err != nil {
		return "", nil, err
	}
	current := ""
	if len(rows.Values) == 1 && len(rows.Values[0]) == 1 {
		current, _ = rows.Values[0][0].(string)
	}
	if rows, err = s.sess.SQL("SET").Collect(ctx); err != nil {
		return "", nil, err
	}
	classes := map[string]string{}
	for _, row := range rows.Values {
		if len(row) < 2 {
			continue
		}
		key, _ := row[0].(string)
		value, _ := row[1].(string)
		if name, ok := strings.CutPrefix(key, "spark.sql.catalog."); ok && !strings.Contains(name, ".") {
			classes[name] = value
		}
	}
	return current, classes, nil
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
// serverClock is the SQL of the server's clock when a query starts, in
// milliseconds, as a string. Spark folds current_timestamp() into a
// constant of the query, and its generated code writes a constant of type
// long into the code itself but keeps a string in the query's reference
// objects: as a long, every query of a listing or fetch was new code,
// compiled again even in a session kept from the last run (twice, on the
// driver and in the executor's class loader, 0.15-0.45 s each at the
// 200-file benchmark); as a string, the code of the same listing or fetch
// is the same at every run and Spark compiles it once. Read it with
// serverMillis.
const serverClock = "CAST(unix_millis(current_timestamp()) AS STRING)"

// serverMillis is the value of a serverClock column (0 if none).
func serverMillis(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

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
// selected, with each file's real path on the server (serverRealPath).
// It is one small Spark job. A server that refuses the real path's
// reflect call (a restricted cluster) is asked again without it.
//
// With heads, the same job also returns the heads the client's typing
// starts from (see listingHeads), where a fetch of them was a job of its
// own; a listing with heads that fails (a file the server may list but
// not read) is asked again without them, and they are fetched as before.
// A path that does not exist (PATH_NOT_FOUND, the analysis of the read
// itself) is not asked again: every way of asking reads the same path.
func (s sessionServer) listFiles(ctx context.Context, given string, options map[string]string, heads listingHeads) ([]remoteFile, error) {
	read := func() connect.Frame {
		return s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: []string{given}, Options: options})
	}
	var rows connect.Rows
	err := errors.New("no listing")
	if heads.head > 0 {
		rows, err = headsListing(read, heads).Collect(ctx)
	}
	if err != nil && errorClass(err) != "PATH_NOT_FOUND" {
		rows, err = read().SelectExpr(listedColumns(serverRealPath("path"))...).Collect(ctx)
	}
	if err != nil && errorClass(err) != "PATH_NOT_FOUND" {
		rows, err = read().SelectExpr(listedColumns()...).Collect(ctx)
	}
	if err != nil {
		return nil, err
	}
	files := make([]remoteFile, 0, len(rows.Values))
	for _, row := range rows.Values {
		f := listedFile(row)
		if len(row) > 3 {
			real, _ := row[3].(string)
			f.real = fromServerURI(real)
		}
		if len(row) == 6 {
			if content, ok := row[4].([]byte); ok {
				f.head = &listedHead{content: content, nowMillis: serverMillis(row[5])}
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// headsListing is a listing (listedColumns with the real path) whose rows
// also hold, as a fetch of heads does (fetchedContent and the server's
// clock), the head of each file up to maxRemoteInferFile
// whose name heads.names says (a null content for the others): two scans
// of the listing in one job, one of the files up to that size with their
// contents and one of the larger files without (binaryFile skips files by
// length before reading them, so a large file is never read).
func headsListing(read func() connect.Frame, heads listingHeads) connect.Frame {
	named := heads.namesSQL()
	content := fmt.Sprintf("CASE WHEN %s THEN %s END", named, fetchedContent(fileFetch{head: heads.head}))
	small := read().Filter(fmt.Sprintf("length >= 0 AND length <= %d", maxRemoteInferFile)).
		SelectExpr(listedColumns(serverRealPath("path"), content, serverClock)...)
	large := read().Filter(fmt.Sprintf("length >= %d AND length <= %d", maxRemoteInferFile+1, int64(math.MaxInt64))).
		SelectExpr(listedColumns(serverRealPath("path"), "CAST(NULL AS BINARY)", "CAST(NULL AS STRING)")...)
	return connect.UnionAll([]connect.Frame{small, large})
}

func (s sessionServer) inputFiles(ctx context.Context, given string, options map[string]string) ([]string, error) {
	return s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: []string{given}, Options: options}).InputFiles(ctx)
}

// realPaths are the real paths of paths on the server's own filesystem
// (see serverRealPath), by path; paths it has none for are absent. One
// small query.
func (s sessionServer) realPaths(ctx context.Context, paths []string) (map[string]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	cols := make([]string, len(paths))
	for i, p := range paths {
		cols[i] = serverRealPath(sparkmerge.QuoteString(localPath(p)))
	}
	rows, err := s.sess.SQL("SELECT " + strings.Join(cols, ", ")).Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, row := range rows.Values {
		for i, v := range row {
			if u, _ := v.(string); fromServerURI(u) != "" && i < len(paths) {
				out[paths[i]] = fromServerURI(u)
			}
		}
	}
	return out, nil
}

func (s sessionServer) haveRows(ctx context.Context, reads []*Read) ([]bool, error) {
	frames := make([]connect.Frame, len(reads))
	for i, r := range reads {
		frames[i] = readFrame(s.sess, r)
	}
	return anyRow(ctx, frames)
}

func (s sessionServer) columnsHaveValues(ctx context.Context, probes []valueProbe) ([]bool, error) {
	frames := make([]connect.Frame, len(probes))
	for i, p := range probes {
		reads := make([]connect.Frame, len(p.reads))
		for j, r := range p.reads {
			reads[j] = readFrame(s.sess, r).Filter(ident(p.columns[j]) + " IS NOT NULL").SelectExpr("1 AS v")
		}
		frames[i] = connect.UnionAll(reads)
	}
	return anyRow(ctx, frames)
}

// anyRow says, of each frame, whether it has a row, in one Spark request
// that reads at most the first row of each.
func anyRow(ctx context.Context, frames []connect.Frame) ([]bool, error) {
	limited := make([]connect.Frame, len(frames))
	for i, f := range frames {
		limited[i] = f.Limit(1).SelectExpr(fmt.Sprintf("CAST(%d AS BIGINT) AS i", i))
	}
	rows, err := connect.UnionAll(limited).Collect(ctx)
	if err != nil {
		return nil, err
	}
	has := make([]bool, len(frames))
	for _, row := range rows.Values {
		if i, ok := row[0].(int64); ok && i >= 0 && int(i) < len(has) {
			has[i] = true
		}
	}
	return has, nil
}

func (s sessionServer) partitionSchema(ctx context.Context, given string, options map[string]string) (sparkmerge.Schema, error) {
	return s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: []string{given}, Options: options}).Schema(ctx)
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
	rows, err := frame.SelectExpr(listedColumns(fetchedContent(f), serverClock)...).Collect(ctx)
	if err != nil {
		return nil, err
	}
	files := make([]fetchedFile, 0, len(rows.Values))
	for _, row := range rows.Values {
		content, _ := row[3].([]byte)
		now := serverMillis(row[4])
		files = append(files, fetchedFile{remoteFile: listedFile(row), content: content, nowMillis: now})
	}
	return files, nil
}

// jsonNesting runs the measures' text reads in one request, each record's
// text decoded as Spark's JSON reader decodes it (nestingMeasure.value): only the
// lines with more brackets than maxDepth are measured (jsonDeeperFilter),
// by jsonNestingExpr, and only the files past it come back, a row each
// (filtered after the aggregate, which Spark cannot push the filter
// below: pushed below the projection, it would measure each line twice).
func (s sessionServer) jsonNesting(ctx context.Context, measures []nestingMeasure, maxDepth int) (map[int]deepJSONFile, error) {
	frames := make([]connect.Frame, len(measures))
	for g, m := range measures {
		depth := jsonNestingExpr(maxDepth)
		if m.bound {
			depth = "CAST(" + jsonBracketsExpr + " AS INT)"
		}
		frames[g] = s.sess.Read(connect.ReadSpec{Format: "text", Paths: m.paths, Options: m.options}).
			SelectExpr(m.valueSQL()+" AS value", sparkPathKeyExpr+" AS k").
			Filter(jsonDeeperFilter(maxDepth)).
			SelectExpr(fmt.Sprintf("CAST(%d AS INT) AS g", g), "k", depth+" AS depth")
	}
	rows, err := connect.UnionAll(frames).Aggregate([]string{"g", "k"}, "max(depth) AS depth").
		Filter(fmt.Sprintf("depth > %d", maxDepth)).Collect(ctx)
	if err != nil {
		return nil, err
	}
	found := make([]measuredDepth, 0, len(rows.Values))
	for _, row := range rows.Values {
		if len(row) != 3 {
			return nil, fmt.Errorf("nesting of JSON files: %d columns, want 3", len(row))
		}
		g, okG := row[0].(int32)
		k, okK := row[1].(string)
		depth, okD := row[2].(int32)
		if !okG || !okK || !okD {
			return nil, fmt.Errorf("nesting of JSON files: a row %v", row)
		}
		found = append(found, measuredDepth{measure: int(g), path: k, depth: int(depth)})
	}
	return deepestByRead(measures, found)
}

func (s sessionServer) notUTF8Files(ctx context.Context, measures []nestingMeasure, valid string) ([]notUTF8File, error) {
	frames := make([]connect.Frame, len(measures))
	for g, m := range measures {
		frames[g] = s.sess.Read(connect.ReadSpec{Format: "text", Paths: m.paths, Options: m.options}).
			Filter("NOT "+valid).
			SelectExpr(fmt.Sprintf("CAST(%d AS INT) AS g", g), sparkPathKeyExpr+" AS k")
	}
	rows, err := connect.UnionAll(frames).Aggregate([]string{"g", "k"}, "count(1) AS lines").Collect(ctx)
	if err != nil {
		return nil, err
	}
	found := make([]notUTF8File, 0, len(rows.Values))
	for _, row := range rows.Values {
		if len(row) != 3 {
			return nil, fmt.Errorf("files that are not UTF-8: %d columns, want 3", len(row))
		}
		g, okG := row[0].(int32)
		k, okK := row[1].(string)
		lines, okL := row[2].(int64)
		if !okG || !okK || !okL {
			return nil, fmt.Errorf("files that are not UTF-8: a row %v", row)
		}
		found = append(found, notUTF8File{measure: int(g), path: k, lines: lines})
	}
	return found, nil
}

func (s sessionServer) csvFileLines(ctx context.Context, paths []string, valid string) ([]csvFileLines, error) {
	text := s.sess.Read(connect.ReadSpec{Format: "text", Paths: paths}).
		SelectExpr("value", "_metadata.file_path AS p", "monotonically_increasing_id() AS i")
	rows, err := text.Aggregate([]string{"p"},
		"min_by(value, IF("+csvLineHasContent+", i, NULL)) AS first",
		"count_if("+csvLineHasContent+") AS lines",
		"count_if(length(value) > 0 AND NOT "+csvLineHasContent+") AS blankish",
		"count_if(NOT "+valid+") AS notutf8").Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]csvFileLines, 0, len(rows.Values))
	for _, row := range rows.Values {
		if len(row) != 5 {
			return nil, fmt.Errorf("text read of CSV files: %d columns, want 5", len(row))
		}
		var f csvFileLines
		f.path, _ = row[0].(string)
		f.first, _ = row[1].(string)
		f.lines, _ = row[2].(int64)
		f.blankish, _ = row[3].(int64)
		f.notUTF8, _ = row[4].(int64)
		out = append(out, f)
	}
	return out, nil
}

// csvHeaderNames parses the header line with Spark's CSV reader. The line
// is sent as a local relation, not as a query's literal: the reader takes
// the header from the first line of its input, which it reads from a
// local relation on the driver, where a query over a literal was a Spark
// job of its own for each header line.
func (s sessionServer) csvHeaderNames(ctx context.Context, line string, options map[string]string) (sparkmerge.Schema, error) {
	tokenizer, _ := csvTogetherOptionsOf(options)
	opts := withOption(withOption(tokenizer, "header", "true"), "inferSchema", "false")
	return s.sess.LocalTable(connect.LocalColumn{Name: "value", Strings: []string{line}}).ParseCSV(opts).Schema(ctx)
}

// csvLaneTypes is one inference over the lines of the lanes, the line
// of every lane first (see csvLanes.laneWidthLine: a union's first input
// is read first, so Spark's inference takes its width; were it not, the
// schema would be narrower and typeCSVTogether would ask the files alone).
//
// Lanes of records (multiLine) are the files' records read by Spark's CSV
// reader, a read per header (csvLanes.recordReads), in place of the lines.
func (s sessionServer) csvLaneTypes(ctx context.Context, lanes csvLanes) (sparkmerge.Schema, error) {
	frames := []connect.Frame{s.sess.SQL(lanes.laneWidthLine())}
	if lanes.records {
		for _, r := range lanes.recordReads() {
			frames = append(frames, s.sess.Read(connect.ReadSpec{Format: "csv", Paths: r.paths, Options: lanes.recordOptions(), Schema: r.schema}).
				SelectExpr("struct(*) AS record", lanes.laneFileExpr()).
				SelectExpr(lanes.recordLineExpr()).
				Filter("value IS NOT NULL"))
		}
	} else {
		frames = append(frames, s.sess.Read(connect.ReadSpec{Format: "text", Paths: lanes.paths}).
			SelectExpr("value", lanes.laneFileExpr()).
			Filter(csvLineHasContent+" AND f IS NOT NULL AND value <> f.header").
			SelectExpr(lanes.laneLineExpr()).
			Filter("value IS NOT NULL"))
	}
	return connect.UnionAll(frames).ParseCSV(lanes.laneInferenceOptions()).Schema(ctx)
}

// jsonLaneTypes is one inference over the files' lines, each nested in
// its file's field: the files read as text together (jsonLanes.laneLineExpr)
// or each alone (perFile: jsonLanes.lineExpr).
func (s sessionServer) jsonLaneTypes(ctx context.Context, lanes jsonLanes) (sparkmerge.Schema, error) {
	if !lanes.perFile {
		return s.sess.Read(connect.ReadSpec{Format: "text", Paths: lanes.paths}).
			SelectExpr(lanes.laneExpr()+" AS lane", "value").
			SelectExpr(lanes.laneLineExpr()).
			ParseJSON(lanes.options).Schema(ctx)
	}
	frames := make([]connect.Frame, len(lanes.paths))
	for i, p := range lanes.paths {
		frames[i] = s.sess.Read(connect.ReadSpec{Format: "text", Paths: []string{p}}).SelectExpr(lanes.lineExpr(i))
	}
	return connect.UnionAll(frames).ParseJSON(lanes.options).Schema(ctx)
}

// fileSplitSettings asks the settings by the Config RPC (an optional one
// unset is absent), and the session's leafNodeDefaultParallelism by the
// plan of a range without a number of partitions, which Spark gives that
// many (an analysis): no Spark job. A session with
// spark.sql.files.maxPartitionNum set, which merges partitions past it,
// is not one whose splits fileSplits knows.
func (s sessionServer) fileSplitSettings(ctx context.Context) (fileSplits, error) {
	const maxBytes, openCost, minNum, maxNum = "spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes",
		"spark.sql.files.minPartitionNum", "spark.sql.files.maxPartitionNum"
	// With the settings that say the heap of a task, which bounds the
	// files whose slices are read (fileSplits.sliceLimit): get_option, as
	// a Spark setting not set (spark.executor.cores) fails a get.
	values, err := s.sess.ConfOption(ctx, maxBytes, openCost, minNum, maxNum,
		"spark.master", "spark.driver.memory", "spark.executor.memory", "spark.executor.cores")
	if err != nil {
		return fileSplits{}, err
	}
	var splits fileSplits
	var okMax, okOpen bool
	splits.maxPartitionBytes, okMax = byteSize(values[maxBytes])
	splits.openCost, okOpen = byteSize(values[openCost])
	if !okMax || !okOpen || splits.maxPartitionBytes <= 0 {
		return fileSplits{}, fmt.Errorf("file split settings: %s=%q, %s=%q", maxBytes, values[maxBytes], openCost, values[openCost])
	}
	if _, set := values[maxNum]; set {
		return fileSplits{}, fmt.Errorf("file split settings: %s is set", maxNum)
	}
	if v, set := values[minNum]; set {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fileSplits{}, fmt.Errorf("file split settings: %s=%q", minNum, v)
		}
		splits.minPartitions = n
	} else {
		plan, err := s.sess.SQL("SELECT * FROM range(1)").Explain(ctx)
		if err != nil {
			return fileSplits{}, err
		}
		if splits.minPartitions = rangeSplits(plan); splits.minPartitions <= 0 {
			return fileSplits{}, fmt.Errorf("file split settings: no splits= in the plan of a range: %q", plan)
		}
	}
	splits.taskHeap = taskHeapOf(values, splits.minPartitions)
	return splits, nil
}

// rangeSplits is N of the "splits=N" a range's physical plan says, or 0.
func rangeSplits(plan string) int64 {
	_, after, ok := strings.Cut(plan, "splits=")
	if !ok {
		return 0
	}
	end := strings.IndexFunc(after, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(after)
	}
	n, err := strconv.ParseInt(after[:end], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// fileSlices reads the files by binaryFile, each slice cut on the server:
// only the slices come back.
func (s sessionServer) fileSlices(ctx context.Context, files []sliceFetch, head, window int64, valid string) ([]fetchedSlices, error) {
	paths := make([]string, len(files))
	var cases strings.Builder
	for i, f := range files {
		paths[i] = f.path
		offsets := make([]string, len(f.offsets))
		for j, o := range f.offsets {
			offsets[j] = strconv.FormatInt(o+1, 10)
		}
		fmt.Fprintf(&cases, " WHEN %s THEN array(%s)", sparkmerge.QuoteString(f.sparkPath), strings.Join(offsets, ", "))
	}
	slices := fmt.Sprintf("transform(CASE path%s END, at -> substring(content, at, IF(at = 1, %d, %d)))", cases.String(), head, window)
	rows, err := s.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: paths}).
		SelectExpr("path", "length", slices, valid).
		Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]fetchedSlices, 0, len(rows.Values))
	for _, row := range rows.Values {
		path, _ := row[0].(string)
		size, _ := row[1].(int64)
		got := fetchedSlices{path: path, size: size}
		got.utf8, _ = row[3].(bool)
		list, _ := row[2].([]any)
		for _, v := range list {
			b, ok := v.([]byte)
			if !ok {
				got.slices = nil
				break
			}
			got.slices = append(got.slices, b)
		}
		out = append(out, got)
	}
	return out, nil
}
