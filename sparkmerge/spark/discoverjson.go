package spark

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// JSON files the client does not type (files past its size bound, files
// only the server sees past the fetch bounds, Spark's inference asked
// for, a server whose rules the client lacks) were each asked of Spark
// alone: a request and a Spark job per file. Here Spark types many of them
// in one inference each batch, each file exactly as Spark's inference of
// it alone (JsonInferSchema over the file's lines), by nesting each file's
// records one level down, in a field of its own:
//
//	{"m<i>_<nonce>":1,"l<i>_<nonce>":<the line as written>}
//
// A line that is not UTF-8 is {"u<i>_<nonce>":1} instead: the same read
// proves each file it types UTF-8 (Read.validUTF8) and names one that is
// not, so that checkUTF8 need not read the batch's files again
// (on lake-json, 1 GB).
//
// Small files are one text read, each line's file found by its path (the
// marker m<i> proves that file i's lines reached its lane); files larger
// than maxJSONSplitFile are each a text read of its own in the batch's
// plan, their lane a literal of that read (no marker: every line of file i
// reaches l<i>), since a lookup of each line's path costs more per byte
// than the inference, and small files read alone would be a task each.
//
// Spark's JSON inference types a record's fields from that record alone
// and merges records field by field (compatibleType: the same fold at
// every depth, and one whose result does not depend on the order of the
// records), then
// makes every field that only ever held null a string and drops empty
// structs and empty names, again at every depth. So the type the batch
// gives l<i> is the struct Spark gives file i alone. The exceptions are
// the root's own rules, and each is kept out or detected:
//
//   - a line with content that is not an object (an array of records, a
//     scalar, null, a comment) is typed by root rules: the file's lines
//     that start otherwise than with '{' (after JSON whitespace) are
//     reported by x<i> instead, and the file goes to Spark alone;
//   - a line Spark cannot parse makes a file's schema _corrupt_record:
//     its wrapped line is corrupt too (a line that ends early leaves the
//     wrapper open), the batch's schema shows the corrupt record column,
//     and the batch is split in two until the files that hold such lines
//     are alone (each then asked of Spark alone);
//   - a line with text after its object (which Spark's inference ignores)
//     either closes the wrapper early (the rest is ignored as before) or
//     adds fields the batch does not know, which fails the batch as
//     corrupt lines do: the nonce keeps a line from naming another
//     file's field;
//   - a file whose records are all {} has no struct left (l<i> absent),
//     and one whose lines never reached the batch no marker (m<i>
//     absent): both go to Spark alone.
//
// Lines without content (empty, or JSON whitespace) type nothing
// alone (the null root merged with the file's objects) and are left out.

// jsonTogetherOptions are the JSON reader options, lower case, under which
// typing a file nested among others equals typing it alone: the parser's
// and inference's, which apply at every depth alike. Others (multiLine,
// encodings, line separators, sampling, comments, which end the wrapper
// with the line, and DROPMALFORMED, which would drop a wrapped line
// Spark alone keeps) leave the file to Spark alone. Under FAILFAST, as
// under PERMISSIVE, a file types or fails alone exactly when its lines
// hold no record Spark cannot parse; the batch is typed PERMISSIVE, so
// that such lines show (as the corrupt record column) instead of failing
// it, and their file is asked of Spark alone, which fails it as before.
var jsonTogetherOptions = map[string]bool{
	"primitivesasstring": true, "prefersdecimal": true, "allownumericleadingzeros": true,
	"allownonnumericnumbers": true, "allowsinglequotes": true, "allowunquotedfieldnames": true,
	"allowbackslashescapinganycharacter": true, "allowunquotedcontrolchars": true,
	"dropfieldifallnull": true, "infertimestamp": true,
	"dateformat": true, "timestampformat": true, "timestampntzformat": true,
	"timezone": true, "locale": true, "enabledatetimeparsingfallback": true,
	"columnnameofcorruptrecord": true, "mode": true,
}

// jsonTogetherKey is the key of the options under which r may be typed
// with others (reads of one key share an inference), or "" when r is
// Spark's to type alone. A file of a partitioned tree is keyed as any
// file (see csvTogetherKey).
func jsonTogetherKey(r *Read) string {
	if r.Format != "json" || r.relational() || r.UserSchema != "" || len(r.Paths) != 1 || r.patterns || IsGlob(r.Paths[0]) {
		return ""
	}
	var b strings.Builder
	b.WriteString("json\x00")
	for _, k := range sortedKeys(r.Options) {
		if !jsonTogetherOptions[strings.ToLower(k)] {
			return ""
		}
		if strings.EqualFold(k, "mode") && !strings.EqualFold(r.Options[k], "PERMISSIVE") && !strings.EqualFold(r.Options[k], "FAILFAST") {
			return ""
		}
		fmt.Fprintf(&b, "%s=%s\x00", strings.ToLower(k), r.Options[k])
	}
	return b.String()
}

// Bounds of one batch of typeJSONTogether: its files, and their bytes
// (the batch's inference reads them all, as reading each alone would). A
// batch of large files (each a read of its own) holds at most
// maxJSONBatchBytes / maxJSONSplitFile of them.
const (
	maxJSONBatchFiles = 1000
	maxJSONBatchBytes = 512 << 20
)

// maxJSONSplitFile divides small files from large ones. Small files are
// batched in one text read (jsonLanes.laneLineExpr), large ones each in a
// read of its own (jsonLanes.lineExpr): measured with sparkmerge plan on
// one server, 1,000 files of 2 KB as reads of their own took 44-52 s (a
// task each) where one read took 4.6 s, and 20 files of 50 MiB in one
// read cost 30-32 s of task CPU where reads of their own cost 10-11 s
// (and each alone 9-10 s).
//
// A batch of small files that shows a line it could not type nested (a
// corrupt line, text after an object) is split in two to find the files
// that hold one, each half inferred again: cheaper than a request a file.
// For large files each halving would read their bytes again (about log2
// of the files in all): a batch of large files goes to Spark alone, a
// request a file, each file's bytes read once more, as before such files
// were batched.
const maxJSONSplitFile = 16 << 20

// jsonLanes is one batch of JSON files Spark types in one inference.
type jsonLanes struct {
	// paths are the files read, as the reads send them; keys the same
	// files as Spark names them (sparkPathKey), by lane.
	paths, keys []string
	// nonce makes the batch's field names ones no line can write.
	nonce string
	// options are the files' reader options (one jsonTogetherKey).
	options map[string]string
	// perFile: each file is a text read of its own, its lane a literal
	// (lineExpr); otherwise one text read of them all (laneLineExpr).
	perFile bool
	// validLine is the SQL of whether a line (value) is UTF-8
	// (validUTF8Expr, by the server's Spark line).
	validLine string
}

func (l jsonLanes) lane(i int) string    { return fmt.Sprintf("l%d_%s", i, l.nonce) }
func (l jsonLanes) marker(i int) string  { return fmt.Sprintf("m%d_%s", i, l.nonce) }
func (l jsonLanes) other(i int) string   { return fmt.Sprintf("x%d_%s", i, l.nonce) }
func (l jsonLanes) notUTF8(i int) string { return fmt.Sprintf("u%d_%s", i, l.nonce) }

// jsonLineHasContent is the SQL condition of a line Spark's JSON
// inference types: one with a character other than JSON whitespace.
const jsonLineHasContent = `value RLIKE '[^ \\t\\r\\n]'`

// jsonLineIsObject is the SQL condition of a line that starts an object.
const jsonLineIsObject = `value RLIKE '^[ \\t\\r\\n]*[{]'`

// lineExpr is the SQL of each line of file i of the batch, read alone
// (perFile), as a record of the batch (an empty string for a line without
// content).
// The file is named by a literal, not looked up by each line's path, and
// a line that starts with '{', as nearly every line of JSON lines does, is
// known to have content and to start an object without a pattern match:
// on lake-json (1,058 MB) a path looked up per line and the two patterns
// tried on every line cost three times the task CPU of the inference.
func (l jsonLanes) lineExpr(i int) string {
	q := func(s string) string { return sparkmerge.QuoteString(s) }
	object := fmt.Sprintf("concat(%s, value, '}')", q(fmt.Sprintf(`{"%s":`, l.lane(i))))
	return jsonRecordExpr(l.validLine, object, q(fmt.Sprintf(`{"%s":1}`, l.other(i))), q(fmt.Sprintf(`{"%s":1}`, l.notUTF8(i)))) + " AS value"
}

// laneExpr is the SQL of the lane of each line of the batch's files, all
// read as one: its file found by its path (NULL for a file not in the
// batch).
func (l jsonLanes) laneExpr() string {
	var parts []string
	for i, key := range l.keys {
		parts = append(parts, sparkmerge.QuoteString(key), sparkmerge.QuoteString(fmt.Sprint(i)))
	}
	return "element_at(map(" + strings.Join(parts, ", ") + "), " + sparkPathKeyExpr + ")"
}

// laneLineExpr is the SQL of each line of a file of the batch, all read
// as one, as a record of the batch (an empty string for a line without
// content or of a file not in the batch), its lane (laneExpr) in the
// column lane: found once a line, not once a use (on lake-json, 26-27 s
// of task CPU against 30-32 s).
func (l jsonLanes) laneLineExpr() string {
	const lane = "lane"
	q := func(s string) string { return sparkmerge.QuoteString(s) }
	object := fmt.Sprintf("concat('{\"', %[2]s, %[1]s, %[3]s, %[1]s, %[4]s, value, '}')", lane, q("m"), q("_"+l.nonce+`":1,"l`), q("_"+l.nonce+`":`))
	mark := func(kind string) string {
		return fmt.Sprintf("concat('{\"', %s, %s, %s)", q(kind), lane, q("_"+l.nonce+`":1}`))
	}
	return fmt.Sprintf("CASE WHEN %s IS NULL THEN '' ELSE %s END AS value", lane, jsonRecordExpr(l.validLine, object, mark("x"), mark("u")))
}

// jsonRecordExpr is the SQL of a line as a record of the batch: notUTF8,
// its file's mark of a line that is not UTF-8 (by valid, the SQL of
// whether it is); object, the line in its lane, where it starts an
// object; other, its file's mark of a line that does not, where it has
// other content; an empty string
// where it has none, which Spark's inference types as nothing, as it
// does a blank line of a file it reads (the parser finds no token:
// NullType, no corrupt record). So the batch's records need no filter:
// on lake-json a filter dropping NULL lines evaluated the whole
// expression a second time (its depth gate keeps both out of whole-stage
// code generation), 4.4-5.6 s of task CPU for 10 files against 4.0-5.2 s
// without.
//
// A line that may nest deeper than infer.MaxJSONDepth (jsonDeeperFilter,
// then jsonNestingExpr, as checkNestingOnServer measures) is never handed
// to the inference: it marks its file as one of other lines, which goes
// to Spark alone, measured first. So the batch's files need no text read
// of their own to be measured: the inference's read does it.
func jsonRecordExpr(valid, object, other, notUTF8 string) string {
	return fmt.Sprintf("CASE WHEN NOT %[7]s THEN %[8]s"+
		" WHEN %[3]s AND %[4]s > 0 THEN %[2]s"+
		" WHEN startswith(value, '{') THEN %[1]s"+
		" WHEN NOT %[5]s THEN ''"+
		" WHEN %[6]s THEN %[1]s"+
		" ELSE %[2]s END",
		object, other, jsonDeeperFilter(infer.MaxJSONDepth), jsonNestingExpr(infer.MaxJSONDepth), jsonLineHasContent, jsonLineIsObject, valid, notUTF8)
}

// jsonBatch is one inference of typeJSONTogether over its reads' files.
type jsonBatch struct {
	lanes jsonLanes
	reads []*Read
}

// jsonTogether is one typeJSONTogether: its requests (from several
// goroutines, under mu) and the reads left to Spark alone.
type jsonTogether struct {
	c           *Client
	parallelism int
	mu          sync.Mutex
	done        typedTogether
	rest        []*Read
}

// typeJSONTogether types the JSON reads it can in a few Spark inferences
// (see the top of this file) and returns the reads left to Spark alone.
// It fails only when the server is unreachable or ctx ended.
func (c *Client) typeJSONTogether(ctx context.Context, reads []*Read, parallelism int) (rest []*Read, done typedTogether, err error) {
	if !typesTogether(c.SparkVersion()) {
		return reads, done, nil
	}
	t := &jsonTogether{c: c, parallelism: max(parallelism, 1)}
	byKey := map[string][]*Read{}
	var order []string
	sizes := map[*Read]int64{}
	for _, r := range reads {
		key := jsonTogetherKey(r)
		size, known := int64(0), false
		if key != "" {
			size, known = csvFileSize(r)
		}
		if !known {
			t.rest = append(t.rest, r)
			continue
		}
		if byKey[key] == nil {
			order = append(order, key)
		}
		byKey[key] = append(byKey[key], r)
		sizes[r] = size
	}
	// A file larger than Spark's split is read alone in several
	// partitions, and here too (alike where it is a read of its own, at
	// other offsets where the batch's small files are one read): the
	// result is the same whatever the split, for JsonInferSchema.infer
	// types each record alone (inferField) and merges the records' types
	// by compatibleType, within a partition and across partitions, and
	// compatibleType is associative and commutative (per field by name at
	// every depth; on primitives TypeCoercion's tightest common type,
	// decimals widened to the largest range and scale or double, anything
	// else string). The root's own rules (arrays, scalars, corrupt
	// records) are kept out as for any file (see the top of this file).
	// TestJSONTypedTogetherPastTheSplit proves it on files split at every
	// line.
	var batches []*jsonBatch
	for _, key := range order {
		if len(byKey[key]) < 2 {
			t.rest = append(t.rest, byKey[key]...)
			continue
		}
		var small, large []*Read
		for _, r := range byKey[key] {
			if sizes[r] > maxJSONSplitFile {
				large = append(large, r)
			} else {
				small = append(small, r)
			}
		}
		valid := validUTF8Expr(c.SparkVersion(), "value")
		batches = append(batches, jsonBatches(small, sizes, false, valid)...)
		batches = append(batches, jsonBatches(large, sizes, true, valid)...)
	}
	if err := t.typeBatches(ctx, batches); err != nil {
		return nil, t.done, err
	}
	sort.SliceStable(t.rest, func(i, j int) bool { return t.rest[i].order < t.rest[j].order })
	return t.rest, t.done, nil
}

// jsonBatches lays reads of one key out in batches within
// maxJSONBatchFiles and maxJSONBatchBytes, their lines checked for UTF-8
// by validLine.
func jsonBatches(reads []*Read, sizes map[*Read]int64, perFile bool, validLine string) []*jsonBatch {
	var batches []*jsonBatch
	var cur *jsonBatch
	var bytes int64
	for _, r := range reads {
		if cur == nil || len(cur.reads) == maxJSONBatchFiles || bytes+sizes[r] > maxJSONBatchBytes {
			cur, bytes = &jsonBatch{}, 0
			batches = append(batches, cur)
		}
		cur.reads = append(cur.reads, r)
		bytes += sizes[r]
	}
	for _, b := range batches {
		b.lanes = newJSONLanes(b.reads, perFile, validLine)
	}
	return batches
}

// halves are b's reads in two batches, each under a new nonce.
func (b *jsonBatch) halves() []*jsonBatch {
	half := len(b.reads) / 2
	out := []*jsonBatch{{reads: b.reads[:half]}, {reads: b.reads[half:]}}
	for _, h := range out {
		h.lanes = newJSONLanes(h.reads, b.lanes.perFile, b.lanes.validLine)
	}
	return out
}

// newJSONLanes are the lanes of reads, under a new nonce, their lines
// checked for UTF-8 by validLine.
func newJSONLanes(reads []*Read, perFile bool, validLine string) jsonLanes {
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	options := map[string]string{"mode": "PERMISSIVE"}
	for k, v := range reads[0].Options {
		if !strings.EqualFold(k, "mode") {
			options[k] = v
		}
	}
	l := jsonLanes{nonce: hex.EncodeToString(nonce), options: options, perFile: perFile, validLine: validLine}
	for _, r := range reads {
		l.paths = append(l.paths, literalPath(r.Paths[0]))
		l.keys = append(l.keys, sparkPathKey(r.Paths[0]))
	}
	return l
}

// typeBatches types each batch, several at once; a batch whose inference
// shows lines it could not type as nested is split in two, down to files
// alone, which go to Spark alone.
func (t *jsonTogether) typeBatches(ctx context.Context, batches []*jsonBatch) error {
	for len(batches) > 0 {
		var split []*jsonBatch
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(t.parallelism)
		for _, b := range batches {
			g.Go(func() error {
				schema, err := t.c.server.jsonLaneTypes(gctx, b.lanes)
				t.mu.Lock()
				defer t.mu.Unlock()
				t.done.requests++
				if err != nil {
					if stop, e := stopTogether(ctx, err); stop {
						return e
					}
					t.rest = append(t.rest, b.reads...)
					return nil
				}
				if !t.takeTypes(b, schema) {
					if len(b.reads) == 1 || b.lanes.perFile {
						t.rest = append(t.rest, b.reads...)
						return nil
					}
					split = append(split, b.halves()...)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		batches = split
	}
	return nil
}

// takeTypes gives each file of b the struct of its lane, or leaves it to
// Spark alone, and reports false when the batch's schema has fields of no
// lane (a corrupt record, a line's text after its object): then nothing is
// taken, and the batch is split.
func (t *jsonTogether) takeTypes(b *jsonBatch, schema sparkmerge.Schema) bool {
	fields := make(map[string]sparkmerge.Field, len(schema.Fields))
	for _, f := range schema.Fields {
		fields[f.Name] = f
	}
	known := 0
	for i := range b.reads {
		for _, name := range []string{b.lanes.lane(i), b.lanes.marker(i), b.lanes.other(i), b.lanes.notUTF8(i)} {
			if _, ok := fields[name]; ok {
				known++
			}
		}
	}
	if known != len(schema.Fields) {
		return false
	}
	for i, r := range b.reads {
		lane, hasLane := fields[b.lanes.lane(i)]
		_, hasMarker := fields[b.lanes.marker(i)]
		_, other := fields[b.lanes.other(i)]
		if _, bad := fields[b.lanes.notUTF8(i)]; bad {
			r.encodingProblem = "not UTF-8: Spark found a line of the file holding bytes that are not valid UTF-8 (read where it lives)"
			t.rest = append(t.rest, r)
			continue
		}
		if !hasLane || (!hasMarker && !b.lanes.perFile) || other || lane.Type.Kind != sparkmerge.KindStruct || len(lane.Type.Fields) == 0 {
			t.rest = append(t.rest, r)
			continue
		}
		r.Schema = sparkmerge.Schema{Fields: append([]sparkmerge.Field(nil), lane.Type.Fields...)}
		r.validUTF8 = true // every line reached its lane, none marked
		t.done.files++
	}
	return true
}
