package spark

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// This file reads a partitioned tree (key=value directories: day=1/,
// year=2024/month=01/) as its files, one source each, the way Spark's file
// index reads it as one dataset (PartitioningUtils.parsePartitions):
// each file gets the partition values of its directories, typed as Spark
// types them over the whole tree. Read one by one, files whose headers
// drift are never read by position under another file's header, as they
// are when Spark reads the tree (a CSV tree takes the first file's header
// for every file).
//
// The values' types come from Spark itself (see Client.typePartitions):
// the tree as a binaryFile dataset has the partition columns Spark's read
// of it has. Each file is then read with basePath set to the tree's root
// and the partition columns, so typed, in its schema: Spark parses the
// file's values from its path exactly as it does for the tree (a column
// the schema types is cast by castPartValueToDesiredType, the function
// that makes the tree's values of its inferred types).

// defaultPartitionName is the directory value Spark (and Hive) write for a
// null partition value.
const defaultPartitionName = "__HIVE_DEFAULT_PARTITION__"

// partitionTree is a partitioned dataset that expansion split into its
// files.
type partitionTree struct {
	// given is the source's path: what Spark's read of the tree lists and
	// types the partition values over.
	given string
	// root is where the partition directories start: the source's
	// basePath option, or given.
	root string
	// options are the reader options that decide the tree's listing and
	// the types of its values (see partitionOptions).
	options map[string]string
	// columns are the partition columns' names in path order, unescaped,
	// as the first file spells them.
	columns []string
	// schema is the partition columns typed as Spark's read of the tree
	// types them (set by Client.typePartitions).
	schema sparkmerge.Schema
}

// partitionFile is a file of a partitioned tree.
type partitionFile struct {
	tree *partitionTree
	// values are the file's partition values in the tree's column order,
	// as its directories spell them (escaped).
	values []string
}

// partitionOptions are the reader options that decide which partition
// values a tree has and how Spark types them: the listing options, the
// tree's root (basePath) and the time zone timestamps are read in.
var partitionOptions = append([]string{"basePath", "timeZone"}, listingOptions...)

// partitionOptionsOf picks partitionOptions from the job's options and the
// source's (which win), as Spark matches option keys: case-insensitively.
func partitionOptionsOf(global, own map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range partitionOptions {
		if v := optionValue(global, k); v != "" {
			out[k] = v
		}
		if v := optionValue(own, k); v != "" {
			out[k] = v
		}
	}
	return out
}

// recursiveLookup says whether the options read every file below a
// directory with no partition columns (recursiveFileLookup=true).
func recursiveLookup(options map[string]string) bool {
	return strings.EqualFold(optionValue(options, "recursiveFileLookup"), "true")
}

// partitionColumn is one key=value directory of a file's path.
type partitionColumn struct {
	name  string // unescaped
	value string // as written (escaped)
}

// parsePartitionDir reads a directory name as a partition column, as
// Spark's parsePartitionColumn does: the name before the first '='
// (unescaped), the value after it as written. ok is false for a directory
// that names no column. Spark fails on an empty name or value.
func parsePartitionDir(dir string) (col partitionColumn, ok bool, err error) {
	name, value, found := strings.Cut(dir, "=")
	if !found {
		return partitionColumn{}, false, nil
	}
	col = partitionColumn{name: unescapePathName(name), value: value}
	switch {
	case col.name == "":
		return col, true, fmt.Errorf("directory %q names no partition column (nothing before the '=')", dir)
	case value == "":
		return col, true, fmt.Errorf("directory %q has no partition value (Spark writes a null value as %s)", dir, defaultPartitionName)
	}
	return col, true, nil
}

// filePartition is what Spark's parsePartition finds for one file: its
// partition columns in path order, and the directory where it stopped
// looking (the tree's base: the first directory above a partition
// directory that is not one, or the root).
type filePartition struct {
	columns []partitionColumn
	base    string
}

// parseFilePartition walks rel, a file's path relative to the root (slash
// separated), from its directory up, as Spark's parsePartition walks from
// a leaf directory to the base path: it collects key=value directories and
// stops at the first other directory above one. A file in no partition
// directory has no columns, and its own directory as its base.
func parseFilePartition(rel string) (filePartition, error) {
	dirs := strings.Split(rel, "/")
	dirs = dirs[:len(dirs)-1]
	var cols []partitionColumn
	base := len(dirs) // how many leading directories the base keeps
	for i := len(dirs) - 1; i >= 0; i-- {
		col, ok, err := parsePartitionDir(dirs[i])
		if err != nil {
			return filePartition{}, err
		}
		if !ok {
			if len(cols) > 0 {
				base = i + 1
				break
			}
			continue
		}
		cols = append(cols, col)
		base = 0
	}
	// Collected from the file up: path order is the reverse.
	for i, j := 0, len(cols)-1; i < j; i, j = i+1, j-1 {
		cols[i], cols[j] = cols[j], cols[i]
	}
	return filePartition{columns: cols, base: strings.Join(dirs[:base], "/")}, nil
}

// PartitionLayoutError refuses a partitioned tree that Spark's read would
// not read whole: data files outside its partition directories (Spark's
// read of the tree skips those beside its top partition directories, and
// fails on the others), or directories of different partition columns
// (Spark fails).
type PartitionLayoutError struct {
	// Root is the tree's root as given.
	Root string
	// Outside are data files in no partition directory of the tree.
	Outside []string
	// Layouts are, when the files' partition columns differ, each list of
	// columns with a file that has it.
	Layouts []string
}

func (e *PartitionLayoutError) Error() string {
	if len(e.Outside) > 0 {
		return fmt.Sprintf("partitioned tree %s: %d data files lie outside its key=value directories (%s): Spark's read of the tree would skip or refuse them, so their rows would be lost; merge them as sources of their own, or move them into a partition directory (an incremental run knows files by their path: one it merged already, moved, is merged again)",
			e.Root, len(e.Outside), listSome(e.Outside, 5))
	}
	return fmt.Sprintf("partitioned tree %s: its files lie in directories of different partition columns (%s): Spark reads a tree only when every data file has the same key=value directories; merge each layout as a source of its own",
		e.Root, strings.Join(e.Layouts, "; "))
}

// listSome lists up to n items, saying how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", and %d more", len(items)-n)
}

// splitPartitions reads the partition values of files (paths below root,
// spelled as root is) by Spark's rules, or returns nil when none lies in a
// partition directory: then the files are no partitioned tree. Partition
// column names compare case-insensitively, as in Spark's default session
// (spark.sql.caseSensitive=false).
func splitPartitions(given, root string, files []string) (map[string]*partitionFile, *partitionTree, error) {
	prefix := strings.TrimRight(root, "/") + "/"
	parsed := make([]filePartition, len(files))
	partitioned := false
	for i, f := range files {
		rel, ok := strings.CutPrefix(f, prefix)
		switch {
		case f == strings.TrimRight(root, "/"):
			rel = path.Base(f) // the source is this file: no directory of its own
		case !ok:
			return nil, nil, fmt.Errorf("file %s is not below the partitioned tree's root %s (basePath)", f, root)
		}
		p, err := parseFilePartition(rel)
		if err != nil {
			return nil, nil, fmt.Errorf("partitioned tree %s: %w", root, err)
		}
		parsed[i] = p
		partitioned = partitioned || len(p.columns) > 0
	}
	if !partitioned {
		return nil, nil, nil
	}
	// The tree's layout: that of its first file in a partition directory.
	var first filePartition
	for _, p := range parsed {
		if len(p.columns) > 0 {
			first = p
			break
		}
	}
	layoutOf := func(p filePartition) string {
		names := make([]string, len(p.columns))
		for i, c := range p.columns {
			names[i] = strings.ToLower(c.name)
		}
		return strings.Join(names, "/")
	}
	var outside []string
	layouts := map[string]string{} // layout -> a file with it
	for i, p := range parsed {
		switch {
		case len(p.columns) == 0:
			outside = append(outside, files[i])
		case !strings.EqualFold(p.base, first.base):
			// Partition directories below another directory than the
			// first file's: Spark finds two bases and fails.
			outside = append(outside, files[i])
		default:
			if _, seen := layouts[layoutOf(p)]; !seen {
				layouts[layoutOf(p)] = files[i]
			}
		}
	}
	if len(outside) > 0 {
		return nil, nil, &PartitionLayoutError{Root: given, Outside: outside}
	}
	if len(layouts) > 1 {
		var described []string
		for _, layout := range sortedKeys(layouts) {
			described = append(described, fmt.Sprintf("%s in %s", strings.ReplaceAll(layout, "/", ", "), layouts[layout]))
		}
		return nil, nil, &PartitionLayoutError{Root: given, Layouts: described}
	}
	tree := &partitionTree{given: given, root: root}
	for _, c := range first.columns {
		tree.columns = append(tree.columns, c.name)
	}
	out := make(map[string]*partitionFile, len(files))
	for i, p := range parsed {
		values := make([]string, len(p.columns))
		for k, c := range p.columns {
			values[k] = c.value
		}
		out[files[i]] = &partitionFile{tree: tree, values: values}
	}
	return out, tree, nil
}

// unescapePathName undoes Spark's escaping of partition directory names
// (ExternalCatalogUtils.unescapePathName): each %XX of two hexadecimal
// digits is the character of that code (Spark escapes only ASCII); any
// other % stays.
func unescapePathName(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			// Java's Integer.parseInt(_, 16) also takes a sign: "%+1"
			// is the character 1, "%-1" is no code.
			if code, err := strconv.ParseInt(s[i+1:i+3], 16, 32); err == nil && code >= 0 {
				b.WriteRune(rune(code))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// partitionSchemaOf picks the tree's partition columns from schema, the
// schema Spark gives the tree read as a dataset, by name as Spark matches
// them (case-insensitively).
func partitionSchemaOf(tree *partitionTree, schema sparkmerge.Schema) (sparkmerge.Schema, error) {
	var out sparkmerge.Schema
	for _, name := range tree.columns {
		found := false
		for _, f := range schema.Fields {
			if strings.EqualFold(f.Name, name) {
				f.Nullable = true
				out.Fields = append(out.Fields, f)
				found = true
				break
			}
		}
		if !found {
			return sparkmerge.Schema{}, fmt.Errorf("spark reads the partitioned tree %s without its partition column %q (its schema: %s): check that spark.sql.sources.partitionColumnTypeInference and the listing options read it as a tree", tree.given, name, schema)
		}
	}
	return out, nil
}

// withPartitionColumns is a file's schema as Spark's read of its tree has
// it (PartitioningUtils.mergeDataAndPartitionSchema): the file's own
// columns, where one is also a partition column that partition column in
// its place (and type), then the other partition columns in path order.
// overlap lists the file's own columns that partition columns replace.
func withPartitionColumns(data, partitions sparkmerge.Schema) (merged sparkmerge.Schema, overlap []string) {
	byName := map[string]sparkmerge.Field{}
	for _, p := range partitions.Fields {
		byName[strings.ToLower(p.Name)] = p
	}
	used := map[string]bool{}
	for _, f := range data.Fields {
		if p, ok := byName[strings.ToLower(f.Name)]; ok {
			merged.Fields = append(merged.Fields, p)
			overlap = append(overlap, f.Name)
			used[strings.ToLower(p.Name)] = true
			continue
		}
		merged.Fields = append(merged.Fields, f)
	}
	for _, p := range partitions.Fields {
		if !used[strings.ToLower(p.Name)] {
			merged.Fields = append(merged.Fields, p)
		}
	}
	return merged, overlap
}

// partitionValueSQL is the SQL of a partition value as Spark makes it from
// the directory's value raw for a column of type t
// (PartitioningUtils.castPartValueToDesiredType): null for the default
// partition; a string unescaped; a date cast from raw; a timestamp cast
// from raw unescaped, else as a date; other types cast from raw (the
// integers, decimals and doubles Spark infers are those that parse so).
func partitionValueSQL(raw string, t sparkmerge.DataType) string {
	if raw == defaultPartitionName || t.Kind == sparkmerge.KindNull {
		return "CAST(NULL AS " + t.String() + ")"
	}
	switch {
	case t.Kind.IsStringLike():
		return sparkmerge.QuoteString(unescapePathName(raw))
	case t.Kind == sparkmerge.KindTimestamp || t.Kind == sparkmerge.KindTimestampNTZ:
		return fmt.Sprintf("coalesce(try_cast(%s AS %s), CAST(CAST(%s AS DATE) AS %s))",
			sparkmerge.QuoteString(unescapePathName(raw)), t, sparkmerge.QuoteString(raw), t)
	case t.Kind.IsInterval():
		return "CAST(" + sparkmerge.QuoteString(unescapePathName(raw)) + " AS " + t.String() + ")"
	}
	return "CAST(" + sparkmerge.QuoteString(raw) + " AS " + t.String() + ")"
}

// treesOf are the distinct trees of reads, in order of first
// appearance.
func treesOf(reads []*Read) []*partitionTree {
	var trees []*partitionTree
	seen := map[*partitionTree]bool{}
	for _, r := range reads {
		for _, part := range r.parts() {
			if part.partition != nil && !seen[part.partition.tree] {
				seen[part.partition.tree] = true
				trees = append(trees, part.partition.tree)
			}
		}
	}
	return trees
}

// partitionKey identifies a read's tree in groupKey: files of one tree may
// share a load (with its basePath), files of another tree or of none may
// not.
func partitionKey(r *Read) string {
	if r.partition == nil {
		return ""
	}
	return "tree:" + r.partition.tree.given + "\x00" + r.partition.tree.root
}

// typePartitions types every partitioned tree's partition columns as
// Spark's read of the tree types them: Spark's schema of the tree read as
// a binaryFile dataset (its listing and partition inference are those of
// any file format; no file is read), with the tree's options.
func (c *Client) typePartitions(ctx context.Context, reads []*Read) error {
	for _, tree := range treesOf(reads) {
		schema, err := c.server.partitionSchema(ctx, tree.given, tree.options)
		if err == nil {
			tree.schema, err = partitionSchemaOf(tree, schema)
		}
		if err != nil {
			return sourceError(&Read{Name: tree.given}, fmt.Errorf("type the partition values of the tree: %w", err))
		}
	}
	return nil
}

// withoutPartitionRoot drops basePath from the options of files of
// partitioned trees: discovery learns each file's own columns, and
// addPartitionColumns adds the tree's.
func withoutPartitionRoot(reads []*Read) {
	for _, r := range reads {
		if r.partition != nil {
			r.Options = withoutOption(r.Options, "basePath")
		}
	}
}

// addPartitionColumns gives every read of files of a partitioned tree the
// tree's partition columns, as Spark's read of the tree has them (see
// withPartitionColumns), once its files' own schema is known. The read
// then runs with basePath set to the tree's root and the columns in its
// pinned schema, so that Spark makes each row's values from its file's
// path. A file with a column of its own named as a partition column runs
// without: its own columns, then the partition values as literals (see
// overlapProjection).
func addPartitionColumns(reads []*Read) error {
	for _, r := range reads {
		if r.partition == nil {
			continue
		}
		tree := r.partition.tree
		merged, overlap := withPartitionColumns(r.Schema, tree.schema)
		if len(overlap) > 0 && r.multiFile() {
			return sourceError(r, fmt.Errorf("its files have columns of their own named as the tree's partition columns (%s), whose values a multi-path read would replace by their directories' without a check: use the auto or union strategy", strings.Join(overlap, ", ")))
		}
		r.dataSchema, r.Schema = r.Schema, merged
		if len(overlap) > 0 {
			r.overlapExprs = overlapProjection(r)
			continue
		}
		r.Options = withOption(withoutOption(r.Options, "basePath"), "basePath", tree.root)
	}
	return nil
}

// overlapProjection makes the own columns of r, a file with columns named
// as its tree's partition columns, into its Schema, as Spark's read of
// the tree would: in such a column's place its directory's value
// (partitionValueSQL), the other partition values after its own columns.
// Spark's read takes the directory's value without a word; here a row
// whose own value differs (is not null and not the same value in the
// other column's type) fails the merge, naming the file and column, for
// it would be lost.
func overlapProjection(r *Read) []string {
	tree := r.partition.tree
	value := map[string]string{} // lower-cased partition column -> SQL
	raw := map[string]string{}
	for i, p := range tree.schema.Fields {
		value[strings.ToLower(p.Name)] = partitionValueSQL(r.partition.values[i], p.Type)
		raw[strings.ToLower(p.Name)] = tree.columns[i] + "=" + r.partition.values[i]
	}
	byName := map[string]sparkmerge.Field{}
	for _, p := range tree.schema.Fields {
		byName[strings.ToLower(p.Name)] = p
	}
	var exprs []string
	used := map[string]bool{}
	for _, f := range r.dataSchema.Fields {
		key := strings.ToLower(f.Name)
		p, ok := byName[key]
		if !ok {
			exprs = append(exprs, ident(f.Name))
			continue
		}
		used[key] = true
		own, lit := ident(f.Name), value[key]
		lost := fmt.Sprintf("raise_error(concat(%s, CAST(%s AS STRING), %s))",
			sparkmerge.QuoteString(fmt.Sprintf("sparkmerge: %s: its column %s holds ", r.Paths[0], f.Name)), own,
			sparkmerge.QuoteString(fmt.Sprintf(" where its directory says %s, a value Spark's read of the partitioned tree would drop for the directory's: correct the file or its directory, or read the files without partition columns (reader option recursiveFileLookup=true)", raw[key])))
		exprs = append(exprs, fmt.Sprintf("CASE WHEN %[1]s IS NULL OR try_cast(%[1]s AS %[2]s) <=> %[3]s OR try_cast(%[3]s AS %[4]s) <=> %[1]s THEN %[3]s ELSE %[5]s END AS %[6]s",
			own, p.Type, lit, f.Type, lost, ident(p.Name)))
	}
	for _, p := range tree.schema.Fields {
		if key := strings.ToLower(p.Name); !used[key] {
			exprs = append(exprs, value[key]+" AS "+ident(p.Name))
		}
	}
	return exprs
}

// withoutOption is options without key, matched as Spark matches option
// keys (case-insensitively).
func withoutOption(options map[string]string, key string) map[string]string {
	out := make(map[string]string, len(options))
	for k, v := range options {
		if !strings.EqualFold(k, key) {
			out[k] = v
		}
	}
	return out
}

// partitionSQL is the select list that gives a read's relation in
// Planned.SQL the read's columns: all, its own columns as all names them
// (Spark SQL reads files with no schema given, so the files of a tree are
// read there without basePath: their partition columns would be typed
// over those files alone), then each partition value as a literal
// (partitionValueSQL), for a read of several files chosen by the row's
// file, file. A file with a column named as a partition column has its
// overlapProjection instead.
func partitionSQL(r *Read, all, file string) []string {
	if r.overlapExprs != nil {
		return r.overlapExprs
	}
	exprs := []string{all}
	if r.partition == nil {
		return exprs
	}
	parts := r.parts()
	for k, p := range r.partition.tree.schema.Fields {
		if len(parts) == 1 {
			exprs = append(exprs, partitionValueSQL(parts[0].partition.values[k], p.Type)+" AS "+ident(p.Name))
			continue
		}
		var b strings.Builder
		b.WriteString("CASE " + file)
		for _, m := range parts {
			fmt.Fprintf(&b, " WHEN %s THEN %s", sparkmerge.QuoteString(m.Paths[0]), partitionValueSQL(m.partition.values[k], p.Type))
		}
		b.WriteString(" END AS " + ident(p.Name))
		exprs = append(exprs, b.String())
	}
	return exprs
}
