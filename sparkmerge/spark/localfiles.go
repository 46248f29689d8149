package spark

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// This file expands the paths the client reads itself into one source per
// file, as listing.go does on the server for paths only Spark sees.

// ExpandLocal turns each local path argument that is a glob or a flat
// directory of files into one source per file, so that each file's schema
// is known (and CSV files with differing headers are never read together by
// position); the auto strategy reads files that merge safely together
// again. A partitioned tree (key=value directories) and remote paths stay
// one source here: planning ([Client.Plan]) reads a tree's files one by
// one too, each with the partition values of its directories, which a
// SourceSpec cannot carry. Paths are made absolute so that they mean the
// same on the Spark server when it shares the client's filesystem.
//
// defaultFormat is the job's format for sources that set none.
func ExpandLocal(specs []SourceSpec, defaultFormat string) ([]SourceSpec, error) {
	out, _, err := expandLocal(specs, defaultFormat, nil, nil)
	return out, err
}

// expandLocal is ExpandLocal with the job's reader options (global), also
// returning the files of directory sources it skipped because their names
// say another format (a README.txt among CSV files). With parts, a
// partitioned tree becomes one source per file too, each file's partition
// values recorded in parts by its path (see partition.go).
func expandLocal(specs []SourceSpec, defaultFormat string, global map[string]string, parts map[string]*partitionFile) (out []SourceSpec, skipped []string, err error) {
	for _, spec := range specs {
		if spec.relational() || len(spec.Paths) != 1 || !isLocalPath(spec.Paths[0]) {
			out = append(out, spec)
			continue
		}
		format := spec.Format
		if format == "" {
			format = defaultFormat
		}
		given := localPath(spec.Paths[0])
		listed, err := expandLocalPath(given, format, partitionOptionsOf(global, spec.Options))
		if err != nil {
			return nil, nil, fmt.Errorf("source %q: %w", spec.DisplayName(), err)
		}
		files := listed.files
		skipped = append(skipped, listed.skipped...)
		if len(files) > 1 && !listed.pattern && listed.parts == nil {
			// A directory: its files of another format are not data.
			dirFormat := format
			if dirFormat == "" {
				dirFormat = directoryFormat(given)
			}
			var others []string
			files, others = splitByFormat(files, dirFormat)
			skipped = append(skipped, others...)
		}
		if len(files) == 1 && listed.parts == nil {
			spec.Paths = files
			if format == "" {
				// A dataset directory says its format through its files.
				spec.Format = directoryFormat(files[0])
			}
			out = append(out, spec)
			continue
		}
		if format == "" {
			format = listed.format
		}
		if format == "" {
			format = directoryFormat(given)
		}
		if listed.parts != nil && parts == nil || spec.Name != "" && format != "csv" && !listed.pattern {
			// The user named the directory: it is one source, a dataset
			// Spark reads with its format's merging (mergeSchema for
			// Parquet and ORC, inference for JSON). CSV files are never
			// read together by position, so they still split below. A
			// partitioned tree stays one source for ExpandLocal.
			spec.Paths = []string{given}
			spec.Format = format
			out = append(out, spec)
			continue
		}
		for _, f := range files {
			one := spec
			one.Paths = []string{f}
			one.Name = "" // each file is named by its path
			if part := listed.parts[f]; part != nil {
				parts[f] = part
				if one.Format == "" {
					one.Format = format
				}
			}
			out = append(out, one)
		}
	}
	return out, skipped, nil
}

// localListing is what a local path means (see expandLocalPath).
type localListing struct {
	files []string
	// pattern says that the path was expanded as a pattern.
	pattern bool
	// parts are, for a partitioned tree, each file's partition values;
	// skipped are the tree's files of another format than its own, which
	// is format.
	parts   map[string]*partitionFile
	skipped []string
	format  string
}

// expandLocalPath lists the files a local path means: a pattern's
// matches, a flat directory's files, the files of a partitioned tree (with
// their partition values, see partition.go), or the path itself (a file,
// or a path this machine does not have). format is the source's format,
// or "". options are its partitionOptions: with basePath, the path's
// files are in a partitioned tree rooted there; with
// recursiveFileLookup=true, a directory's files are those at every depth,
// and none has partition values, as Spark reads it.
func expandLocalPath(p, format string, options map[string]string) (localListing, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return localListing{}, err
	}
	_, literalErr := os.Stat(abs)
	if IsGlob(p) && literalErr != nil {
		// A pattern; a path that exists as written (x[12].csv) is that
		// file, read literally.
		return expandLocalPattern(p, abs, format, options)
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// Not on this machine: the path may live on the cluster (a
		// mounted volume, dbfs:/ on a driver); Spark reports it if not.
		return localListing{files: []string{p}}, nil
	}
	if err != nil {
		return localListing{}, err
	}
	if !info.IsDir() {
		listed := localListing{files: []string{abs}}
		if optionValue(options, "basePath") == "" {
			return listed, nil
		}
		return localTree(listed, abs, format, options)
	}
	return expandLocalDir(abs, format, options)
}

// expandLocalPattern lists the matches of the pattern p, abs on this
// machine (see expandLocalPath).
func expandLocalPattern(p, abs, format string, options map[string]string) (localListing, error) {
	matches, err := filepath.Glob(abs)
	if err != nil {
		return localListing{pattern: true}, fmt.Errorf("bad glob %q: %w", p, err)
	}
	if len(matches) == 0 {
		// Not on this machine: Spark expands the glob on its own
		// filesystem and says so if nothing matches there either.
		return localListing{files: []string{p}, pattern: true}, nil
	}
	// Like a directory listing: no hidden files, no _SUCCESS markers,
	// no subdirectories (a glob's files are sources of their own), and
	// nothing in sparkmerge's own staging directories, which Go's
	// patterns match like any directory (data/*/*.csv).
	var files []string
	for _, m := range matches {
		name := filepath.Base(m)
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || inStagingDir(abs, m) {
			continue
		}
		if info, err := os.Stat(m); err == nil && info.IsDir() {
			continue
		}
		files = append(files, m)
	}
	if len(files) == 0 {
		return localListing{pattern: true}, &noFilesError{fmt.Errorf("the pattern %q matches no data files (only hidden files, markers or directories)", p)}
	}
	sort.Strings(files)
	listed := localListing{files: files, pattern: true}
	if optionValue(options, "basePath") == "" {
		return listed, nil // Spark reads a pattern's files with no partition values
	}
	return localTree(listed, abs, format, options)
}

// expandLocalDir lists the directory abs (see expandLocalPath).
func expandLocalDir(abs, format string, options map[string]string) (localListing, error) {
	base := optionValue(options, "basePath")
	recursive := recursiveLookup(options)
	entries, err := os.ReadDir(abs)
	if err != nil {
		return localListing{}, err
	}
	var files []string
	subdirs := false
	for _, e := range entries {
		name := e.Name()
		if sparkHides(name) {
			continue
		}
		if isDir(abs, e) {
			subdirs = true
			continue
		}
		if strings.HasPrefix(name, "_") {
			continue // not a data file in a flat directory
		}
		files = append(files, filepath.Join(abs, name))
	}
	if subdirs || base != "" || recursive {
		// Files at every depth, as Spark lists a directory: a partitioned
		// tree, or files for recursiveFileLookup.
		all, err := listLocalTree(abs)
		if err != nil {
			return localListing{}, err
		}
		if recursive {
			if len(all) == 0 {
				return localListing{}, &noFilesError{fmt.Errorf("directory %s holds no data files: nothing to merge; remove it from the sources, or check that the files were written", abs)}
			}
			return localListing{files: all}, nil
		}
		tree, err := localTree(localListing{files: all}, abs, format, options)
		if err != nil || tree.parts != nil {
			return tree, err
		}
	}
	if len(files) == 0 && !subdirs {
		if len(entries) == 0 {
			return localListing{}, &noFilesError{fmt.Errorf("directory %s is empty: nothing to merge; remove it from the sources, or check that the files were written", abs)}
		}
		return localListing{files: []string{abs}}, nil
	}
	if len(files) == 0 {
		// Only subdirectories, none a partition: Spark reads them as one
		// dataset.
		return localListing{files: []string{abs}}, nil
	}
	sort.Strings(files)
	return localListing{files: files}, nil
}

// localTree reads listed's files, those of the path given, as a
// partitioned tree rooted at the basePath option, or at given, keeping
// the files whose names say the tree's format (see splitPartitions).
// Files in no partition directory are no tree: listed comes back as it
// was. options are the source's partitionOptions.
func localTree(listed localListing, given, format string, options map[string]string) (localListing, error) {
	if recursiveLookup(options) {
		return listed, nil // Spark reads no partition values
	}
	base := optionValue(options, "basePath")
	root := given
	if base != "" {
		root = localPath(base)
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
	}
	root = filepath.Clean(root)
	files := listed.files
	if format == "" {
		format = namesFormat(files)
	}
	kept, others := splitByFormat(files, format)
	slashed := make([]string, len(kept))
	for i, f := range kept {
		slashed[i] = filepath.ToSlash(f)
	}
	parts, tree, err := splitPartitions(given, filepath.ToSlash(root), slashed)
	if err != nil || tree == nil {
		return listed, err
	}
	// Spark lists the tree as it lists a path: a pattern as such, else
	// literally.
	if tree.root = root; !listed.pattern {
		tree.given = literalPath(given)
	}
	tree.options = options
	out := localListing{files: kept, pattern: listed.pattern, skipped: others, format: format, parts: map[string]*partitionFile{}}
	for i, f := range kept {
		out.parts[f] = parts[slashed[i]]
	}
	return out, nil
}

// sparkHides says whether Spark's file index skips a file or directory of
// this name when it lists a dataset (InMemoryFileIndex's
// shouldFilterOutPathName): hidden names, names starting with an
// underscore but for partition directories (_SUCCESS, _temporary), and
// files being copied.
func sparkHides(name string) bool {
	return strings.HasPrefix(name, ".") ||
		strings.HasPrefix(name, "_") && !strings.Contains(name, "=") ||
		strings.HasSuffix(name, "._COPYING_")
}

// isDir says whether a directory entry is a directory, following a
// symbolic link as Spark's listing of a local filesystem does.
func isDir(dir string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	info, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && info.IsDir()
}

// listLocalTree lists the data files at every depth below dir, as Spark's
// file index lists a dataset directory (see sparkHides), sorted. A
// directory reached twice through symbolic links is listed once.
func listLocalTree(dir string) ([]string, error) {
	var files []string
	visited := map[string]bool{}
	var walk func(d string) error
	walk = func(d string) error {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return err
		}
		if visited[real] {
			return nil
		}
		visited[real] = true
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if sparkHides(e.Name()) {
				continue
			}
			full := filepath.Join(d, e.Name())
			if isDir(d, e) {
				if err := walk(full); err != nil {
					return err
				}
				continue
			}
			files = append(files, full)
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// namesFormat is the one format the files' names say, or "". Text files
// (.txt: a README) and files of extensions that say no format (notes.md)
// count only when no other format is there.
func namesFormat(files []string) string {
	for _, withText := range []bool{false, true} {
		format := ""
		for _, f := range files {
			ff := InferFormat(f)
			if notData(f) && !withText {
				continue
			}
			if ff == "" || (format != "" && ff != format) {
				format = ""
				break
			}
			format = ff
		}
		if format != "" {
			return format
		}
	}
	return ""
}

// directoryFormat is the one format that the data files inside dir have
// (part-00000-....snappy.parquet is parquet; for a partitioned tree, those
// of its first key=value directory), or "" when dir is not a local
// directory or its files disagree. Text files (.txt: a README) count only
// when no other format is there.
func directoryFormat(dir string) string {
	f := directoryFormatOf(dir, false)
	if f == "" {
		f = directoryFormatOf(dir, true)
	}
	return f
}

func directoryFormatOf(dir string, withText bool) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	format := ""
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() && strings.Contains(name, "=") && format == "" {
			// A partitioned tree: its data files are below.
			if f := directoryFormatOf(filepath.Join(dir, name), withText); f != "" {
				format = f
			}
			continue
		}
		if e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		f := InferFormat(name)
		if notData(name) && !withText {
			continue
		}
		if f == "" || (format != "" && f != format) {
			return ""
		}
		format = f
	}
	return format
}

// noFilesError is the error of a source that lists no file: an empty
// directory, a pattern that matches none. An incremental run takes such
// a source as nothing new (a landing directory whose files were moved
// away after they were merged); any other merge fails with it.
type noFilesError struct{ err error }

func (e *noFilesError) Error() string { return e.err.Error() }
func (e *noFilesError) Unwrap() error { return e.err }
