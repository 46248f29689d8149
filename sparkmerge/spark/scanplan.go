package spark

import (
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// This file plans positional scans (see batch.go for why and how they
// read): which files share a scan, and how each file's positional strings
// feed the target. It is pure: the same reads and plan give the same
// scans, computed once per merge by planScans and kept in
// [Planned], so the merge, its text and its session settings all see one
// layout.

// maxBatchFiles bounds the files of one positional scan, and so the size
// of its route table (a row per file) and the paths Spark lists on the
// driver (see [tuning]). A row finds its file by a hash lookup, so
// the bound is not about the cost per row.
const maxBatchFiles = 4096

// scanPlan is how a merge reads its plan's reads: positional scans, and
// the reads that run on their own (indexes into the reads, in order).
type scanPlan struct {
	batches []scanBatch
	rest    []int
}

// files is the number of files read in positional scans.
func (s scanPlan) files() int {
	n := 0
	for _, b := range s.batches {
		n += len(b.files)
	}
	return n
}

// quotedFiles is the number of CSV files with quoted values read in
// positional scans (see csvScan).
func (s scanPlan) quotedFiles() int {
	n := 0
	for _, b := range s.batches {
		for _, f := range b.files {
			if f.quotedValues {
				n++
			}
		}
	}
	return n
}

// scanBatch is a set of files read in one positional scan: CSV files, or
// JSON-lines files (whose keys, in all the spellings the files use, are
// the positions). A file is a single-file read, or a member of a
// multi-file JSON read (files that spell their keys alike, grouped by
// groupLocalJSON), which then reads under the group's schema.
type scanBatch struct {
	reads  []int   // per file: its read, an index into the plan's reads
	files  []*Read // per file: its single-file read (the read, or a member of it)
	format string
	width  int      // CSV: the widest file's number of columns
	keys   []string // JSON: the reads' keys, exactly as spelled, first seen first
	// sources are per file the provenance of its rows: the read's name,
	// or for a file of a multi-file read its path.
	sources []string
	layout  batchLayout
}

// batchLayout is how a batch's files feed the target: per file and target
// column, the 1-based position in the file and the cast (0: null); per
// target column its distinct casts, and whether it is the provenance
// column. Positions and cast numbers are data (the route table), so the
// scan's expressions grow with the ways a column is typed, not with the
// files.
type batchLayout struct {
	positions, codes [][]int32     // [file][target column]
	casts            [][]valueCast // [target column][cast]
	provenance       []bool        // [target column]
	// typed are, per target column of a JSON batch, the keys (indexes
	// into the batch's keys) that from_json parses straight into the
	// target's type (see typedKeys); nil: the column is routed by
	// position and cast.
	typed [][]int
	// routed are a JSON batch's keys whose text the scan's array holds,
	// in order: the positions of routed columns index them. Typed keys
	// are not in it.
	routed []int
}

// planScans partitions reads into positional batches and the reads that
// run on their own, both in read order, and lays each batch out against
// the plan. The files of one multi-file read may span batches. Files up
// to their format's batchFileLimit join batches.
func planScans(reads []*Read, plan *sparkmerge.Plan) scanPlan {
	s := batches(reads, plan)
	for i := range s.batches {
		s.batches[i].layout = s.batches[i].lay(reads, plan)
	}
	return s
}

// batches is planScans' partition.
func batches(reads []*Read, plan *sparkmerge.Plan) scanPlan {
	var s scanPlan
	byKey := map[string]int{} // key -> index in batches of the open batch
	for i, r := range reads {
		if !batchable(r) || !positional(plan.Projections(i), r.Schema) || len(plan.RescueEntries(i)) > 0 {
			s.rest = append(s.rest, i)
			continue
		}
		key := groupKey(r) // the format and options: one scan reads them
		for _, f := range r.parts() {
			b, open := byKey[key]
			if !open || len(s.batches[b].files) == maxBatchFiles {
				b = len(s.batches)
				byKey[key] = b
				s.batches = append(s.batches, scanBatch{format: r.Format})
			}
			batch := &s.batches[b]
			batch.width = max(batch.width, len(f.Schema.Fields))
			batch.reads = append(batch.reads, i)
			batch.files = append(batch.files, f)
			source := r.Name
			if r.multiFile() {
				source = f.Paths[0]
			}
			batch.sources = append(batch.sources, source)
		}
	}
	// A batch of one single-file read is a plain read.
	kept := s.batches[:0]
	for _, b := range s.batches {
		if len(b.files) == 1 && !reads[b.reads[0]].multiFile() {
			s.rest = append(s.rest, b.reads[0])
			continue
		}
		if b.format == "json" {
			seen := map[string]bool{}
			for _, i := range b.reads {
				for _, f := range reads[i].Schema.Fields {
					if !seen[f.Name] {
						seen[f.Name] = true
						b.keys = append(b.keys, f.Name)
					}
				}
			}
		}
		kept = append(kept, b)
	}
	s.batches = kept
	sort.Ints(s.rest)
	return s
}

// batchFileLimit bounds the files read in positional scans. A positional
// scan saves Spark's cost per read (the driver plans each read and compiles
// code for its projection) but may cost more per byte. CSV: each file is
// read whole, split into lines and values, routed and cast: below the 9 MB
// at which a scan of text lines and a read per file took the same time
// (measured at 61e96b8, when a scan read text lines; reading each file
// whole costs more, see csvScan, and the limit was not measured again).
// JSON lines: the keys
// from_json parses into their column's type (typedKeys) cost what Spark's
// JSON reader does; only the others are routed; files of 25 MB were no
// slower. The measurements are in
// docs/benchmarks-history.md#measurements-behind-the-code.
func batchFileLimit(format string) int64 {
	if format == "json" {
		return 64 << 20
	}
	return 8 << 20
}

// positional says whether a positional string can make each of a read's
// projections (not nested types).
func positional(projections []sparkmerge.Projection, schema sparkmerge.Schema) bool {
	for _, pr := range projections {
		if _, _, ok := positionalCast(pr, fieldIndex(schema)); !ok {
			return false
		}
	}
	return true
}

// batchable says whether a read may run in a positional scan, as far as
// the read itself tells (positional checks its projections): a locally inferred single-file read, or a
// multi-file JSON read of such files, each up to its format's
// batchFileLimit.
func batchable(r *Read) bool {
	if !r.InferredLocally || r.relational() || r.UserSchema != "" || r.partition != nil || r.Where != "" || len(r.hinted) > 0 {
		// A file of a partitioned tree takes its values from its path;
		// a row filter reads the source's own columns, which a batch
		// has not; a hinted type is the reader's to parse, not a cast's.
		return false
	}
	if r.multiFile() && r.Format != "json" {
		return false // CSV files batch by their own header
	}
	limit := batchFileLimit(r.Format)
	for _, f := range r.parts() {
		if !batchableFile(f, limit) {
			return false
		}
	}
	switch r.Format {
	case "csv":
		// DROPMALFORMED drops rows a positional scan cannot tell. A file
		// whose header line is unknown, or repeated in it, is read on its
		// own, under Spark's own check of its header: a positional scan
		// proves a file's rows come from the header it planned by reading
		// the header line with them (see csvScan).
		return r.Options["header"] == "true" && !strings.EqualFold(optionValue(r.Options, "mode"), "DROPMALFORMED") && readsAsLines(r)
	case "json":
		for k := range r.Options {
			if !strings.EqualFold(k, "mode") {
				return false // client inference admits no other option
			}
		}
		if strings.EqualFold(optionValue(r.Options, "mode"), "DROPMALFORMED") {
			return false // from_json has no such mode
		}
		for _, f := range r.Schema.Fields {
			if f.Type.Kind.IsComplex() {
				return false
			}
			if f.Type.Kind == sparkmerge.KindString {
				for _, part := range r.parts() {
					if part.reprinted[f.Name] {
						return false // from_json would print 1.50 as 1.5
					}
				}
			}
		}
		return true
	}
	return false
}

// batchableFile says whether a single-file read's file can be told apart
// in a positional scan: stamped, up to limit bytes, and named so that the
// row's file (rowFileOf) compares equal to the path as written.
func batchableFile(f *Read, limit int64) bool {
	if !f.InferredLocally || len(f.Paths) != 1 || f.stamp == (fileStamp{}) || f.stamp.size > limit {
		return false
	}
	return namesRowFile(f.Paths[0])
}

// namesRowFile says whether p is written as rowFileOf gives a row's file:
// a clean absolute local path, or a URI with an authority and a clean path
// (s3a://bucket/dir/file.csv, as Spark lists object store files), whose
// scheme Spark reports as written.
func namesRowFile(p string) bool {
	if isLocalPath(p) {
		return !strings.HasPrefix(p, "file:") && filepath.IsAbs(p) && filepath.Clean(p) == p
	}
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok || scheme == "" || namesDBFS(p) {
		return false
	}
	authority, key, ok := strings.Cut(rest, "/")
	return ok && authority != "" && key != "" && path.Clean("/"+key) == "/"+key
}

// fieldIndex finds a column of schema by exact name; -1 if absent.
func fieldIndex(schema sparkmerge.Schema) func(string) int {
	return func(name string) int {
		for j, f := range schema.Fields {
			if f.Name == name {
				return j
			}
		}
		return -1
	}
}

// positionOf finds a column of the batch's m-th file among the positions
// of the batch's scan.
func (b scanBatch) positionOf(m int) func(string) int {
	if b.format == "json" {
		return func(name string) int { return slices.Index(b.keys, name) }
	}
	return fieldIndex(b.files[m].Schema)
}

// castKind is how a file's positional string becomes a target value.
type castKind int

const (
	// castNone takes the string as it is (a string read into a string).
	castNone castKind = iota
	// castDirect is CAST(raw AS to): parsing the string as the file's
	// type first would give the same value (see castKindFor).
	castDirect
	// castThrough is CAST(CAST(raw AS from) AS to): the file's parser,
	// then the planner's cast.
	castThrough
	// castChecked is the file's parse, then a cast that fails the query
	// on a value it would change (see [sparkmerge.CheckedCast]).
	castChecked
)

// valueCast is how one target column's value is made from a file's
// positional string.
type valueCast struct {
	kind     castKind
	from, to sparkmerge.DataType // the file's type and the target's
	// tolerant: the file's parse nulls a value it cannot parse, as Spark's
	// parser does under PERMISSIVE (the id of a repeated header line in an
	// int column), where a cast would fail.
	tolerant bool
	// column is the target column, named by a checked cast's error.
	column string
}

// sql is the cast over raw, the row's string; file is the row's file, for
// a checked cast's error.
func (v valueCast) sql(raw, file string) string {
	parse := func(t sparkmerge.DataType) string {
		if v.tolerant {
			return "try_cast(" + raw + " AS " + t.String() + ")"
		}
		return "CAST(" + raw + " AS " + t.String() + ")"
	}
	switch v.kind {
	case castDirect:
		return parse(v.to)
	case castThrough:
		return "CAST(" + parse(v.from) + " AS " + v.to.String() + ")"
	case castChecked:
		return sparkmerge.CheckedCast(parse(v.from), v.from, v.to, v.column, file)
	}
	return raw
}

// equal says whether two casts render alike, so a column shares one
// among the files that type it alike.
func (v valueCast) equal(w valueCast) bool {
	return v.kind == w.kind && v.tolerant == w.tolerant && v.column == w.column && v.from.Equal(w.from) && v.to.Equal(w.to)
}

// positionalCast is how one target column is made from a file's
// positional strings: its position in the file (-1 when the target column
// is null for the file, or is the provenance column) and the cast. ok is
// false for projections a positional read cannot express (nested types).
func positionalCast(pr sparkmerge.Projection, positionOf func(string) int) (pos int, cast valueCast, ok bool) {
	switch pr.Kind {
	case sparkmerge.ProjectNull, sparkmerge.ProjectLiteral, sparkmerge.ProjectRescue:
		// The rescue column is null: a read with values to rescue is
		// not batched (planScans).
		return -1, valueCast{}, true
	case sparkmerge.ProjectTake, sparkmerge.ProjectCast:
		pos = positionOf(pr.Source)
		if pos < 0 || pr.From.Kind.IsComplex() || pr.To.Kind.IsComplex() || pr.MayFail {
			return -1, valueCast{}, false
		}
		cast = valueCast{kind: castKindFor(pr.From, pr.To), from: pr.From, to: pr.To}
		if pr.Checked {
			cast.kind, cast.column = castChecked, pr.Column
		}
		return pos, cast, true
	}
	return -1, valueCast{}, false
}

// castKindFor is the unchecked cast from a file's type to the target's:
// CAST(CAST(raw AS from) AS to), the file's parser then the planner's
// cast, shortened to CAST(raw AS to) where the two are equal for every
// value client inference admits: from a string; or from an integer-valued
// type (int, bigint, decimal(p,0): digits, parsed exactly) to bigint or a
// decimal (parsed exactly, or rounded once, either way). Fewer casts make
// smaller generated code.
func castKindFor(from, to sparkmerge.DataType) castKind {
	integral := from.Kind == sparkmerge.KindInt || from.Kind == sparkmerge.KindLong ||
		from.Kind == sparkmerge.KindDecimal && from.Scale == 0
	// Not double: "-0" parsed as an integer is 0, then 0.0; cast straight
	// to a double it would be -0.0.
	wide := to.Kind == sparkmerge.KindLong || to.Kind == sparkmerge.KindDecimal
	if from.Equal(to) || from.Kind == sparkmerge.KindString || integral && wide {
		if to.Kind == sparkmerge.KindString {
			return castNone
		}
		return castDirect
	}
	return castThrough
}

// lay is the batch's layout against the plan.
func (b scanBatch) lay(reads []*Read, plan *sparkmerge.Plan) batchLayout {
	n := len(plan.Target.Fields)
	l := batchLayout{
		positions:  make([][]int32, len(b.files)),
		codes:      make([][]int32, len(b.files)),
		casts:      make([][]valueCast, n),
		provenance: make([]bool, n),
	}
	for m, i := range b.reads {
		l.positions[m] = make([]int32, n)
		l.codes[m] = make([]int32, n)
		tolerant := strings.EqualFold(optionValue(reads[i].Options, "mode"), "PERMISSIVE")
		for k, pr := range plan.Projections(i) {
			if b.files[m].shortNumbers {
				pr.Checked = false // every cast of this file is exact
			}
			pos, cast, _ := positionalCast(pr, b.positionOf(m))
			cast.tolerant = tolerant && cast.kind != castNone
			l.positions[m][k] = 1
			switch {
			case pr.Kind == sparkmerge.ProjectLiteral:
				l.provenance[k] = true
			case pos >= 0:
				l.positions[m][k] = int32(pos + 1)
				code := slices.IndexFunc(l.casts[k], cast.equal)
				if code < 0 {
					code = len(l.casts[k])
					l.casts[k] = append(l.casts[k], cast)
				}
				l.codes[m][k] = int32(code + 1)
			}
		}
	}
	if b.format == "json" {
		l.typed = b.typedKeys(reads, l)
		l.routeUntyped(len(b.keys))
	}
	return l
}

// routeUntyped lays the untyped keys of a JSON batch of n keys out in the
// scan's array (routed), and points the routed columns' positions at
// them: an array of every key's text would be built for every row.
func (l *batchLayout) routeUntyped(n int) {
	isTyped := make([]bool, n)
	for _, keys := range l.typed {
		for _, j := range keys {
			isTyped[j] = true
		}
	}
	index := make([]int32, n) // key -> 1-based position in routed
	for j := range n {
		if !isTyped[j] {
			l.routed = append(l.routed, j)
			index[j] = int32(len(l.routed))
		}
	}
	for m := range l.positions {
		for k, pos := range l.positions[m] {
			switch {
			case l.typed[k] != nil:
				l.positions[m][k] = 1 // never read
			case l.codes[m][k] != 0:
				l.positions[m][k] = index[pos-1]
			}
		}
	}
}

// typedKeys are, per target column of a JSON batch, the keys from_json
// may parse straight into the target's type, so that the column needs no
// routing and no cast: Spark's JSON parser then makes of each value
// exactly what the file's own read makes of it, cast to the target. That
// holds where
//
//   - every file's type for the column is the target's, or bigint into
//     double or string (the parser converts the long it parsed, or
//     prints it, as the cast would: -0 as 0), with no checked cast;
//   - no file's records hold more than one of the column's keys (its
//     spellings), and a file that gives the column no value holds none
//     of them (by its read's schema and the keys its records have, see
//     holds), so the first non-null of the keys is the row's own file's
//     value;
//   - no other column takes any of the keys.
//
// Other columns (nil) take the key's text by position and cast it.
func (b scanBatch) typedKeys(reads []*Read, l batchLayout) [][]int {
	typed := make([][]int, len(l.casts))
	users := make([]int, len(b.keys)) // how many target columns take each key
	holds := b.heldKeys(reads)
	for k := range l.casts {
		if l.provenance[k] || len(l.casts[k]) == 0 {
			continue
		}
		keys := b.columnKeys(l, k)
		for _, j := range keys {
			users[j]++
		}
		if directCasts(l.casts[k]) && b.oneKeyPerFile(l, k, keys, holds) {
			typed[k] = keys
		}
	}
	for k, keys := range typed {
		for _, j := range keys {
			if users[j] > 1 {
				typed[k] = nil
			}
		}
	}
	return typed
}

// heldKeys are per file the keys its records may hold: its read's schema,
// and every key its records have, which includes keys Spark's inference
// drops (an empty object, an array of them): from_json would parse such a
// key's value into the column's type, as text ('{}') in a string, where
// the file read alone has no such column.
func (b scanBatch) heldKeys(reads []*Read) [][]bool {
	holds := make([][]bool, len(b.files))
	for m, i := range b.reads {
		holds[m] = make([]bool, len(b.keys))
		for _, fields := range [][]sparkmerge.Field{reads[i].Schema.Fields, b.files[m].raw.Fields, reads[i].raw.Fields} {
			for _, f := range fields {
				if j := slices.Index(b.keys, f.Name); j >= 0 {
					holds[m][j] = true
				}
			}
		}
	}
	return holds
}

// directCasts reports whether every file's type for a column parses
// straight into the target's: the same type, or bigint into double or
// string, with no checked cast and nothing nested.
func directCasts(casts []valueCast) bool {
	for _, c := range casts {
		long := c.from.Kind == sparkmerge.KindLong
		same := c.from.Equal(c.to) || long && (c.to.Kind == sparkmerge.KindDouble || c.to.Kind == sparkmerge.KindString)
		if !same || c.kind == castChecked || c.from.Kind.IsComplex() {
			return false
		}
	}
	return true
}

// columnKeys are the keys (spellings) the batch's files give target
// column k, sorted.
func (b scanBatch) columnKeys(l batchLayout, k int) []int {
	var keys []int
	for m := range b.files {
		if j := int(l.positions[m][k]) - 1; l.codes[m][k] != 0 && !slices.Contains(keys, j) {
			keys = append(keys, j)
		}
	}
	slices.Sort(keys)
	return keys
}

// oneKeyPerFile reports whether no file's records hold more than one of
// column k's keys, and a file that gives the column no value holds none.
func (b scanBatch) oneKeyPerFile(l batchLayout, k int, keys []int, holds [][]bool) bool {
	for m := range b.files {
		held := 0
		for _, j := range keys {
			if holds[m][j] {
				held++
			}
		}
		if held > 1 || held == 1 && l.codes[m][k] == 0 {
			return false
		}
	}
	return true
}
