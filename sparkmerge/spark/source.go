package spark

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/apache/spark-connect-go/spark/sql"
	"google.golang.org/protobuf/proto"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// SourceSpec describes one input: files (one or more paths, directories or
// globs), a table, a SQL query or a spark-connect-go DataFrame. Exactly one
// of Paths, Table, Query and DataFrame is set.
//
// Its yaml keys are an entry of the sources section of the CLI's job file.
type SourceSpec struct {
	// Name identifies the source in plans, errors and the provenance column.
	// Empty means the path or table name.
	Name string `yaml:"name"`
	// Paths are read together as one relation (Spark's multi-path load).
	Paths []string `yaml:"paths"`
	// Table is a catalog table or view, e.g. "db.events".
	Table string `yaml:"table"`
	// Query is a SQL query whose result is the source, e.g. a filtered
	// table or a join ("SELECT * FROM events WHERE day = '2024-01-01'").
	Query string `yaml:"query"`
	// DataFrame is a spark-connect-go DataFrame whose result is the
	// source, with its exact schema. Its plan is sent as it is: temporary
	// views it reads must live in the client's session (share one with
	// [ConnectOptions.Session]). Give it a Name (the
	// default is "dataframe N", N its position among the sources).
	DataFrame sql.DataFrame `yaml:"-"`
	// Format is the data source name (csv, json, parquet, orc, text, avro,
	// delta, ...). Empty means inferred from the file extension.
	Format string `yaml:"format"`
	// Options are reader options for this source; they override the job's
	// global reader options key by key.
	Options map[string]string `yaml:"options"`
	// Schema is an optional user schema in DDL, e.g. "id bigint, name string".
	Schema string `yaml:"schema"`
	// Where is a SQL predicate over the source's own columns (as its
	// files name them, before renames) that keeps the rows for which it
	// is true, e.g. "amount > 0 AND region <> 'test'". Spark parses it
	// as one expression, on its own, and resolves it against every file
	// of the source while planning ([Client.Plan]): a predicate that is
	// not one expression, or names a column a file lacks, fails the plan
	// naming the file. It is never pasted into other SQL text unchecked.
	Where string `yaml:"where"`
}

// DisplayName is the name a user sees for the source.
func (s SourceSpec) DisplayName() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Table != "":
		return s.Table
	case s.Query != "":
		return "query: " + shorten(strings.Join(strings.Fields(s.Query), " "), 60)
	case s.DataFrame != nil:
		return "dataframe"
	default:
		return strings.Join(s.Paths, ",")
	}
}

// relational reports whether the source is a relation of Spark's (a table,
// query or DataFrame) rather than files.
func (s SourceSpec) relational() bool {
	return s.Table != "" || s.Query != "" || s.DataFrame != nil
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// formatByExtension maps file extensions (after stripping compression
// suffixes) to Spark data source names.
var formatByExtension = map[string]string{
	".csv":     "csv",
	".tsv":     "csv", // with a tab separator, see resolveSources
	".json":    "json",
	".jsonl":   "json",
	".ndjson":  "json",
	".parquet": "parquet",
	".parq":    "parquet", // Impala's *_data.0.parq
	".pq":      "parquet",
	".orc":     "orc",
	".avro":    "avro",
	".txt":     "text",
}

var compressionSuffixes = []string{".gz", ".bz2", ".snappy", ".zst", ".lz4", ".deflate", ".xz"}

// InferFormat guesses the data source name from a path's extension, looking
// through compression suffixes ("a.csv.gz" is csv). It returns "" when the
// extension says nothing.
func InferFormat(p string) string {
	base := strings.ToLower(path.Base(strings.TrimRight(p, "/")))
	for _, suffix := range compressionSuffixes {
		base = strings.TrimSuffix(base, suffix)
	}
	return formatByExtension[path.Ext(base)]
}

func hasTSVExtension(p string) bool {
	base := strings.ToLower(path.Base(strings.TrimRight(p, "/")))
	for _, suffix := range compressionSuffixes {
		base = strings.TrimSuffix(base, suffix)
	}
	return path.Ext(base) == ".tsv"
}

// splitByFormat keeps the files whose names say format (or have no
// extension) and returns the others apart. When no file's name says
// format (the user reads .txt files as CSV), it keeps them all. Without a
// format (a directory of files of several formats, each read as its name
// says), the files whose names say no data format (README.txt, notes.md,
// a spreadsheet) are returned apart when another file's name says one.
func splitByFormat(files []string, format string) (kept, others []string) {
	if format == "" {
		return splitNotData(files)
	}
	says := false
	for _, f := range files {
		says = says || InferFormat(f) == format
	}
	if !says {
		return files, nil
	}
	for _, f := range files {
		// A file without an extension (part-00000) may be data; one with
		// another extension (README.txt, notes.md) is not, unless its
		// own bytes say it is of format (a Parquet file named x.dat).
		if InferFormat(f) != format && path.Ext(path.Base(f)) != "" && !startsAsFormat(f, format) {
			others = append(others, f)
			continue
		}
		kept = append(kept, f)
	}
	return kept, others
}

// startsAsFormat reports whether the local file f begins with the magic
// bytes of format, which Parquet ("PAR1") and ORC ("ORC") files begin
// with whatever their names: such a file is of format, not another
// (found in the field: a directory's Impala files, named *_data.0.parq,
// were skipped as of another format, their rows lost). False for a file
// the client cannot read (one only the server sees) and other formats.
func startsAsFormat(f, format string) bool {
	var magic string
	switch format {
	case "parquet":
		magic = "PAR1"
	case "orc":
		magic = "ORC"
	default:
		return false
	}
	file, err := os.Open(f)
	if err != nil {
		return false
	}
	defer file.Close()
	head := make([]byte, len(magic))
	_, err = io.ReadFull(file, head)
	return err == nil && string(head) == magic
}

// splitNotData returns apart, of files whose names say several formats,
// those whose names say no data format (notData), if any name says one.
func splitNotData(files []string) (kept, others []string) {
	if !slices.ContainsFunc(files, func(f string) bool { return !notData(f) && InferFormat(f) != "" }) {
		return files, nil
	}
	for _, f := range files {
		if notData(f) {
			others = append(others, f)
			continue
		}
		kept = append(kept, f)
	}
	return kept, others
}

// notData reports whether a file's name says it is no data among data
// files: an extension of no format (notes.md, a spreadsheet, a log), or
// of text (README.txt, which Spark's text source would read as rows of
// one column). A file without an extension (part-00000) may be data.
func notData(f string) bool {
	if path.Ext(path.Base(f)) == "" {
		return false
	}
	format := InferFormat(f)
	return format == "" || format == "text"
}

// defaultReaderOptions are the options a data engineer expects per format
// when none are given: CSV files have a header, and no reader nulls values
// it cannot parse without saying so (FAILFAST instead of PERMISSIVE).
func defaultReaderOptions(format string) map[string]string {
	switch format {
	case "csv":
		return map[string]string{"header": "true", "inferSchema": "true", "mode": "FAILFAST"}
	case "json":
		return map[string]string{"mode": "FAILFAST"}
	case "parquet", "orc":
		// A dataset directory whose files drift: without it Spark takes
		// the schema of one file and other files' columns vanish.
		return map[string]string{"mergeSchema": "true"}
	}
	return nil
}

// resolvedSource is a source with its format and effective reader options
// decided: what the executor reads.
type resolvedSource struct {
	spec     SourceSpec
	name     string
	format   string
	options  map[string]string
	relation proto.Message // a DataFrame source's plan
}

// resolveSources decides each source's format and options: per-source
// options win over global ones, which win over the format's defaults.
func resolveSources(specs []SourceSpec, defaultFormat string, global map[string]string) ([]resolvedSource, error) {
	if len(specs) == 0 {
		return nil, errors.New("no sources: give at least one path or table")
	}
	out := make([]resolvedSource, 0, len(specs))
	for i, spec := range specs {
		src, err := resolveSource(i, spec, defaultFormat, global)
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, nil
}

// resolveSource resolves the i-th source (see resolveSources).
func resolveSource(i int, spec SourceSpec, defaultFormat string, global map[string]string) (resolvedSource, error) {
	kinds := 0
	for _, set := range []bool{len(spec.Paths) > 0, spec.Table != "", spec.Query != "", spec.DataFrame != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return resolvedSource{}, fmt.Errorf("source %d (%q): give exactly one of paths, a table, a query and a DataFrame", i+1, spec.DisplayName())
	}
	if spec.DataFrame != nil && spec.Name == "" {
		spec.Name = fmt.Sprintf("dataframe %d", i+1)
	}
	if spec.relational() && (spec.Format != "" || spec.Schema != "") && spec.Table == "" {
		return resolvedSource{}, fmt.Errorf("source %q: a query or DataFrame has its own schema and no format: drop the source's format and schema", spec.DisplayName())
	}
	format, err := sourceFormat(spec, defaultFormat)
	if err != nil {
		return resolvedSource{}, err
	}
	src := resolvedSource{spec: spec, name: spec.DisplayName(), format: format, options: readerOptions(spec, format, global)}
	if spec.DataFrame != nil {
		if src.relation, err = connect.RelationOf(spec.DataFrame); err != nil {
			return resolvedSource{}, fmt.Errorf("source %q: %w", src.name, err)
		}
	}
	return src, nil
}

// sourceFormat is a path source's format: its own, else the job's, else
// what its paths' names say (all of them the same). A table, query or
// DataFrame has none.
func sourceFormat(spec SourceSpec, defaultFormat string) (string, error) {
	format := spec.Format
	if format != "" || spec.relational() {
		return format, nil
	}
	if defaultFormat != "" {
		return defaultFormat, nil
	}
	format = InferFormat(spec.Paths[0])
	for _, p := range spec.Paths[1:] {
		if f := InferFormat(p); f != format {
			return "", fmt.Errorf("source %q: paths have different formats (%q and %q): split them into separate sources or set the format", spec.DisplayName(), format, f)
		}
	}
	if format == "" {
		return "", fmt.Errorf("source %q: cannot tell the format from the file name: set the format (Job.Format or SourceSpec.Format)", spec.DisplayName())
	}
	return format, nil
}

// readerOptions are a source's reader options: the format's defaults (a
// tab for .tsv files), then the job's, then the source's own. A query or
// DataFrame has no reader.
func readerOptions(spec SourceSpec, format string, global map[string]string) map[string]string {
	options := map[string]string{}
	if !spec.relational() {
		maps.Copy(options, defaultReaderOptions(format))
		if format == "csv" && hasTSVExtension(spec.Paths[0]) {
			options["sep"] = "\t"
		}
	}
	if spec.Query == "" && spec.DataFrame == nil {
		maps.Copy(options, global)
		maps.Copy(options, spec.Options)
	}
	return options
}

// globChars make a path a pattern in Hadoop's glob syntax, which Spark
// reads paths with: the wildcards, a character class, an alternation and
// the escape. (Spark's SparkHadoopUtil.isGlobPath counts the closing ]
// and } too, which Hadoop reads literally when nothing opens them.)
const globChars = `*?[{\`

// IsGlob reports whether Spark reads the path p as a pattern (Hadoop's
// glob syntax: it holds one of *?[{\) rather than as the path written.
func IsGlob(p string) bool { return strings.ContainsAny(p, globChars) }

// isLocalFile reports whether p is a local path (see isLocalPath) that
// is no pattern: one file or directory the client can open as written.
func isLocalFile(p string) bool { return isLocalPath(p) && !IsGlob(p) }

// isPlainCSV reports whether p names a CSV file by its extension, as a
// local file read on the client must: .csv or .tsv, not compressed.
func isPlainCSV(p string) bool {
	return InferFormat(p) == "csv" && strings.HasSuffix(strings.ToLower(p), "sv")
}
