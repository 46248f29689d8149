package spark

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
	"github.com/sparkmerge/sparkmerge/spark/internal/orcfooter"
)

// Files only the server sees (cluster storage, a path mounted on the server
// alone) are typed by the client too, from their contents fetched through
// Spark: one binaryFile job per 128 MiB of small CSV and JSON files and
// Parquet and ORC footers, instead of one Spark inference job (or footer
// request) per file. The client applies Spark's own rules (package infer)
// to a temporary copy, and stamps each file with the size and modification
// time Spark reported, so that such files join positional scans
// (scanBatch), which fail on a file that changed since, as for local files.
//
// A CSV or JSON file is fetched in two steps, so that a file the client's
// rules leave to Spark (a date, a quote, NaN: most real drops) never goes
// to the client whole: first its head (its first remoteHeadBytes; the
// whole of a smaller file), from which the client tells whether its rules
// refuse the file (a value they leave to Spark in one of the head's whole
// lines refuses the whole file: the rules read a file line by line and
// refuse at the first such value); then, only of the files whose head
// they do not refuse, the rest, and the client types the whole file. A
// file whose head is refused is Spark's to type, where it lives, together
// with others where it can (typeCSVTogether, typeJSONTogether). The
// client so receives, per plan:
//
//   - of a CSV or JSON file whose head the rules refuse: at most
//     remoteHeadBytes (64 KiB);
//   - of one they do not (or whose head holds no whole line): the whole
//     file, up to maxRemoteInferFile (16 MiB), to type it on the client
//     (typing it needs every value; Spark typing such files one by one
//     where they live measured 5 to 15 times slower, see
//     docs/clusters.md), within Job.FetchLimit (512 MiB of rests by
//     default). A value past the head may still leave it to Spark, as
//     before; a CSV file of a MiB or more whose header line files of
//     minHeldGroup (64 MiB) or more share is held for their group's
//     inference instead (heldForHeader, typeCSVByHeader: the same time on
//     loopback, 2.8% of the bytes), and fetched after it only where that
//     inference does not prove its types; a JSON file of a MiB or more
//     whose head types as the heads of files of minHeldGroup or more do
//     is held for typeJSONTogether, which types each file as alone
//     (heldForTogether);
//   - of a Parquet or ORC file: its footer, at most footerTailBytes (64
//     KiB);
//   - of a larger file, one whose reader options the rules refuse, or past
//     maxRemoteInferTotal (512 MiB) in all: nothing;
//
// and at most maxRemoteInferTotal in all (Planned.Requests.ResultBytes
// counts what came).
//
// The client reads a file's head whole lines at a time, so that what it
// refuses there the whole file holds. The one check of a file's every
// byte it would have made of the whole file, that the file is UTF-8
// (Spark would read other bytes as U+FFFD), is made where the file lives
// once discovery knows which files the client did not read whole
// (checkUTF8): the server no longer checks every listed file's
// bytes for it, which was a fifth of its work in a listing of 200
// small CSV files whose rests the client then fetched and checked
// itself.

const (
	// maxRemoteInferFile is the largest remote file fetched to type it.
	maxRemoteInferFile = 16 << 20
	// maxRemoteInferTotal bounds the bytes fetched for one plan: past it,
	// Spark infers the rest where the data lives.
	maxRemoteInferTotal = 512 << 20
	// remoteHeadBytes is the most of a remote CSV or JSON file fetched
	// before the client knows its rules may type it: enough for a header
	// and hundreds of rows, in which a file's first date, quote or NaN
	// is almost always; a sixteenth of the 1 MiB files of the benchmark,
	// a thousandth of a lake's 64 MiB ones.
	remoteHeadBytes = 64 << 10
	// remoteFetchChunk bounds the contents one Spark job returns. A job
	// has a fixed cost besides its bytes (measured; see
	// docs/benchmarks.md#files-only-the-server-sees), so
	// fewer, larger jobs type faster; but the server holds a job's results
	// while it sends them: one job of 519 MB, and two of 128 MiB at once,
	// stopped a server whose driver had 1 GiB.
	remoteFetchChunk = 128 << 20
)

// wholeFetchLimit is the most of the rests of files (past their heads)
// fetched in a plan under Job.FetchLimit limit.
func wholeFetchLimit(limit int64) int64 {
	switch {
	case limit == 0:
		return maxRemoteInferTotal
	case limit < 0:
		return 0
	}
	return limit
}

// remoteCopy is a client-side copy of a file only the server sees.
type remoteCopy struct {
	// path is a Parquet or ORC file's temporary copy (its footer, at its
	// place).
	path string
	// content is a CSV or JSON file's contents, typed as soon as they
	// arrive (while the next fetch runs) and then dropped, so that the
	// client holds at most a few fetches' worth.
	content []byte
	// typed: the client has tried to type the file; typing is what it
	// found (nil: it could not try), applied with the other reads'
	// (typeLocallyWithin).
	typed  bool
	typing *localTyping
	stamp  fileStamp // as Spark reported the file
	// settled: modified over two seconds before the fetch, by the server's
	// clock (see settled).
	settled bool
}

// fetchPart is which part of the CSV and JSON files a round of fetches
// returns: their heads (head), or the rest of those whose head the
// client kept (from, only).
type fetchPart struct {
	head, from int64
	// only: the fetches name the files they want (fileFetch.only).
	only bool
}

// fetchLimits are how much of the files a plan's fetches may bring whole.
type fetchLimits struct {
	// wholeBytes bounds the bytes of the rests (past the heads) fetched
	// (wholeFetchLimit of Job.FetchLimit).
	wholeBytes int64
	// holdGroups: CSV files of a header line shared by a group worth
	// Spark's inference (heldForHeader) are not fetched whole but left,
	// with their heads, to typeCSVByHeader; JSON files whose heads type
	// alike in such a group (heldForTogether), to typeJSONTogether.
	holdGroups bool
}

// fetched is what fetchRemoteCopies did.
type fetched struct {
	// jobs are the Spark jobs it ran.
	jobs int
	// restBytes are the bytes of the rests it fetched.
	restBytes int64
	// pastLimit counts the files whose rest it did not fetch for the
	// limit (Planned.PastFetchLimit).
	pastLimit int
}

// fetchRemoteCopies copies the contents of the small remote CSV and JSON
// files (in two rounds: heads, then the rest of the files whose heads the
// client's rules do not refuse), and the footers of the Parquet and ORC
// files, among reads into dir (a few Spark jobs, one at a time), for
// inferLocally. A file whose size or modification time differs from its
// listing is left to Spark, as are files past the size limits and files
// whose reader options the rules refuse. A failed fetch leaves its files
// to Spark, unless the server is unreachable or ctx ended.
func (c *Client) fetchRemoteCopies(ctx context.Context, reads []*Read, listed map[string]remoteFile, dir string, rules infer.Rules, limits fetchLimits) (done fetched, err error) {
	// CSV and JSON files are typed from memory while the next fetch runs
	// (writing 496 MB of JSON to a temporary directory, then reading it
	// back, took a quarter of discovery); Parquet and ORC footers go to
	// dir. Typing a job's files waits for a core, not the next fetch.
	k := &copyKeeper{listed: listed, dir: dir, rules: rules, cores: make(chan struct{}, runtime.GOMAXPROCS(0)),
		heads: map[*Read][]byte{}}
	defer k.typing.Wait()
	var candidates []*Read
	for _, r := range reads {
		if clientMayType(r, rules) {
			candidates = append(candidates, r)
		}
	}
	heads := fetchPart{head: remoteHeadBytes}
	// The heads the listings brought (listingHeads) are taken in as a
	// fetch of them would be; the other files' heads are fetched.
	candidates, budget, err := k.keepListedHeads(candidates, heads)
	if err != nil {
		return done, err
	}
	fetches, budget := planFetches(candidates, listed, heads, budget)
	if done.jobs, err = c.runFetches(ctx, k, fetches, heads); err != nil || len(k.wanted) == 0 {
		return done, err
	}
	var held []*Read
	if limits.holdGroups {
		held = append(heldForHeader(k.wanted, k.heads, listed, rules), heldForTogether(k.wanted, k.heads, listed, rules)...)
	}
	rest := fetchPart{from: remoteHeadBytes, only: true}
	allowed := min(budget, limits.wholeBytes)
	fetches, left := planFetches(without(k.wanted, held), listed, rest, allowed)
	done.restBytes = allowed - left
	done.pastLimit = len(k.wanted) - len(held)
	for _, f := range fetches {
		done.pastLimit -= len(f.reads)
	}
	more, err := c.runFetches(ctx, k, fetches, rest)
	done.jobs += more
	// The heads of the files whose rest was not fetched (held, or past
	// the limit; one that came back goes, kept or changed) are
	// typeCSVByHeader's, which Spark types.
	for r, head := range k.heads {
		if r.Format == "csv" && !gzippedText(r) {
			r.fetchedHead = head
		}
	}
	for _, r := range held {
		r.heldForHeader = r.Format == "csv"
	}
	return done, err
}

// minHeldGroup is the least a header line's files must hold in all to be
// held for its inference (heldForHeader) rather than fetched: on
// loopback Spark's inference of four groups of 115 MB (lake-csv's small
// files) took what fetching them did, and sent 2.8% of the bytes
// (docs/benchmarks-history.md); a group's inference costs two Spark
// jobs, so small groups are cheaper fetched.
const minHeldGroup = 64 << 20

// heldForHeader are the files of wanted (whose heads the rules take)
// that typeCSVByHeader may type, of a MiB or more (minByHeaderFile),
// provable from their heads, whose heads came with their listing, in
// groups of a header line and options of two files or more that hold
// minHeldGroup or more. A held file that its group's inference does not
// prove is fetched after it (fetchHeldRests), its head taken from its
// listing again.
func heldForHeader(wanted []*Read, heads map[*Read][]byte, listed map[string]remoteFile, rules infer.Rules) []*Read {
	var files []*headerFile
	for _, r := range byHeaderCandidates(wanted, listed, rules) {
		head, file := heads[r], listed[r.Paths[0]]
		if gzippedText(r) || file.head == nil || file.size < minByHeaderFile || int64(len(head)) != min(file.size, headBytes) {
			continue
		}
		if f, ok := slicedFile(r, [][]byte{head}); ok {
			files = append(files, f)
		}
	}
	var held []*Read
	for _, g := range groupByHeaderLine(provable(files, rules)) {
		reads := make([]*Read, len(g.files))
		for i, f := range g.files {
			reads[i] = f.r
		}
		if worthHolding(reads, listed) {
			held = append(held, reads...)
		}
	}
	return held
}

// worthHolding reports whether a group of files is held for Spark's
// inference rather than fetched: two files or more, of minHeldGroup or
// more in all.
func worthHolding(group []*Read, listed map[string]remoteFile) bool {
	var size int64
	for _, r := range group {
		size += listed[r.Paths[0]].size
	}
	return len(group) >= 2 && size >= minHeldGroup
}

// heldForTogether are the JSON files of wanted (whose heads the rules
// take) that typeJSONTogether may type, plain (not gzip), of a MiB or
// more (minByHeaderFile), whose heads the rules type alike (the same
// keys and types) in groups of two files or more that hold minHeldGroup
// or more. typeJSONTogether types each file as Spark alone does (its own
// lane), so a held file needs no proof and is never fetched after. The
// heads' types stand for the merge's reads: files of one schema are one
// JSON read in the merge (groupExact), which costs less than the
// positional scan of fetched files (from_json per line); held files each
// of its own schema would be a read each, so they are fetched. On
// loopback 200 such files of 4.3 MB in four key sets merged in 24.8-30.2
// s held (13.3 MB sent, the client's memory 60-67 MiB) against 30.1-34.4
// s fetched (535 MB, 1.0-1.1 GiB; docs/benchmarks-history.md).
func heldForTogether(wanted []*Read, heads map[*Read][]byte, listed map[string]remoteFile, rules infer.Rules) []*Read {
	groups := map[string][]*Read{}
	var order []string
	for _, r := range wanted {
		key, file := jsonTogetherKey(r), listed[r.Paths[0]]
		if key == "" || gzippedText(r) || file.size < minByHeaderFile {
			continue
		}
		head := heads[r]
		typed, err := localJSONFile(rules, r.Paths[0], head[:bytes.LastIndexByte(head, '\n')+1], r.Options)
		if err != nil || typed.Raw.Kind != sparkmerge.KindStruct {
			continue
		}
		key += "\x00" + typed.Raw.String()
		if groups[key] == nil {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r)
	}
	var held []*Read
	for _, key := range order {
		if worthHolding(groups[key], listed) {
			held = append(held, groups[key]...)
		}
	}
	return held
}

// keepListedHeads takes in the heads the listings brought of candidates'
// files (see listingHeads), as keep takes in a fetch of heads (part), and
// returns the candidates whose heads are still to fetch and what is left
// of maxRemoteInferTotal once every head the listings brought (of these
// files or not) is counted.
func (k *copyKeeper) keepListedHeads(candidates []*Read, part fetchPart) (rest []*Read, budget int64, err error) {
	budget = maxRemoteInferTotal
	for _, f := range k.listed {
		if f.head != nil {
			budget -= int64(len(f.head.content))
		}
	}
	order, byListing := fetchCandidates(candidates, k.listed)
	var headed []*Read
	var fetched []fetchedFile
	for _, l := range order {
		for _, r := range byListing[l] {
			if f := k.listed[r.Paths[0]]; f.head != nil {
				headed = append(headed, r)
				fetched = append(fetched, fetchedFile{remoteFile: remoteFile{path: f.sparkPath, size: f.size, mtimeMillis: f.mtimeMillis}, content: f.head.content, nowMillis: f.head.nowMillis})
			}
		}
	}
	if len(headed) == 0 {
		return candidates, max(budget, 0), nil
	}
	err = k.keep(headed, fetched, part)
	for _, f := range k.listed {
		if f.head != nil {
			f.head.content = nil // kept, or not wanted: the client holds no more of it
		}
	}
	return without(candidates, headed), max(budget, 0), err
}

// typedFromCopies are the formats whose files the client may type from a
// fetched copy (see clientMayType) when they are files of spec, a path
// source of format ("": its files' names say) only the server sees: a
// listing of it brings their heads (listingHeads). None for a source of
// a user's schema, or a named directory read as one dataset (see
// expandRemote).
func typedFromCopies(spec SourceSpec, format string, global map[string]string, rules infer.Rules) []string {
	if spec.Schema != "" || spec.Name != "" && format != "csv" && !IsGlob(spec.Paths[0]) {
		return nil
	}
	formats := []string{format}
	if format == "" {
		formats = []string{"csv", "json", "parquet", "orc"}
	}
	var out []string
	for _, f := range formats {
		exts := plainExtensions[f]
		if len(exts) == 0 {
			continue
		}
		one := spec
		one.Paths = []string{"f" + exts[0]}
		r := &Read{Format: f, Paths: one.Paths, Options: readerOptions(one, f, global)}
		if clientMayType(r, rules) {
			out = append(out, f)
		}
	}
	return out
}

// runFetches runs fetches one at a time, each up to remoteFetchChunk: a
// job of 128 MiB uses both of the server's cores by itself, and costs
// less than two jobs of 64 MiB run at once, which held as many results in
// flight (see remoteFetchChunk). The client types a job's files while the
// next one runs.
func (c *Client) runFetches(ctx context.Context, k *copyKeeper, fetches []remoteFetch, part fetchPart) (jobs int, err error) {
	for _, f := range fetches {
		fetched, err := c.server.fetchFiles(ctx, f.files)
		jobs++
		if err != nil {
			if ctx.Err() != nil {
				return jobs, ctx.Err()
			}
			if errors.Is(err, ErrUnreachable) {
				return jobs, err
			}
			continue // Spark infers these files, as before
		}
		if err := k.keep(f.reads, fetched, part); err != nil {
			return jobs, err
		}
	}
	return jobs, nil
}

// clientMayType reports whether the client's rules may type r's file
// from a fetched copy: not a CSV or JSON file whose name (not of the
// format's plain extension) or reader options they refuse, which would
// be fetched for nothing.
func clientMayType(r *Read, rules infer.Rules) bool {
	if len(r.Paths) != 1 {
		return false
	}
	var err error
	switch r.Format {
	case "csv":
		_, err = localCSVFile(rules, r.Paths[0], []byte{}, r.Options)
	case "json":
		_, err = localJSONFile(rules, r.Paths[0], []byte{}, r.Options)
	default:
		return true
	}
	var refused *infer.Unsupported
	return !errors.Is(err, errNotPlainLocal) && !(errors.As(err, &refused) && refused.Reason == infer.UnsupportedOptions)
}

// remoteFetch is one Spark job of fetchRemoteCopies: it reads a listing
// again or names its files (files.paths), for reads.
type remoteFetch struct {
	files fileFetch
	reads []*Read
}

// planFetches groups the reads the client may type from a copy (small
// CSV, JSON, Parquet and ORC files Spark listed) into fetches of part of
// their files, within budget bytes in all, and returns what is left of
// budget.
func planFetches(reads []*Read, listed map[string]remoteFile, part fetchPart, budget int64) ([]remoteFetch, int64) {
	order, byListing := fetchCandidates(reads, listed)
	var loose []*Read // fetched by name, in chunks
	var fetches []remoteFetch
	for _, l := range order {
		candidates := byListing[l]
		var want, small int64
		for _, r := range candidates {
			want += part.bytes(listed[r.Paths[0]])
		}
		for _, f := range l.files {
			if f.size <= maxRemoteInferFile {
				small += part.bytes(f)
			}
		}
		// Read the listing again, contents included: Spark lists a
		// directory at once, where thousands of paths named one by one
		// cost a listing task each (8 times slower for 2,000 files).
		// binaryFile skips files by length before reading them, so a
		// directory is read once per range of sizes that holds up to
		// remoteFetchChunk. A pattern is expanded into its paths before
		// listing, a task each again: it is read again whole only when
		// one fetch holds it (2,000 CSV files by a pattern in 4 ranges
		// fetched 9 times slower than by their directory).
		again := small <= budget && want*10 >= small*9
		switch {
		case again && IsGlob(l.given) && small <= remoteFetchChunk:
			budget -= small
			files := part.fetch(fileFetch{given: l.given, options: l.options, maxSize: maxRemoteInferFile}, candidates, listed)
			fetches = append(fetches, remoteFetch{files: files, reads: candidates})
		case again && !IsGlob(l.given):
			budget -= small
			fetches = append(fetches, listingFetches(l, candidates, listed, part)...)
		default:
			for _, r := range candidates {
				if size := part.bytes(listed[r.Paths[0]]); size <= budget {
					budget -= size
					loose = append(loose, r)
				}
			}
		}
	}
	return append(fetches, namedFetches(loose, listed, part)...), budget
}

// bytes is how much of a listed file a fetch of part returns (see
// fetchedFile.content).
func (part fetchPart) bytes(f remoteFile) int64 {
	switch lower := strings.ToLower(f.path); {
	case strings.HasSuffix(lower, ".parquet") || strings.HasSuffix(lower, ".orc"):
		return min(f.size, footerTailBytes)
	case part.from > 0:
		return max(f.size-part.from, 0)
	case part.head > 0:
		return min(f.size, part.head)
	}
	return f.size
}

// fetch is f, for reads, asking for part of their files.
func (part fetchPart) fetch(f fileFetch, reads []*Read, listed map[string]remoteFile) fileFetch {
	f.head, f.from = part.head, part.from
	if part.only {
		f.only = make([]string, 0, len(reads))
		for _, r := range reads {
			name := listed[r.Paths[0]].sparkPath
			if name == "" {
				name = r.Paths[0] // listed without its contents (of 0 bytes)
			}
			f.only = append(f.only, name)
		}
	}
	return f
}

// fetchCandidates are the reads of small files Spark listed in the
// formats the client types, by the listing that found them (order: the
// listings in the reads' order).
func fetchCandidates(reads []*Read, listed map[string]remoteFile) (order []*listing, byListing map[*listing][]*Read) {
	byListing = map[*listing][]*Read{}
	for _, r := range reads {
		if r.relational() || r.UserSchema != "" || len(r.Paths) != 1 || (r.Format != "csv" && r.Format != "json" && r.Format != "parquet" && r.Format != "orc") {
			continue
		}
		f, ok := listed[r.Paths[0]]
		if !ok || f.size > maxRemoteInferFile || f.listing == nil || gzippedText(r) && f.size > maxGzipText {
			continue // (a gzip file holds more text than its size)
		}
		if byListing[f.listing] == nil {
			order = append(order, f.listing)
		}
		byListing[f.listing] = append(byListing[f.listing], r)
	}
	return order, byListing
}

// listingFetches read the directory listing l again, once per range of
// its files' sizes (see sizeRanges), each for the candidates of its range.
func listingFetches(l *listing, candidates []*Read, listed map[string]remoteFile, part fetchPart) []remoteFetch {
	var fetches []remoteFetch
	files := l.files
	if part.only {
		// The ranges of the files wanted: the others' contents stay on
		// the server (fileFetch.only).
		files = nil
		for _, r := range candidates {
			files = append(files, listed[r.Paths[0]])
		}
	}
	for _, sizes := range sizeRanges(files, part) {
		var reads []*Read
		for _, r := range candidates {
			if size := listed[r.Paths[0]].size; size >= sizes[0] && size <= sizes[1] {
				reads = append(reads, r)
			}
		}
		if len(reads) == 0 {
			continue // a range of files none of which is wanted
		}
		files := part.fetch(fileFetch{given: l.given, options: l.options, minSize: sizes[0], maxSize: sizes[1]}, reads, listed)
		fetches = append(fetches, remoteFetch{files: files, reads: reads})
	}
	return fetches
}

// namedFetches fetch the reads' files by name, in chunks of up to
// remoteFetchChunk.
func namedFetches(loose []*Read, listed map[string]remoteFile, part fetchPart) []remoteFetch {
	var fetches []remoteFetch
	var chunkBytes int64
	open := false // the last fetch has room
	for _, r := range loose {
		size := part.bytes(listed[r.Paths[0]])
		if !open || chunkBytes+size > remoteFetchChunk {
			fetches = append(fetches, remoteFetch{files: fileFetch{paths: []string{}}})
			open, chunkBytes = true, 0
		}
		last := &fetches[len(fetches)-1]
		last.reads = append(last.reads, r)
		last.files.paths = append(last.files.paths, literalPath(r.Paths[0]))
		chunkBytes += size
	}
	for i := range fetches {
		fetches[i].files = part.fetch(fetches[i].files, fetches[i].reads, listed)
	}
	return fetches
}

// copyKeeper takes in the files fetches return: a CSV or JSON file's
// content typed in memory (on a core of its own, while the next fetch
// runs), a Parquet or ORC footer written to dir for the footer readers.
type copyKeeper struct {
	listed map[string]remoteFile
	dir    string
	rules  infer.Rules
	typing sync.WaitGroup
	cores  chan struct{}
	// heads are the heads of the files whose rest is wanted, in
	// order.
	heads  map[*Read][]byte
	wanted []*Read
}

// keep takes in the files one fetch of part returned for its reads.
func (k *copyKeeper) keep(chunk []*Read, fetched []fetchedFile, part fetchPart) error {
	byPath := make(map[string]*Read, len(chunk))
	for _, r := range chunk {
		byPath[r.Paths[0]] = r
	}
	for _, file := range fetched {
		// The read names the file as the listing did: as Spark lists
		// it, or without file: for a plain path or file:// URI.
		var given string
		var r *Read
		for _, like := range []string{file.path, "/", "file:"} {
			if g := sameScheme(like, file.path); byPath[g] != nil {
				given, r = g, byPath[g]
				break
			}
		}
		if r == nil {
			continue // another format's file in a directory
		}
		head, headKept := k.heads[r]
		if part.from > 0 {
			delete(k.heads, r) // its rest came: the head is joined to it, or the file changed
		}
		lf := k.listed[given]
		if lf.size != file.size || lf.mtimeMillis != file.mtimeMillis || r.copy != nil {
			continue // changed since the listing (Spark infers it), or fetched before
		}
		n, text := int64(len(file.content)), r.Format == "csv" || r.Format == "json"
		switch {
		case !text:
			if !footerFetched(r, file) {
				continue
			}
		case part.from > 0:
			if !headKept || n != file.size-part.from {
				continue
			}
			file.content = append(append(make([]byte, 0, file.size), head...), file.content...)
		case n == file.size:
			// Whole.
		case part.head > 0 && n == part.head:
			k.screen(r, file)
			continue
		default:
			continue
		}
		if err := k.keepFile(r, given, file); err != nil {
			return err
		}
	}
	return nil
}

// screen decides, from the head of r's CSV or JSON file, whether the
// client fetches the rest of it to type it (k.wanted), or leaves the
// file to Spark (refusing one that is not UTF-8, or nests too deep, as
// typeLocally does).
func (k *copyKeeper) screen(r *Read, file fetchedFile) {
	refused, err := headRefused(r, k.rules, file.content)
	var unsupported *infer.Unsupported
	var tooDeep *infer.TooDeepError
	switch {
	case !refused:
		k.heads[r] = file.content
		k.wanted = append(k.wanted, r)
	case errors.As(err, &unsupported) && unsupported.Reason == infer.NotUTF8:
		r.encodingProblem = unsupported.Error()
	case errors.As(err, &tooDeep):
		r.nestingProblem = tooDeep.Error()
	}
	// Refused, the file is Spark's, and checked for bytes past its head
	// that are not UTF-8 where it lives (checkUTF8).
}

// headRefused reports whether the client's rules refuse r's CSV or JSON
// file, whatever follows head, its first bytes: they refuse its whole
// lines in head. The rules read a file line by line and refuse at the
// first line they leave to Spark, so a file whose whole lines in head
// they refuse is refused whole (err says why). A head with no whole line
// with content tells nothing (false).
//
// A gzip file's head is the text it decompresses to, read as a plain
// file's head.
func headRefused(r *Read, rules infer.Rules, head []byte) (bool, error) {
	name := r.Paths[0]
	if gzippedText(r) {
		text, ok := gunzipHead(head)
		if !ok {
			return true, &infer.Unsupported{Reason: infer.UnsupportedContents, Msg: "not gzip"}
		}
		head, name = text, name[:len(name)-len(".gz")]
	}
	lines := head[:bytes.LastIndexByte(head, '\n')+1]
	if !bytes.ContainsFunc(lines, func(c rune) bool { return c > ' ' }) {
		return false, nil
	}
	var err error
	switch r.Format {
	case "csv":
		_, err = localCSVFile(rules, name, lines, r.Options)
	case "json":
		_, err = localJSONFile(rules, name, lines, r.Options)
	}
	return err != nil, err
}

// gzippedText reports whether r's file is a CSV or JSON file of a plain
// extension compressed with gzip.
func gzippedText(r *Read) bool {
	switch r.Format {
	case "csv":
		return kindOf(r.Paths[0], isPlainCSV) == gzipped
	case "json":
		return kindOf(r.Paths[0], isPlainJSON) == gzipped
	}
	return false
}

// keepFile takes in the file of r, as the listing named it (given).
func (k *copyKeeper) keepFile(r *Read, given string, file fetchedFile) error {
	stamp := fileStamp{size: file.size, mtimeMillis: file.mtimeMillis}
	cp := &remoteCopy{stamp: stamp, settled: file.nowMillis-file.mtimeMillis > 2000}
	if r.Format != "csv" && r.Format != "json" {
		cp.path = filepath.Join(k.dir, strconv.Itoa(r.order)+"-"+path.Base(given))
		if err := writeCopy(cp.path, file); err != nil {
			return fmt.Errorf("copy %s to type it: %w", given, err)
		}
		r.copy = cp
		return nil
	}
	cp.content = file.content
	if cp.content == nil {
		// An empty file: no bytes, not none (which would leave it to
		// Spark, where a local empty file is typed here).
		cp.content = []byte{}
	}
	r.copy = cp
	k.typing.Add(1)
	go func() {
		defer k.typing.Done()
		k.cores <- struct{}{}
		defer func() { <-k.cores }()
		cp.typing = typeLocally(r, k.rules, footerConf{})
		cp.content, cp.typed = nil, true
	}()
	return nil
}

// footerFetched reports whether file's content is the end of the Parquet
// or ORC file r reads (see fetchedContent), long enough to hold its whole
// footer: all that typing it reads. A Parquet file ends with the footer,
// its 4-byte length and the PAR1 magic; an ORC file with the footer, the
// postscript and the postscript's length.
func footerFetched(r *Read, file fetchedFile) bool {
	n := int64(len(file.content))
	if n > min(file.size, footerTailBytes) {
		return false
	}
	switch r.Format {
	case "parquet":
		if n < 8 || string(file.content[n-4:]) != "PAR1" {
			return false
		}
		footer := int64(binary.LittleEndian.Uint32(file.content[n-8 : n-4]))
		return footer+8 <= n
	case "orc":
		end, ok := orcfooter.TailLength(file.content)
		return ok && end <= n
	}
	return false
}

// writeCopy writes a fetched file where the client types it: whole, or a
// Parquet or ORC file's end at its place in a file of the listed size (the
// rest a hole, which no footer reader touches).
func writeCopy(path string, file fetchedFile) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Truncate(file.size); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteAt(file.content, file.size-int64(len(file.content))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sizeRanges cuts the sizes of a listing's files up to maxRemoteInferFile
// into ranges [min, max] whose files' fetched bytes add up to at most
// remoteFetchChunk each, except where files of one size alone exceed it
// (a range cannot split them).
func sizeRanges(files []remoteFile, part fetchPart) [][2]int64 {
	var small []remoteFile
	for _, f := range files {
		if f.size <= maxRemoteInferFile {
			small = append(small, f)
		}
	}
	sort.Slice(small, func(i, j int) bool { return small[i].size < small[j].size })
	var ranges [][2]int64
	var bytes int64
	for i := 0; i < len(small); {
		// The files of one size go together.
		size, group := small[i].size, int64(0)
		for ; i < len(small) && small[i].size == size; i++ {
			group += part.bytes(small[i])
		}
		if len(ranges) == 0 || bytes > 0 && bytes+group > remoteFetchChunk {
			ranges = append(ranges, [2]int64{size, size})
			bytes = 0
		}
		ranges[len(ranges)-1][1] = size
		bytes += group
	}
	if len(ranges) > 0 {
		ranges[0][0] = 0
		ranges[len(ranges)-1][1] = maxRemoteInferFile
	}
	return ranges
}
