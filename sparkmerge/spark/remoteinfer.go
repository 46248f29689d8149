package spark

import (
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

const (
	// maxRemoteInferFile is the largest remote file fetched to type it.
	maxRemoteInferFile = 16 << 20
	// maxRemoteInferTotal bounds the bytes fetched for one plan: past it,
	// Spark infers the rest where the data lives.
	maxRemoteInferTotal = 512 << 20
	// remoteFetchChunk bounds the contents one Spark job returns. A job
	// has a fixed cost besides its bytes (measured; see
	// docs/benchmarks.md#files-only-the-server-sees), so
	// fewer, larger jobs type faster; but the server holds a job's results
	// while it sends them: one job of 519 MB, and two of 128 MiB at once,
	// stopped a server whose driver had 1 GiB.
	remoteFetchChunk = 128 << 20
)

// remoteCopy is a client-side copy of a file only the server sees.
type remoteCopy struct {
	// path is a Parquet or ORC file's temporary copy (its footer, at its
	// place).
	path string
	// content is a CSV or JSON file's contents, typed as soon as they
	// arrive (while the next fetch runs) and then dropped, so that the
	// client holds at most a few fetches' worth.
	content []byte
	// typed: the client has tried to type the file (InferredLocally says
	// whether it could).
	typed bool
	stamp fileStamp // as Spark reported the file
	// settled: modified over two seconds before the fetch, by the server's
	// clock (see settled).
	settled bool
}

// fetchRemoteCopies copies the contents of the small remote CSV and JSON
// files, and the footers of the Parquet and ORC files, among reads into dir
// (a few Spark jobs, one at a time), for inferLocally. A file whose size
// or modification time differs from its listing is left to Spark, as are
// files past the size limits. It returns the number of Spark jobs run; a
// failed fetch leaves its files to Spark, unless the server is
// unreachable or ctx ended.
func (c *Client) fetchRemoteCopies(ctx context.Context, reads []*Read, listed map[string]remoteFile, dir string, rules infer.Rules) (jobs int, err error) {
	// CSV and JSON files are typed from memory while the next fetch runs
	// (writing 496 MB of JSON to a temporary directory, then reading it
	// back, took a quarter of discovery); Parquet and ORC footers go to
	// dir.
	// Typing a job's files waits for a core, not the next fetch.
	var typing sync.WaitGroup
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	defer typing.Wait()
	// The candidates, by the listing that found them.
	byListing := map[*listing][]*Read{}
	var order []*listing
	for _, r := range reads {
		if r.relational() || r.UserSchema != "" || len(r.Paths) != 1 || (r.Format != "csv" && r.Format != "json" && r.Format != "parquet" && r.Format != "orc") {
			continue
		}
		f, ok := listed[r.Paths[0]]
		if !ok || f.size > maxRemoteInferFile || f.listing == nil {
			continue
		}
		if byListing[f.listing] == nil {
			order = append(order, f.listing)
		}
		byListing[f.listing] = append(byListing[f.listing], r)
	}
	budget := int64(maxRemoteInferTotal)
	var loose []*Read // fetched by name, in chunks
	// A fetch reads a listing again or names its files (files.paths).
	type fetch struct {
		files fileFetch
		reads []*Read
	}
	var fetches []fetch
	for _, l := range order {
		candidates := byListing[l]
		var want, small int64
		for _, r := range candidates {
			want += fetchedBytes(listed[r.Paths[0]])
		}
		for _, f := range l.files {
			if f.size <= maxRemoteInferFile {
				small += fetchedBytes(f)
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
			files := fileFetch{given: l.given, options: l.options, maxSize: maxRemoteInferFile}
			fetches = append(fetches, fetch{files: files, reads: candidates})
		case again && !IsGlob(l.given):
			budget -= small
			for _, sizes := range sizeRanges(l.files) {
				files := fileFetch{given: l.given, options: l.options, minSize: sizes[0], maxSize: sizes[1]}
				var reads []*Read
				for _, r := range candidates {
					if size := listed[r.Paths[0]].size; size >= sizes[0] && size <= sizes[1] {
						reads = append(reads, r)
					}
				}
				fetches = append(fetches, fetch{files: files, reads: reads})
			}
		default:
			for _, r := range candidates {
				if size := fetchedBytes(listed[r.Paths[0]]); size <= budget {
					budget -= size
					loose = append(loose, r)
				}
			}
		}
	}
	var chunkBytes int64
	open := false // the last fetch names files and has room
	for _, r := range loose {
		size := fetchedBytes(listed[r.Paths[0]])
		if !open || chunkBytes+size > remoteFetchChunk {
			fetches = append(fetches, fetch{files: fileFetch{paths: []string{}}})
			open, chunkBytes = true, 0
		}
		last := &fetches[len(fetches)-1]
		last.reads = append(last.reads, r)
		last.files.paths = append(last.files.paths, literalPath(r.Paths[0]))
		chunkBytes += size
	}
	// keep takes in the files one fetch returned for its reads.
	keep := func(chunk []*Read, fetched []fetchedFile) error {
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
			lf := listed[given]
			whole := int64(len(file.content)) == file.size
			if lf.size != file.size || lf.mtimeMillis != file.mtimeMillis || !whole && !footerFetched(r, file) {
				continue // changed since the listing: Spark infers it
			}
			if r.copy != nil {
				continue // fetched before
			}
			stamp := fileStamp{size: file.size, mtimeMillis: file.mtimeMillis}
			cp := &remoteCopy{stamp: stamp, settled: file.nowMillis-file.mtimeMillis > 2000}
			if r.Format == "csv" || r.Format == "json" {
				cp.content = file.content
				if cp.content == nil {
					// An empty file: no bytes, not none (which would leave
					// it to Spark, where a local empty file is typed here).
					cp.content = []byte{}
				}
				r.copy = cp
				typing.Add(1)
				go func() {
					defer typing.Done()
					cores <- struct{}{}
					defer func() { <-cores }()
					inferLocal(r, rules, footerConf{})
					cp.content, cp.typed = nil, true
				}()
				continue
			}
			cp.path = filepath.Join(dir, strconv.Itoa(r.order)+"-"+path.Base(given))
			if err := writeCopy(cp.path, file); err != nil {
				return fmt.Errorf("copy %s to type it: %w", given, err)
			}
			r.copy = cp
		}
		return nil
	}
	// One fetch at a time, each up to remoteFetchChunk: a job of 128 MiB
	// uses both of the server's cores by itself, and costs less than two
	// jobs of 64 MiB run at once, which held as many results in flight
	// (see remoteFetchChunk). The client types a job's files while the
	// next one runs.
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
		if err := keep(f.reads, fetched); err != nil {
			return jobs, err
		}
	}
	return jobs, nil
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

// fetchedBytes is how much of a listed file a fetch returns (see
// fetchedFile.content).
func fetchedBytes(f remoteFile) int64 {
	if lower := strings.ToLower(f.path); strings.HasSuffix(lower, ".parquet") || strings.HasSuffix(lower, ".orc") {
		return min(f.size, footerTailBytes)
	}
	return f.size
}

// sizeRanges cuts the sizes of a listing's files up to maxRemoteInferFile
// into ranges [min, max] whose files' fetched bytes add up to at most
// remoteFetchChunk each, except where files of one size alone exceed it
// (a range cannot split them).
func sizeRanges(files []remoteFile) [][2]int64 {
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
			group += fetchedBytes(small[i])
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
