package spark

import (
	"os"
	"time"
)

// A positional scan (see batch.go) checks each row's file against the
// stamp the client took of it when it typed the file.

// fileStamp is a local file's size and modification time (milliseconds, as
// Hadoop's local file system reports it).
type fileStamp struct {
	size, mtimeMillis int64
}

func stampOf(path string) (fileStamp, bool) {
	info, err := os.Stat(localPath(path))
	if err != nil || !info.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return fileStamp{size: info.Size(), mtimeMillis: info.ModTime().UnixMilli()}, true
}

// settled reports whether a rewrite of the file at p after now would show
// in its stamp (Spark compares modification times in milliseconds): its
// modification time lies in an earlier millisecond than now, or, on a
// filesystem that keeps whole seconds only (FAT keeps two), more than two
// seconds before now. A file not settled is not stamped, so it is read on
// its own, with Spark's header check, never by position.
func settled(p string, now time.Time) bool {
	info, err := os.Stat(localPath(p))
	if err != nil {
		return false
	}
	mod := info.ModTime()
	if mod.Nanosecond() == 0 {
		return now.Sub(mod) > 2*time.Second
	}
	return now.UnixMilli() > mod.UnixMilli()
}
