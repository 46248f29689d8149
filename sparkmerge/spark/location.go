package spark

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// Where a job's paths live, and what they are, decided once when the job
// is resolved: a relative path means the client's working directory, so
// it is made absolute here, on the client, and refused where the server
// cannot see it (resolveJobPaths); a path either lives on the client's
// filesystem, which the client lists and reads itself, or only where the
// server sees it (locate); and every file has an identity, its real path
// after symlinks and "..", as the side that sees it resolves it
// (clientRealPath, serverRealPath), which the duplicate and overlap checks
// compare.

// location is where one path of a job lives, decided once when the job's
// sources are expanded (expandSources) and carried from there.
type location struct {
	// path is the path as the merge names and reads it (a relative local
	// path made absolute).
	path string
	// client is true when the client's filesystem holds it: a local path
	// (no scheme, or file:) that exists here, or a pattern that matches
	// here. Anything else lives where only Spark sees it: cluster storage
	// (s3a://, abfss://, hdfs://, dbfs:/), or a path mounted on the server
	// alone.
	client bool
	// real is its identity, its real path (symlinks and ".." resolved) as
	// the side that sees it resolves it: the client (clientRealPath) or
	// the server's listing (serverRealPath); "" when unknown (a pattern,
	// an object store, a server that refuses reflect).
	real string
}

// locate decides where p lives (see [location]), resolving a path the
// client sees to its real path.
func locate(p string) location {
	loc := location{path: p, client: clientSees(p)}
	if loc.client && !IsGlob(p) {
		loc.real = clientRealPath(p)
	}
	return loc
}

// clientSees reports whether the client can read p itself (see
// [location.client]).
func clientSees(p string) bool {
	if !isLocalPath(p) {
		return false
	}
	lp := localPath(p)
	if _, err := os.Stat(lp); err == nil {
		return true
	}
	if IsGlob(lp) {
		matches, err := filepath.Glob(lp)
		return err == nil && len(matches) > 0
	}
	return false
}

// isLocalPath reports whether p names a path on the client's own filesystem:
// no scheme, or file:.
func isLocalPath(p string) bool {
	if strings.HasPrefix(p, "file:") {
		return true
	}
	i := strings.Index(p, ":")
	return i < 0 || strings.ContainsAny(p[:i], "/\\")
}

// isRelativePath reports whether p is a local path without a scheme that
// is not absolute: one that means a working directory.
func isRelativePath(p string) bool {
	return p != "" && isLocalPath(p) && !strings.HasPrefix(p, "file:") && !filepath.IsAbs(p)
}

// localPath is a local path without its file: scheme.
func localPath(p string) string {
	p = strings.TrimPrefix(p, "file://")
	return strings.TrimPrefix(p, "file:")
}

// RelativePathError refuses a relative path the Spark server would read
// or write elsewhere than the client means: a source this machine does
// not have (the server would look for it in its own working directory),
// or a path the server does not see (it does not share the client's
// filesystem there).
type RelativePathError struct {
	// Given is the path as given; Absolute is what it means on this
	// machine.
	Given, Absolute string
	// Output is true for the target's path.
	Output bool
	// ServerBlind is true when the client has the path's directory but
	// the server does not see it.
	ServerBlind bool
}

func (e *RelativePathError) Error() string {
	what := "source path"
	if e.Output {
		what = "output path"
	}
	if e.ServerBlind {
		return fmt.Sprintf("%s %s is relative: on this machine it is %s, which the Spark server does not see (it does not share this filesystem); "+
			"give the path as the server names it: absolute (/data/...) or a URI (s3a://bucket/...)", what, quoteName(e.Given), e.Absolute)
	}
	return fmt.Sprintf("%s %s is relative, and this machine has no %s: a relative path means this machine's working directory, not the Spark server's; "+
		"for a file only the server sees, give its absolute path or its URI (s3a://bucket/...)", what, quoteName(e.Given), e.Absolute)
}

// resolveJobPaths makes every relative local path of the job absolute on
// the client, refusing a source this machine does not have, and then, in
// a merge that writes, asks the server whether it sees the client's
// directories they name (seesClientDirectory): a relative path is the
// client's, and one the server does not see would be read or written
// elsewhere. Absolute paths and
// URIs are left as given; a job without relative paths costs nothing.
func (c *Client) resolveJobPaths(ctx context.Context, job Job) (Job, error) {
	type named struct {
		given, abs string
		output     bool
	}
	var relative []named
	sources := make([]SourceSpec, len(job.Sources))
	for i, spec := range job.Sources {
		sources[i] = spec
		if spec.relational() {
			continue
		}
		sources[i].Paths = make([]string, len(spec.Paths))
		for j, p := range spec.Paths {
			sources[i].Paths[j] = cleanAbsolute(p)
			if !isRelativePath(p) {
				continue
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return Job{}, fmt.Errorf("source path %s: %w", quoteName(p), err)
			}
			if !clientSees(abs) {
				return Job{}, &RelativePathError{Given: p, Absolute: abs}
			}
			sources[i].Paths[j] = abs
			relative = append(relative, named{given: p, abs: abs})
		}
	}
	job.Sources = sources
	if isRelativePath(job.Target.Path) {
		abs, err := filepath.Abs(job.Target.Path)
		if err != nil {
			return Job{}, fmt.Errorf("output path %s: %w", quoteName(job.Target.Path), err)
		}
		relative = append(relative, named{given: job.Target.Path, abs: abs, output: true})
		job.Target.Path = abs
	}
	// Shallowest directories first: one the server sees answers for the
	// directories below it (the working directory, for "in" and
	// "out/x"), so that a run costs one probe.
	sort.SliceStable(relative, func(i, j int) bool { return len(existingDir(relative[i].abs)) < len(existingDir(relative[j].abs)) })
	var seen []string
	for _, r := range relative {
		dir := existingDir(r.abs)
		if dir == "" || slices.ContainsFunc(seen, func(s string) bool { return within(s, dir) }) {
			continue
		}
		if !c.seesClientDirectory(ctx, dir) {
			return Job{}, &RelativePathError{Given: r.given, Absolute: r.abs, Output: r.output, ServerBlind: true}
		}
		seen = append(seen, dir)
	}
	return job, nil
}

// cleanAbsolute is p, an absolute path, without its "." elements, empty
// elements and ".." elements (path.Clean), a trailing slash kept; other
// paths (relative, URIs) as given. Spark lists the files of
// /data/./in as /data/in/..., which the tree's root must spell alike (a
// flat directory spelled so was refused as "not below the partitioned
// tree's root": found in the field).
func cleanAbsolute(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// existingDir is the nearest directory at or above p that exists on this
// machine, or "" when only the root does.
func existingDir(p string) string {
	for dir := p; ; {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			if filepath.Dir(dir) == dir {
				return ""
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// seesClientDirectory reports whether the Spark server sees this
// machine's directory dir (probeParent: one probe a directory in a merge,
// shared with the checks of absent paths and of the target). A directory
// the client cannot write a probe into is taken as seen: the client
// cannot tell, and Spark still reports a path it does not find when it
// reads. So is every directory in a plan or a dry run, which write
// nothing to the user's directories: the merge that writes checks before
// it reads.
func (c *Client) seesClientDirectory(ctx context.Context, dir string) bool {
	return c.probeParent(ctx, dir) != probeNotShared
}

// stagingDirName matches the hidden directories sparkmerge writes beside
// a target (".NAME.sparkmerge-UUID", see stagingName); the ".old" one
// holds an overwritten target until the new one is in place, and
// ".NAME.sparkmerge-copying" records an overwrite's copy (copyRecord).
var stagingDirName = regexp.MustCompile(`^\..*\.sparkmerge-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.old)?|copying)$`)

// stagingName is the name of a new hidden directory beside base, for a
// merge's rows or a probe, which no listing of sparkmerge's takes for an
// input (see isStagingName).
func stagingName(base string) string {
	return "." + base + ".sparkmerge-" + uuid.NewString()
}

// isStagingName reports whether a path component is one of sparkmerge's
// own hidden directories (stagingName), which an earlier run may have
// left behind: never an input.
func isStagingName(name string) bool { return stagingDirName.MatchString(name) }

// inStagingDir reports whether file, which listing given found (a
// pattern's match, or a file below a directory), lies in one of
// sparkmerge's staging directories below what given names literally. A
// staging directory the user names is read as asked.
func inStagingDir(given, file string) bool {
	given, file = localPath(given), localPath(file)
	fixed := given
	if i := strings.IndexAny(given, globChars); i >= 0 {
		fixed = given[:strings.LastIndex(given[:i], "/")+1]
	}
	rest, ok := strings.CutPrefix(file, strings.TrimRight(fixed, "/")+"/")
	if !ok {
		rest = file
	}
	for _, part := range strings.Split(rest, "/") {
		if isStagingName(part) {
			return true
		}
	}
	return false
}

// clientRealPath is the real path of a local path on this machine:
// absolute, symlinks resolved as far as the path exists, the part not
// yet created appended cleaned, as java.io.File's canonical path is on
// the server (serverRealPath). "." and ".." are cleaned first, as Spark
// (Hadoop's Path) cleans them in the paths it reads.
func clientRealPath(p string) string {
	abs, err := filepath.Abs(localPath(p))
	if err != nil {
		return ""
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// serverRealPath is the SQL of the real path of a path on the server's
// own filesystem (a file: path, or a path without a scheme), where p is a
// SQL expression of the path: java.io.File's canonical path (symlinks and
// ".." resolved as far as the path exists), which Spark's
// Utils.resolveURI returns for a path without a scheme, as a file: URI.
// NULL for other schemes: object stores have no links, and HDFS's are off
// unless enabled. A name with a "#" is taken for a URI fragment there and
// comes back absolute but not resolved.
func serverRealPath(p string) string {
	return fmt.Sprintf(`CASE WHEN %[1]s LIKE 'file:%%' OR %[1]s LIKE '/%%' THEN reflect('org.apache.spark.util.Utils', 'resolveURI', regexp_extract(%[1]s, '^(file:)?(//)?(/.*)$', 3)) END`, p)
}

// fromServerURI is a path as serverRealPath returns it: a file: URI
// (percent-encoded, a directory's with a trailing slash) as a plain
// path; "" for none.
func fromServerURI(u string) string {
	p, ok := strings.CutPrefix(u, "file:")
	if !ok {
		return ""
	}
	if strings.HasPrefix(p, "///") {
		p = p[2:]
	}
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p
}
