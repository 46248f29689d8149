package spark

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Guards that refuse a merge before Spark reads or deletes anything, where
// running it would lose or duplicate data.

// OverlapError refuses a path target that is, contains or lies inside an
// input, by their real paths (symlinks and ".." resolved): an overwrite
// deletes the target before reading its inputs, and any write there
// changes what the merge reads.
type OverlapError struct {
	// Target is the output path as given; Input is the input path it
	// overlaps, cleaned (a local one made absolute).
	Target, Input string
	// Source is the name of the source that reads Input.
	Source string
	// RealTarget and RealInput are their real paths when only these
	// overlap (a link leads from one into the other), else "".
	RealTarget, RealInput string
}

func (e *OverlapError) Error() string {
	via := ""
	if e.RealInput != "" {
		via = fmt.Sprintf(" (through a link: the output is %s, the input %s)", e.RealTarget, e.RealInput)
	}
	return fmt.Sprintf("output %s overlaps input %s (source %q)%s: writing there would delete or change the data being merged; write to another path, then move it", e.Target, e.Input, e.Source, via)
}

// DuplicateInputError refuses a file that two sources reach (the same file
// twice, through a link or not, or a file and a directory or dataset that
// holds it): its rows would be merged twice.
type DuplicateInputError struct {
	// Path is the file as the second source reads it.
	Path    string
	Sources []string
	// Paths are the two sources' paths when they differ (a link, or a
	// directory and a file below it).
	Paths []string
}

func (e *DuplicateInputError) Error() string {
	via := ""
	if len(e.Paths) == 2 && e.Paths[0] != e.Paths[1] {
		via = fmt.Sprintf(" as %s and %s", e.Paths[0], e.Paths[1])
	}
	return fmt.Sprintf("%s is read by %d sources (%s)%s: its rows would be merged twice; give each file once", e.Path, len(e.Sources), strings.Join(quoteAll(e.Sources), " and "), via)
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

// input is one path a merge reads (or a directory the user gave), as the
// duplicate and overlap checks compare it.
type input struct {
	// path is the path as read, cleaned (comparablePath).
	path string
	// real is its identity: its real path (see [location]) when known,
	// else path.
	real   string
	source string
	// listed: the server listed it, and gave its real path if it had one.
	listed bool
}

// readInputs are the paths every read reads, with their source names and
// real paths. The user's own path lists (patterns) count too, without
// their globs' wildcards beyond the last plain directory.
func readInputs(reads []*Read) []input {
	var out []input
	for _, r := range reads {
		if r.relational() {
			continue
		}
		for _, part := range r.parts() {
			for i, p := range part.Paths {
				if j := strings.IndexAny(p, globChars); j >= 0 && part.patterns {
					p = p[:strings.LastIndex(p[:j], "/")+1]
				}
				in := input{path: comparablePath(p), source: part.Name, listed: part.listed}
				in.real = in.path
				if i < len(part.real) && part.real[i] != "" && !part.patterns {
					in.real = part.real[i]
				}
				out = append(out, in)
			}
		}
	}
	return out
}

// checkOverlap refuses a path target that overlaps any input by real
// path: a file or directory read, or a directory the user gave as a
// source (its files are read one by one, but writing inside it changes
// what it holds). targetReal is the target's real path ("" when
// unknown: its path cleaned).
func checkOverlap(t Target, targetReal string, inputs []input) error {
	if t.Path == "" {
		return nil
	}
	target := comparablePath(t.Path)
	if targetReal == "" {
		targetReal = target
	}
	for _, in := range inputs {
		lexical := within(target, in.path) || within(in.path, target)
		if lexical || within(targetReal, in.real) || within(in.real, targetReal) {
			err := &OverlapError{Target: t.Path, Input: in.path, Source: in.source}
			if !lexical {
				err.RealTarget, err.RealInput = targetReal, in.real
			}
			return err
		}
	}
	return nil
}

// checkDuplicateInputs refuses a file that two sources reach by real
// path: the same file twice (through a link or not), or a path below
// another source's directory.
func checkDuplicateInputs(inputs []input) error {
	first := make(map[string]int, len(inputs))
	for i, in := range inputs {
		if j, seen := first[in.real]; seen {
			return duplicate(inputs[j], in)
		}
		first[in.real] = i
	}
	for _, in := range inputs {
		for dir := in.real; ; {
			k := strings.LastIndex(strings.TrimRight(dir, "/"), "/")
			if k <= 0 {
				break
			}
			dir = dir[:k]
			if j, seen := first[dir]; seen {
				return duplicate(inputs[j], in)
			}
		}
	}
	return nil
}

// checkSameFiles refuses two inputs on this machine that are one file by
// different real paths: hard links, or one directory mounted at two
// places (os.SameFile: the same device and inode). Only files of equal
// size are compared.
func checkSameFiles(inputs []input) error {
	type file struct {
		in   input
		info os.FileInfo
	}
	bySize := map[int64][]file{}
	for _, in := range inputs {
		if !isLocalPath(in.path) || IsGlob(in.path) {
			continue
		}
		info, err := os.Stat(in.real)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		for _, other := range bySize[info.Size()] {
			if os.SameFile(other.info, info) {
				return duplicate(other.in, in)
			}
		}
		bySize[info.Size()] = append(bySize[info.Size()], file{in, info})
	}
	return nil
}

func duplicate(a, b input) *DuplicateInputError {
	return &DuplicateInputError{Path: b.path, Sources: []string{a.source, b.source}, Paths: []string{a.path, b.path}}
}

// sourceDirs are the paths the user gave as sources that are no
// patterns (directories among them), as inputs of the overlap check.
func sourceDirs(specs []SourceSpec) []input {
	var out []input
	for _, s := range specs {
		for _, p := range s.Paths {
			if !IsGlob(p) {
				in := input{path: comparablePath(p), source: s.DisplayName()}
				in.real = in.path
				if isLocalPath(p) && clientSees(p) {
					in.real = clientRealPath(p)
				}
				out = append(out, in)
			}
		}
	}
	return out
}

// checkInputs refuses a file that two sources reach, and a path target
// that overlaps an input, before any schema is asked for or anything
// written: the merge would hold the file's rows twice, or write where it
// reads. Paths are compared by their real paths: the client resolves its
// own, the server those only it sees (realPaths; its listings carry its
// files' real paths already), in one query when there are any.
func (c *Client) checkInputs(ctx context.Context, t Target, reads []*Read, specs []SourceSpec) error {
	inputs := readInputs(reads)
	read := len(inputs)
	if t.Path != "" {
		inputs = append(inputs, sourceDirs(specs)...)
	}
	var ask []string
	for _, in := range inputs {
		if in.real == in.path && !in.listed && onServerAlone(in.path) {
			ask = append(ask, in.path)
		}
	}
	targetReal := ""
	switch {
	case t.Path == "" || !isLocalPath(t.Path):
	case len(ask) > 0 || listedOnServer(inputs):
		// Inputs live where only the server sees them: the server, which
		// writes the target, resolves it as it resolved them.
		ask = append(ask, comparablePath(t.Path))
	default:
		targetReal = clientRealPath(t.Path)
	}
	if len(ask) > 0 {
		reals, err := c.server.realPaths(ctx, ask)
		if err != nil {
			reals = nil // a restricted server: paths compare as written
		}
		for i := range inputs {
			if real, ok := reals[inputs[i].path]; ok && inputs[i].real == inputs[i].path {
				inputs[i].real = real
			}
		}
		if t.Path != "" {
			targetReal = reals[comparablePath(t.Path)]
		}
	}
	if err := checkDuplicateInputs(inputs[:read]); err != nil {
		return err
	}
	if err := checkSameFiles(inputs[:read]); err != nil {
		return err
	}
	return checkOverlap(t, targetReal, inputs)
}

func listedOnServer(inputs []input) bool {
	for _, in := range inputs {
		if in.listed && isLocalPath(in.path) {
			return true
		}
	}
	return false
}

// onServerAlone reports whether p is a local-style path (no scheme, or
// file:) the client does not have: the server's own filesystem, whose
// links only the server can resolve.
func onServerAlone(p string) bool {
	return isLocalPath(p) && !IsGlob(p) && !clientSees(p)
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
