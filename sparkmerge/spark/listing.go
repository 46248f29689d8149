package spark

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// listingOptions are the reader options that decide which files a path
// means (Spark's file index applies them); they are passed to the listing.
var listingOptions = []string{"pathGlobFilter", "recursiveFileLookup", "modifiedBefore", "modifiedAfter", "ignoreMissingFiles"}

// expandSources turns every path source into the sources the merge reads:
// what the client can see by [ExpandLocal]'s rules, and what only Spark
// sees by listing its files on the server with Spark's own rules (see
// expandRemote), so that a CSV file is never read under another file's
// header, wherever it lives.
//
// It also returns the files of directory sources it skipped because their
// names say another format than the source's (a README.txt among CSV
// files), for the plan to name, the files Spark listed, where every path
// it returns lives (see [location]), decided here once, and the partition
// values of files of partitioned trees, by path.
//
// With heads (not nil), a listing also brings the heads of the files the
// client may type from a fetched copy, within heads' budget (see
// listingHeads).
//
// With unlisted (not nil), a source that lists no file (noFilesError: an
// empty directory, a pattern that matches none) is left out, its name
// appended to *unlisted, instead of failing the merge.
func (c *Client) expandSources(ctx context.Context, specs []SourceSpec, defaultFormat string, global map[string]string, heads *headBudget, unlisted *[]string) (out []SourceSpec, skipped []string, listed map[string]remoteFile, where map[string]location, parts map[string]*partitionFile, err error) {
	parts = map[string]*partitionFile{}
	var noFiles *noFilesError
	var expanded []SourceSpec
	for _, spec := range specs {
		one, others, err := expandLocal([]SourceSpec{spec}, defaultFormat, global, parts)
		if unlisted != nil && errors.As(err, &noFiles) {
			*unlisted = append(*unlisted, spec.DisplayName())
			continue
		}
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		expanded, skipped = append(expanded, one...), append(skipped, others...)
	}
	listed, where = map[string]remoteFile{}, map[string]location{}
	for _, spec := range expanded {
		if spec.relational() || len(spec.Paths) != 1 {
			out = append(out, spec)
			continue
		}
		if loc := locate(spec.Paths[0]); loc.client {
			where[loc.path] = loc
			out = append(out, spec)
			continue
		}
		fromServer, others, files, err := c.expandRemote(ctx, spec, defaultFormat, global, parts, heads)
		if unlisted != nil && errors.As(err, &noFiles) {
			*unlisted = append(*unlisted, spec.DisplayName())
			continue
		}
		if err != nil {
			return nil, nil, nil, nil, nil, sourceError(&Read{Name: spec.DisplayName()}, err)
		}
		for _, f := range files {
			listed[f.path] = f
			where[f.path] = location{path: f.path, real: f.real}
		}
		out = append(out, fromServer...)
		skipped = append(skipped, others...)
	}
	return out, skipped, listed, where, parts, nil
}

// remoteFile is a file Spark listed.
type remoteFile struct {
	path string // as the merge names and reads it
	// sparkPath is its path as Spark's listing names it (binaryFile's
	// path column), which fetches of it name it by (fileFetch.only).
	sparkPath   string
	size        int64
	mtimeMillis int64
	// real is its real path on the server (see serverRealPath), "" when
	// the server has none to give (an object store, or a server that
	// refuses reflect).
	real string
	// listing is how it was listed: the path given to Spark and the
	// listing options (fetchRemoteCopies reads a whole listing at once).
	listing *listing
	// head is the file's head as the listing brought it (see
	// listingHeads), nil when it did not.
	head *listedHead
}

// listedHead is the part of a file a listing brought along (what a fetch
// of heads would return: fetchedFile's content and nowMillis).
type listedHead struct {
	content   []byte
	nowMillis int64
}

// listingHeads asks a listing for the heads of the files it lists (up to
// maxRemoteInferFile) whose names say one of formats, the part a fetch
// of heads would return (fetchPart.head: the first head bytes of a CSV
// or JSON file, a Parquet or ORC file's footer), so that the listing and
// that fetch are one Spark job. Its zero value asks for none.
type listingHeads struct {
	head    int64
	formats []string
}

// namesSQL is the SQL condition of a file (binaryFile's path) whose name
// says one of the formats by the plain extension the client types it
// under (isPlainCSV, localJSONFile, isFooterFile): only such files are
// ever typed from a fetched copy.
func (h listingHeads) namesSQL() string {
	var like []string
	for _, f := range h.formats {
		for _, ext := range plainExtensions[f] {
			like = append(like, "lower(path) LIKE '%"+ext+"'")
		}
	}
	if len(like) == 0 {
		return "false"
	}
	return "(" + strings.Join(like, " OR ") + ")"
}

// plainExtensions are the endings of the names of files the client types
// from a fetched copy, by format.
var plainExtensions = map[string][]string{"csv": {".csv", ".tsv"}, "json": {".json", ".jsonl"}, "parquet": {".parquet"}, "orc": {".orc"}}

// headBudget bounds the heads listings bring in one plan: at most
// remoteFetchChunk a listing (a job's results, which the server holds
// while it sends them) and maxRemoteInferTotal in all, as fetches are
// bounded. A listing takes heads only when its every file's head fits.
type headBudget struct {
	left int64
	// rules are the client's, which decide the files it may type.
	rules infer.Rules
}

// newHeadBudget is the budget of one plan's listings on a server of
// sparkVersion, nil when the client has no rules to type its files by.
func newHeadBudget(sparkVersion string) *headBudget {
	rules, ok := infer.RulesFor(sparkVersion)
	if !ok {
		return nil
	}
	return &headBudget{left: maxRemoteInferTotal, rules: rules}
}

// take is the heads a listing of the files at paths (Spark's names of
// them) asks for, of files whose names say one of formats, charged to b
// (the most they can be: a head each); the zero listingHeads when there
// are none, when they would not fit, or when most of the files are
// others: the listing's scan reads the contents of all its files up to
// maxRemoteInferFile, as a fetch that reads a listing again does, which
// fetchRemoteCopies does only when its files are nine tenths of the
// listing (planFetches), and names them otherwise.
func (b *headBudget) take(paths []string, formats []string) listingHeads {
	if b == nil || len(formats) == 0 {
		return listingHeads{}
	}
	named := 0
	for _, p := range paths {
		lower := strings.ToLower(p)
		for _, f := range formats {
			for _, ext := range plainExtensions[f] {
				if strings.HasSuffix(lower, ext) {
					named++
				}
			}
		}
	}
	most := int64(named) * max(remoteHeadBytes, footerTailBytes)
	if named == 0 || named*10 < len(paths)*9 || most > min(b.left, remoteFetchChunk) {
		return listingHeads{}
	}
	b.left -= most
	return listingHeads{head: remoteHeadBytes, formats: formats}
}

// listing is one listFiles call: what was listed, and how.
type listing struct {
	given   string
	options map[string]string
	files   []remoteFile
}

// expandRemote lists a path the client cannot see on the server and
// splits it like [ExpandLocal] splits a local one: one source per data
// file (with its partition values in a partitioned tree), except named
// non-CSV directories, which stay one dataset.
func (c *Client) expandRemote(ctx context.Context, spec SourceSpec, defaultFormat string, global map[string]string, parts map[string]*partitionFile, heads *headBudget) (out []SourceSpec, skipped []string, files []remoteFile, err error) {
	given := spec.Paths[0]
	options := map[string]string{}
	for _, k := range listingOptions {
		if v, ok := global[k]; ok {
			options[k] = v
		}
		if v, ok := spec.Options[k]; ok {
			options[k] = v
		}
	}
	recursive := recursiveLookup(options)
	format := spec.Format
	if format == "" {
		format = defaultFormat
	}
	var headFormats []string
	if heads != nil {
		headFormats = typedFromCopies(spec, format, global, heads.rules)
	}
	listed, err := c.listRemote(ctx, given, options, heads, headFormats)
	if err != nil {
		return nil, nil, nil, err
	}
	files = listed.files
	isGlob := IsGlob(given)
	if format == "" {
		if format = filesFormat(files); format == "" {
			return nil, nil, nil, fmt.Errorf("cannot tell the format from the names of its %d files (%s, ...): set the format (Job.Format or SourceSpec.Format)", len(files), files[0].path)
		}
	}
	if !isGlob && len(files) > 1 {
		// A directory: its files of another format are not data.
		files, skipped = splitFilesByFormat(files, format)
	}
	var filesParts map[string]*partitionFile
	partitionOpts := partitionOptionsOf(global, spec.Options)
	if base := optionValue(partitionOpts, "basePath"); !recursive && (!isGlob || base != "") {
		// A partitioned tree, if its files lie in key=value directories
		// below its root.
		if filesParts, err = remotePartitions(given, listed, files, partitionOpts); err != nil {
			return nil, nil, nil, err
		}
	}
	if filesParts == nil && !recursive && !isGlob {
		// A flat directory, as Spark reads it and as a local one lists
		// (expandLocalPath): its own files, not those of subdirectories
		// that are no partitions, which the listing above included only
		// to find partitions.
		files, skipped = topLevelFiles(listed.given, files, skipped)
	}
	if len(files) == 1 && filesParts == nil {
		spec.Paths = []string{files[0].path}
		spec.Format = format
		return []SourceSpec{spec}, skipped, files, nil
	}
	if spec.Name != "" && format != "csv" && !isGlob {
		// A named directory is one dataset, read with its format's own
		// merging, as for local directories.
		spec.Format = format
		return []SourceSpec{spec}, skipped, files, nil
	}
	out = make([]SourceSpec, len(files))
	for i, f := range files {
		one := spec
		one.Paths = []string{f.path}
		one.Name = ""
		one.Format = format
		if part := filesParts[f.path]; part != nil {
			parts[f.path] = part
		}
		out[i] = one
	}
	return out, skipped, files, nil
}

// listRemote lists the files given means on the server, with the
// listing options: every file below a directory, in partition
// directories or not (Spark's listing of a partitioned tree leaves out
// the files beside its partition directories, which the tree read would
// skip without a word, see splitPartitions; for any other path Spark
// lists the same files either way), none in sparkmerge's staging
// directories. A path no file is named so is a pattern.
//
// The files of formats (see typedFromCopies) come with their heads when
// heads has room for them all (headBudget.take): Spark's file index
// lists them first, without a job, to count them.
func (c *Client) listRemote(ctx context.Context, given string, options map[string]string, heads *headBudget, formats []string) (*listing, error) {
	if !recursiveLookup(options) {
		options = withOption(options, "recursiveFileLookup", "true")
	}
	listed := &listing{given: literalPath(given), options: options}
	all, err := c.inputFiles(ctx, listed.given, options)
	if errorClass(err) == "PATH_NOT_FOUND" && literalPath(given) != given {
		listed.given = given
		all, err = c.inputFiles(ctx, given, options)
		if errorClass(err) == "PATH_NOT_FOUND" {
			// Spark says so of a pattern that matches nothing.
			return nil, &noFilesError{err}
		}
	}
	var files []remoteFile
	if err == nil {
		files, err = c.listFiles(ctx, listed.given, options, heads.take(all, formats))
	}
	if err != nil {
		return nil, err
	}
	files = withZeroByteFiles(listed.given, files, all)
	files = dropStaging(given, files)
	files = dropSummaryFiles(given, files)
	for i := range files {
		files[i].listing = listed
	}
	listed.files = files
	if len(files) == 0 {
		return nil, &noFilesError{fmt.Errorf("%s holds no data files on the server (hidden files and _SUCCESS markers do not count): check the path, or the listing options (pathGlobFilter, modifiedBefore, modifiedAfter)", given)}
	}
	return listed, nil
}

// splitFilesByFormat keeps a directory's files of format, returning the
// paths of the others (a README.txt among CSV files).
func splitFilesByFormat(files []remoteFile, format string) (kept []remoteFile, others []string) {
	paths := make([]string, len(files))
	byPath := make(map[string]remoteFile, len(files))
	for i, f := range files {
		paths[i] = f.path
		byPath[f.path] = f
	}
	keptPaths, others := splitByFormat(paths, format)
	for _, p := range keptPaths {
		kept = append(kept, byPath[p])
	}
	return kept, others
}

// remotePartitions are the partition values of files, by path, when they
// lie in key=value directories below the listing's root (or basePath);
// nil when they do not.
func remotePartitions(given string, listed *listing, files []remoteFile, partitionOpts map[string]string) (map[string]*partitionFile, error) {
	root := listed.given
	if base := optionValue(partitionOpts, "basePath"); base != "" {
		root = base
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	filesParts, tree, err := splitPartitions(given, sameScheme(root, root), paths)
	if err != nil {
		return nil, err
	}
	if tree != nil {
		tree.given, tree.options = listed.given, partitionOpts
	}
	return filesParts, nil
}

// topLevelFiles keeps the files directly in dir, and the skipped ones
// there, unless dir holds only subdirectories: then every file stays,
// one dataset below dir as for a local directory of subdirectories.
func topLevelFiles(dir string, files []remoteFile, skipped []string) ([]remoteFile, []string) {
	inDir := func(p string) bool {
		rel, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, "/")+"/")
		return ok && !strings.Contains(rel, "/")
	}
	var top []remoteFile
	for _, f := range files {
		if inDir(f.path) {
			top = append(top, f)
		}
	}
	if len(top) == 0 {
		return files, skipped
	}
	var topSkipped []string
	for _, p := range skipped {
		if inDir(p) {
			topSkipped = append(topSkipped, p)
		}
	}
	return top, topSkipped
}

// dropStaging drops the files given's listing found in sparkmerge's own
// staging directories (see inStagingDir): Hadoop's patterns match hidden
// directories, so "data/*/*.parquet" lists a staging directory that an
// earlier run left beside data/t.
func dropStaging(given string, files []remoteFile) []remoteFile {
	kept := files[:0]
	for _, f := range files {
		if !inStagingDir(given, f.path) {
			kept = append(kept, f)
		}
	}
	return kept
}

// dropSummaryFiles drops the Parquet summary files (_metadata,
// _common_metadata: pyarrow's write_metadata, Dask) that Spark's listing
// keeps for Parquet's sake (HadoopFSUtils.shouldFilterOutPathName) but
// never reads as data (PartitioningAwareFileIndex.isDataPath skips names
// starting with "_" or "." but for partition directories), as a local
// listing never lists them (sparkHides). A file given itself stays.
func dropSummaryFiles(given string, files []remoteFile) []remoteFile {
	kept := files[:0]
	for _, f := range files {
		if f.path == given || !sparkHides(path.Base(f.path)) {
			kept = append(kept, f)
		}
	}
	return kept
}

// listFiles lists the data files a path means on the server, as Spark's
// file index lists them for a read (globs expanded, directories listed,
// hidden files and _SUCCESS markers skipped, the listing options applied),
// without reading any file's contents, named as the user wrote the path
// (see sameScheme) and sorted by name.
func (c *Client) listFiles(ctx context.Context, given string, options map[string]string, heads listingHeads) ([]remoteFile, error) {
	files, err := c.server.listFiles(ctx, given, options, heads)
	if err != nil {
		return nil, fmt.Errorf("list files on the Spark server: %w", err)
	}
	for i := range files {
		files[i].sparkPath = files[i].path
		files[i].path = sameScheme(given, files[i].path)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}

// inputFiles are the files given means on the server, as Spark's file
// index lists them (see server.inputFiles).
func (c *Client) inputFiles(ctx context.Context, given string, options map[string]string) ([]string, error) {
	all, err := c.server.inputFiles(ctx, given, options)
	if err != nil {
		return nil, fmt.Errorf("list files on the Spark server: %w", err)
	}
	return all, nil
}

// withZeroByteFiles adds to files, listed from given on the server, the
// files of 0 bytes there (among all, its file index's listing), with size
// 0: Spark's scans skip them (FileSourceScanExec reads files of a length
// over 0), so the listing's scan has no row of them, where its file index
// lists them. They are the merge's to report as empty (see
// withoutEmptyFiles), never lost without a word.
func withZeroByteFiles(given string, files []remoteFile, all []string) []remoteFile {
	scanned := make(map[string]bool, len(files))
	for _, f := range files {
		scanned[f.path] = true
	}
	added := false
	for _, p := range all {
		if p = sameScheme(given, pathOfURI(p)); !scanned[p] {
			files = append(files, remoteFile{path: p})
			scanned[p], added = true, true
		}
	}
	if added {
		sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	}
	return files
}

// pathOfURI is a file's path as Spark's scans name it (Hadoop's
// Path.toString) from the URI its file index gives (Path.toUri): escapes
// decoded, so that "a%20b%253A" is the file "a b%3A" that the listing's
// scan names so, not another.
func pathOfURI(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Scheme == "" {
		return s
	}
	out := u.Scheme + ":"
	if u.Host != "" || strings.HasPrefix(s, u.Scheme+"://") {
		out += "//" + u.Host
	}
	return out + u.Path
}

// sameScheme writes a path Spark listed the way the user wrote its root:
// without Spark's "file:" when the user gave a plain path or file:, so that
// local and remote sources are named alike; without "dbfs:" when the user
// gave a plain path (Databricks lists a Unity Catalog volume's
// /Volumes/... and DBFS paths as dbfs:/...). Other schemes stay as listed.
func sameScheme(given, listed string) string {
	if strings.HasPrefix(listed, "dbfs:/") && !namesDBFS(given) && isLocalPath(given) {
		return strings.TrimPrefix(listed, "dbfs:")
	}
	if !strings.HasPrefix(listed, "file:") {
		return listed
	}
	p := strings.TrimPrefix(listed, "file:")
	if strings.HasPrefix(p, "///") {
		p = p[2:]
	}
	if strings.HasPrefix(given, "file:") {
		return "file://" + p
	}
	return p
}

// filesFormat is the one format the files' names say, or "" (see
// namesFormat).
func filesFormat(files []remoteFile) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	return namesFormat(paths)
}

// literalPath is a path Spark reads as exactly that file: glob characters
// in listed file names are escaped (Hadoop's glob syntax), so that
// "x[12].csv" is not read as the pattern matching x1.csv and x2.csv.
func literalPath(p string) string {
	return globEscaper.Replace(p)
}
