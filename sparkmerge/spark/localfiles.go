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
// again. Partitioned trees (directories with subdirectories) and remote
// paths stay one source: Spark reads them as a dataset. Paths are made absolute so that they mean
// the same on the Spark server when it shares the client's filesystem.
//
// defaultFormat is the job's format for sources that set none.
func ExpandLocal(specs []SourceSpec, defaultFormat string) ([]SourceSpec, error) {
	out, _, err := expandLocal(specs, defaultFormat)
	return out, err
}

// expandLocal is ExpandLocal, also returning the files of directory
// sources it skipped because their names say another format (a README.txt
// among CSV files).
func expandLocal(specs []SourceSpec, defaultFormat string) (out []SourceSpec, skipped []string, err error) {
	for _, spec := range specs {
		if spec.relational() || len(spec.Paths) != 1 || !isLocalPath(spec.Paths[0]) {
			out = append(out, spec)
			continue
		}
		format := spec.Format
		if format == "" {
			format = defaultFormat
		}
		files, pattern, err := expandLocalPath(localPath(spec.Paths[0]), format)
		if err != nil {
			return nil, nil, fmt.Errorf("source %q: %w", spec.DisplayName(), err)
		}
		if len(files) > 1 && !pattern {
			// A directory: its files of another format are not data.
			dirFormat := format
			if dirFormat == "" {
				dirFormat = directoryFormat(localPath(spec.Paths[0]))
			}
			var others []string
			files, others = splitByFormat(files, dirFormat)
			skipped = append(skipped, others...)
		}
		if len(files) == 1 {
			spec.Paths = files
			if format == "" {
				// A dataset directory says its format through its files.
				spec.Format = directoryFormat(files[0])
			}
			out = append(out, spec)
			continue
		}
		dir := localPath(spec.Paths[0])
		if format == "" {
			format = directoryFormat(dir)
		}
		if spec.Name != "" && format != "csv" && !pattern {
			// The user named the directory: it is one source, a dataset
			// Spark reads with its format's merging (mergeSchema for
			// Parquet and ORC, inference for JSON). CSV files are never
			// read together by position, so they still split below.
			spec.Paths = []string{dir}
			spec.Format = format
			out = append(out, spec)
			continue
		}
		for _, f := range files {
			one := spec
			one.Paths = []string{f}
			one.Name = "" // each file is named by its path
			out = append(out, one)
		}
	}
	return out, skipped, nil
}

// expandLocalPath lists the files a local path means: a pattern's
// matches, a flat directory's files, or the path itself (a file, a
// partitioned tree, or a path this machine does not have). pattern says
// that p was expanded as a pattern.
func expandLocalPath(p, format string) (paths []string, pattern bool, err error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, false, err
	}
	_, literalErr := os.Stat(abs)
	if IsGlob(p) && literalErr != nil {
		// A pattern; a path that exists as written (x[12].csv) is that
		// file, read literally.
		matches, err := filepath.Glob(abs)
		if err != nil {
			return nil, true, fmt.Errorf("bad glob %q: %w", p, err)
		}
		if len(matches) == 0 {
			// Not on this machine: Spark expands the glob on its own
			// filesystem and says so if nothing matches there either.
			return []string{p}, true, nil
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
			return nil, true, fmt.Errorf("the pattern %q matches no data files (only hidden files, markers or directories)", p)
		}
		sort.Strings(files)
		return files, true, nil
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// Not on this machine: the path may live on the cluster (a
		// mounted volume, dbfs:/ on a driver); Spark reports it if not.
		return []string{p}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !info.IsDir() {
		return []string{abs}, false, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, false, err
	}
	var files []string
	nested := false
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		if e.IsDir() {
			// key=value directories are partitions of one dataset; other
			// subdirectories are not sources.
			nested = nested || strings.Contains(name, "=")
			continue
		}
		files = append(files, filepath.Join(abs, name))
	}
	if len(files) == 0 && !nested {
		if len(entries) == 0 {
			return nil, false, fmt.Errorf("directory %s is empty: nothing to merge; remove it from the sources, or check that the files were written", abs)
		}
		return []string{abs}, false, nil
	}
	if nested {
		// A partitioned dataset (day=1/...): Spark reads the tree and
		// its partition columns as one source.
		return []string{abs}, false, nil
	}
	sort.Strings(files)
	return files, false, nil
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
		if f == "text" && !withText {
			continue
		}
		if f == "" || (format != "" && f != format) {
			return ""
		}
		format = f
	}
	return format
}
