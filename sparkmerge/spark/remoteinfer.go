package spark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
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
	// A fetch reads a listing again (frame set) or names its files.
	type fetch struct {
		frame *connect.Frame
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
			frame := c.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: []string{l.given}, Options: l.options}).
				Filter(fmt.Sprintf("length <= %d", maxRemoteInferFile))
			fetches = append(fetches, fetch{frame: &frame, reads: candidates})
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
			fetches = append(fetches, fetch{})
			open, chunkBytes = true, 0
		}
		last := &fetches[len(fetches)-1]
		last.reads = append(last.reads, r)
		chunkBytes += size
	}
	for _, f := range fetches {
		chunk := f.reads
		byPath := make(map[string]*Read, len(chunk))
		for _, r := range chunk {
			byPath[r.Paths[0]] = r
		}
		var frame connect.Frame
		if f.frame != nil {
			frame = *f.frame
		} else {
			paths := make([]string, len(chunk))
			for i, r := range chunk {
				paths[i] = literalPath(r.Paths[0])
			}
			frame = c.sess.Read(connect.ReadSpec{Format: "binaryFile", Paths: paths})
		}
		rows, err := frame.SelectExpr("path", "length", "unix_millis(modificationTime)", "content", "unix_millis(current_timestamp())").Collect(ctx)
		jobs++
		if err != nil {
			if errors.Is(err, ErrUnreachable) || ctx.Err() != nil {
				return jobs, err
			}
			continue // Spark infers these files, as before
		}
		for _, row := range rows.Values {
			listedPath, _ := row[0].(string)
			size, _ := row[1].(int64)
			mtime, _ := row[2].(int64)
			content, _ := row[3].([]byte)
			now, _ := row[4].(int64)
			// The read names the file as the listing did: as Spark lists
			// it, or without file: for a plain path or file:// URI.
			var given string
			var r *Read
			for _, like := range []string{listedPath, "/", "file:"} {
				if g := sameScheme(like, listedPath); byPath[g] != nil {
					given, r = g, byPath[g]
					break
				}
			}
			if r == nil {
				continue // another format's file in a directory
			}
			lf := listed[given]
			if lf.size != size || lf.mtimeMillis != mtime || int64(len(content)) != size {
				continue // changed since the listing: Spark infers it
			}
			copyPath := filepath.Join(dir, strconv.Itoa(r.order)+"-"+path.Base(given))
			if err := os.WriteFile(copyPath, content, 0o600); err != nil {
				return jobs, fmt.Errorf("copy %s to type it: %w", given, err)
			}
			r.copy = &remoteCopy{path: copyPath, stamp: fileStamp{size: size, mtimeMillis: mtime}, settled: now-mtime > 2000}
		}
	}
	return jobs, nil
}
