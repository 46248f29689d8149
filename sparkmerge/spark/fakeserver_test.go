package spark

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// fakeServer is a [server] that answers from its fields and records every
// call, so that planning runs, and is checked, without Spark. A call it
// has no answer for fails, naming the call, so that a test never passes on
// a default it did not mean.
type fakeServer struct {
	version string
	// properties are tables' properties (tableProperties), by table.
	properties map[string]map[string]string
	// columnMetadata are tables' column metadata (tableSchema's),
	// by table.
	columnMetadata map[string]map[string]string
	// splits are the session's file split settings (fileSplitSettings);
	// unset, the fake has none to give.
	splits fileSplits
	// schemas are Spark's schemas (DDL) by call, e.g.
	// "readSchema /d/a.csv", "tableSchema db.ref", "targetSchema db.t".
	schemas map[string]string
	// fail are the errors of calls, by call as schemas keys them (or
	// "conf <keys>", "listFiles <given>", "fetchFiles <given or paths>").
	fail map[string]error
	// settings are the session's settings (conf answers; catalogs
	// answers from the spark.sql.catalog.NAME ones).
	settings map[string]string
	// providers are the tables' formats (tableProvider answers), by table.
	providers map[string]string
	// files are the files only the server sees, by path as Spark lists
	// them, and nowMillis the server's clock.
	files     map[string]fakeFile
	nowMillis int64
	// realPathsOf are the real paths on the server of files and
	// directories (by path as given), which listings and realPaths
	// answer.
	realPathsOf map[string]string
	// valueless are the string columns without a value
	// (columnsHaveValues answers), by a read's paths and the column.
	valueless map[string]bool
	// rows are whether a read has rows (haveRows answers), by its paths.
	rows map[string]bool
	// clientFS: the server shares the client's filesystem, where it lists
	// the client's files as well.
	clientFS bool

	// fetchDelay is how long each fetch takes; maxFetching is the most
	// fetches that ran at once.
	fetchDelay  time.Duration
	maxFetching int
	// fetchedBytes counts the file contents fetches (and listings, of
	// heads) returned.
	fetchedBytes int64
	// noListingHeads: listings bring no heads (as a server whose listing
	// with heads failed answers: see sessionServer.listFiles).
	noListingHeads bool

	// csvLines, csvHeaders and laneTypes answer typeCSVTogether's calls
	// (see csvFileLines).
	csvLines   []csvFileLines
	csvHeaders map[string]string
	laneTypes  func(csvLanes) (sparkmerge.Schema, error)
	// jsonTypes answers typeJSONTogether's inferences (see jsonLanes);
	// without it they fail, and the files are asked alone.
	jsonTypes func(jsonLanes) (sparkmerge.Schema, error)
	// jsonDepths are how deep the deepest record of JSON files nests, by
	// path, which jsonNesting answers (absent: not deep).
	jsonDepths map[string]int
	// notUTF8 are how many lines of files are not UTF-8, by file.
	notUTF8 map[string]int64

	mu       sync.Mutex
	calls    []string
	fetching int
	// options are the reader options of each readSchema call, by call.
	options map[string]map[string]string
}

// fakeFile is a file on the fake server.
type fakeFile struct {
	content     string
	mtimeMillis int64
}

// newFakeClient is a client whose server is fake: Spark 4.0.1, no
// answers yet.
func newFakeClient() (*Client, *fakeServer) {
	fake := &fakeServer{version: "4.0.1", schemas: map[string]string{}, fail: map[string]error{}, files: map[string]fakeFile{}, options: map[string]map[string]string{}}
	return &Client{server: fake}, fake
}

// record notes a call and returns its configured error.
func (f *fakeServer) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.fail[call]
}

// recorded are the calls so far, in order.
func (f *fakeServer) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// askedAlone are the base names of the files whose schema was asked of
// Spark alone (readSchema calls), sorted.
func (f *fakeServer) askedAlone() []string {
	var alone []string
	for _, call := range f.recorded() {
		if p, ok := strings.CutPrefix(call, "readSchema "); ok {
			alone = append(alone, path.Base(p))
		}
	}
	slices.Sort(alone)
	return alone
}

func (f *fakeServer) schema(call string) (sparkmerge.Schema, error) {
	if err := f.record(call); err != nil {
		return sparkmerge.Schema{}, err
	}
	ddl, ok := f.schemas[call]
	if !ok {
		return sparkmerge.Schema{}, fmt.Errorf("fake server: no answer for %q", call)
	}
	return sparkmerge.ParseSchema(ddl)
}

func (f *fakeServer) sparkVersion() string { return f.version }

// readSchema fails, as Spark Connect's client does, once ctx is done.
func (f *fakeServer) readSchema(ctx context.Context, r *Read) (sparkmerge.Schema, error) {
	call := "readSchema " + strings.Join(r.Paths, ",")
	switch {
	case r.Table != "":
		call = "readSchema table " + r.Table
	case r.Query != "":
		call = "readSchema query " + r.Query
	}
	f.mu.Lock()
	f.options[call] = maps.Clone(r.Options)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		f.record(call)
		return sparkmerge.Schema{}, err
	}
	return f.schema(call)
}

// csvFileLines answers from csvLines, recording "csvFileLines <paths>";
// csvHeader from csvHeaders (DDL by header line), recording "csvHeader
// <line>" (csvHeaderNames); csvLaneTypes from laneTypes, recording "csvLaneTypes <paths>".
// Without csvLines (csvHeaders), csvFileLines (csvHeaderNames) fails
// unrecorded: files are typed one by one, as before typeCSVTogether, and
// other tests' calls stay theirs.
func (f *fakeServer) csvFileLines(_ context.Context, paths []string, _ string) ([]csvFileLines, error) {
	if f.csvLines == nil {
		return nil, fmt.Errorf("fake server: no text reads")
	}
	if err := f.record("csvFileLines " + strings.Join(paths, ",")); err != nil {
		return nil, err
	}
	return f.csvLines, nil
}

// globUnescaper undoes globEscaper.
var globUnescaper = strings.NewReplacer(`\\`, `\`, `\{`, "{", `\}`, "}", `\,`, ",", `\*`, "*", `\?`, "?", `\[`, "[", `\]`, "]")

// measuredPaths are the files of measures as a call records them: a
// measure's paths joined by commas, measures by spaces.
func measuredPaths(measures []nestingMeasure) string {
	var paths []string
	for _, m := range measures {
		var files []string
		for _, p := range m.paths {
			files = append(files, globUnescaper.Replace(p))
		}
		paths = append(paths, strings.Join(files, ","))
	}
	return strings.Join(paths, " ")
}

// jsonNesting answers from jsonDepths by each measure's files, recording
// "jsonNesting <paths>" (measuredPaths).
func (f *fakeServer) jsonNesting(_ context.Context, measures []nestingMeasure, maxDepth int) (map[int]deepJSONFile, error) {
	if err := f.record("jsonNesting " + measuredPaths(measures)); err != nil {
		return nil, err
	}
	var found []measuredDepth
	for g, m := range measures {
		for _, p := range m.paths {
			p = globUnescaper.Replace(p)
			if d := f.jsonDepths[p]; d > maxDepth {
				found = append(found, measuredDepth{measure: g, path: sparkPathKey(p), depth: d})
			}
		}
	}
	return deepestByRead(measures, found)
}

// notUTF8Files answers from notUTF8 (lines that are not UTF-8, by file),
// else from the lines of the fake's files, by each measure's files,
// recording "notUTF8Files <paths>" (measuredPaths).
func (f *fakeServer) notUTF8Files(_ context.Context, measures []nestingMeasure, _ string) ([]notUTF8File, error) {
	if err := f.record("notUTF8Files " + measuredPaths(measures)); err != nil {
		return nil, err
	}
	var found []notUTF8File
	for g, m := range measures {
		for _, p := range m.paths {
			p = globUnescaper.Replace(p)
			n := f.notUTF8[p]
			if file, ok := f.files[p]; ok && n == 0 {
				for _, line := range strings.Split(file.content, "\n") {
					if !utf8.ValidString(line) {
						n++
					}
				}
			}
			if n > 0 {
				found = append(found, notUTF8File{measure: g, path: sparkPathKey(p), lines: n})
			}
		}
	}
	return found, nil
}

func (f *fakeServer) csvHeaderNames(_ context.Context, line string, _ map[string]string) (sparkmerge.Schema, error) {
	if f.csvHeaders == nil {
		return sparkmerge.Schema{}, fmt.Errorf("fake server: no CSV parsing")
	}
	if err := f.record("csvHeader " + line); err != nil {
		return sparkmerge.Schema{}, err
	}
	ddl, ok := f.csvHeaders[line]
	if !ok {
		return sparkmerge.Schema{}, fmt.Errorf("fake server: no CSV parsing")
	}
	return sparkmerge.ParseSchema(ddl)
}

func (f *fakeServer) csvLaneTypes(_ context.Context, lanes csvLanes) (sparkmerge.Schema, error) {
	if err := f.record("csvLaneTypes " + strings.Join(lanes.paths, ",")); err != nil || f.laneTypes == nil {
		return sparkmerge.Schema{}, fmt.Errorf("fake server: no CSV parsing (%v)", err)
	}
	return f.laneTypes(lanes)
}

func (f *fakeServer) jsonLaneTypes(_ context.Context, lanes jsonLanes) (sparkmerge.Schema, error) {
	if err := f.record("jsonLaneTypes " + strings.Join(lanes.paths, ",")); err != nil {
		return sparkmerge.Schema{}, err
	}
	if f.jsonTypes == nil {
		return sparkmerge.Schema{}, fmt.Errorf("fake server: no JSON parsing")
	}
	return f.jsonTypes(lanes)
}

// partitionSchema answers "partitionSchema <given>", recording the options
// as readSchema does.
func (f *fakeServer) partitionSchema(_ context.Context, given string, options map[string]string) (sparkmerge.Schema, error) {
	call := "partitionSchema " + given
	f.mu.Lock()
	f.options[call] = maps.Clone(options)
	f.mu.Unlock()
	return f.schema(call)
}

func (f *fakeServer) tableSchema(_ context.Context, table string) (sparkmerge.Schema, map[string]string, error) {
	schema, err := f.schema("tableSchema " + table)
	if err != nil {
		return schema, nil, err
	}
	return schema, f.columnMetadata[table], nil
}

func (f *fakeServer) tableProperties(_ context.Context, table string) (map[string]string, error) {
	return f.properties[table], nil
}

func (f *fakeServer) tableProvider(_ context.Context, table string) (tableDescription, error) {
	call := "tableProvider " + table
	if err := f.record(call); err != nil {
		return tableDescription{}, err
	}
	provider, ok := f.providers[table]
	if !ok {
		return tableDescription{}, fmt.Errorf("fake server: no answer for %q", call)
	}
	return tableDescription{provider: provider, kind: "MANAGED"}, nil
}

func (f *fakeServer) catalogs(context.Context) (string, map[string]string, error) {
	if err := f.record("catalogs"); err != nil {
		return "", nil, err
	}
	classes := map[string]string{}
	for k, v := range f.settings {
		if name, ok := strings.CutPrefix(k, "spark.sql.catalog."); ok && !strings.Contains(name, ".") {
			classes[name] = v
		}
	}
	return "spark_catalog", classes, nil
}

func (f *fakeServer) targetSchema(_ context.Context, t Target) (sparkmerge.Schema, error) {
	return f.schema("targetSchema " + t.Table + t.Path)
}

func (f *fakeServer) conf(_ context.Context, keys ...string) (map[string]string, error) {
	if err := f.record("conf " + strings.Join(keys, " ")); err != nil {
		return nil, err
	}
	values := map[string]string{}
	for _, k := range keys {
		if v, ok := f.settings[k]; ok {
			values[k] = v
		}
	}
	return values, nil
}

func (f *fakeServer) setConf(_ context.Context, values map[string]string) error {
	var set []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		set = append(set, k+"="+values[k])
	}
	if err := f.record("setConf " + strings.Join(set, " ")); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settings == nil {
		f.settings = map[string]string{}
	}
	for k, v := range values {
		f.settings[k] = v
	}
	return nil
}

// listFiles lists the files at or below given, as Spark lists them.
func (f *fakeServer) listFiles(_ context.Context, given string, _ map[string]string, heads listingHeads) ([]remoteFile, error) {
	if err := f.record("listFiles " + given); err != nil {
		return nil, err
	}
	files := f.list(given)
	if info, err := os.Stat(given); f.clientFS && err == nil && !info.IsDir() {
		files = append(files, remoteFile{path: "file:" + given, size: info.Size(), mtimeMillis: info.ModTime().UnixMilli()})
	}
	if len(files) == 0 {
		return nil, &connect.SparkError{ErrorClass: "PATH_NOT_FOUND", Message: "[PATH_NOT_FOUND] Path does not exist: " + given}
	}
	if heads.head > 0 && !f.noListingHeads {
		// As headsListing cuts them: a fetch of heads of the files
		// named so, up to maxRemoteInferFile.
		for i, l := range files {
			named := false
			for _, format := range heads.formats {
				for _, ext := range plainExtensions[format] {
					named = named || strings.HasSuffix(strings.ToLower(l.path), ext)
				}
			}
			if named && l.size > 0 && l.size <= maxRemoteInferFile {
				got := f.fetched(l.path, fileFetch{head: heads.head})
				files[i].head = &listedHead{content: got.content, nowMillis: got.nowMillis}
			}
		}
	}
	// As Spark's scan of a listing: files of 0 bytes skipped.
	return slices.DeleteFunc(files, func(f remoteFile) bool { return f.size == 0 }), nil
}

// inputFiles are the paths of the files listFiles lists (its files of 0
// bytes included), answering "inputFiles <given>".
func (f *fakeServer) inputFiles(_ context.Context, given string, _ map[string]string) ([]string, error) {
	if err := f.record("inputFiles " + given); err != nil {
		return nil, err
	}
	var out []string
	for _, l := range f.list(given) {
		out = append(out, l.path)
	}
	if info, err := os.Stat(given); f.clientFS && err == nil && !info.IsDir() {
		out = append(out, "file:"+given)
	}
	if len(out) == 0 {
		return nil, &connect.SparkError{ErrorClass: "PATH_NOT_FOUND", Message: "[PATH_NOT_FOUND] Path does not exist: " + given}
	}
	return out, nil
}

// list is the files given means, as Spark lists them: those at or below
// it, or matching it as a pattern, file: paths also by their plain path;
// in reverse order of names, since the client must sort them.
func (f *fakeServer) list(given string) []remoteFile {
	var files []remoteFile
	for _, p := range slices.Backward(slices.Sorted(maps.Keys(f.files))) {
		for _, name := range []string{p, strings.TrimPrefix(p, "file:")} {
			if matched, _ := path.Match(given, name); matched || strings.HasPrefix(name, strings.TrimSuffix(given, "/")+"/") {
				files = append(files, remoteFile{path: p, size: int64(len(f.files[p].content)), mtimeMillis: f.files[p].mtimeMillis, real: f.realPathsOf[p]})
				break
			}
		}
	}
	return files
}

func (f *fakeServer) fetchFiles(_ context.Context, want fileFetch) ([]fetchedFile, error) {
	paths := want.paths
	call := "fetchFiles " + strings.Join(paths, " ")
	if paths == nil {
		call = "fetchFiles " + want.given
		for _, l := range f.list(want.given) {
			if l.size >= want.minSize && l.size <= want.maxSize {
				paths = append(paths, l.path)
			}
		}
	}
	if err := f.record(call); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.fetching++
	f.maxFetching = max(f.maxFetching, f.fetching)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.fetching--
		f.mu.Unlock()
	}()
	time.Sleep(f.fetchDelay)
	var out []fetchedFile
	for _, p := range paths {
		if _, ok := f.files[p]; !ok && strings.HasPrefix(p, "/") {
			p = "file:" + p // a file on the server's disk, as Spark names it
		}
		out = append(out, f.fetched(p, want))
	}
	return out, nil
}

// fetched is the file at p as a fetch of want returns it, counted in
// fetchedBytes.
func (f *fakeServer) fetched(p string, want fileFetch) fetchedFile {
	file := f.files[p]
	listed := remoteFile{path: p, size: int64(len(file.content)), mtimeMillis: file.mtimeMillis}
	content := []byte(file.content)
	if len(content) == 0 {
		content = nil // as an Arrow batch may give an empty binary value
	}
	// As fetchedContent cuts them.
	footer := strings.HasSuffix(strings.ToLower(p), ".parquet") || strings.HasSuffix(strings.ToLower(p), ".orc")
	switch {
	case footer && len(content) > footerTailBytes:
		content = content[len(content)-footerTailBytes:]
	case footer:
	case want.from > 0:
		content = content[min(want.from, int64(len(content))):]
	case want.head > 0 && int64(len(content)) > want.head:
		content = content[:want.head]
	}
	if want.only != nil && !slices.Contains(want.only, p) {
		content = nil
	}
	f.mu.Lock()
	f.fetchedBytes += int64(len(content))
	f.mu.Unlock()
	return fetchedFile{remoteFile: listed, content: content, nowMillis: f.nowMillis}
}

// columnsHaveValues answers "columnsHaveValues <paths> <column>; ..."
// per probe: a probe has a value unless valueless names each of its reads
// (paths and column).
func (f *fakeServer) columnsHaveValues(_ context.Context, probes []valueProbe) ([]bool, error) {
	out := make([]bool, len(probes))
	for i, p := range probes {
		var asked []string
		for j, r := range p.reads {
			one := strings.Join(r.Paths, ",") + " " + p.columns[j]
			asked = append(asked, one)
			out[i] = out[i] || !f.valueless[one]
		}
		if err := f.record("columnsHaveValues " + strings.Join(asked, "; ")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// haveRows answers "haveRows <paths>" per read from rows.
func (f *fakeServer) haveRows(_ context.Context, reads []*Read) ([]bool, error) {
	out := make([]bool, len(reads))
	for i, r := range reads {
		call := "haveRows " + strings.Join(r.Paths, ",")
		if err := f.record(call); err != nil {
			return nil, err
		}
		has, ok := f.rows[strings.Join(r.Paths, ",")]
		if !ok {
			return nil, fmt.Errorf("fake server: no answer for %q", call)
		}
		out[i] = has
	}
	return out, nil
}

// realPaths are the real paths the fake was given (realPathsOf), by
// path.
func (f *fakeServer) realPaths(_ context.Context, paths []string) (map[string]string, error) {
	if err := f.record("realPaths " + strings.Join(paths, " ")); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range paths {
		if real, ok := f.realPathsOf[p]; ok {
			out[p] = real
		}
	}
	return out, nil
}

// The fake must stay a [server].
var _ server = (*fakeServer)(nil)

// TestFakeServerAnswersOnlyWhatItWasGiven: a call without an answer fails,
// so that a plan test cannot pass on a schema nobody chose.
func TestFakeServerAnswersOnlyWhatItWasGiven(t *testing.T) {
	_, fake := newFakeClient()
	if _, _, err := fake.tableSchema(context.Background(), "db.none"); err == nil || !strings.Contains(err.Error(), `"tableSchema db.none"`) {
		t.Errorf("err = %v, want no answer for the call", err)
	}
}

// csvHeader answers from the first file of r among the server's files: its
// first line that is not empty, split at r's separator (the fake's files
// quote nothing).
func (f *fakeServer) csvHeader(_ context.Context, r *Read) (string, []string, error) {
	call := "csvHeader " + strings.Join(r.Paths, ",")
	if err := f.record(call); err != nil {
		return "", nil, err
	}
	sep := r.Options["sep"]
	if sep == "" {
		sep = ","
	}
	for _, p := range r.Paths {
		file, ok := f.files[p]
		if !ok {
			file, ok = f.files["file:"+p] // listed as Spark lists it
		}
		if !ok {
			continue
		}
		for _, line := range strings.Split(file.content, "\n") {
			if line = strings.TrimSuffix(line, "\r"); line != "" {
				return p, strings.Split(line, sep), nil
			}
		}
	}
	return "", nil, fmt.Errorf("fake server: no file for %q", call)
}

func (f *fakeServer) fileSplitSettings(context.Context) (fileSplits, error) {
	if f.splits == (fileSplits{}) {
		return fileSplits{}, fmt.Errorf("fake server: no file splits")
	}
	return f.splits, nil
}

func (f *fakeServer) fileSlices(_ context.Context, files []sliceFetch, _, _ int64, _ string) ([]fetchedSlices, error) {
	var paths []string
	for _, file := range files {
		paths = append(paths, file.sparkPath)
	}
	f.record("fileSlices " + strings.Join(paths, ","))
	return nil, fmt.Errorf("fake server: no slices")
}
