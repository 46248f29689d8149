package spark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A merge of 2,000 small CSV files with 2,000 different headers is 2,000
// reads, and Spark's cost per read dominates it: the driver plans each scan
// and compiles code for each read's projection, about 0.1 s each (a 250 s
// merge of 42,000 rows, measured). Files whose schemas the client inferred
// (so it has seen every value) are therefore read in positional scans
// instead, every value a string: all CSV files of one set of options in one
// load with a schema of string columns as wide as the widest file, all
// JSON-lines files as text parsed with from_json under a schema of every
// key spelling as a string. Each row's file says, through a route table
// joined once per row, which position feeds which target column through
// which casts: CAST(CAST(raw AS <file's type>) AS <target type>). For the
// values client inference admits (see package infer) a string cast to the
// file's type is exactly what Spark's parser makes of it, so the rows are
// those of the reads one by one.
//
// Positional reading skips the header check of enforceSchema=false.
// Instead each row's file is matched on path, size and modification time as
// the client saw them when it inferred the schema: a file that changed
// since, or that the server sees differently, fails the merge naming it
// instead of shifting values between columns.

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

// maxBatchFiles bounds the files of one positional scan, and so the size
// of its route table (a row per file) and the paths Spark lists on the
// driver (see listSerially). A row finds its file by a hash lookup, so
// the bound is not about the cost per row.
const maxBatchFiles = 4096

// scanBatch is a set of files read in one positional scan: CSV files, or
// JSON-lines files (whose keys, in all the spellings the
// files use, are the positions). A file is a single-file read, or a member
// of a multi-file JSON read (files that spell their keys alike, grouped by
// groupLocalJSON), which then reads under the group's schema.
type scanBatch struct {
	reads  []int   // per file: its read, an index into Planned.Reads
	files  []*Read // per file: its single-file read (the read, or a member of it)
	format string
	width  int      // CSV: the widest file's number of columns
	keys   []string // JSON: the reads' keys, exactly as spelled, first seen first
}

// scanBatches partitions the plan's reads into positional batches and the
// reads that run on their own (rest), both in read order. The files of one
// multi-file read may span batches. Files up to their format's
// batchFileLimit join batches; when more than manyReads reads would still
// run on their own, files up to its many-reads limit do.
func (p *Planned) scanBatches() (batches []scanBatch, rest []int) {
	if batches, rest = p.scanBatchesUpTo(false); len(rest) > manyReads {
		return p.scanBatchesUpTo(true)
	}
	return batches, rest
}

// scanBatchesUpTo is scanBatches with files up to batchFileLimit(format, many).
func (p *Planned) scanBatchesUpTo(many bool) (batches []scanBatch, rest []int) {
	byKey := map[string]int{} // key -> index in batches of the open batch
	for i, r := range p.Reads {
		key, ok := p.batchKey(i, many)
		if !ok {
			rest = append(rest, i)
			continue
		}
		for _, f := range r.parts() {
			b, open := byKey[key]
			if !open || len(batches[b].files) == maxBatchFiles {
				b = len(batches)
				byKey[key] = b
				batches = append(batches, scanBatch{format: r.Format})
			}
			batches[b].width = max(batches[b].width, len(f.Schema.Fields))
			batches[b].reads = append(batches[b].reads, i)
			batches[b].files = append(batches[b].files, f)
		}
	}
	// A batch of one single-file read is a plain read.
	kept := batches[:0]
	for _, b := range batches {
		if len(b.files) == 1 && !p.Reads[b.reads[0]].multiFile() {
			rest = append(rest, b.reads[0])
			continue
		}
		if b.format == "json" {
			seen := map[string]bool{}
			for _, i := range b.reads {
				for _, f := range p.Reads[i].Schema.Fields {
					if !seen[f.Name] {
						seen[f.Name] = true
						b.keys = append(b.keys, f.Name)
					}
				}
			}
		}
		kept = append(kept, b)
	}
	sort.Ints(rest)
	return kept, rest
}

// batchFileLimit bounds the files read in positional scans. A positional
// scan saves Spark's cost per read (the driver plans each read and compiles
// code for its projection, about 0.1 s) but costs more per byte: every
// value is parsed as a string, routed and cast, and a JSON number is
// printed back to text first. Measured with the benchmark's wide-drift
// corpora (50 columns, Spark 4.0.1, local[2], runs side by side with no
// other work of this session), merge wall time in positional scans against
// one read per file:
//
//	CSV,  200 files of 0.5 MB:   18-19 s against 21-25 s
//	CSV,  200 files of 1 MB:     27-28 s against 20-23 s
//	CSV,  10 files of 5 MB:       9.3 s against 5.5 s
//	JSON, 200 files of 1.25 MB:  28-29 s against 21 s
//	JSON, 2,000 files of 125 KB:  28 s against 45 s
//
// With many reads (see manyReads) the cost per read grows, and files up to
// the larger limit join.
func batchFileLimit(format string, many bool) int64 {
	switch {
	case format == "csv" && many:
		return 1 << 20
	case format == "csv":
		return 640 << 10
	case many:
		return 1 << 20
	default:
		return 256 << 10
	}
}

// manyReads is the number of reads past which Spark's cost per read
// outweighs the per-byte cost of bigger files in a positional scan: it
// grows with the reads of one merge (the driver plans a union of all of
// them, and compiles code per read's projection once its code cache of 100
// classes is full). Measured: 2,000 JSON files of 250 KB took 186 s with
// the 883 files over 256 KiB read one by one, against 82 s all in
// positional scans.
const manyReads = 500

// batchable says whether a read may run in a positional scan, as far as
// the read itself tells (batchKey also checks the plan's projections): a
// locally inferred single-file read, or a multi-file JSON read of such
// files, each up to its format's batchFileLimit.
func batchable(r *Read, many bool) bool {
	if !r.InferredLocally || r.relational() || r.UserSchema != "" {
		return false
	}
	if r.multiFile() && r.Format != "json" {
		return false // CSV files batch by their own header
	}
	for _, f := range r.parts() {
		if !batchableFile(f, batchFileLimit(r.Format, many)) {
			return false
		}
	}
	switch r.Format {
	case "csv":
		// DROPMALFORMED drops rows a positional scan cannot tell.
		return r.Options["header"] == "true" && !strings.EqualFold(optionValue(r.Options, "mode"), "DROPMALFORMED")
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
// in a positional scan: a clean absolute local path (the row's file must
// compare equal to the path as written), stamped, and up to limit bytes.
func batchableFile(f *Read, limit int64) bool {
	if !f.InferredLocally || len(f.Paths) != 1 || f.stamp == (fileStamp{}) || f.stamp.size > limit {
		return false
	}
	path := f.Paths[0]
	return isLocalPath(path) && !strings.HasPrefix(path, "file:") && filepath.IsAbs(path) && filepath.Clean(path) == path
}

// batchKey says whether read i can join a positional batch, and which:
// reads with the same key (format and options) share one scan.
func (p *Planned) batchKey(i int, many bool) (string, bool) {
	r := p.Reads[i]
	if !batchable(r, many) {
		return "", false
	}
	for _, pr := range p.Plan.Projections(i) {
		if _, _, ok := positionalValue(pr, fieldIndex(r.Schema)); !ok {
			return "", false
		}
	}
	return groupKey(r), true
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

// sourceName is the provenance of the rows of the batch's m-th file: the
// source's name, or for a file of a multi-file read its path.
func (b scanBatch) sourceName(p *Planned, m int) string {
	if r := p.Reads[b.reads[m]]; !r.multiFile() {
		return r.Name
	}
	return b.files[m].Paths[0]
}

// positionalValue is how one target column is made from a file's
// positional strings: its position in the file (-1 when the target column
// is null for the file) and a template over the raw string ("\x00" marks
// it), or the literal value of a provenance column. ok is false for
// projections a positional read cannot express (nested types).
func positionalValue(pr sparkmerge.Projection, positionOf func(string) int) (pos int, template string, ok bool) {
	switch pr.Kind {
	case sparkmerge.ProjectNull:
		return -1, "", true
	case sparkmerge.ProjectLiteral:
		return -1, sparkmerge.QuoteString(pr.Value), true
	case sparkmerge.ProjectTake, sparkmerge.ProjectCast:
		pos = positionOf(pr.Source)
		if pos < 0 || pr.From.Kind.IsComplex() || pr.To.Kind.IsComplex() {
			return -1, "", false
		}
		if pr.Checked {
			// The file's value, then the checked cast; "\x01" marks the
			// row's file, for the error.
			return pos, sparkmerge.CheckedCast("CAST(\x00 AS "+pr.From.String()+")", pr.From, pr.To, pr.Column, "\x01"), true
		}
		return pos, castTemplate(pr.From, pr.To), true
	}
	return -1, "", false
}

// castTemplate is CAST(CAST(raw AS from) AS to), the file's parser then
// the planner's cast, shortened to CAST(raw AS to) where the two are equal
// for every value client inference admits: from a string; or from an
// integer-valued type (int, bigint, decimal(p,0): digits, parsed exactly)
// to bigint, double or a decimal (parsed exactly, or rounded once, either
// way). Fewer templates make smaller generated code.
func castTemplate(from, to sparkmerge.DataType) string {
	integral := from.Kind == sparkmerge.KindInt || from.Kind == sparkmerge.KindLong ||
		from.Kind == sparkmerge.KindDecimal && from.Scale == 0
	// Not double: "-0" parsed as an integer is 0, then 0.0; cast straight
	// to a double it would be -0.0.
	wide := to.Kind == sparkmerge.KindLong || to.Kind == sparkmerge.KindDecimal
	if from.Equal(to) || from.Kind == sparkmerge.KindString || integral && wide {
		if to.Kind == sparkmerge.KindString {
			return "\x00"
		}
		return "CAST(\x00 AS " + to.String() + ")"
	}
	return "CAST(CAST(\x00 AS " + from.String() + ") AS " + to.String() + ")"
}

func positionalColumn(pos int) string { return fmt.Sprintf("`c%d`", pos) }

// Columns of the batch scan.
const (
	rawColumn       = "__sparkmerge_raw"  // array<string>: the row's values by position
	positionsColumn = "__sparkmerge_pos"  // array<int>: per target column, the 1-based position in the file
	templatesColumn = "__sparkmerge_tmpl" // array<int>: per target column, the template (0: null)
	sourceColumn    = "__sparkmerge_src"  // string: the row's source (sourceName)
	fileColumn      = "__sparkmerge_file" // string: the row's file, as the client names it
	jsonColumn      = "__sparkmerge_json" // struct: a JSON record's keys as strings, by position
)

// Columns of the scan before its rows find their file in the route table.
const (
	rowPathColumn   = "__sparkmerge_row_path"
	rowSizeColumn   = "__sparkmerge_row_size"
	rowMTimeColumn  = "__sparkmerge_row_mtime"
	routeSizeColumn = "__sparkmerge_route_size"
	routeTimeColumn = "__sparkmerge_route_mtime"
)

// batchScan reads the batch's files positionally, as strings, in one load,
// and gives each row its values as an array (rawColumn) and, from its
// file's row in a route table, how they feed the target (positionsColumn,
// templatesColumn) and its provenance (sourceColumn, fileColumn). The route
// table is sent with the plan and broadcast, so a row finds its file by one
// hash lookup whatever the number of files, and the expressions (and the
// code Spark generates for them) do not grow with the files either. A row
// from a file whose path, size or modification time is not what the client
// saw fails the query.
//
// CSV files are read with a schema of string columns c0, c1, ... as wide as
// the widest file: a narrower file's rows (client inference has seen that
// each has exactly the header's width) are padded with nulls that no
// position points at, which PERMISSIVE mode allows. (Spark's parser raises
// an exception per such row, which PERMISSIVE catches; one load per width
// instead, unioned, was slower: 22.6-24.9 s against 17.4-17.9 s for 200
// CSV files of 0.5 MB in 21 widths.) JSON lines are read as
// text and parsed with from_json under a schema of every key spelling as a
// string: Spark's JSON parser gives a number or boolean in a string column
// as its text (the number as parsed, then printed), which the templates
// parse back to the file's type. Blank lines are no records, as for the
// JSON reader.
func (c *Client) batchScan(p *Planned, b scanBatch, l batchLayout) connect.Frame {
	first := p.Reads[b.reads[0]]
	paths := make([]string, len(b.files))
	for m, f := range b.files {
		paths[m] = literalPath(f.Paths[0])
	}
	row := []string{
		filePathExpr + " AS " + rowPathColumn,
		"_metadata.file_size AS " + rowSizeColumn,
		"unix_millis(_metadata.file_modification_time) AS " + rowMTimeColumn,
	}

	var raw connect.Frame
	if b.format == "json" {
		parsed := make([]string, len(b.keys))
		renamed := make([]string, len(b.keys))
		refs := make([]string, len(b.keys))
		for j, k := range b.keys {
			parsed[j] = ident(k) + " STRING"
			renamed[j] = fmt.Sprintf("f%d: STRING", j)
			refs[j] = fmt.Sprintf("%s.f%d", jsonColumn, j)
		}
		mode := "FAILFAST"
		for k, v := range first.Options {
			if strings.EqualFold(k, "mode") {
				mode = v
			}
		}
		// The struct cast renames the fields by position: keys spelled
		// alike but for case would be ambiguous by name.
		record := fmt.Sprintf("CAST(from_json(value, %s, map('mode', %s)) AS STRUCT<%s>) AS %s",
			sparkmerge.QuoteString(strings.Join(parsed, ", ")), sparkmerge.QuoteString(mode), strings.Join(renamed, ", "), jsonColumn)
		lines := c.sess.Read(connect.ReadSpec{Format: "text", Paths: paths}).
			Filter("length(translate(value, ' \\t', '')) > 0")
		raw = lines.SelectExpr(append([]string{record}, row...)...).
			SelectExpr(append([]string{"array(" + strings.Join(refs, ", ") + ") AS " + rawColumn}, rowPathColumn, rowSizeColumn, rowMTimeColumn)...)
	} else {
		cols := make([]string, b.width)
		refs := make([]string, b.width)
		for j := range cols {
			refs[j] = positionalColumn(j)
			cols[j] = refs[j] + " STRING"
		}
		options := withOption(withOption(first.Options, "enforceSchema", "true"), "mode", "PERMISSIVE")
		scan := c.sess.Read(connect.ReadSpec{Format: "csv", Paths: paths, Schema: strings.Join(cols, ", "), Options: options})
		raw = scan.SelectExpr(append([]string{"array(" + strings.Join(refs, ", ") + ") AS " + rawColumn}, row...)...)
	}

	route := c.sess.LocalTable(b.routeTable(p, l)...)
	changed := "raise_error(concat('sparkmerge: ', " + rowPathColumn + ", ' changed after sparkmerge read it to plan the merge (its size or modification time differ, or the server sees another file at that path): rerun the merge'))"
	return raw.BroadcastLeftJoin(route, rowPathColumn+" = "+fileColumn).
		Filter("CASE WHEN "+fileColumn+" IS NOT NULL AND "+rowSizeColumn+" = "+routeSizeColumn+" AND "+rowMTimeColumn+" = "+routeTimeColumn+" THEN true ELSE "+changed+" END").
		SelectExpr(rawColumn, positionsColumn, templatesColumn, sourceColumn, fileColumn)
}

// routeTable is the batch's route table: per file, its path, the size and
// modification time the client saw, and its row of the layout l.
func (b scanBatch) routeTable(p *Planned, l batchLayout) []connect.LocalColumn {
	n := len(b.files)
	files, sources := make([]string, n), make([]string, n)
	sizes, times := make([]int64, n), make([]int64, n)
	for m, f := range b.files {
		files[m], sources[m] = f.Paths[0], b.sourceName(p, m)
		sizes[m], times[m] = f.stamp.size, f.stamp.mtimeMillis
	}
	return []connect.LocalColumn{
		{Name: fileColumn, Strings: files},
		{Name: routeSizeColumn, Longs: sizes},
		{Name: routeTimeColumn, Longs: times},
		{Name: positionsColumn, IntArrays: l.positions},
		{Name: templatesColumn, IntArrays: l.codes},
		{Name: sourceColumn, Strings: sources},
	}
}

// batchLayout is how a batch's files feed the target: per file and target
// column, the 1-based position in the file and the template (0: null);
// per target column its distinct templates, and whether it is the
// provenance column.
type batchLayout struct {
	positions, codes [][]int32  // [file][target column]
	templates        [][]string // [target column][template]
	provenance       []bool     // [target column]
}

func (b scanBatch) layout(p *Planned) batchLayout {
	n := len(p.Plan.Target.Fields)
	l := batchLayout{
		positions:  make([][]int32, len(b.files)),
		codes:      make([][]int32, len(b.files)),
		templates:  make([][]string, n),
		provenance: make([]bool, n),
	}
	for m, i := range b.reads {
		l.positions[m] = make([]int32, n)
		l.codes[m] = make([]int32, n)
		// Under PERMISSIVE Spark's parser nulls a value it cannot parse
		// (the id of a repeated header line in an int column), where a
		// cast would fail: the file's parse is a try_cast.
		permissive := strings.EqualFold(optionValue(p.Reads[i].Options, "mode"), "PERMISSIVE")
		for k, pr := range p.Plan.Projections(i) {
			if b.files[m].shortNumbers {
				pr.Checked = false // every cast of this file is exact
			}
			pos, tmpl, _ := positionalValue(pr, b.positionOf(m))
			if permissive {
				tmpl = strings.ReplaceAll(tmpl, "CAST(\x00", "try_cast(\x00")
			}
			l.positions[m][k] = 1
			switch {
			case pr.Kind == sparkmerge.ProjectLiteral:
				l.provenance[k] = true
			case pos >= 0:
				l.positions[m][k] = int32(pos + 1)
				code := slices.Index(l.templates[k], tmpl)
				if code < 0 {
					code = len(l.templates[k])
					l.templates[k] = append(l.templates[k], tmpl)
				}
				l.codes[m][k] = int32(code + 1)
			}
		}
	}
	return l
}

// project maps a batch scan onto the target by the batch's layout l: per
// target column, the value at the row's file's position through the file's
// template.
func (b scanBatch) project(p *Planned, l batchLayout, scan connect.Frame) connect.Frame {
	fill := func(tmpl, raw string) string {
		return strings.ReplaceAll(strings.ReplaceAll(tmpl, "\x00", raw), "\x01", fileColumn)
	}
	out := make([]string, len(p.Plan.Target.Fields))
	// Each target column's string is taken from the row once, in a
	// projection of its own, rather than in every branch of its CASE:
	// smaller generated code (200 CSV files of 0.5 MB: 15.1-17.1 s against
	// 17.0-20.3 s, four runs each).
	values := []string{templatesColumn, sourceColumn, fileColumn}
	for k := range p.Plan.Target.Fields {
		if !l.provenance[k] && len(l.templates[k]) > 0 {
			values = append(values, fmt.Sprintf("element_at(%s, element_at(%s, %d)) AS %s", rawColumn, positionsColumn, k+1, valueColumn(k)))
		}
	}
	for k, tf := range p.Plan.Target.Fields {
		var e string
		switch {
		case l.provenance[k]:
			e = sourceColumn
		case len(l.templates[k]) == 0:
			e = "NULL"
		default:
			raw := valueColumn(k)
			uniform := true
			for m := range l.codes {
				uniform = uniform && l.codes[m][k] == 1
			}
			if uniform {
				e = fill(l.templates[k][0], raw)
				break
			}
			var cases strings.Builder
			fmt.Fprintf(&cases, "CASE element_at(%s, %d)", templatesColumn, k+1)
			for t, tmpl := range l.templates[k] {
				fmt.Fprintf(&cases, " WHEN %d THEN %s", t+1, fill(tmpl, raw))
			}
			cases.WriteString(" END")
			e = cases.String()
		}
		out[k] = "CAST(" + e + " AS " + tf.Type.String() + ") AS " + ident(tf.Name)
	}
	return scan.SelectExpr(values...).SelectExpr(out...)
}

// valueColumn holds target column k's string for the row, in project.
func valueColumn(k int) string { return fmt.Sprintf("__sparkmerge_v%d", k) }

// parallelListingKey is the number of paths from which Spark lists a
// read's files with a Spark job instead of on the driver.
const parallelListingKey = "spark.sql.sources.parallelPartitionDiscovery.threshold"

// listSerially raises parallelListingKey for the session while a merge
// with positional batches runs, and returns what restores it. A batch
// names up to maxBatchFiles local files; Spark listed each batch's files
// with a Spark job of about 0.7 s (15 s of a 38 s merge of 2,000 files),
// where listing them on the driver takes milliseconds. It is left alone
// when some other read names many paths, which may be remote.
func (c *Client) listSerially(ctx context.Context, p *Planned) (restore func(), err error) {
	batches, rest := p.scanBatches()
	if len(batches) == 0 {
		return func() {}, nil
	}
	for _, i := range rest {
		if len(p.Reads[i].Paths) > 32 {
			return func() {}, nil
		}
	}
	// Only an optimisation: a server that refuses the setting
	// (CONFIG_NOT_AVAILABLE on Databricks serverless and shared clusters)
	// lists with a Spark job instead.
	values, err := c.sess.Conf(ctx, parallelListingKey)
	if err != nil {
		return func() {}, optionalSetting(err)
	}
	old, set := values[parallelListingKey]
	if n, err := strconv.Atoi(old); set && err == nil && n >= maxBatchFiles {
		return func() {}, nil
	}
	if err := c.sess.SetConf(ctx, map[string]string{parallelListingKey: strconv.Itoa(maxBatchFiles)}); err != nil {
		return func() {}, optionalSetting(err)
	}
	return func() {
		if set {
			_ = c.sess.SetConf(context.WithoutCancel(ctx), map[string]string{parallelListingKey: old})
		}
	}, nil
}

// ident backquotes a column name (checked when the plan was made).
func ident(name string) string {
	q, err := sparkmerge.QuoteIdent(name)
	if err != nil {
		return "``"
	}
	return q
}

// optionalSetting is the error to stop for when the server refused an
// optional session setting: none, unless the server is gone or the merge
// was cancelled.
func optionalSetting(err error) error {
	if errors.Is(err, ErrUnreachable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("session setting %s: %w", parallelListingKey, err)
	}
	return nil
}
