package spark

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Guards that refuse a merge before Spark reads or deletes anything, where
// running it would lose or duplicate data.

// OverlapError refuses a path target that is, contains or lies inside an
// input: an overwrite deletes the target before reading its inputs, and any
// write there changes what the merge reads.
type OverlapError struct {
	// Target is the output path as given; Input is the input path it
	// overlaps, cleaned (a local one made absolute).
	Target, Input string
	// Source is the name of the source that reads Input.
	Source string
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("output %s overlaps input %s (source %q): writing there would delete or change the data being merged; write to another path, then move it", e.Target, e.Input, e.Source)
}

// DuplicateInputError refuses a file that two sources reach (the same file
// twice, or a file and a directory or dataset that holds it): its rows
// would be merged twice.
type DuplicateInputError struct {
	Path    string
	Sources []string
}

func (e *DuplicateInputError) Error() string {
	return fmt.Sprintf("%s is read by %d sources (%s): its rows would be merged twice; give each file once", e.Path, len(e.Sources), strings.Join(quoteAll(e.Sources), " and "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quoteName(s)
	}
	return out
}

// comparablePath is p as a key that equal locations share: the file:
// scheme dropped, a relative local path made absolute, "." and ".." and
// trailing slashes cleaned. Other schemes keep their authority and clean
// their path.
func comparablePath(p string) string {
	if isLocalPath(p) {
		lp := localPath(p)
		if abs, err := filepath.Abs(lp); err == nil {
			lp = abs
		}
		return filepath.Clean(lp)
	}
	if i := strings.Index(p, "://"); i >= 0 {
		rest := p[i+3:]
		if j := strings.Index(rest, "/"); j >= 0 {
			return p[:i+3] + rest[:j] + path.Clean(rest[j:])
		}
		return strings.TrimRight(p, "/")
	}
	// dbfs:/x and other scheme:/path forms.
	if i := strings.Index(p, ":"); i >= 0 {
		return p[:i+1] + path.Clean(p[i+1:])
	}
	return path.Clean(p)
}

// within reports whether b is a or lies below it.
func within(a, b string) bool {
	return a == b || strings.HasPrefix(b, strings.TrimRight(a, "/")+"/")
}

// inputPaths are the paths every read reads, with their source names, as
// comparable keys. The user's own path lists (patterns) count too, without
// their globs' wildcards beyond the last plain directory.
func inputPaths(reads []*Read) (paths, sources []string) {
	for _, r := range reads {
		if r.relational() {
			continue
		}
		for _, part := range r.parts() {
			for _, p := range part.Paths {
				if i := strings.IndexAny(p, globChars); i >= 0 && part.patterns {
					p = p[:strings.LastIndex(p[:i], "/")+1]
				}
				paths = append(paths, comparablePath(p))
				sources = append(sources, part.Name)
			}
		}
	}
	return paths, sources
}

// checkOverlap refuses a path target that overlaps any input: a file or
// directory read, or a directory the user gave as a source (its files are
// read one by one, but writing inside it changes what it holds).
func checkOverlap(t Target, reads []*Read, specs []SourceSpec) error {
	if t.Path == "" {
		return nil
	}
	target := comparablePath(t.Path)
	paths, sources := inputPaths(reads)
	for _, s := range specs {
		for _, p := range s.Paths {
			if !IsGlob(p) {
				paths = append(paths, comparablePath(p))
				sources = append(sources, s.DisplayName())
			}
		}
	}
	for i, p := range paths {
		if within(target, p) || within(p, target) {
			return &OverlapError{Target: t.Path, Input: p, Source: sources[i]}
		}
	}
	return nil
}

// checkDuplicateInputs refuses a file that two sources reach: the same
// path twice, or a path below another source's directory.
func checkDuplicateInputs(reads []*Read) error {
	paths, sources := inputPaths(reads)
	first := make(map[string]int, len(paths))
	for i, p := range paths {
		if j, seen := first[p]; seen {
			return &DuplicateInputError{Path: p, Sources: []string{sources[j], sources[i]}}
		}
		first[p] = i
	}
	for i, p := range paths {
		for dir := p; ; {
			k := strings.LastIndex(strings.TrimRight(dir, "/"), "/")
			if k <= 0 {
				break
			}
			dir = dir[:k]
			if j, seen := first[dir]; seen {
				return &DuplicateInputError{Path: p, Sources: []string{sources[j], sources[i]}}
			}
		}
	}
	return nil
}

// absoluteTarget makes a relative local output path absolute, as input
// paths are: it then means the same directory to the client and to a
// Spark that shares its filesystem, not one under the server's working
// directory.
func absoluteTarget(t Target) Target {
	if t.Path != "" && isLocalPath(t.Path) && !strings.HasPrefix(t.Path, "file:") && !filepath.IsAbs(t.Path) {
		if abs, err := filepath.Abs(t.Path); err == nil {
			t.Path = abs
		}
	}
	return t
}

// CheckReaderOptions refuses reader options whose value Spark would not
// refuse but silently replace: an unknown parse mode is read as
// PERMISSIVE, which turns values that do not parse into nulls.
func CheckReaderOptions(options map[string]string) error {
	for k, v := range options {
		if !strings.EqualFold(k, "mode") {
			continue
		}
		switch strings.ToUpper(v) {
		case "PERMISSIVE", "DROPMALFORMED", "FAILFAST":
		default:
			return fmt.Errorf("reader option mode %q: use FAILFAST (fail on a malformed row), PERMISSIVE (nulls for what does not parse) or DROPMALFORMED (drop such rows); Spark would read an unknown mode as PERMISSIVE", v)
		}
	}
	return nil
}

// checkPartitionColumns refuses a target partitioned by a column the
// merged table lacks, before anything is read or written.
func checkPartitionColumns(t Target, p *Planned) error {
	if len(t.PartitionBy) == 0 || p == nil || p.Plan == nil {
		return nil
	}
	names := make([]string, 0, len(p.Plan.Target.Fields))
	for _, f := range p.Plan.Target.Fields {
		names = append(names, f.Name)
	}
	for _, col := range t.PartitionBy {
		found := false
		for _, n := range names {
			if strings.EqualFold(n, col) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("partition column %q is not in the merged table; its columns are %s", col, strings.Join(names, ", "))
		}
	}
	return nil
}
