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
// through Spark: one binaryFile job per 64 MiB of small CSV and JSON files,
// instead of one Spark inference job per file. The client applies Spark's
// own rules (csvinfer.go, jsoninfer.go) to a temporary copy, and stamps
// each file with the size and modification time Spark reported, so that
// such files join positional scans (batch.go), which fail on a file that
// changed since, as for local files.

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

// fetchRemoteCopies copies the contents of the small remote CSV and JSON
// files among reads into dir (a few Spark jobs), for inferLocally. A file
// whose size or modification time differs from its listing is left to
// Spark, as are files past the size limits. It returns the number of Spark
// jobs run; a failed fetch leaves every file to Spark, unless the server is
// unreachable or ctx ended.
func (c *Client) fetchRemoteCopies(ctx context.Context, reads []*Read, listed map[string]remoteFile, dir string) (jobs int, err error) {
	var chunks [][]*Read
	var chunkBytes, total int64
	for _, r := range reads {
		if r.relational() || r.UserSchema != "" || len(r.Paths) != 1 || (r.Format != "csv" && r.Format != "json") {
			continue
		}
		f, ok := listed[r.Paths[0]]
		if !ok || f.size > maxRemoteInferFile || total+f.size > maxRemoteInferTotal {
			continue
		}
		total += f.size
		if len(chunks) == 0 || chunkBytes+f.size > remoteFetchChunk {
			chunks = append(chunks, nil)
			chunkBytes = 0
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], r)
		chunkBytes += f.size
	}
	for _, chunk := range chunks {
		byPath := make(map[string]*Read, len(chunk))
		paths := make([]string, len(chunk))
		for i, r := range chunk {
			byPath[r.Paths[0]] = r
			paths[i] = literalPath(r.Paths[0])
		}
		rows, err := c.sess.Read(connectReadSpecBinary(paths)).
			SelectExpr("path", "length", "unix_millis(modificationTime)", "content", "unix_millis(current_timestamp())").
			Collect(ctx)
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
				continue
			}
			f := listed[given]
			if f.size != size || f.mtimeMillis != mtime || int64(len(content)) != size {
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

// connectReadSpecBinary reads files' bytes and metadata (binaryFile).
func connectReadSpecBinary(paths []string) connect.ReadSpec {
	return connect.ReadSpec{Format: "binaryFile", Paths: paths}
}
