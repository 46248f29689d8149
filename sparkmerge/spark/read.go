package spark

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Read is one relation Spark reads for a merge: a single source, or several
// file sources read together in one multi-path load.
type Read struct {
	// Name is the plan's name for this input.
	Name string `json:"name"`
	// Sources are the names of the sources it reads, in input order.
	Sources []string `json:"sources"`
	Format  string   `json:"format,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	Table   string   `json:"table,omitempty"`
	// Query is a query source's SQL.
	Query string `json:"query,omitempty"`
	// Options are the reader options sent to Spark.
	Options map[string]string `json:"options,omitempty"`
	// UserSchema is the schema the user gave (DDL), if any.
	UserSchema string `json:"user_schema,omitempty"`
	// Where is the source's row filter (SourceSpec.Where), if any.
	Where string `json:"where,omitempty"`
	// Schema is the read's schema: the one Spark reports, or, when
	// InferredLocally, the one the client inferred by Spark's rules.
	Schema sparkmerge.Schema `json:"-"`
	// InferredLocally is true when the client inferred Schema from the
	// file's contents (a local file, or its copy of a file only the server
	// sees), as Spark would, instead of asking Spark.
	InferredLocally bool `json:"inferred_locally"`

	// relation is a DataFrame source's plan.
	relation proto.Message
	// copy is a client-side copy of a file only the server sees, made to
	// type it (remoteinfer.go); nil for local files.
	copy *remoteCopy

	// raw is a locally inferred JSON read's type before Spark's final
	// canonicalisation, which merging with other files must precede.
	raw sparkmerge.DataType
	// reprinted are a locally inferred JSON file's keys whose numbers
	// from_json prints otherwise than Spark's reader (see
	// infer.JSONFile.Reprinted).
	reprinted map[string]bool
	// pinned is the schema DDL sent with the read when it runs, so that
	// Spark does not infer the schema a second time.
	pinned string
	// stamp is a locally inferred file's size and modification time when
	// the client read it.
	stamp fileStamp
	// listedSize is the size Spark listed for a file only the server
	// sees (listed true): the client sizes the output by it, as by a
	// local file's.
	listedSize int64
	listed     bool
	// fetchedHead is the head (its first remoteHeadBytes) of a CSV file
	// only the server sees whose rest the client wanted but did not
	// fetch (the plan's budget spent): typeCSVByHeader reads it instead
	// of fetching it again.
	fetchedHead []byte
	// heldForHeader: the file's rest was not fetched, its header line's
	// group being worth Spark's inference (heldForHeader): where that
	// does not prove its types, the rest is fetched after it.
	heldForHeader bool
	// members are the single-source reads a grouped read was made of.
	members []*Read
	// order is the position of the read's first source in the input.
	order int
	// encodingProblem says why the client found the file is not UTF-8
	// (client inference read it and no encoding was given), or "".
	encodingProblem string
	// validUTF8: the client read the file whole and found it UTF-8 (it
	// typed it, or read it through: checkUTF8Locally), or a read of the
	// server's that read every line did (fileSlices, the lines of CSV
	// files typed together, the inference of JSON files typed together),
	// so that checkUTF8 need not read it.
	validUTF8 bool
	// nestingProblem says how the client found a JSON file nests deeper
	// than Spark reads safely (infer.TooDeepError), or "".
	nestingProblem string
	// shortNumbers: the client read the file and no number in it has more
	// than 15 digits, so its casts to double are exact (see
	// infer.CSVFile.ShortNumbers).
	shortNumbers bool
	// noRows: a CSV file typed by inference with no row (its header
	// alone), so that its types say nothing (see sparkmerge.Source.NoRows):
	// known by the client that typed it, or asked of Spark (see
	// markHeaderOnly).
	noRows bool
	// noValues are the columns of a CSV file the client typed without a
	// value, every one empty (see sparkmerge.Source.NoValues). Of a JSON
	// file the client does not know it: its inference types an empty
	// string as it types a null, and Spark reads it as an empty string.
	noValues []string
	// nullTyped are the columns of a Parquet file the client typed whose
	// footer says Parquet's Null logical type (infer.ParquetSchema): no
	// value is in them, whatever type Spark reads them as (an int), as
	// pandas writes an all-None column and the object columns of an
	// empty frame (see sparkmerge.Source.NoValues).
	nullTyped []string
	// zeroPadded are, by column, the first integer written with leading
	// zeros of a CSV file the client typed whose column is a number
	// (infer.CSVFile.ZeroPadded): the zeros are lost (zeroWarnings).
	zeroPadded map[string]string
	// rounded are, by column, the first number with more significant
	// digits than a double keeps, of a CSV file the client typed whose
	// column is a double (infer.CSVFile.Rounded; roundedWarnings).
	rounded map[string]string
	// pastMicros are, by column, the first time with digits past the
	// microsecond, of a CSV file the client typed whose column is a
	// timestamp (infer.CSVFile.PastMicros; pastMicrosWarnings).
	pastMicros map[string]string
	// nullTokens are, by column, the texts that say "no value" ("NA")
	// that alone make a column of a CSV file the client typed a string
	// (infer.CSVFile.NullTokens; see tokenWarnings).
	nullTokens map[string]infer.NullTokens
	// valueless are r's string columns Spark found without a value
	// (markNoValues), valuesAsked those it was asked of.
	valueless, valuesAsked []string
	// headerLine is a locally inferred CSV file's header line as written,
	// when no other line of the file is equal to it (infer.CSVFile.Header):
	// a positional scan may then read the file as text, one row a line,
	// and drop the lines equal to it. "" otherwise.
	headerLine string
	// firstLine is the first line with content of a CSV file Spark typed
	// with others (csvFileLines.first, as Spark's text reader splits
	// it): its header line, by which checkCSVHeaderNames tells a name
	// written so from one Spark renamed, without asking Spark. "" for
	// other files.
	firstLine string
	// quotedValues: a value of the locally inferred CSV file is quoted
	// (infer.CSVFile.Quoted), so a positional scan parses its lines with
	// Spark's CSV parser rather than splitting them (see csvScan).
	quotedValues bool
	// real are the real paths of Paths (see [location]), "" where
	// unknown; none for patterns.
	real []string
	// hinted are the columns a hint gave a type the reader parses into
	// (see applyHints), other than a CSV string.
	hinted []string
	// exact are the hinted columns Spark's reader parses into a type that
	// holds their text as written, narrowed to the hint with a check
	// (see applyHints and exactHinted).
	exact []exactRead
	// parseChecked: the read rescues the values its reader cannot parse
	// (see checkParses).
	parseChecked bool
	// oneFold: a CSV read whose schema Spark infers in one partition, its
	// files' lines read as text and parsed (see groupRead).
	oneFold bool
	// patterns is true when Paths are the user's own list of paths, read
	// as Spark reads patterns; otherwise each path is one file or dataset
	// directory and is read literally (see literalPath).
	patterns bool
	// partition is a file of a partitioned tree's tree and values; its
	// Schema has the tree's partition columns (see addPartitionColumns).
	partition *partitionFile
	// dataSchema is such a file's own schema, as discovery found it.
	dataSchema sparkmerge.Schema
	// overlapExprs, for a file of a partitioned tree with a column of its
	// own named as a partition column, make its own columns (the read
	// without basePath) into Schema: the partition value in that column's
	// place (see overlapProjection). nil for every other read.
	overlapExprs []string
}

// MarshalJSON writes r with its schema as [sparkmerge.Column]s: types in
// Spark's SQL syntax, as the plan's target writes them.
func (r *Read) MarshalJSON() ([]byte, error) {
	type fields Read // without this method
	return json.Marshal(struct {
		*fields
		Schema []sparkmerge.Column `json:"schema"`
	}{(*fields)(r), r.Schema.Columns()})
}

// parts are the single-source reads a read was grouped from (itself when
// it was not grouped).
func (r *Read) parts() []*Read {
	if len(r.members) > 0 {
		return r.members
	}
	return []*Read{r}
}

// multiFile reports whether the read covers more than one source, so that
// provenance must come from each row's file.
func (r *Read) multiFile() bool { return len(r.Sources) > 1 }

// hidesFileMetadata reports whether schema has a top-level column named
// _metadata, in any case. In a load of many files such a column hides
// Spark's hidden _metadata column, whose file_path names each row's file
// (Spark renames its own column then, under a name the data may hold
// too), so a read with it is never one of many files: its rows' file is
// then its name, a literal (found in the field: pyarrow files holding a
// _metadata struct gave their rows the data's "files", or NULL).
func hidesFileMetadata(schema sparkmerge.Schema) bool {
	for _, f := range schema.Fields {
		if strings.EqualFold(f.Name, fileMetadataColumn) {
			return true
		}
	}
	return false
}

// fileMetadataColumn is Spark's hidden column of each row's file
// (file_path, file_size, file_modification_time, ...).
const fileMetadataColumn = "_metadata"

// readFrame is the relation Spark reads for r.
func readFrame(sess *connect.Session, r *Read) connect.Frame {
	switch {
	case r.Table != "":
		return sess.Table(r.Table, r.Options)
	case r.Query != "":
		sess.NamesTables() // the query's, as Table's
		return sess.SQL(r.Query)
	case r.relation != nil:
		return sess.FromRelation(r.relation)
	}
	if r.oneFold {
		return sess.Read(connect.ReadSpec{Format: "text", Paths: r.readPaths()}).SelectExpr("value").Coalesce(1).ParseCSV(r.Options)
	}
	var frame connect.Frame
	overlap := r.overlapExprs
	if r.parseChecked {
		frame = parseCheckedFrame(sess, r)
		if overlap != nil {
			overlap = append(overlap[:len(overlap):len(overlap)], corruptColumn, rawRecordColumn)
		}
	} else {
		schema := r.UserSchema
		if schema == "" {
			schema = r.pinned
		}
		frame = sess.Read(connect.ReadSpec{Format: r.Format, Paths: r.readPaths(), Schema: schema, Options: r.Options})
	}
	if overlap != nil {
		frame = frame.SelectExpr(overlap...)
	}
	return frame
}

// filtered is frame, r's relation, with r's row filter (Where) applied.
func (r *Read) filtered(frame connect.Frame) connect.Frame {
	if r.Where == "" {
		return frame
	}
	return frame.Filter(r.Where)
}

// readPaths are the paths sent to Spark: the user's patterns as given, and
// files and directories that expansion found escaped, so that a file named
// "x[12].csv" is that file and not a pattern matching x1.csv.
func (r *Read) readPaths() []string {
	if r.patterns {
		return r.Paths
	}
	out := make([]string, len(r.Paths))
	for i, p := range r.Paths {
		out[i] = literalPath(p)
	}
	return out
}

// relational reports whether r reads a relation of Spark's (a table,
// query or DataFrame) rather than files.
func (r *Read) relational() bool {
	return r.Table != "" || r.Query != "" || r.relation != nil
}

// newRead is the read of one source on its own.
func newRead(s resolvedSource) *Read {
	return &Read{
		Name:       s.name,
		Sources:    []string{s.name},
		Format:     s.format,
		Paths:      append([]string(nil), s.spec.Paths...),
		Table:      s.spec.Table,
		Query:      s.spec.Query,
		relation:   s.relation,
		Options:    s.options,
		UserSchema: s.spec.Schema,
		Where:      strings.TrimSpace(s.spec.Where),
		patterns:   len(s.spec.Paths) > 1,
	}
}

// groupKey identifies sources that may share one multi-path load: same
// format, reader options and user schema.
func groupKey(r *Read) string {
	if r.relational() || r.patterns {
		return "" // relations and the user's own path lists are never grouped
	}
	if r.overlapExprs != nil {
		return "" // its partition values are literals of its own
	}
	var b strings.Builder
	b.WriteString(r.Format)
	b.WriteByte(0)
	b.WriteString(r.UserSchema)
	b.WriteByte(0)
	b.WriteString(partitionKey(r))
	b.WriteByte(0)
	b.WriteString(r.Where)
	for _, k := range sortedKeys(r.Options) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(r.Options[k])
	}
	return b.String()
}

// groupReads merges reads with equal keys into multi-path reads, in order
// of first appearance. key returns "" for reads that stay alone.
func groupReads(reads []*Read, key func(*Read) string) []*Read {
	var out []*Read
	byKey := map[string]*Read{}
	for _, r := range reads {
		k := key(r)
		if k == "" {
			out = append(out, r)
			continue
		}
		if g, ok := byKey[k]; ok {
			g.Sources = append(g.Sources, r.Sources...)
			g.Paths = append(g.Paths, r.Paths...)
			g.members = append(g.members, r.parts()...)
			for _, h := range r.hinted {
				if !contains(g.hinted, h) {
					g.hinted = append(g.hinted, h)
				}
			}
			continue
		}
		g := *r
		g.Sources = append([]string(nil), r.Sources...)
		g.Paths = append([]string(nil), r.Paths...)
		g.members = r.parts()
		g.hinted = append([]string(nil), r.hinted...)
		byKey[k] = &g
		out = append(out, &g)
	}
	used := map[string]int{}
	for _, g := range out {
		if !g.multiFile() {
			used[g.Name]++
		}
	}
	for _, g := range out {
		if g.multiFile() {
			name := groupName(g)
			if used[name]++; used[name] > 1 {
				// Two groups in one directory (say, two CSV headers).
				name = fmt.Sprintf("%s #%d", name, used[name])
			}
			g.Name = name
		}
	}
	return out
}

// groupName names a multi-path read after its files' common directory.
func groupName(r *Read) string {
	return fmt.Sprintf("%s/ (%d %s files)", commonDir(r.Paths), len(r.Sources), r.Format)
}

// commonDir is the longest directory prefix of all paths, compared by
// slash-separated parts so that URIs (s3a://bucket/x) keep their scheme.
func commonDir(paths []string) string {
	parts := strings.Split(paths[0], "/")
	n := len(parts) - 1 // the directory of the first path
	for _, p := range paths[1:] {
		other := strings.Split(p, "/")
		k := 0
		for k < n && k < len(other)-1 && other[k] == parts[k] {
			k++
		}
		n = k
	}
	if n == 0 {
		return "." // relative paths with no directory in common
	}
	return strings.Join(parts[:n], "/")
}

// fetchSchemas asks Spark for the schema of every read, at most
// parallelism at a time, reporting each one done to progress (if not nil). The
// first failure cancels the others, and is the error returned, naming its
// source.
func (c *Client) fetchSchemas(ctx context.Context, reads []*Read, parallelism int, progress func(done int)) error {
	if parallelism <= 0 {
		parallelism = 8
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism)
	var (
		mu   sync.Mutex // guards done and progress
		done int
	)
	for _, r := range reads {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				// Cancelled, or another read failed (whose error
				// errgroup keeps).
				return sourceError(r, err)
			}
			// A schema without columns is the caller's to judge (see
			// withoutColumnlessFiles).
			schema, err := c.server.readSchema(ctx, r)
			if err == nil {
				err = c.checkCSVHeaderNames(ctx, r, schema)
			}
			if err != nil {
				return sourceError(r, err)
			}
			r.Schema = schema
			mu.Lock()
			defer mu.Unlock()
			done++
			if progress != nil {
				progress(done)
			}
			return nil
		})
	}
	return g.Wait()
}

// sourceError names the source and says what to do for errors users meet.
func sourceError(r *Read, err error) error {
	what := "read source " + quoteName(r.Name)
	hint := ""
	switch errorClass(err) {
	case "PATH_NOT_FOUND":
		hint = notSharedHint(err)
		if hint == "" {
			hint = "check the path; it is resolved on the Spark server's filesystem (on a local Spark in a container, only paths under the mounted directories exist)"
		}
	case "UNABLE_TO_INFER_SCHEMA":
		hint = "the source is empty or has no readable files: remove it, or give its schema (SourceSpec.Schema)"
	case "TABLE_OR_VIEW_NOT_FOUND":
		hint = "check the table name and the current catalog/database"
	case "DATA_SOURCE_NOT_FOUND":
		hint = "set the right format (Job.Format or SourceSpec.Format), or add the data source's package to the Spark server"
	case "COLUMN_ALREADY_EXISTS":
		// A JSON record or a Parquet file of keys alike but for case
		// ("Name", "name"): Spark's default resolution takes them for one.
		hint = "the source names a column twice (a JSON key, a file's column), maybe in two cases (Name, name), which Spark takes for one name unless names are case-sensitive: where the names differ by case, merge with case-sensitive names (Options.CaseSensitive), which keeps them apart; else rename one in the source"
	}
	if hint == "" && malformedRecords(err) && r.Format == "json" && !strings.EqualFold(optionValue(r.Options, "multiLine"), "true") {
		hint = jsonDocumentHint(r)
	}
	if hint == "" && strings.Contains(err.Error(), "TIMESTAMP(NANOS") {
		hint = nanosHint
	}
	if named := namedFormat(r); hint == "" && named != "" {
		// A file read as another format than its name says fails deep
		// in Spark (a task's "not a Parquet file", its cause often cut
		// from the message).
		hint = fmt.Sprintf("its name says %s and it is read as %s: set the right format (Job.Format or SourceSpec.Format)", named, r.Format)
	}
	if hint != "" {
		return fmt.Errorf("%s: %w\n  hint: %s", what, err, hint)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func quoteName(s string) string { return fmt.Sprintf("%q", s) }

// nanosHint is the hint for a Parquet file with a timestamp in
// nanoseconds, which Spark refuses to read as a timestamp ("Illegal
// Parquet type: INT64 (TIMESTAMP(NANOS,false))"): pandas writes its
// datetime64[ns] columns so, and pyarrow keeps them in nanoseconds in
// Parquet 2.6, its default format version since pyarrow 13.
const nanosHint = `a column of the file is a timestamp in nanoseconds (INT64 TIMESTAMP(NANOS), as pandas and pyarrow write them by default), which Spark does not read as a timestamp: write the file's timestamps in microseconds (pandas: df.to_parquet(path, coerce_timestamps="us"); pyarrow: pq.write_table(table, path, coerce_timestamps="us")), or read such columns as bigint nanoseconds since the epoch with the session setting spark.sql.legacy.parquet.nanosAsLong=true (ConnectOptions.Conf)`

// malformedRecords reports whether err is Spark's failure of a reader
// (or its inference) under FAILFAST on a malformed record: error class
// MALFORMED_RECORD_IN_PARSING on Spark 4, a SparkException without a
// class on 3.5.
func malformedRecords(err error) bool {
	return strings.HasPrefix(errorClass(err), "MALFORMED_RECORD_IN_PARSING") ||
		strings.Contains(err.Error(), "Malformed records are detected in schema inference") ||
		strings.Contains(err.Error(), "Malformed records are detected in record parsing")
}

// jsonDocumentHint is the hint for a JSON read Spark's inference found
// malformed: Spark reads JSON as one record a line, and the commonest such
// file is one JSON document (an array of records, or a record printed over
// several lines), which multiLine reads. Spark's own message suggests
// mode=PERMISSIVE, which reads every line of such a file as a corrupt
// record. When the client sees the file, its head says which.
func jsonDocumentHint(r *Read) string {
	const fix = "read it with the reader option multiLine=true (Job.ReaderOptions or SourceSpec.Options); mode=PERMISSIVE would read its lines as corrupt records, not its records"
	if len(r.Paths) == 1 {
		switch head := localJSONHead(r.Paths[0]); {
		case strings.HasPrefix(head, "["):
			return "its text starts with '[': it is one JSON array, where Spark reads one JSON record a line: " + fix
		case strings.HasPrefix(head, "{"):
			if first, _, whole := strings.Cut(head, "\n"); whole && !json.Valid([]byte(first)) {
				return "its first line is not a whole JSON record: Spark reads one record a line, and a record printed over several lines is one JSON document: " + fix
			}
		}
	}
	return "Spark reads one JSON record a line: if the file is one JSON document (an array of records, or a record printed over several lines), " + fix
}

// localJSONHead is the first 64 KiB of a local file, from its first
// character that is not white space (a byte-order mark skipped); "" when
// the client cannot read it.
func localJSONHead(p string) string {
	if !isLocalFile(p) {
		return ""
	}
	f, err := os.Open(localPath(p))
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	return strings.TrimLeft(strings.TrimPrefix(string(head[:n]), "\ufeff"), " \t\r\n")
}

// namedFormat is the format r's file names say when it differs from the
// format r is read as ("" otherwise, or when its files say none or
// several).
func namedFormat(r *Read) string {
	named := ""
	for _, p := range r.Paths {
		f := InferFormat(p)
		if f == "" || named != "" && f != named {
			return ""
		}
		named = f
	}
	if named == r.Format || r.Format == "" {
		return ""
	}
	return named
}

// checkCSVHeaders refuses a multi-path CSV read whose files have different
// headers: Spark would map later files by position under the first file's
// names and silently shift values. Headers of local files are read from
// their first line; for other files Spark is asked for each header.
func (c *Client) checkCSVHeaders(ctx context.Context, r *Read, parallelism int) error {
	if r.Format != "csv" || !r.multiFile() || r.Options["header"] != "true" {
		return nil
	}
	headers := make([]string, len(r.Paths))
	var remote []*Read
	var remoteIdx []int
	for i, p := range r.Paths {
		if h, ok := localFirstLine(p); ok {
			headers[i] = h
			continue
		}
		one := &Read{Name: p, Sources: []string{p}, Format: "csv", Paths: []string{p}, Options: withOption(r.Options, "inferSchema", "false")}
		remote = append(remote, one)
		remoteIdx = append(remoteIdx, i)
	}
	if len(remote) > 0 {
		if err := c.fetchSchemas(ctx, remote, parallelism, nil); err != nil {
			return err
		}
		for j, one := range remote {
			headers[remoteIdx[j]] = strings.Join(one.Schema.Names(), ",")
		}
	}
	var differ []string
	for i := 1; i < len(headers); i++ {
		if headers[i] != headers[0] {
			differ = append(differ, fmt.Sprintf("  %s: %s", r.Paths[i], headers[i]))
		}
	}
	if len(differ) == 0 {
		return nil
	}
	sort.Strings(differ)
	if len(differ) > 10 {
		differ = append(differ[:10], fmt.Sprintf("  ... and %d more", len(differ)-10))
	}
	return &HeaderDriftError{Files: len(r.Paths), First: r.Paths[0], Header: headers[0], Differ: differ}
}

// HeaderDriftError refuses a multi-path CSV read over files whose headers
// differ.
type HeaderDriftError struct {
	Files  int
	First  string
	Header string
	Differ []string
}

func (e *HeaderDriftError) Error() string {
	return fmt.Sprintf("refusing a multi-path CSV read of %d files: their headers differ, and Spark would map later files by position under the first file's header (%s: %s), shifting values into the wrong columns; use the auto or union strategy (Job.Strategy = StrategyAuto or StrategyUnion) to read each header on its own\n%s",
		e.Files, e.First, e.Header, strings.Join(e.Differ, "\n"))
}

// Unwrap makes the error match sparkmerge.ErrSchemaConflict.
func (e *HeaderDriftError) Unwrap() error { return sparkmerge.ErrSchemaConflict }

// localFirstLine reads the first line of a local, uncompressed file.
func localFirstLine(p string) (string, bool) {
	if !isLocalFile(p) || !isPlainCSV(p) {
		return "", false
	}
	f, err := os.Open(localPath(p))
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false
	}
	return strings.TrimRight(strings.TrimPrefix(line, "\ufeff"), "\r\n"), true
}

// namedByPosition reports whether a CSV schema has a column Spark named by
// its position (_c<i> at index i: an empty name in the header). Spark's
// header check (enforceSchema=false) compares the header as written, and
// fails on such a file that Spark alone reads; its reads map the file by
// its own header instead.
func namedByPosition(s sparkmerge.Schema) bool {
	for i, f := range s.Fields {
		if f.Name == fmt.Sprintf("_c%d", i) {
			return true
		}
	}
	return false
}

func withOption(options map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(options)+1)
	for key, val := range options {
		out[key] = val
	}
	out[k] = v
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkCSVHeaderNames refuses a CSV file whose header repeats a name
// (also in another case): Spark would rename both (id0, id1), and the
// values would no longer meet the other sources' id column. The client
// reads the header line of a plain local file itself; of any other file
// (one only the server sees, or one it cannot split by itself) it asks
// Spark for the header, but only when schema, Spark's for r, has two
// columns named as Spark renames a repeated name (the name, then its
// position: a0 and a2 for a,id,a). Without this a file only the cluster
// sees planned under Spark's renamed columns and failed at the write
// (CSV header does not conform to the schema), where the same file read
// by the client was refused here.
func (c *Client) checkCSVHeaderNames(ctx context.Context, r *Read, schema sparkmerge.Schema) error {
	if r.Format != "csv" || r.Options["header"] != "true" || r.UserSchema != "" {
		return nil
	}
	sep := r.Options["sep"]
	if sep == "" {
		sep = r.Options["delimiter"]
	}
	if sep == "" {
		sep = ","
	}
	asked := false
	for _, p := range r.Paths {
		line, ok := localFirstLine(p)
		if !ok {
			asked = true
			continue
		}
		names := strings.Split(line, sep)
		for i, name := range names {
			names[i] = strings.Trim(name, `"`)
		}
		if err := duplicateHeader(p, names, r.Options["nullValue"]); err != nil {
			return err
		}
	}
	if !asked || !renamedAsRepeated(schema) {
		return nil
	}
	if tokens, ok := splitHeader(r.firstLine, r.Options); ok && len(r.Paths) == 1 && slices.Equal(tokens, schema.Names()) {
		// Its header line, known, names the columns as written: Spark
		// renamed none, so none repeats.
		return nil
	}
	file, names, err := c.server.csvHeader(ctx, r)
	if err != nil {
		return fmt.Errorf("read the header Spark names the columns by: %w", err)
	}
	if len(r.Paths) == 1 || file == "" {
		file = r.Paths[0]
	}
	return duplicateHeader(file, names, r.Options["nullValue"])
}

// duplicateHeader is a *DuplicateHeaderError when a CSV header's names
// repeat one, by Spark's rule (CSVDataSource's safe header): names as
// written (not trimmed), compared ignoring case (Spark's default); an empty
// one, or the nullValue, is named _c<i> instead and repeats nothing.
func duplicateHeader(file string, names []string, nullValue string) error {
	seen := map[string]string{}
	for _, name := range names {
		if name == "" || name == nullValue {
			continue
		}
		key := strings.ToLower(name)
		if first, dup := seen[key]; dup {
			return &DuplicateHeaderError{File: file, Columns: [2]string{first, name}}
		}
		seen[key] = name
	}
	return nil
}

// renamedAsRepeated says whether two columns of a CSV schema are named as
// Spark renames a name its header repeats: the name, then the column's
// position (a0 and a2 for a header a,id,a), the names alike but for case.
// A header may name its columns so itself; the header then tells.
func renamedAsRepeated(schema sparkmerge.Schema) bool {
	seen := map[string]bool{}
	for i, f := range schema.Fields {
		base, ok := strings.CutSuffix(f.Name, strconv.Itoa(i))
		if !ok || base == "" {
			continue
		}
		if seen[strings.ToLower(base)] {
			return true
		}
		seen[strings.ToLower(base)] = true
	}
	return false
}

// DuplicateHeaderError refuses a CSV file whose header names one column
// twice (also in another case).
type DuplicateHeaderError struct {
	File    string
	Columns [2]string
}

func (e *DuplicateHeaderError) Error() string {
	twice := "twice"
	if e.Columns[1] != e.Columns[0] {
		twice = fmt.Sprintf("twice (also as `%s`)", e.Columns[1])
	}
	return fmt.Sprintf("file %s: its header has the column `%s` %s; Spark would rename both and their values would not meet other sources' `%s`: rename one in the file, or name all columns (SourceSpec.Schema)",
		e.File, e.Columns[0], twice, e.Columns[0])
}

// withoutRows reports whether r reads only files typed by inference from
// no row (see noRows).
func (r *Read) withoutRows() bool {
	for _, part := range r.parts() {
		if !part.noRows {
			return false
		}
	}
	return true
}

// noValueColumns are the indexes of r's columns whose types were inferred
// from no value (sparkmerge.Source.NoValues): columns of CSV files the
// client typed without a value in any of them, columns Spark found
// without one (markNoValues), and Parquet columns of the Null logical
// type. None for a file of a tree whose own column
// gives way to a partition column's values.
func (r *Read) noValueColumns() []int {
	if r.overlapExprs != nil {
		return nil
	}
	var out []int
	for j, f := range r.Schema.Fields {
		known := r.Format == "csv"
		for _, part := range r.parts() {
			known = known && part.InferredLocally && (part.noRows || slices.Contains(part.noValues, f.Name))
		}
		if known || slices.Contains(r.valueless, f.Name) || r.nullTypedColumn(f.Name) {
			out = append(out, j)
		}
	}
	return out
}

// nullTypedColumn reports whether every file of r that has the column
// name has it of Parquet's Null logical type (see Read.nullTyped): files
// read together may lack a column the others have.
func (r *Read) nullTypedColumn(name string) bool {
	found := false
	for _, part := range r.parts() {
		has := slices.ContainsFunc(part.Schema.Fields, func(f sparkmerge.Field) bool { return f.Name == name })
		switch {
		case !part.InferredLocally:
			return false
		case has && !slices.Contains(part.nullTyped, name):
			return false
		}
		found = found || has
	}
	return found
}

// exactDoubles reports whether every file of r is known to hold only
// numbers a double holds exactly, so that its casts that may round
// (sparkmerge.RoundsValues) need no check value by value.
func (r *Read) exactDoubles() bool {
	for _, part := range r.parts() {
		if !part.shortNumbers {
			return false
		}
	}
	return true
}
