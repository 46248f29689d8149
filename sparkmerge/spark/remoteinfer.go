package spark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
)

// Files only the server sees (cluster storage, a path mounted on the
// server alone) are typed by the client too, from their contents fetched
// through Spark: one binaryFile job per 64 MiB of small CSV, JSON and
// Parquet files, instead of one Spark inference job (or footer request) per
// file. The client applies Spark's own rules (package infer) to a
// temporary copy, and stamps each file with the size and modification time
// Spark reported, so that such files join positional scans (scanBatch),
// which fail on a file that changed since, as for local files.

const (
	// maxRemoteInferFile is the largest remote file fetched to type it.
	maxRemoteInferFile = 16 << 20
	// maxRemoteInferTotal bounds the bytes fetched for one plan: past it,
	// Spark infers the rest where the data lives.
	maxRemoteInferTotal = 512 << 20
	// remoteFetchChunk bounds the contents one Spark job returns.
	remoteFetchChunk = 64 << 20
)

// remoteCopy is a client-side copy of a file only the server sees.
type remoteCopy struct {
	path  string    // the temporary copy
	stamp fileStamp // as Spark reported the file
	// settled: modified over two seconds before the fetch, by the server's
	// clock (see settled).
	settled bool
}

// fetchRemoteCopies copies the contents of the small remote CSV, JSON and
// Parquet files among reads into dir (a few Spark jobs), for inferLocally. A file
// whose size or modification time differs from its listing is left to
// Spark, as are files past the size limits. It returns the number of Spark
// jobs run; a failed fetch leaves every file to Spark, unless the server is
// unreachable or ctx ended.
func (c *Client) fetchRemoteCopies(ctx context.Context, reads []*Read, listed map[string]remoteFile, dir string) (jobs int, err error) {
	// The candidates, by the listing that found them.
	byListing := map[*listing][]*Read{}
	var order []*listing
	for _, r := range reads {
		if r.relational() || r.UserSchema != "" || len(r.Paths) != 1 || (r.Format != "csv" && r.Format != "json" && r.Format != "parquet") {
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
			want += listed[r.Paths[0]].size
		}
		for _, f := range l.files {
			if f.size <= maxRemoteInferFile {
				small += f.size
			}
		}
		switch {
		case small <= budget && small <= remoteFetchChunk && want*10 >= small*9:
			// Read the listing again, contents included: Spark lists a
			// directory or pattern at once, where thousands of paths
			// named one by one cost a listing task each (1.6 s against
			// 13 s for 2,000 files). binaryFile skips files by length
			// before reading them.
			budget -= small
			files := fileFetch{given: l.given, options: l.options, maxSize: maxRemoteInferFile}
			fetches = append(fetches, fetch{files: files, reads: candidates})
		default:
			for _, r := range candidates {
				if size := listed[r.Paths[0]].size; size <= budget {
					budget -= size
					loose = append(loose, r)
				}
			}
		}
	}
	var chunkBytes int64
	open := false // the last fetch names files and has room
	for _, r := range loose {
		size := listed[r.Paths[0]].size
		if !open || chunkBytes+size > remoteFetchChunk {
			fetches = append(fetches, fetch{files: fileFetch{paths: []string{}}})
			open, chunkBytes = true, 0
		}
		last := &fetches[len(fetches)-1]
		last.reads = append(last.reads, r)
		last.files.paths = append(last.files.paths, literalPath(r.Paths[0]))
		chunkBytes += size
	}
	for _, f := range fetches {
		chunk := f.reads
		byPath := make(map[string]*Read, len(chunk))
		for _, r := range chunk {
			byPath[r.Paths[0]] = r
		}
		fetched, err := c.server.fetchFiles(ctx, f.files)
		jobs++
		if err != nil {
			if errors.Is(err, ErrUnreachable) || ctx.Err() != nil {
				return jobs, err
			}
			continue // Spark infers these files, as before
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
			if lf.size != file.size || lf.mtimeMillis != file.mtimeMillis || int64(len(file.content)) != file.size {
				continue // changed since the listing: Spark infers it
			}
			copyPath := filepath.Join(dir, strconv.Itoa(r.order)+"-"+path.Base(given))
			if err := os.WriteFile(copyPath, file.content, 0o600); err != nil {
				return jobs, fmt.Errorf("copy %s to type it: %w", given, err)
			}
			stamp := fileStamp{size: file.size, mtimeMillis: file.mtimeMillis}
			r.copy = &remoteCopy{path: copyPath, stamp: stamp, settled: file.nowMillis-file.mtimeMillis > 2000}
		}
	}
	return jobs, nil
}
