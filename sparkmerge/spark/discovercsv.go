package spark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge"
)

// CSV files the client does not type (dates, quotes, files only the
// server sees, Spark's inference asked for) were each asked of Spark: an
// analysis of the file alone, two Spark jobs, about 0.1 s of server time
// per file, which made discovery of 120 small dated files 160 times
// slower than of the same files without dates. Here Spark types many such
// files in a few jobs, each file exactly as Spark's inference of it alone
// (TextInputCSVDataSource.infer):
//
//  1. each file's first line with content (Spark's header line) and how
//     many lines inference reads are learnt (csvFileLines): by the client
//     for its own files (localCSVFileLines), by one text read in Spark
//     for the others;
//  2. each distinct header line is parsed by Spark's CSV reader, as its
//     header (csvHeaderNames): the file's column names, as Spark makes them
//     safe (empty, null-valued or repeated names);
//  3. the files' lines are laid side by side in one dataset of CSV lines
//     that Spark's CSV inference types (csvLaneTypes): each file's
//     columns are lanes of their own, empty (or absent) in every other
//     file's lines, so that every lane's type is inferred from that file's
//     values alone, in the file's own order (Spark's inference folds
//     each partition's rows in order; a value's type can depend on the
//     ones before it), and an empty value leaves a lane's type as it
//     was. A file's lines are tokenized by Spark's own parser under the
//     file's options (from_csv, as wide as the file's header: a row's
//     extra values are ignored, as inference ignores them) and written
//     back quoted (to_csv), so that every value reaches inference as the
//     file's parser gave it; lines equal to the header line are dropped,
//     as inference drops them.
//
// A marker lane per file proves that its lines reached its lanes. A file
// is typed so only when that is certain to equal its read alone:
// on a Spark line it is proven on (togetherLines), with options from
// csvTogetherOptions, no larger than Spark's split of a file read alone
// (so that Spark folds it in one partition there and here), and with no
// line that is blank but not empty (Spark's filters of blank lines differ
// on those). Every other file, and every file of a batch that fails, is
// asked of Spark alone, as before.
//
// Files read with multiLine are typed among lanes too, from their records
// instead of their lines (a record may span lines): Spark's CSV reader
// reads them whole, with multiLine and the file's own parser options,
// under their header's names as strings (csvLanes.records), so that each
// record reaches its file's lanes tokenized exactly as Spark's inference
// of the file alone tokenizes it (MultiLineCSVDataSource.infer: the same
// parser and options, the header dropped once at the file's start, each
// file read whole in one partition, in order: never split, whatever its
// size, so no witnesses). Its header record is the header line learnt as
// above, which the read proves: it reads with enforceSchema=false, so
// Spark fails the inference (and every file of it goes alone) where a
// file's first record is not that line's names (a byte-order mark or a
// blank line Spark's parser reads otherwise, a header over several lines).
// A row wider or narrower than the header is read PERMISSIVE, cut or
// padded with nulls, which the inference's fold also ignores (it types
// the header's columns only, skipping nulls).

// csvFileLines is what the text read of many CSV files learns of one.
type csvFileLines struct {
	// path is the file as Spark names it (_metadata.file_path).
	path string
	// first is its first line with a character other than a space or a
	// control character: the header line Spark's inference takes.
	first string
	// lines counts its lines with such a character.
	lines int64
	// blankish counts its lines that are not empty but have no such
	// character.
	blankish int64
	// notUTF8 counts its lines that are not UTF-8 (of the text read;
	// the client reads no such file).
	notUTF8 int64
}

// csvLanes is one dataset of lanes (step 3 above) that Spark types in one
// inference.
type csvLanes struct {
	// paths are the files read, as the reads send them.
	paths []string
	// files are the files' lanes, by path as Spark names them.
	files []csvLaneFile
	// width is the number of lanes: the first (always empty, so that no
	// line starts with its file's own text) and every file's.
	width int
	// tokenizer are the options from_csv tokenizes the files' lines with;
	// inference are those Spark's inference of the lanes takes.
	tokenizer, inference map[string]string
	// records: the files are read with multiLine, their records by
	// Spark's CSV reader, each under its header's names (csvLaneFile.names),
	// instead of their lines by the text reader.
	records bool
}

// csvLaneFile is one file's place among the lanes.
type csvLaneFile struct {
	path   string // its sparkPathKey
	header string // its header line, dropped wherever it is repeated
	// offset is its first lane; columns is how many it has (its header's
	// names). The lane after them is its marker, 1 in each of its lines:
	// typed int where its lines reached its lanes (data), string where
	// none did, so that a file whose lines missed its lanes (named
	// otherwise than the client expects) is never typed from none.
	offset, columns int
	// data: the file has lines besides its header line.
	data bool
	// witnessed: the file is larger than Spark's split; after its marker
	// come two witness lanes per column (the highest and the lowest
	// class of its values, see witnessLanes), by which takeTypes
	// keeps only the types every split of the file gives.
	witnessed bool
	// names are its header's names as Spark parses them: the schema its
	// records are read under (csvLanes.records).
	names []string
}

// maxLaneCells bounds the lanes one inference types, as its lines times
// its lanes: every line holds every lane (empty), and Spark's inference
// visits each. Past it, files go to another inference, run alongside.
// A cell costs Spark about 1.6 us of task CPU (tokenized, quoted back,
// tokenized and typed again), a request about 0.1-0.2 s, so batches cost
// least at a few hundred thousand cells (k batches of n cells: n/k of
// lanes against k requests). At 4 Mi cells, a batch holding one 4 MB file
// past the split (its witness lanes three a column) took 6 s of task CPU
// where Spark typed the file alone in 0.13 s (docs/architecture.md).
const maxLaneCells = 256 << 10

// maxTogetherFile bounds the files read to learn their header lines,
// before the server's split size is known (fileSplitBytes: 4 MiB by
// default).
const maxTogetherFile = 64 << 20

// maxWitnessedFile bounds the files past Spark's split typed among the
// lanes (with witnesses): a larger one fills a batch of its own
// (maxLaneCells), where its lanes cost more than its inference alone and
// save no request, and is asked alone before its header is parsed. On
// lake-csv (20 files of 50 MB) such files cost 4 header parses more than
// asking them alone (25 analyses, not 21).
const maxWitnessedFile = 16 << 20

// maxLanes bounds one inference's lanes under the CSV parser's
// maxColumns default (20,480).
const maxLanes = 20000

// csvTogetherOptions are the reader options, lower case, under which
// typing a file among others equals typing it alone: the parser's
// (passed to from_csv), inference's (passed to the lanes' inference), and
// options of the read only; multiLine has records, not lines, typed
// (csvRecords). Others (encodings, line separators, comments, sampling,
// listing filters) leave the file to Spark alone.
var csvTogetherOptions = map[string]string{
	"header": "", "inferschema": "inference", "enforceschema": "", "mode": "",
	"sep": "tokenizer", "delimiter": "tokenizer", "quote": "tokenizer", "escape": "tokenizer",
	"chartoescapequoteescaping": "tokenizer", "nullvalue": "tokenizer", "emptyvalue": "tokenizer",
	"ignoreleadingwhitespace": "tokenizer", "ignoretrailingwhitespace": "tokenizer",
	"unescapedquotehandling": "tokenizer",
	"dateformat":             "inference", "timestampformat": "inference", "timestampntzformat": "inference",
	"prefersdate": "inference", "nanvalue": "inference", "positiveinf": "inference",
	"negativeinf": "inference", "locale": "inference", "timezone": "inference",
	"enabledatetimeparsingfallback": "inference",
	"multiline":                     "records",
}

// csvRecords reports whether a CSV read's options read its records with
// multiLine: records, not lines, reach the lanes (csvLanes.records).
func csvRecords(options map[string]string) bool {
	return strings.EqualFold(optionValue(options, "multiLine"), "true")
}

// togetherLines are the Spark lines (major.minor) on which typing files
// together (typeCSVTogether, typeJSONTogether) has been proven to give
// each file the schema Spark's inference of it alone gives:
// TestCSVTypedTogetherAsAlone, TestJSONTypedTogetherAsAlone and the
// differential suite's paths that type files together pass on each (the
// whole suite on 4.0.1; the version matrix, scripts/test-matrix.sh, on
// 3.5.7, 4.1.4, 4.2.1 and 4.3.0, and on 4.0.5 by make test-matrix). Both ways of
// typing use only the server's own parsers and inference (text, from_csv,
// to_csv, the Parse relation), so an inference rule that differs between
// versions applies alike to a file alone and among others; what could
// differ is what the tests check: that each file's values are folded in
// its order in one partition, and that header and blank lines are
// dropped as Spark drops them for a file alone. A line not listed (before
// 3.5, after 4.3) has each file asked alone: not tested, so not claimed.
var togetherLines = []string{"3.5", "4.0", "4.1", "4.2", "4.3"}

// typesTogether reports whether typeCSVTogether and typeJSONTogether are
// proven on a server of sparkVersion (as Spark reports it, "4.0.1"): its
// line is one of togetherLines.
func typesTogether(sparkVersion string) bool {
	for _, line := range togetherLines {
		if sparkVersion == line || strings.HasPrefix(sparkVersion, line+".") {
			return true
		}
	}
	return false
}

// csvTogetherKey is the key of the options under which r may be typed
// with others (reads of one key share an inference), or "" when r is
// Spark's to type alone.
//
// A file of a partitioned tree is keyed as any file (issue 34: landing
// zones are trees, each file else a request): discovery types its own
// columns, read without basePath (withoutPartitionRoot), where Spark's
// read of files named one by one finds no partition columns (each
// file's directory is its base path), alone as in the lanes' reads; the
// tree's columns are added once discovery is done, alike to files typed
// either way (addPartitionColumns, and overlapExprs for a column of the
// file's own named as one).
func csvTogetherKey(r *Read) string {
	if r.Format != "csv" || r.relational() || r.UserSchema != "" || len(r.Paths) != 1 || r.patterns || IsGlob(r.Paths[0]) {
		return ""
	}
	if !strings.EqualFold(optionValue(r.Options, "header"), "true") {
		return ""
	}
	var b strings.Builder
	for _, k := range sortedKeys(r.Options) {
		if _, ok := csvTogetherOptions[strings.ToLower(k)]; !ok {
			return ""
		}
		if strings.EqualFold(k, "enforceSchema") {
			continue // read-time only
		}
		fmt.Fprintf(&b, "%s=%s\x00", strings.ToLower(k), r.Options[k])
	}
	return b.String()
}

// csvTogetherOptionsOf splits a read's options into the tokenizer's and
// inference's.
func csvTogetherOptionsOf(options map[string]string) (tokenizer, inference map[string]string) {
	tokenizer, inference = map[string]string{}, map[string]string{}
	for k, v := range options {
		switch csvTogetherOptions[strings.ToLower(k)] {
		case "tokenizer":
			tokenizer[k] = v
		case "inference":
			inference[k] = v
		}
	}
	return tokenizer, inference
}

// csvFileSize is the size of r's file when the client knows it: a local
// file's, or the listed size of a file only the server sees.
func csvFileSize(r *Read) (int64, bool) {
	if r.listed {
		return r.listedSize, true
	}
	return localSize(r.Paths[0])
}

// typedTogether counts what typeCSVTogether did.
type typedTogether struct {
	// files is the number of files it typed; requests the Spark
	// requests it made (each runs one or two Spark jobs).
	files, requests int
}

// typeCSVTogether types the CSV reads it can in a few Spark inferences
// (see the top of this file) and returns the reads left to Spark alone.
// It fails only when the server is unreachable or ctx ended.
func (c *Client) typeCSVTogether(ctx context.Context, reads []*Read, parallelism int, sessionSplit *planSplit) (rest []*Read, done typedTogether, err error) {
	if !typesTogether(c.SparkVersion()) {
		return reads, done, nil
	}
	candidates, sizes := togetherCandidates(reads)
	if len(candidates) < 2 {
		return reads, done, nil
	}
	// A request naming more files than Spark lists on its driver runs a
	// Spark job of a task per file to list them: list local files on
	// the driver, others with few tasks.
	allLocal := true
	for _, r := range candidates {
		allLocal = allLocal && !r.listed && isLocalFile(r.Paths[0])
	}
	restore, err := c.tune(ctx, tuning{listSerially: allLocal, fewListingTasks: !allLocal})
	if err != nil {
		return nil, done, err
	}
	defer restore()
	t := &together{c: c, parallelism: max(parallelism, 1)}
	// Spark reads a larger file alone in several partitions, whose
	// types it merges: another fold than the lanes', equal to it only for
	// the lanes whose witnesses show the types split-invariant (see
	// splitInvariant); the file is typed together with witnesses, under
	// options whose parsers the witnesses know, else alone. A file left
	// alone so is not read for its lines: the text read of lake-csv's 20
	// files of 50 MB, all asked alone after it, cost the server 12.7 s of
	// its 32.7 s of task CPU in discovery.
	split, legacyTime, ok := sessionSplit.get(ctx)
	if !ok {
		return reads, t.done, nil
	}
	t.witnessed = map[*Read]bool{}
	candidates = slices.DeleteFunc(candidates, func(r *Read) bool {
		if sizes[r] <= split || csvRecords(r.Options) {
			// Spark reads a file of records (multiLine) whole, in one
			// partition, whatever its size.
			return false
		}
		if legacyTime || !witnessOptions(r.Options) || sizes[r] > maxWitnessedFile {
			return true
		}
		t.witnessed[r] = true
		return false
	})
	if len(candidates) < 2 {
		return reads, t.done, nil
	}
	linesOf, err := t.fileLines(ctx, candidates)
	if err != nil {
		return nil, t.done, err
	}
	isCandidate := map[*Read]bool{}
	for _, r := range candidates {
		isCandidate[r] = true
	}
	for _, r := range reads {
		if !isCandidate[r] {
			t.rest = append(t.rest, r)
		}
	}
	order, byKey := t.groupByHeader(candidates, linesOf)
	if err := t.headerNames(ctx); err != nil {
		return nil, t.done, err
	}
	if err := t.typeLanes(ctx, t.laneBatches(order, byKey, linesOf)); err != nil {
		return nil, t.done, err
	}
	sort.SliceStable(t.rest, func(i, j int) bool { return t.rest[i].order < t.rest[j].order })
	return t.rest, t.done, nil
}

// togetherCandidates are the reads typeCSVTogether may type: CSV files
// of options it types together, of a known size up to maxTogetherFile.
func togetherCandidates(reads []*Read) ([]*Read, map[*Read]int64) {
	var candidates []*Read
	sizes := map[*Read]int64{}
	for _, r := range reads {
		if csvTogetherKey(r) == "" {
			continue
		}
		if size, known := csvFileSize(r); known && size <= maxTogetherFile {
			candidates = append(candidates, r)
			sizes[r] = size
		}
	}
	return candidates, sizes
}

// together is one typeCSVTogether: its requests (made by several
// goroutines at once, under mu), the reads left to Spark alone, and the
// header lines of the files it types.
type together struct {
	c           *Client
	parallelism int
	mu          sync.Mutex
	done        typedTogether
	rest        []*Read
	// headers are the files' header lines, by csvTogetherKey and line
	// (headerKey).
	headers map[string]*csvHeaderLine
	// witnessed are the files larger than Spark's split, typed with
	// witness lanes (csvLaneFile.witnessed).
	witnessed map[*Read]bool
}

// csvHeaderLine is a header line of files read with options, and the
// column names Spark parses of it.
type csvHeaderLine struct {
	line    string
	options map[string]string
	names   []string
}

func headerKey(key, line string) string { return key + "\x01" + line }

// laneBatch is one inference over the lanes of its reads' files.
type laneBatch struct {
	lanes csvLanes
	reads []*Read
}

// stopTogether reports whether a failed request ends the discovery (the
// server unreachable, ctx ended), with the error to return; any other
// failure leaves its files to Spark alone.
func stopTogether(ctx context.Context, err error) (bool, error) {
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	if errors.Is(err, ErrUnreachable) {
		return true, err
	}
	return false, nil
}

// fileLines are each candidate's header line and lines: of a local file
// read here, of others in one text read by Spark. A file missing here is
// Spark's to type alone. Either read is the file's every line: it finds
// the file UTF-8 (Read.validUTF8), so that checkUTF8 need not read it
// again, or not (Read.encodingProblem: refused).
func (t *together) fileLines(ctx context.Context, candidates []*Read) (map[*Read]csvFileLines, error) {
	linesOf := map[*Read]csvFileLines{}
	var onServer []*Read
	var paths []string
	for _, r := range candidates {
		if !r.listed && isLocalFile(r.Paths[0]) {
			if l, ok := localCSVFileLines(localPath(r.Paths[0])); ok {
				linesOf[r] = l
				r.validUTF8 = true
				continue
			}
			if _, err := os.Stat(localPath(r.Paths[0])); err == nil {
				continue // not UTF-8: Spark types it alone
			}
		}
		onServer = append(onServer, r)
		paths = append(paths, literalPath(r.Paths[0]))
	}
	if len(onServer) == 0 {
		return linesOf, nil
	}
	lines, err := t.c.server.csvFileLines(ctx, paths, validUTF8Expr(t.c.SparkVersion(), "value"))
	t.done.requests++
	if err != nil {
		if stop, e := stopTogether(ctx, err); stop {
			return nil, e
		}
	}
	for r, l := range matchSparkPaths(onServer, lines) {
		if l.notUTF8 > 0 {
			r.encodingProblem = notUTF8Lines(l.notUTF8, "a file")
			continue // refused
		}
		linesOf[r] = l
		r.validUTF8 = true // (csvTogetherOptions take no encoding)
	}
	return linesOf, nil
}

// groupByHeader groups the candidates with lines by their options
// (order: the keys as first seen) and records their header lines; the
// others (no lines, blank lines, no header) go to Spark alone.
func (t *together) groupByHeader(candidates []*Read, linesOf map[*Read]csvFileLines) (order []string, byKey map[string][]*Read) {
	byKey = map[string][]*Read{}
	t.headers = map[string]*csvHeaderLine{}
	for _, r := range candidates {
		l, ok := linesOf[r]
		// Records are split by Spark's CSV parser here and alone alike,
		// blank lines included: only lines' filters differ on them.
		if !ok || l.blankish > 0 && !csvRecords(r.Options) || l.first == "" {
			t.rest = append(t.rest, r)
			continue
		}
		key := csvTogetherKey(r)
		if byKey[key] == nil {
			order = append(order, key)
		}
		byKey[key] = append(byKey[key], r)
		if t.headers[headerKey(key, l.first)] == nil {
			t.headers[headerKey(key, l.first)] = &csvHeaderLine{line: l.first, options: r.Options}
		}
	}
	return order, byKey
}

// headerNames has Spark parse each header line as the files' header, so
// that the names are Spark's own (empty and repeated names included).
func (t *together) headerNames(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.parallelism)
	for _, k := range sortedKeys(t.headers) {
		h := t.headers[k]
		g.Go(func() error {
			schema, err := t.c.server.csvHeaderNames(gctx, h.line, h.options)
			t.mu.Lock()
			defer t.mu.Unlock()
			t.done.requests++
			if err == nil {
				h.names = schema.Names()
			} else if stop, e := stopTogether(ctx, err); stop {
				return e
			}
			return nil
		})
	}
	return g.Wait()
}

// laneBatches lays the files whose header Spark named out in lanes, in
// batches of about equal cells, each at most maxLaneCells: with k
// batches a batch has about 1/k of the lines and 1/k of the lanes, so k
// batches cost 1/k of one.
func (t *together) laneBatches(order []string, byKey map[string][]*Read, linesOf map[*Read]csvFileLines) []*laneBatch {
	var batches []*laneBatch
	for _, key := range order {
		var typed []*Read
		var lines, lanes int64
		for _, r := range byKey[key] {
			l := linesOf[r]
			if h := t.headers[headerKey(key, l.first)]; len(h.names) > 0 && !(csvRecords(r.Options) && !headerRecord(l.first, r.Options, h.names)) {
				typed = append(typed, r)
				lines += l.lines
				lanes += int64(len(h.names))
				if t.witnessed[r] {
					lanes += 2 * int64(len(h.names))
				}
			} else {
				t.rest = append(t.rest, r)
			}
		}
		k := max(1, int(math.Ceil(math.Sqrt(float64(lines)*float64(lanes)/maxLaneCells))), int((lanes+maxLanes-1)/maxLanes))
		var cur *laneBatch
		for i, r := range typed {
			l := linesOf[r]
			cols := len(t.headers[headerKey(key, l.first)].names)
			width := cols
			if t.witnessed[r] {
				width *= 3
			}
			if cur == nil || i*k/len(typed) != (i-1)*k/len(typed) || cur.lanes.width+width > maxLanes {
				tokenizer, inference := csvTogetherOptionsOf(r.Options)
				cur = &laneBatch{lanes: csvLanes{width: 1, tokenizer: tokenizer, inference: inference, records: csvRecords(r.Options)}}
				batches = append(batches, cur)
			}
			cur.lanes.paths = append(cur.lanes.paths, literalPath(r.Paths[0]))
			// Its data lines: lines with content but the header.
			f := csvLaneFile{path: sparkPathKey(r.Paths[0]), header: l.first, offset: cur.lanes.width, columns: cols, data: l.lines > 1, witnessed: t.witnessed[r]}
			if cur.lanes.records {
				// Its records besides the header: a line besides the
				// header's (the read proves the header one line), or a
				// blank one, which Spark's parser reads as a record.
				f.names, f.data = t.headers[headerKey(key, l.first)].names, l.lines > 1 || l.blankish > 0
			}
			cur.lanes.files = append(cur.lanes.files, f)
			cur.lanes.width += f.lanes()
			cur.reads = append(cur.reads, r)
		}
	}
	// A file past the split alone in its batch saves no request, and its
	// lanes (three a column, tokenized and classified) cost Spark more
	// than its inference alone: it is asked alone.
	kept := batches[:0]
	for _, b := range batches {
		if len(b.reads) == 1 && b.lanes.files[0].witnessed {
			t.rest = append(t.rest, b.reads[0])
			continue
		}
		kept = append(kept, b)
	}
	return kept
}

// typeLanes has Spark infer each batch's lanes and gives each file the
// types of its own lanes; a batch that fails, or a file whose marker
// says its lines did not all arrive, goes to Spark alone.
func (t *together) typeLanes(ctx context.Context, batches []*laneBatch) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.parallelism)
	for _, b := range batches {
		g.Go(func() error {
			schema, err := t.c.server.csvLaneTypes(gctx, b.lanes)
			t.mu.Lock()
			defer t.mu.Unlock()
			t.done.requests++
			if err == nil && len(schema.Fields) != b.lanes.width {
				err = fmt.Errorf("lanes: %d columns, want %d", len(schema.Fields), b.lanes.width)
			}
			if err != nil {
				if stop, e := stopTogether(ctx, err); stop {
					return e
				}
				t.rest = append(t.rest, b.reads...)
				return nil
			}
			t.takeTypes(b, schema)
			return nil
		})
	}
	return g.Wait()
}

// takeTypes gives each file of b the types of its lanes in schema.
func (t *together) takeTypes(b *laneBatch, schema sparkmerge.Schema) {
	for i, r := range b.reads {
		f := b.lanes.files[i]
		if marked := schema.Fields[f.offset+f.columns].Type.Kind == sparkmerge.KindInt; marked != f.data {
			// Its lines did not all reach its lanes (a line equal to its
			// header?), or not its own: Spark types it alone.
			t.rest = append(t.rest, r)
			continue
		}
		names := t.headers[headerKey(csvTogetherKey(r), f.header)].names
		fields := make([]sparkmerge.Field, f.columns)
		invariant := true
		for j := range fields {
			fields[j] = sparkmerge.Field{Name: names[j], Type: schema.Fields[f.offset+j].Type, Nullable: true}
			if f.witnessed {
				high, low := schema.Fields[f.offset+f.columns+1+2*j].Type, schema.Fields[f.offset+f.columns+2+2*j].Type
				invariant = invariant && splitInvariant(fields[j].Type, witnessOf(high), witnessOf(low))
			}
		}
		if !invariant {
			// A lane whose type another split could change: Spark
			// types the file alone.
			t.rest = append(t.rest, r)
			continue
		}
		r.Schema = sparkmerge.Schema{Fields: fields}
		r.firstLine = f.header
		// Its header alone: its types say nothing (see markHeaderOnly,
		// which asks Spark of files typed alone).
		r.noRows = !f.data
		t.done.files++
	}
}

// matchSparkPaths finds each read's file among files Spark named by their
// URIs (file:/a%20b.csv for /a b.csv).
func matchSparkPaths(reads []*Read, files []csvFileLines) map[*Read]csvFileLines {
	byPath := make(map[string]csvFileLines, len(files))
	for _, f := range files {
		if d, err := url.PathUnescape(f.path); err == nil {
			byPath[sparkPathKey(d)] = f
		}
	}
	out := make(map[*Read]csvFileLines, len(reads))
	for _, r := range reads {
		if f, ok := byPath[sparkPathKey(r.Paths[0])]; ok {
			out[r] = f
		}
	}
	return out
}

// sparkPathKey is a path as given, or as Spark names it once unescaped,
// with a local file's scheme dropped: equal for the same file.
func sparkPathKey(p string) string {
	if rest, ok := strings.CutPrefix(p, "file:"); ok {
		p = "/" + strings.TrimLeft(rest, "/")
	}
	return p
}

// sparkPathKeyExpr is the sparkPathKey of each line's file in SQL: its
// URI unescaped (url_decode reads + as a space, which a URI keeps as
// itself), a local file's scheme dropped.
const sparkPathKeyExpr = `regexp_replace(url_decode(replace(_metadata.file_path, '+', '%2B')), '^file:/+', '/')`

// localCSVFileLines is csvFileLines of the local file at path, split into
// lines as Spark's text reader splits it (Hadoop's LineReader: at CR, LF
// or CRLF, a UTF-8 byte-order mark at its start skipped); false when the
// file cannot be read or is not UTF-8, which Spark would read otherwise.
func localCSVFileLines(path string) (csvFileLines, bool) {
	data, err := os.ReadFile(path)
	if err != nil || !utf8.Valid(data) {
		return csvFileLines{}, false
	}
	return csvTextLines(data), true
}

// csvTextLines is csvFileLines of a CSV file's text, split into lines as
// Spark's text reader splits it (see localCSVFileLines).
func csvTextLines(data []byte) csvFileLines {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var f csvFileLines
	for len(data) > 0 {
		end := bytes.IndexAny(data, "\r\n")
		line, next := data, []byte(nil)
		if end >= 0 {
			line, next = data[:end], data[end+1:]
			if data[end] == '\r' && len(next) > 0 && next[0] == '\n' {
				next = next[1:]
			}
		}
		content := false
		for _, c := range line {
			if c > ' ' {
				content = true
				break
			}
		}
		switch {
		case content && f.lines == 0:
			f.first = string(line)
			f.lines++
		case content:
			f.lines++
		case len(line) > 0:
			f.blankish++
		}
		data = next
	}
	return f
}

// fileSplitBytes is the largest file Spark reads alone in one partition,
// whatever the server's cores: min(spark.sql.files.maxPartitionBytes,
// spark.sql.files.openCostInBytes) (FilePartition.maxSplitBytes is at
// least the smaller of them).
//
// legacyTime reports whether the session parses dates and timestamps by
// the legacy parsers (spark.sql.legacy.timeParserPolicy=LEGACY, or a
// server that does not say), whose acceptance the witnesses of files
// larger than the split do not know.
func (c *Client) fileSplitBytes(ctx context.Context) (split int64, legacyTime, ok bool) {
	const maxPartition, openCost, timeParser = "spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes", "spark.sql.legacy.timeParserPolicy"
	values, err := c.server.conf(ctx, maxPartition, openCost, timeParser)
	if err != nil {
		return 0, false, false
	}
	a, okA := byteSize(values[maxPartition])
	b, okB := byteSize(values[openCost])
	if !okA || !okB {
		return 0, false, false
	}
	policy, said := values[timeParser]
	return min(a, b), !said || strings.EqualFold(policy, "LEGACY"), true
}

// planSplit is the session's split (fileSplitBytes) as one plan reads
// it: asked of the server the first time a stage needs it, and not again
// (a plan changes none of the settings it depends on).
type planSplit struct {
	c          *Client
	once       sync.Once
	split      int64
	legacyTime bool
	ok         bool
}

// splitOncePerPlan is a plan's planSplit.
func (c *Client) splitOncePerPlan() *planSplit { return &planSplit{c: c} }

// get is fileSplitBytes, asked once.
func (p *planSplit) get(ctx context.Context) (split int64, legacyTime, ok bool) {
	p.once.Do(func() { p.split, p.legacyTime, p.ok = p.c.fileSplitBytes(ctx) })
	return p.split, p.legacyTime, p.ok
}

// byteSize reads a Spark size setting ("128MB", "4194304", "4m") in bytes,
// as JavaUtils.byteStringAsBytes does.
func byteSize(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		shift  uint
	}{{"pb", 50}, {"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10}, {"p", 50}, {"t", 40}, {"g", 30}, {"m", 20}, {"k", 10}, {"b", 0}}
	shift := uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = rest, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, false
	}
	return n << shift, true
}

// ParseByteSize reads a size as Spark's settings write it ("512m",
// "64MB", "4194304": binary units, JavaUtils.byteStringAsBytes) or with
// KiB, MiB, GiB or TiB.
func ParseByteSize(s string) (int64, error) {
	size := strings.ToLower(strings.TrimSpace(s))
	if rest, ok := strings.CutSuffix(size, "ib"); ok && rest != "" && strings.ContainsAny(rest[len(rest)-1:], "kmgt") {
		size = rest + "b" // Spark's notation: 64MiB is 64mb
	}
	n, ok := byteSize(size)
	if !ok {
		return 0, fmt.Errorf("size %q: want bytes, or a number and a unit, e.g. 64MiB, 512m or 1g", s)
	}
	return n, nil
}

// sqlMap is a SQL map of string keys and values, in key order.
func sqlMap(m map[string]string) string {
	if len(m) == 0 {
		return "map()"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, sparkmerge.QuoteString(k), sparkmerge.QuoteString(m[k]))
	}
	return "map(" + strings.Join(parts, ", ") + ")"
}

// csvLineHasContent is the SQL condition of a line inference reads: one
// with a character other than a space or a control character.
const csvLineHasContent = `value RLIKE '[^\\x00-\\x20]'`

// laneFileExpr is the SQL of each line's file's place among the lanes
// (NULL for a file not among them), by _metadata.file_path.
func (l csvLanes) laneFileExpr() string {
	var parts []string
	for _, f := range l.files {
		parts = append(parts, sparkmerge.QuoteString(f.path),
			fmt.Sprintf("named_struct('header', %s, 'offset', %d, 'columns', %d, 'witnessed', %t)", sparkmerge.QuoteString(f.header), f.offset, f.columns, f.witnessed))
	}
	return "element_at(map(" + strings.Join(parts, ", ") + "), " + sparkPathKeyExpr + ") AS f"
}

// laneLineExpr is the SQL of a file's line as a line of the lanes: its
// values tokenized by the file's parser, as wide as its header, quoted, in
// its lanes; every other lane empty.
func (l csvLanes) laneLineExpr() string {
	tokenizer := map[string]string{"mode": "PERMISSIVE"}
	for k, v := range l.tokenizer {
		tokenizer[k] = v
	}
	quoted := quotedLaneOptions()
	// One from_csv per width (and witnessing): its schema must be a
	// constant.
	type shape struct {
		columns   int
		witnessed bool
	}
	shapes := map[shape]bool{}
	for _, f := range l.files {
		shapes[shape{f.columns, f.witnessed}] = true
	}
	var ss []shape
	for s := range shapes {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool {
		if ss[i].columns != ss[j].columns {
			return ss[i].columns < ss[j].columns
		}
		return !ss[i].witnessed && ss[j].witnessed
	})
	var b strings.Builder
	b.WriteString("concat(repeat(',', f.offset), CASE")
	for _, sh := range ss {
		cols := make([]string, sh.columns)
		for i := range cols {
			cols[i] = fmt.Sprintf("c%d STRING", i)
		}
		parsed := fmt.Sprintf("from_csv(value, %s, %s)", sparkmerge.QuoteString(strings.Join(cols, ", ")), sqlMap(tokenizer))
		fmt.Fprintf(&b, " WHEN f.columns = %d AND f.witnessed = %t THEN ", sh.columns, sh.witnessed)
		if !sh.witnessed {
			fmt.Fprintf(&b, "concat(to_csv(%s, %s), ',1')", parsed, quoted)
			continue
		}
		// The tokens parsed once, bound to s.
		fmt.Fprintf(&b, "transform(array(%s), s -> concat(to_csv(s, %s), ',1', %s))[0]", parsed, quoted, witnessLanes(sh.columns, "s"))
	}
	// No empty lanes after the file's: inference leaves the lanes past a
	// shorter line's end as they were (laneWidthLine sets the width).
	b.WriteString(" END) AS value")
	return b.String()
}

// headerRecord reports whether a file read with options whose header line
// is line, of the names Spark parses there, may be read by its records
// under those names (csvLanes.records): Spark's check of its header
// compares the names as written with them, so a read of a header Spark
// renames (an empty or a repeated name) would fail, as would one whose
// quotes leave a value open past the line (a header over several lines).
// Such a file is Spark's alone, instead of failing the inference of its
// batch. A line without a quote or an escape is its names split at the
// separator, where Spark renamed none; of another, names that look
// renamed (_c<i>, see renamedAsRepeated) go alone.
func headerRecord(line string, options map[string]string, names []string) bool {
	if tokens, ok := splitHeader(line, options); ok {
		return slices.Equal(tokens, names)
	}
	quote := optionValue(options, "quote")
	if quote == "" {
		quote = `"`
	}
	if strings.Count(line, quote)%2 != 0 {
		return false
	}
	fields := make([]sparkmerge.Field, len(names))
	for i, name := range names {
		if name == "_c"+strconv.Itoa(i) {
			return false
		}
		fields[i] = sparkmerge.Field{Name: name, Type: sparkmerge.DataType{Kind: sparkmerge.KindString}}
	}
	return !renamedAsRepeated(sparkmerge.Schema{Fields: fields})
}

// splitHeader is a CSV header line read with options split at its
// separator, where that is how Spark's parser splits it: a line (not
// empty) with no quote and no escape character, a separator of one
// character. Spark's names of such a line are these values as written,
// unless it renamed one (empty, the nullValue, repeated, or trimmed by
// an ignore...WhiteSpace option).
func splitHeader(line string, options map[string]string) ([]string, bool) {
	quote, escape, sep := optionValue(options, "quote"), optionValue(options, "escape"), optionValue(options, "sep")
	if quote == "" {
		quote = `"`
	}
	if escape == "" {
		escape = `\`
	}
	if sep == "" {
		sep = optionValue(options, "delimiter")
	}
	if sep == "" {
		sep = ","
	}
	if line == "" || strings.Contains(line, quote) || strings.Contains(line, escape) || len(sep) != 1 {
		return nil, false
	}
	return strings.Split(line, sep), true
}

// csvRecordRead is one read of the records of files of one header among
// lanes of records (csvLanes.records).
type csvRecordRead struct {
	paths []string
	// schema is the header's names, every column a string (DDL).
	schema string
}

// recordReads are the reads of the lanes' files, one per header (its
// names), in the files' order.
func (l csvLanes) recordReads() []csvRecordRead {
	var reads []csvRecordRead
	byHeader := map[string]int{}
	for i, f := range l.files {
		fields := make([]sparkmerge.Field, len(f.names))
		for j, name := range f.names {
			fields[j] = sparkmerge.Field{Name: name, Type: sparkmerge.DataType{Kind: sparkmerge.KindString}, Nullable: true}
		}
		schema := sparkmerge.Schema{Fields: fields}.String()
		k, seen := byHeader[schema]
		if !seen {
			k = len(reads)
			byHeader[schema] = k
			reads = append(reads, csvRecordRead{schema: schema})
		}
		reads[k].paths = append(reads[k].paths, l.paths[i])
	}
	return reads
}

// recordOptions are the options the lanes' files' records are read
// with: the files' parser options with multiLine, the header dropped at
// each file's start and checked against the names read (enforceSchema
// false: a file whose first record is not its header line's names fails
// the read), PERMISSIVE, so that a row of another width is cut or padded
// (the inference of a file alone types the header's columns only, and
// skips a value it lacks), not dropped or failed.
func (l csvLanes) recordOptions() map[string]string {
	options := map[string]string{}
	for k, v := range l.tokenizer {
		options[k] = v
	}
	options["multiLine"], options["header"], options["enforceSchema"], options["mode"] = "true", "true", "false", "PERMISSIVE"
	return options
}

// recordLineExpr is the SQL of a record (the struct of its values,
// record) as a line of the lanes: its values quoted, in its file's lanes
// (f, laneFileExpr), then its marker.
func (l csvLanes) recordLineExpr() string {
	return "concat(repeat(',', f.offset), to_csv(record, " + quotedLaneOptions() + "), ',1') AS value"
}

// quotedLaneOptions are the options of to_csv writing a file's values
// into its lanes: every value quoted, as the lanes' inference reads them
// back (laneInferenceOptions), a null as an empty value.
func quotedLaneOptions() string {
	return sqlMap(map[string]string{"quoteAll": "true", "escape": `"`, "quote": `"`, "sep": ",",
		"ignoreLeadingWhiteSpace": "false", "ignoreTrailingWhiteSpace": "false", "nullValue": ""})
}

// laneWidthLine is the SQL of the lanes' first line, every lane empty:
// Spark's inference of CSV lines without a header takes as many columns
// as the first line has (a line that is not first, and shorter, leaves
// the columns past its end as they were).
func (l csvLanes) laneWidthLine() string {
	return fmt.Sprintf("SELECT repeat(',', %d) AS value", l.width-1)
}

// laneInferenceOptions are the options of the lanes' CSV inference.
func (l csvLanes) laneInferenceOptions() map[string]string {
	options := map[string]string{"header": "false", "inferSchema": "true", "sep": ",", "quote": `"`, "escape": `"`,
		"maxColumns": strconv.Itoa(max(l.width+1, 20480))}
	for k, v := range l.inference {
		if !strings.EqualFold(k, "inferSchema") {
			options[k] = v
		}
	}
	if v := optionValue(l.inference, "inferSchema"); v != "" {
		options["inferSchema"] = v
	}
	return options
}
