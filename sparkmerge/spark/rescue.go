package spark

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// Hints and rescue on the executor's side. The planner decides the
// target's types (a hinted column takes its hint) and which casts may
// fail; this file makes text files read straight into hinted types, so
// that Spark's own reader parses each value (a CSV zip code 0042 hinted
// string is the text 0042, not the int 42 printed), and, with
// Options.Rescue, reads them so that a value the reader cannot parse is
// kept rather than failing the merge.
//
// Exactness: a FAILFAST read fails on a record exactly when Spark's
// parser raises a bad-record error for it (FailureSafeParser), and a
// PERMISSIVE read of the same file puts exactly those records' text in the
// corrupt-record column, with a null in each field that did not convert
// (partial results: CSV's UnivocityParser and JSON's JacksonParser go on
// with the other fields). A field whose text is not null (the same
// options read it as a string) and whose typed value is null is therefore
// a value the FAILFAST read failed on: it is rescued, with its text. A
// corrupt record in which no hinted field failed (a CSV row of another
// width, a JSON line that does not parse) is rescued whole, under
// corruptRecordKey.

const (
	// corruptColumn is the corrupt-record column of a parse-checked read.
	corruptColumn = "__sparkmerge_corrupt"
	// rawRecordColumn is a parse-checked read's corrupt record parsed
	// again with every field a string: the texts of its values.
	rawRecordColumn = "__sparkmerge_rawrec"
	// corruptRecordKey is the rescue object's key for a record that did
	// not parse at all.
	corruptRecordKey = "_corrupt_record"
)

// applyHints reads the hinted columns (Options.Hints) of text files, CSV
// and JSON, in their hinted types: the schema pinned with the read says
// them, so that Spark's reader parses each value into the hinted type.
// Other formats keep their own types, and the plan casts them. A read
// whose types a hint changed to anything but a string is marked hinted:
// a positional scan parses values with casts, not with the reader, and
// does not read it.
//
// jsonNumbersAsText says that the server's JSON reader reads a number
// into a string column as written (Spark 4; Spark 3.5 prints the double
// it parses, 0.12345678901234567890 as 0.12345678901234568), so that a
// JSON value hinted decimal(38,s) can be read as its text (exactReading).
func applyHints(reads []*Read, policy sparkmerge.Options, jsonNumbersAsText bool) {
	if len(policy.Hints) == 0 {
		return
	}
	for _, r := range reads {
		if r.relational() || r.UserSchema != "" || (r.Format != "csv" && r.Format != "json") {
			continue
		}
		var fields []sparkmerge.Field
		for j, f := range r.Schema.Fields {
			t, ok := sparkmerge.HintFor(policy, f.Name)
			if !ok || t.Equal(f.Type) {
				continue
			}
			if fields == nil {
				fields = append([]sparkmerge.Field(nil), r.Schema.Fields...)
			}
			fields[j].Type = t
			fields[j].Nullable = true
			if t.Kind != sparkmerge.KindString || r.Format == "json" {
				r.hinted = append(r.hinted, f.Name)
			}
			if readAs, ok := exactReading(r, t, jsonNumbersAsText); ok && readsExactly(r, policy) {
				r.exact = append(r.exact, exactRead{column: f.Name, hint: t, readAs: readAs})
			}
		}
		if fields != nil {
			r.Schema = sparkmerge.Schema{Fields: fields}
			if r.overlapExprs != nil {
				r.dataSchema = hintedDataSchema(r)
			}
		}
	}
}

// hintedDataSchema is the own schema of r, a partitioned tree's file read
// without its partition columns (see overlapProjection), with the types
// its Schema's hints gave its own columns: that is the schema its read
// pins. A column named as a partition column keeps its type: the read
// takes its directory's value in its place.
func hintedDataSchema(r *Read) sparkmerge.Schema {
	partition := map[string]bool{}
	for _, p := range r.partition.tree.schema.Fields {
		partition[strings.ToLower(p.Name)] = true
	}
	fields := append([]sparkmerge.Field(nil), r.dataSchema.Fields...)
	for j, f := range fields {
		if partition[strings.ToLower(f.Name)] {
			continue
		}
		for _, h := range r.Schema.Fields {
			if h.Name == f.Name {
				fields[j].Type, fields[j].Nullable = h.Type, h.Nullable
			}
		}
	}
	return sparkmerge.Schema{Fields: fields}
}

// exactRead is a hinted column of a CSV or JSON read whose hint's own
// parse could round its values silently (4.999 hinted decimal(10,2) is
// 5.00, 1e40 hinted float infinity): Spark's reader parses it into
// readAs, which holds its text as written (sparkmerge.ExactTextType), and
// the merge narrows it to the hint value by value (exactHinted), so that
// a value that would change fails the merge naming it, or is rescued, as
// a typed source's value cast to a narrower hint is.
type exactRead struct {
	column       string
	hint, readAs sparkmerge.DataType
}

// exactReading is the type r's reader parses a column hinted t into
// exactly (see exactRead): sparkmerge.ExactTextType's, and for a date a
// timestamp, which keeps the time of day and zone the date reader's
// lenient parse drops. Compared text by text on Spark 3.5.7 and 4.0.1
// (see TestHintedTextIsNeverRoundedSilently):
//
//   - A CSV read that sets no date or time option: a timestamp, which
//     reads every text the date reader reads as the same day at midnight
//     in the session's time zone (2024-1-5, 2024, 2024-01-05 00:00:00,
//     2024-01-05T00:00Z where the session is UTC), keeps a time the date
//     reader drops and refuses text after the date it would drop
//     (2024-01-05 end of day, 2024-01-05 UTC).
//   - JSON, and a CSV read with a time zone, timestamp format, locale or
//     prefersDate option: a timestamp_ntz, which those options do not
//     touch and which reads the same day at midnight for the same texts,
//     keeps a time and refuses text after the date, and refuses a zone
//     (2024-01-05T00:00:00Z: refused, where the date reader takes the day
//     as written), and a JSON string of digits, which the date reader
//     reads as days since 1970 (Spark 1.5's dates: "42" is 1970-02-12).
//     Not a timestamp for JSON: its timestamp reader also reads numbers,
//     as seconds (86400 would be 1970-01-02), which its date and
//     timestamp_ntz readers refuse.
//
// Not where the read sets a date format, a timestamp_ntz format or the
// parsing fallback: a date format's parse is strict (nothing to cut),
// unless the fallback is on, whose texts the timestamp_ntz reader would
// not read alike.
func exactReading(r *Read, t sparkmerge.DataType, jsonNumbersAsText bool) (sparkmerge.DataType, bool) {
	if readAs, ok := sparkmerge.ExactTextType(t); ok {
		return readAs, true
	}
	if t.Kind == sparkmerge.KindDecimal && (r.Format == "csv" || r.Format == "json" && jsonNumbersAsText) && optionValue(r.Options, "locale") == "" {
		// A decimal(38,s), which has no wider decimal: read as its text
		// and parsed as the reader parses it (sparkmerge.ExactTextCast;
		// JSON parses a string's text as CSV does, and a number's as
		// written). Not on Spark 3.5 for JSON: it reads a number into a
		// string as the double it parses, losing the digits to check.
		return sparkmerge.Simple(sparkmerge.KindString), true
	}
	if t.Kind != sparkmerge.KindDate || (r.Format != "csv" && r.Format != "json") {
		return sparkmerge.DataType{}, false
	}
	zoned := r.Format == "csv"
	for k := range r.Options {
		switch strings.ToLower(k) {
		case "dateformat", "timestampntzformat", "enabledatetimeparsingfallback":
			return sparkmerge.DataType{}, false
		case "timestampformat", "timezone", "preferdate", "prefersdate", "locale":
			zoned = false
		}
	}
	if zoned {
		return sparkmerge.Simple(sparkmerge.KindTimestamp), true
	}
	return sparkmerge.Simple(sparkmerge.KindTimestampNTZ), true
}

// readsExactly reports whether r's hinted columns are read exactly (see
// exactRead): not where the user accepts rounding (LossyWidening), nor
// where the read's mode is the user's PERMISSIVE or DROPMALFORMED, which
// say what becomes of a value too large for the hint (null, or its row
// dropped) where a check would fail it, nor for a CSV read folded into
// one partition, which parses its values otherwise.
func readsExactly(r *Read, policy sparkmerge.Options) bool {
	mode := optionValue(r.Options, "mode")
	return !policy.LossyWidening && (mode == "" || strings.EqualFold(mode, "FAILFAST")) && !r.oneFold
}

// exactSchema is schema, r's, with its exactly read columns in the types
// they are read in.
func (r *Read) exactSchema(schema sparkmerge.Schema) sparkmerge.Schema {
	if len(r.exact) == 0 {
		return schema
	}
	fields := append([]sparkmerge.Field(nil), schema.Fields...)
	for j, f := range fields {
		for _, e := range r.exact {
			if f.Name == e.column && f.Type.Equal(e.hint) {
				fields[j].Type = e.readAs
			}
		}
	}
	return sparkmerge.Schema{Fields: fields}
}

// exactColumn is the column of read's frame holding, with Options.Rescue,
// the text of an exactly read value of its k-th exact column that the
// narrowing changed (see exactHinted).
func exactColumn(k int) string { return fmt.Sprintf("__sparkmerge_exact%d", k) }

// exactHinted narrows read's exactly read columns (see exactRead) to
// their hints, each value checked: the frame then has the columns and
// types the plan was made for, with, under rescue, the text of each
// value the narrowing changed in a column of its own (exactColumn).
// Spark's hidden _metadata column, which names a many-file read's rows'
// file, is carried as a column of that name.
func (r *Read) exactHinted(read connect.Frame, rescue bool) connect.Frame {
	if len(r.exact) == 0 {
		return read
	}
	where := sparkmerge.QuoteString(r.Name)
	if r.multiFile() {
		where = r.rowFile()
	}
	var exprs, texts []string
	for _, f := range r.Schema.Fields {
		expr := ident(f.Name)
		for k, e := range r.exact {
			if f.Name != e.column || !f.Type.Equal(e.hint) {
				continue
			}
			expr = sparkmerge.ExactTextCast(ident(f.Name), e.readAs, e.hint, f.Name, where, rescue) + " AS " + ident(f.Name)
			if rescue {
				texts = append(texts, "CASE WHEN "+sparkmerge.ExactTextChanged(ident(f.Name), e.readAs, e.hint)+" THEN "+sparkmerge.ExactText(ident(f.Name), e.readAs)+" END AS "+exactColumn(k))
			}
		}
		exprs = append(exprs, expr)
	}
	if r.parseChecked {
		exprs = append(exprs, corruptColumn, rawRecordColumn)
	}
	if r.multiFile() && !hidesFileMetadata(r.Schema) {
		exprs = append(exprs, fileMetadataColumn)
	}
	return read.SelectExpr(append(exprs, texts...)...)
}

// checkParses marks the hinted reads whose values the reader parses
// (applyHints) to be read so that a value it cannot parse is rescued
// (see the file's comment), when the job rescues and the read's mode is
// FAILFAST, as by default. Under the user's PERMISSIVE or DROPMALFORMED
// the user chose what becomes of such values.
func checkParses(reads []*Read, plan *sparkmerge.Plan) {
	if plan.Rescue == "" {
		return
	}
	for _, r := range reads {
		mode := optionValue(r.Options, "mode")
		if len(r.hinted) > 0 && (mode == "" || strings.EqualFold(mode, "FAILFAST")) {
			r.parseChecked = true
		}
	}
}

// parseCheckedFrame reads r, a parse-checked read, in PERMISSIVE mode with
// the corrupt-record column, and adds the corrupt record parsed again with
// every field a string (rawRecordColumn).
func parseCheckedFrame(sess *connect.Session, r *Read) connect.Frame {
	options := withOption(r.Options, "mode", "PERMISSIVE")
	options = withOption(options, "columnNameOfCorruptRecord", corruptColumn)
	schema := r.pinned + ", " + corruptColumn + " STRING"
	frame := sess.Read(connect.ReadSpec{Format: r.Format, Paths: r.readPaths(), Schema: schema, Options: options})
	return frame.SelectExpr("*", r.rawRecord()+" AS "+rawRecordColumn)
}

// rawRecord parses the corrupt record again with every field a string:
// a CSV record by position (fields f0, f1, ...), with the read's own
// options; a JSON record by key.
func (r *Read) rawRecord() string {
	var fields []string
	for j, f := range r.Schema.Fields {
		name := fmt.Sprintf("f%d", j)
		if r.Format == "json" {
			name = ident(f.Name)
		}
		fields = append(fields, name+": STRING")
	}
	schema := sparkmerge.QuoteString("STRUCT<" + strings.Join(fields, ", ") + ">")
	if r.Format == "json" {
		return "from_json(" + corruptColumn + ", " + schema + ")"
	}
	var opts []string
	for _, k := range sortedKeys(r.Options) {
		switch strings.ToLower(k) {
		case "header", "enforceschema", "mode", "inferschema", "multiline", "columnnameofcorruptrecord", "samplingratio":
			continue
		}
		opts = append(opts, sparkmerge.QuoteString(k), sparkmerge.QuoteString(r.Options[k]))
	}
	if len(opts) == 0 {
		return "from_csv(" + corruptColumn + ", " + schema + ")"
	}
	return "from_csv(" + corruptColumn + ", " + schema + ", map(" + strings.Join(opts, ", ") + "))"
}

// rawField is the text of source column name in a parse-checked read's
// raw record.
func (r *Read) rawField(name string) string {
	if r.Format == "json" {
		return rawRecordColumn + "." + ident(name)
	}
	for j, f := range r.Schema.Fields {
		if f.Name == name {
			return fmt.Sprintf("%s.f%d", rawRecordColumn, j)
		}
	}
	return "CAST(NULL AS STRING)"
}

// rescueEntries are the values of read i's rows that its rescue column
// keeps: the plan's (casts that may fail or round; dropped columns),
// without the checks of casts this read's values make exact, and, for a
// parse-checked read, the values the reader could not parse, then the
// records it could not parse at all.
func (p *Planned) rescueEntries(i int) []sparkmerge.RescueEntry {
	r := p.Reads[i]
	entries := p.Plan.RescueEntries(i)
	if r.exactDoubles() {
		kept := entries[:0:0]
		for _, e := range entries {
			if !p.checkedCast(i, e.Column) {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if len(r.exact) > 0 && p.Plan.Rescue != "" {
		for _, pr := range p.Plan.Projections(i) {
			if pr.Kind != sparkmerge.ProjectTake && pr.Kind != sparkmerge.ProjectCast {
				continue
			}
			for k, e := range r.exact {
				if e.column == pr.Source {
					entries = append(entries, sparkmerge.RescueEntry{Key: pr.Column, Column: pr.Source, Cond: exactColumn(k) + " IS NOT NULL", Text: exactColumn(k)})
				}
			}
		}
	}
	if !r.parseChecked {
		return entries
	}
	var parsed []string
	for _, pr := range p.Plan.Projections(i) {
		if (pr.Kind != sparkmerge.ProjectTake && pr.Kind != sparkmerge.ProjectCast) || !contains(r.hinted, pr.Source) {
			continue
		}
		col := ident(pr.Source)
		cond := corruptColumn + " IS NOT NULL AND " + col + " IS NULL AND " + r.rawField(pr.Source) + " IS NOT NULL"
		for k, e := range r.exact {
			if e.column == pr.Source {
				cond += " AND " + exactColumn(k) + " IS NULL" // parsed, and rescued as narrowed above
			}
		}
		// (RescueObject makes one key of this entry and the one above.)
		parsed = append(parsed, "("+cond+")")
		entries = append(entries, sparkmerge.RescueEntry{Key: pr.Column, Column: pr.Source, Cond: cond, Text: r.rawField(pr.Source)})
	}
	whole := corruptColumn + " IS NOT NULL"
	if len(parsed) > 0 {
		whole += " AND NOT (" + strings.Join(parsed, " OR ") + ")"
	}
	return append(entries, sparkmerge.RescueEntry{Key: corruptRecordKey, Cond: whole, Text: corruptColumn})
}

// checkedCast reports whether read i's projection from source column col
// is a cast checked for rounding.
func (p *Planned) checkedCast(i int, col string) bool {
	for _, pr := range p.Plan.Projections(i) {
		if pr.Kind == sparkmerge.ProjectCast && pr.Source == col {
			return pr.Checked
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// HintValueError is a value that a hinted column's reader could not
// parse into the hinted type: it failed the merge (without
// Options.Rescue).
type HintValueError struct {
	Source string // the file
	Column string // the source column
	Type   sparkmerge.DataType
	Value  string
	// Cut: the column is a date read as a timestamp to keep what the
	// date reader would drop or misread (see exactReading): Value is no
	// such timestamp (a zone, text after the day, digits).
	Cut bool
	Err error // Spark's error
}

func (e *HintValueError) Error() string {
	if e.Cut {
		return fmt.Sprintf("source %q: column %s: the value %q is not a %s as written (its hinted type): Spark's reader would drop what follows the day (a time, a zone, other text) or read it otherwise (digits as days since 1970) silently: fix the value, give the column a type that holds it (Options.Hints, %s=timestamp or %s=string), keep such values aside (Options.Rescue), or accept Spark's reading (Options.LossyWidening)\n  Spark's error: %v",
			e.Source, e.Column, e.Value, e.Type, e.Column, e.Column, e.Err)
	}
	return fmt.Sprintf("source %q: column %s: the value %q is not a %s (its hinted type): fix the value, give the column another type (Options.Hints), or keep such values aside (Options.Rescue)\n  Spark's error: %v",
		e.Source, e.Column, e.Value, e.Type, e.Err)
}

func (e *HintValueError) Unwrap() error { return e.Err }

// explainParseFailure turns Spark's error for a file its reader could not
// read (which names the file, not the value) into a HintValueError
// naming the value, when the file is read with hinted types: it reads
// that file again as a rescuing read would and finds the first value
// that did not parse. Any other error, or none found, is returned as is.
func (c *Client) explainParseFailure(ctx context.Context, p *Planned, err error) error {
	class := errorClass(err)
	// Spark 3.5 wraps the failed read of a write's task in its job's
	// failure, whose class is not the read's: its text names the file.
	readFailed := failedReadFile.FindStringSubmatch(err.Error())
	wrapped := !strings.HasPrefix(class, "FAILED_READ_FILE") && !strings.HasPrefix(class, "MALFORMED_RECORD_IN_PARSING")
	if wrapped && readFailed == nil && !strings.Contains(err.Error(), "[MALFORMED_RECORD_IN_PARSING") {
		return err
	}
	var se *connect.SparkError
	failed := ""
	if errors.As(err, &se) {
		failed = se.Parameters["path"]
	}
	if failed == "" && readFailed != nil {
		failed = readFailed[1]
	}
	for _, r := range p.Reads {
		if len(r.hinted) == 0 || r.parseChecked {
			continue
		}
		for _, part := range r.parts() {
			if failed != "" && !sameFile(failed, part.Paths[0]) {
				continue
			}
			probe := *part
			probe.Schema, probe.pinned, probe.hinted = r.Schema, r.pinned, r.hinted
			var cols []string
			for _, h := range probe.hinted {
				cols = append(cols, fmt.Sprintf("CASE WHEN %s IS NULL AND %s IS NOT NULL THEN %s END", ident(h), probe.rawField(h), probe.rawField(h)))
			}
			rows, qerr := parseCheckedFrame(c.sess, &probe).Filter(corruptColumn + " IS NOT NULL").SelectExpr(cols...).Limit(1).Collect(ctx)
			if qerr != nil || len(rows.Values) == 0 {
				continue
			}
			for k, v := range rows.Values[0] {
				if s, ok := v.(string); ok {
					var t sparkmerge.DataType
					for _, f := range probe.Schema.Fields {
						if f.Name == probe.hinted[k] {
							t = f.Type
						}
					}
					// A date's text the timestamp read refused.
					cut := false
					for _, e := range r.exact {
						cut = cut || (e.column == probe.hinted[k] && e.hint.Kind == sparkmerge.KindDate)
					}
					return &HintValueError{Source: part.Paths[0], Column: probe.hinted[k], Type: t, Value: s, Cut: cut, Err: err}
				}
			}
		}
	}
	return err
}

// sameFile reports whether Spark's name of a file (a file: URI,
// percent-encoded) is the path p.
func sameFile(uri, p string) bool {
	u := strings.TrimPrefix(strings.TrimPrefix(uri, "file://"), "file:")
	if dec, err := url.PathUnescape(u); err == nil {
		u = dec
	}
	return u == p || strings.TrimSuffix(u, "/") == strings.TrimSuffix(p, "/") || strings.HasSuffix(uri, p)
}
