package spark

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// CSV files too large for the lanes (typeCSVTogether: past
// maxWitnessedFile, a lake's 64 MB to 1 GB files) were each typed by an
// inference of their own, two Spark jobs a file: 42 jobs for lake-csv's
// 20 files of four header lines, where their bytes took the same task time
// in one inference per header (docs/benchmarks-history.md); so were files
// of a few MB up to the split, which fill a lane batch each (see
// minByHeaderFile). Here the files of one header line and options (past
// the split, or of at least minByHeaderFile) are typed by one Spark
// inference of them all (a read of the group), and each file takes the
// group's types only where they are provably those of its read alone.
//
// Spark's inference only widens a column's type as it folds a file's
// values (CSVInferSchema.inferField merges the type so far with each
// value's by compatibleType, which never narrows; two types of no common
// type make a string). So the type the client's rules fold a file's head
// into (its first lines: infer.Rules.CSVStartOf) is the least the file's
// own can be, and the group's, one fold of every file's values in one
// partition (groupRead; not a merge of partitions' types, which makes
// two of no common type null), the most, save where the fold's order
// shows through: a year after a date or timestamp is a timestamp, but
// first in a split an int, which a later date or timestamp makes a
// string. Where a column's type in the head
// equals the group's, it is the file's:
//
//   - a string: nothing is wider;
//   - a number or a boolean: no value in the group is of another kind (a
//     date or a timestamp, a boolean among numbers, a number among
//     booleans: in the fold they make a string), so the folds are plain
//     merges, in any order, and the file's type lies between;
//   - a date: every value in the group is a date (a year or anything else
//     among dates makes a timestamp or a string);
//   - a timestamp: the head's fold reached it from a date or timestamp
//     (a year first makes a string), and so does each later split of the
//     file read alone where its first value in the column is a date or a
//     timestamp (infer.Rules.CSVSplitStart, on the bytes at each split's
//     start: fileSplits, Spark's FilePartition.maxSplitBytes for the file
//     alone); after that a year is a timestamp alone as in the group.
//
// A file whose head the rules refuse, with a column without a value in
// its head, or with any column unproven, goes on to the lanes or to Spark
// alone, as before; so does every file of a group whose inference fails.
//
// The client reads of each file its head (headBytes) and the start of
// each later split (splitStartBytes), read here of a local file,
// fetched in one binaryFile job (which reads each file whole on the
// server, so only files up to maxSlicedFile) of files only the server
// sees. Of lake-csv's 20 files of 50 MB, 20 heads and 20 split starts:
// 1.6 MB of its 1 GB.

const (
	// headBytes is the most read of a file at its start: hundreds of
	// rows, whose types are the file's least.
	headBytes = 64 << 10
	// splitStartBytes is the most read at each later split's start,
	// where only the first value of each timestamp column counts: about
	// a hundred rows. A split is at least the smaller of
	// maxPartitionBytes and openCostInBytes (4 MiB by default), so the
	// client reads at most 0.4% of a file past its head.
	splitStartBytes = 16 << 10
	// maxSplitStarts bounds the splits of a file read for it: a file
	// Spark splits more (a session of tiny splits) is Spark's to type
	// alone. A 256 MiB file in 4 MiB splits has 63.
	maxSplitStarts = 64
	// maxSlicedFile bounds the files only the server sees whose slices
	// are fetched, whatever the server's memory (fileSplits.sliceLimit):
	// binaryFile holds each whole in the server's memory while it cuts
	// the slices. Larger ones are Spark's to type alone.
	maxSlicedFile = 256 << 20
)

// fileSplits are the session's settings that decide where Spark splits
// a file it reads alone (FilePartition.maxSplitBytes over the file: the
// smaller of maxPartitionBytes and the larger of openCostInBytes and the
// file's size plus openCostInBytes over minPartitions).
type fileSplits struct {
	maxPartitionBytes, openCost int64
	// minPartitions is spark.sql.files.minPartitionNum, else the
	// session's leafNodeDefaultParallelism (its cores).
	minPartitions int64
	// taskHeap is the heap one of the server's tasks has (see
	// taskHeapOf); 0: not known.
	taskHeap int64
}

// sliceLimit is the largest file only the server sees whose slices
// readSlices fetches, by the heap of the server's tasks: binaryFile reads
// each file whole into one task's memory and copies it into a row before
// the slices are cut, about four times the file at once. On a local[2]
// server of 1 GiB (the --local default) four files of 100 MiB killed the
// server with an OutOfMemoryError (two tasks at once), four of 60 MiB
// did not; an eighth of a task's heap is 64 MiB there. A larger file is
// Spark's to type alone, which streams it.
func (s fileSplits) sliceLimit() int64 {
	if s.taskHeap <= 0 {
		return maxSlicedFile
	}
	return min(maxSlicedFile, s.taskHeap/8)
}

// taskHeapOf is the heap one task of a server of settings (spark.master,
// spark.driver.memory, spark.executor.memory, spark.executor.cores, those
// it has) has: its executors' heap (the driver's on a local master) over
// an executor's cores (local[N]'s N; else spark.executor.cores, else the
// session's parallelism, as many as an executor can have). Spark's
// default heap, 1 GiB, stands for one not set.
func taskHeapOf(settings map[string]string, parallelism int64) int64 {
	master := settings["spark.master"]
	heapKey, cores := "spark.executor.memory", int64(0)
	if master == "local" || strings.HasPrefix(master, "local[") {
		heapKey = "spark.driver.memory"
		cores = 1
		if inner, ok := strings.CutPrefix(master, "local["); ok {
			n, _, _ := strings.Cut(strings.TrimSuffix(inner, "]"), ",")
			cores, _ = strconv.ParseInt(strings.TrimSpace(n), 10, 64) // 0 for *
		}
	} else if n, err := strconv.ParseInt(settings["spark.executor.cores"], 10, 64); err == nil {
		cores = n
	}
	if cores <= 0 {
		cores = parallelism
	}
	heap, ok := memorySize(settings[heapKey])
	if !ok {
		heap = 1 << 30
	}
	return heap / max(cores, 1)
}

// memorySize reads a Spark memory setting ("1g", "512m", "2048": a
// number alone is MiB, as Utils.memoryStringToMb reads it) in bytes.
func memorySize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		s += "m"
	}
	n, ok := byteSize(s)
	return n, ok && n > 0
}

// splitBytes is Spark's maxSplitBytes for a file of size bytes alone.
func (s fileSplits) splitBytes(size int64) int64 {
	return min(s.maxPartitionBytes, max(s.openCost, (size+s.openCost)/s.minPartitions))
}

// starts are the offsets of the splits after the first of a file of size
// bytes read alone (PartitionedFileUtil.splitFiles: every splitBytes),
// each its own partition.
func (s fileSplits) starts(size int64) []int64 {
	split := s.splitBytes(size)
	var out []int64
	for at := split; at < size; at += split {
		out = append(out, at)
	}
	return out
}

// headerFile is one candidate file of typeCSVByHeader: its head and the
// starts of its later splits, as read, and the types its head folds to.
type headerFile struct {
	r      *Read
	head   []byte   // whole lines from the file's start
	splits [][]byte // from each later split's start, its skipped line cut off
	start  infer.CSVStart
}

// provable are the files whose heads the rules fold, every column with
// a value: only they can be proven to have their group's types, so only
// they are read by a group's inference.
func provable(files []*headerFile, rules infer.Rules) []*headerFile {
	var out []*headerFile
	for _, f := range files {
		start, err := rules.CSVStartOf(f.head, f.r.Options)
		if err != nil || slices.Contains(start.Valued, false) {
			continue
		}
		f.start = start
		out = append(out, f)
	}
	return out
}

// headerGroup are files of one header line and options, typed by one
// inference.
type headerGroup struct {
	line  string
	files []*headerFile
}

// typeCSVByHeader types the CSV reads it can by one Spark inference per
// header line (see the top of this file) and returns the reads left to
// Spark alone. It fails only when the server is unreachable or ctx ended.
func (c *Client) typeCSVByHeader(ctx context.Context, reads []*Read, listed map[string]remoteFile, parallelism int, sessionSplit *planSplit) (rest []*Read, done typedTogether, err error) {
	rules, ok := infer.RulesFor(c.SparkVersion())
	if !ok || !typesTogether(c.SparkVersion()) {
		return reads, done, nil
	}
	candidates := byHeaderCandidates(reads, listed, rules)
	if len(candidates) < 2 {
		return reads, done, nil
	}
	unsplit, legacyTime, ok := sessionSplit.get(ctx)
	if !ok || legacyTime {
		return reads, done, nil // (the rules' dates and times are not the legacy parsers')
	}
	candidates = slices.DeleteFunc(candidates, func(r *Read) bool {
		size, _ := csvFileSize(r)
		return !worthAGroup(size, unsplit)
	})
	if len(candidates) < 2 {
		return reads, done, nil
	}
	splits, err := c.server.fileSplitSettings(ctx)
	if err != nil {
		if stop, e := stopTogether(ctx, err); stop {
			return nil, done, e
		}
		return reads, done, nil
	}
	// Reads naming many files: listed on the driver when local, else by
	// few tasks (as typeCSVTogether's).
	allLocal := true
	for _, r := range candidates {
		allLocal = allLocal && !r.listed
	}
	restore, err := c.tune(ctx, tuning{listSerially: allLocal, fewListingTasks: !allLocal})
	if err != nil {
		return nil, done, err
	}
	defer restore()
	files, err := c.readSlices(ctx, candidates, listed, splits)
	if err != nil {
		return nil, done, err
	}
	groups := foldGroups(groupByHeaderLine(provable(files, rules)))
	typed := map[*Read]bool{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallelism, 1))
	for _, group := range groups {
		g.Go(func() error {
			schema, err := c.server.readSchema(gctx, groupRead(group))
			mu.Lock()
			defer mu.Unlock()
			done.requests++
			if err != nil {
				if stop, e := stopTogether(ctx, err); stop {
					return e
				}
				return nil
			}
			for _, f := range group.files {
				if ownTypes(f, group.line, schema, rules) {
					f.r.Schema = sparkmerge.NewSchema(slices.Clone(schema.Fields)...)
					typed[f.r] = true
					done.files++
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, done, err
	}
	for _, r := range reads {
		if !typed[r] {
			rest = append(rest, r)
		}
	}
	return rest, done, nil
}

// minByHeaderFile is the smallest file up to the split (unsplit, read
// whole in one partition alone) typed by its header line's group. The
// lanes type smaller ones exactly and many in one inference; a file of
// about 1 MiB fills half a lane batch (maxLaneCells, at about 8 bytes a
// cell), so the lanes take such files about one request each (200 files
// of 2.3 MB, four header lines, only on the server: 182 requests, 44 s of
// discovery, where their four header groups' inferences took 7-8 s;
// docs/benchmarks-history.md), and a group's inference reads each
// value once, untokenized and unquoted again.
const minByHeaderFile = 1 << 20

// worthAGroup reports whether a CSV file of size bytes is typed by its
// header line's group rather than among the lanes: past the session's
// split (unsplit: the lanes would need witnesses, typeCSVTogether), or of
// at least minByHeaderFile. A file up to the split has no later split,
// so ownTypes holds it to its head alone.
func worthAGroup(size, unsplit int64) bool {
	return size > unsplit || size >= minByHeaderFile
}

// byHeaderCandidates are the reads typeCSVByHeader may type: plain CSV
// files of options the lanes and the rules take, not read by records, of
// a known size (files only the server sees up to maxSlicedFile).
func byHeaderCandidates(reads []*Read, listed map[string]remoteFile, rules infer.Rules) []*Read {
	var out []*Read
	for _, r := range reads {
		if csvTogetherKey(r) == "" || csvRecords(r.Options) || !clientMayType(r, rules) {
			continue
		}
		size, known := csvFileSize(r)
		switch {
		case !known:
		case r.listed && (size > maxSlicedFile || listed[r.Paths[0]].sparkPath == ""):
		default:
			out = append(out, r)
		}
	}
	return out
}

// readSlices reads each candidate's head and later splits' starts: of a
// local file here, of the others in one Spark job. A file that cannot be
// read (or changed since its listing) is left out.
func (c *Client) readSlices(ctx context.Context, candidates []*Read, listed map[string]remoteFile, splits fileSplits) ([]*headerFile, error) {
	var files []*headerFile
	var fetches []sliceFetch
	remote := map[string]*Read{}
	for _, r := range candidates {
		size, _ := csvFileSize(r)
		starts := splits.starts(size)
		if len(starts) > maxSplitStarts {
			continue
		}
		offsets := append([]int64{0}, starts...)
		if !r.listed {
			if f, ok := localSlices(r, offsets); ok {
				files = append(files, f)
			}
			continue
		}
		if head := r.fetchedHead; len(starts) == 0 && int64(len(head)) == min(size, headBytes) {
			// Its head came with the listing, its rest was not fetched.
			if f, ok := slicedFile(r, [][]byte{head}); ok {
				files = append(files, f)
				continue
			}
		}
		if size > splits.sliceLimit() {
			continue // more than the server's tasks hold whole
		}
		l := listed[r.Paths[0]]
		fetches = append(fetches, sliceFetch{path: r.readPaths()[0], sparkPath: l.sparkPath, offsets: offsets})
		remote[l.sparkPath] = r
	}
	if len(fetches) == 0 {
		return files, nil
	}
	fetched, err := c.server.fileSlices(ctx, fetches, headBytes, splitStartBytes, validUTF8Expr(c.SparkVersion(), "CAST(content AS STRING)"))
	if err != nil {
		if stop, e := stopTogether(ctx, err); stop {
			return nil, e
		}
		return files, nil
	}
	for _, got := range fetched {
		r := remote[got.path]
		if r == nil || got.size != r.listedSize || len(got.slices) == 0 {
			continue
		}
		// (A gzip file's bytes are not its text.)
		r.validUTF8 = r.validUTF8 || got.utf8 && !gzippedText(r)
		if f, ok := slicedFile(r, got.slices); ok {
			files = append(files, f)
		}
	}
	return files, nil
}

// localSlices reads a local file's slices at offsets (the first 0).
func localSlices(r *Read, offsets []int64) (*headerFile, bool) {
	file, err := os.Open(localPath(r.Paths[0]))
	if err != nil {
		return nil, false
	}
	defer file.Close()
	parts := make([][]byte, len(offsets))
	for i, at := range offsets {
		b := make([]byte, splitStartBytes)
		if i == 0 {
			b = make([]byte, headBytes)
		}
		n, err := file.ReadAt(b, at)
		if n == 0 && err != nil {
			return nil, false
		}
		parts[i] = b[:n]
	}
	return slicedFile(r, parts)
}

// slicedFile is the headerFile of r from its slices: the head cut to
// whole lines, each later split's start without the line Spark's reader
// skips there (up to its first line feed; false where that line holds a
// carriage return other than before it, which Hadoop's reader would end
// it at).
func slicedFile(r *Read, slices [][]byte) (*headerFile, bool) {
	head := slices[0]
	end := bytes.LastIndexByte(head, '\n')
	if end < 0 {
		return nil, false
	}
	f := &headerFile{r: r, head: head[:end+1]}
	for _, s := range slices[1:] {
		lf := bytes.IndexByte(s, '\n')
		if lf < 0 {
			return nil, false
		}
		if cr := bytes.IndexByte(s[:lf], '\r'); cr >= 0 && cr != lf-1 {
			return nil, false
		}
		f.splits = append(f.splits, s[lf+1:])
	}
	return f, true
}

// groupByHeaderLine groups the files by their options and header line
// (their first line with content, as Spark's text reader splits lines and
// its inference takes the first: csvTextLines),
// leaving out groups of one file (as costly typed either way) and files
// whose head has no such line.
func groupByHeaderLine(files []*headerFile) []*headerGroup {
	byKey := map[string]*headerGroup{}
	var order []string
	for _, f := range files {
		lines := csvTextLines(f.head)
		if lines.lines == 0 {
			continue
		}
		line := lines.first
		key := headerKey(csvTogetherKey(f.r), line)
		if byKey[key] == nil {
			byKey[key] = &headerGroup{line: line}
			order = append(order, key)
		}
		byKey[key].files = append(byKey[key].files, f)
	}
	var groups []*headerGroup
	for _, k := range order {
		if g := byKey[k]; len(g.files) > 1 {
			sort.SliceStable(g.files, func(i, j int) bool { return g.files[i].r.order < g.files[j].r.order })
			groups = append(groups, g)
		}
	}
	return groups
}

// groupRead is the read of a group's files in one load, whose schema is
// Spark's inference over them all in one partition: one fold of every
// value (CSVInferSchema.inferField), never a merge of partitions'
// types. mergeRowTypes makes two types of no common type (an int and a
// boolean, a date and an int) null, not a string, so that a later
// partition's type stands alone: in the group, partitions of ints, then
// booleans, then ints are an int, while the file of those ints and
// booleans, split in two alone, is a string (found in the field, 2026-12-06;
// TestCSVTypedByHeaderWhereSplitsMeetOtherKinds). In one fold such
// values make a string, wider than every file's type, as ownTypes needs.
// The text read and the parse are DataFrameReader.csv's own steps
// (TextInputCSVDataSource.infer); maxFoldBytes bounds a group's bytes
// in one partition (foldGroups).
func groupRead(g *headerGroup) *Read {
	first := g.files[0].r
	paths := make([]string, len(g.files))
	for i, f := range g.files {
		paths[i] = f.r.Paths[0]
	}
	return &Read{Name: fmt.Sprintf("%d files of the header %q", len(paths), g.line), Format: "csv", Paths: paths, Options: first.Options, oneFold: true}
}

// maxFoldBytes bounds the bytes of one group's inference (groupRead),
// which reads them in one task: a larger group is typed in several, run
// alongside. lake-csv's four header lines of 255 MB each are one each.
const maxFoldBytes = 256 << 20

// foldGroups are groups cut into groups of at most maxFoldBytes (a file
// larger than that alone), each typed by an inference of its own.
func foldGroups(groups []*headerGroup) []*headerGroup {
	var out []*headerGroup
	for _, g := range groups {
		var cur *headerGroup
		var size int64
		for _, f := range g.files {
			n, _ := csvFileSize(f.r)
			if cur == nil || size+n > maxFoldBytes {
				cur, size = &headerGroup{line: g.line}, 0
				out = append(out, cur)
			}
			cur.files = append(cur.files, f)
			size += n
		}
	}
	return out
}

// ownTypes reports whether schema, Spark's inference over f's group, is
// f's own (see the top of this file): every column's type in its head
// (f.start, of a provable file) equals the group's, and each timestamp
// column starts each later split (after lines equal to header, the
// group's header line) with a date or timestamp.
func ownTypes(f *headerFile, header string, schema sparkmerge.Schema, rules infer.Rules) bool {
	start := f.start
	if len(start.Names) != len(schema.Fields) {
		return false
	}
	var timestamps []int
	for i, field := range schema.Fields {
		if start.Names[i] != field.Name || !start.Valued[i] || !start.Types[i].Equal(field.Type) {
			return false
		}
		if field.Type.Kind == sparkmerge.KindTimestamp {
			timestamps = append(timestamps, i)
		}
	}
	if len(timestamps) == 0 {
		return true
	}
	for _, s := range f.splits {
		if !rules.CSVSplitStart(s, f.r.Options, header, timestamps) {
			return false
		}
	}
	return true
}
