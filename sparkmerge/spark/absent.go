package spark

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A merge asks whether its own paths exist: the record of an interrupted
// overwrite beside a path target (readCopyRecord), the target itself
// (checkTargetAbsent, appendTargetSchema, describeTarget of a Delta path,
// countTarget of what an append or ignore finds before it, targetFiles
// of an incremental run) and an incremental run's STATE (readState). Spark answers a read of a
// path that does not exist only by failing its analysis (PATH_NOT_FOUND):
// a request, an exception with its stack trace in the server's log, and
// the client's handling of the error, for the usual answer, "absent".
//
// For a local path the client decides absence itself where that is
// exact: the client finds no entry of the path's name in its parent
// directory, and the server shares that very directory (sharesParent: it
// lists a probe file the client wrote there), so that the server's
// filesystem holds no such entry either and Spark's read of the path
// would fail with PATH_NOT_FOUND. A path whose parent does not exist yet
// is decided the same way higher up: the nearest directory the client
// has on the way (not the filesystem's root), which lacks the next name
// on the way (missingEntry), so that if the server shares that directory
// it lacks the name too, and everything below. Only absence is decided
// so: whatever has an entry (a file, a directory, an empty one, a link,
// dangling or not, one the server may not read) is asked of Spark as
// before, and so is every path whose absence the client cannot tell
// exactly: an object store's, a directory only the server sees, one the
// server does not share, a directory on the way the client cannot read,
// a file or a dangling link on the way, a top directory the client
// lacks (/data/... where the client has no /data), and paths Spark reads otherwise than the client's filesystem does
// (patterns, relative paths, "." or ".." components, URIs with escapes).
//
// A probe is written only by a merge that writes (withSharedDirs): a plan
// or a dry run writes nothing to the user's storage, not even briefly, so
// there the client cannot tell and Spark is asked, as before.
//
// Spark offers no read that tells a missing path without failing: every
// path it is given must exist (an empty pattern fails too), and a listing
// of the parent lists everything below it and leaves out hidden names
// such as the record's. So paths the client cannot decide keep their
// failing analysis.

// absentOnServer reports whether Spark finds nothing at p, decided on the
// client without asking Spark to read p (see above). false means "not
// known here": ask Spark.
func (c *Client) absentOnServer(ctx context.Context, p string) bool {
	lp, ok := exactLocalPath(p)
	if !ok {
		return false
	}
	dir, ok := missingEntry(lp)
	return ok && c.sharesParent(ctx, dir)
}

// missingEntry is the nearest directory above lp that the client has,
// when the name that comes next on the way to lp has no entry in it (lp's
// parent when lp has none). false when lp has an entry, or when something
// on the way is not a directory the client can look in: a file, a
// dangling link, one it may not read (Spark's to judge). Never the
// filesystem's root, which is no user's directory to write a probe in
// and which a server in a container, with a root of its own, never
// shares: a path below a top directory the client lacks (a mount only
// the server has, such as /data/...) is asked of Spark without a probe.
func missingEntry(lp string) (string, bool) {
	for p := lp; ; {
		parent := filepath.Dir(p)
		if filepath.Dir(parent) == parent {
			return "", false // p is at the root, or is the root
		}
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return "", false // an entry (or the client cannot tell)
		}
		if info, err := os.Stat(parent); err == nil {
			return parent, info.IsDir()
		}
		p = parent // missing too, or not followed: told by Lstat next
	}
}

// exactLocalPath is p as a path on the client's filesystem that Spark
// (Hadoop's local filesystem) reads as the same absolute path: no
// pattern, no relative path or component the client would resolve
// otherwise, no escapes in a file: URI, no colon (which Hadoop reads as a
// scheme).
func exactLocalPath(p string) (string, bool) {
	if !isLocalPath(p) || IsGlob(p) || strings.HasPrefix(p, "file:") && strings.Contains(p, "%") {
		return "", false
	}
	lp := localPath(p)
	trimmed := strings.TrimRight(lp, "/")
	if !filepath.IsAbs(lp) || strings.Contains(lp, ":") || trimmed == "" || filepath.Clean(trimmed) != trimmed {
		return "", false
	}
	return trimmed, true
}

// sharesParent reports whether the Spark server shares the client's
// directory dir (probeParent). Out of a merge that writes (a plan, a dry
// run) it writes no probe and answers false: not known here.
func (c *Client) sharesParent(ctx context.Context, dir string) bool {
	return c.probeParent(ctx, dir) == probeShared
}

// probeParent probes the client's directory dir (probeDirectory, in a
// fresh hidden directory in dir) once per directory in a merge
// (withSharedDirs), and answers probeUnwritable out of a merge that
// writes, which writes no probe.
func (c *Client) probeParent(ctx context.Context, dir string) dirProbe {
	memo, _ := ctx.Value(sharedDirsKey{}).(*sharedDirs)
	if memo == nil {
		return probeUnwritable
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	if probe, ok := memo.dirs[dir]; ok {
		return probe
	}
	probe := c.probeDirectory(ctx, filepath.Join(dir, stagingName("sparkmerge-probe")))
	memo.dirs[dir] = probe
	return probe
}

// sharedDirs are the answers of probeParent in one merge, by directory:
// whether the server shares a directory does not change while it runs.
type sharedDirs struct {
	mu   sync.Mutex
	dirs map[string]dirProbe
}

type sharedDirsKey struct{}

// withSharedDirs gives ctx a memo of probeParent's answers, for one
// merge that writes (kept if it has one), and with it leave to write
// probes: only a merge that writes calls it, never a plan or a dry run.
func withSharedDirs(ctx context.Context) context.Context {
	if _, ok := ctx.Value(sharedDirsKey{}).(*sharedDirs); ok {
		return ctx
	}
	return context.WithValue(ctx, sharedDirsKey{}, &sharedDirs{dirs: map[string]dirProbe{}})
}
