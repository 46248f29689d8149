package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Planned is a merge plan together with how each of its inputs is read.
type Planned struct {
	// Strategy is the job's strategy.
	Strategy Strategy `json:"strategy"`
	// Reads are the relations Spark reads, one per plan source.
	Reads []*Read `json:"reads"`
	// Plan is the planner's result over the reads.
	Plan *sparkmerge.Plan `json:"plan"`
	// AddColumns are the columns a path dataset lacks and that --evolve
	// adds (or would add, in a dry run) by the files it writes. A table's
	// evolution is Table.Evolution.
	AddColumns Columns `json:"add_columns,omitempty"`
	// NullColumns are the target's columns, from the target appended to
	// (or the reference), that no source has: every merged row holds
	// null there. An earlier merge's provenance column is one when the
	// merge names no provenance column (Options.SourceColumn).
	NullColumns Columns `json:"null_columns,omitempty"`
	// Warnings are what the plan saw of sources read, by their schema,
	// otherwise than their files look meant: a CSV file of one column
	// whose name holds another separator, or one whose header line reads
	// as a row of data. Each names the source and the option to change.
	Warnings []string `json:"warnings,omitempty"`
	// Table is the table the merge writes (or a Delta path), as the
	// catalog describes it: its format, its schema, and how --evolve
	// changes it.
	Table *TargetTable `json:"table,omitempty"`
	// Discovery is how long fetching schemas took.
	Discovery time.Duration `json:"discovery_ns"`
	// RemoteTyped counts the files only the server sees that the client
	// typed from their contents, fetched with their listing (the heads)
	// and in RemoteFetchJobs more Spark jobs.
	RemoteTyped     int `json:"remote_typed,omitempty"`
	RemoteFetchJobs int `json:"remote_fetch_jobs,omitempty"`
	// PastFetchLimit counts the files only the server sees that the
	// client would have typed from their contents but did not fetch, the
	// plan's limit of bytes fetched whole reached (see [Job.FetchLimit]):
	// Spark typed them where they live.
	PastFetchLimit int `json:"past_fetch_limit,omitempty"`
	// TypedTogether counts the CSV and JSON files Spark typed in a few
	// inferences over many files, each file as Spark types it read alone,
	// in TogetherRequests Spark requests (see [Job.InferEachFileAlone]).
	TypedTogether    int `json:"typed_together,omitempty"`
	TogetherRequests int `json:"together_requests,omitempty"`
	// TypedByHeader counts the CSV files Spark splits, or of a MiB or
	// more, that it typed by one inference per header line, each file's types proven its own
	// read alone's, in ByHeaderRequests Spark requests (see
	// [Job.InferEachFileAlone]).
	TypedByHeader    int `json:"typed_by_header,omitempty"`
	ByHeaderRequests int `json:"by_header_requests,omitempty"`
	// Requests are what planning asked of the server: the measure of
	// discovery's cost that does not depend on the server's load.
	Requests PlanRequests `json:"requests"`
	// InferenceNote says why the client inferred no schema although it
	// was allowed to, or "".
	InferenceNote string `json:"inference_note,omitempty"`
	// Skipped are files in directory sources whose names say another
	// format than the source's (a README.txt among CSV files): not read.
	Skipped []string `json:"skipped,omitempty"`
	// Empty are the input files with no rows and no columns (of 0 bytes,
	// or a Parquet file without columns or row groups), in input order:
	// not read, they change nothing in the merge (see withoutEmptyFiles).
	Empty []string `json:"empty,omitempty"`
	// Incremental is what an incremental merge takes (Job.Incremental):
	// with NothingNew, Reads and Plan are empty.
	Incremental *IncrementalRun `json:"incremental,omitempty"`
	// Inference is the part of Discovery the client spent typing files
	// from their contents: work Spark does on the server otherwise (see
	// [Read.InferredLocally]). The rest is planning and requests to Spark.
	Inference time.Duration `json:"inference_ns"`

	// scans are the positional scans over Reads (see planScans), laid
	// out once.
	scans *scanPlan
}

// Columns are fields that JSON writes as [sparkmerge.Column]s, their
// types in Spark's SQL syntax, as every JSON output of sparkmerge.
type Columns []sparkmerge.Field

// MarshalJSON writes the fields as [sparkmerge.Column]s.
func (c Columns) MarshalJSON() ([]byte, error) {
	return json.Marshal(sparkmerge.Schema{Fields: c}.Columns())
}

// Err is the reason the plan cannot run, or nil: with [Job].DryRun, the
// changes the target table's format cannot make
// (*sparkmerge.EvolutionConflictError), which a merge refuses.
func (p *Planned) Err() error {
	if p.Table == nil {
		return nil
	}
	return p.Table.Evolution.Err()
}

// PositionalFiles are the files the merge reads in positional scans
// (files typed on the client, read together: see [Result].Scans), as the
// plan names them, in the plan's order.
func (p *Planned) PositionalFiles() []string {
	var files []string
	for _, b := range p.scanPlan().batches {
		for _, f := range b.files {
			files = append(files, f.Paths[0])
		}
	}
	return files
}

// scanPlan is how the merge reads p's reads (see planScans): laid out by
// [Client.Plan], or here for a Planned made otherwise.
func (p *Planned) scanPlan() scanPlan {
	if p.scans == nil {
		s := planScans(p.Reads, p.Plan)
		p.scans = &s
	}
	return *p.scans
}

func planSources(reads []*Read) []sparkmerge.Source {
	out := make([]sparkmerge.Source, len(reads))
	for i, r := range reads {
		out[i] = sparkmerge.Source{Name: r.Name, Schema: r.Schema, NoRows: r.withoutRows(), NoValues: r.noValueColumns()}
	}
	return out
}

// planAppend aligns the merge to an existing target, a table or a path
// dataset: its schema is the reference (every row is cast to its types, so
// the target reads back as one dataset), and columns it lacks are an error,
// or, with Evolve, added to it first: to a table by ALTER TABLE, to a
// Parquet, ORC or JSON dataset by the files written (read back by name;
// sparkmerge reads Parquet and ORC datasets with mergeSchema). A CSV
// dataset cannot gain columns: its files would differ by position.
func (c *Client) planAppend(ctx context.Context, job Job, policy *sparkmerge.Options, planned *Planned) error {
	table, exists, err := c.appendTargetSchema(ctx, job, planned)
	if err != nil || !exists {
		return err // nil: created by the write
	}
	table, hasProvenance, hasRescue, err := withoutOwnColumns(job, policy, table)
	if err != nil {
		return err
	}
	if err := c.markNoValues(ctx, planned.Reads, *policy, table); err != nil {
		return err
	}
	evolved := false
	if job.Target.Evolve {
		var properties map[string]string
		if tt := planned.Table; tt != nil && tt.Exists && isDelta(tt.Format) {
			if properties, err = c.server.tableProperties(ctx, tt.Name); err != nil {
				return fmt.Errorf("read the properties of %s: %w", tt.Name, err)
			}
		}
		if table, err = evolveForAppend(job, policy, planned, table, hasProvenance, hasRescue, deltaPreviewWidening(c.SparkVersion()), properties); err != nil {
			return err
		}
		evolved = len(planned.AddColumns) > 0 || planned.Table != nil && !planned.Table.Evolution.Empty()
	}
	policy.Missing = sparkmerge.MissingReference
	policy.Reference = &table
	policy.ReferenceSource = ""
	policy.ReferenceTarget = "table " + job.Target.Table
	if job.Target.Table == "" {
		policy.ReferenceTarget = "the dataset at " + job.Target.Path
	}
	policy.ReferenceEvolves = job.Target.Evolve
	if evolved {
		// The reference is the target as the evolution leaves it: a
		// column that still does not fit is shown in that type, which
		// the target does not hold yet.
		policy.ReferenceTarget += " once evolved"
	}
	if policy.Order == sparkmerge.OrderFirstSeen {
		policy.Order = sparkmerge.OrderReference
	}
	return nil
}

// appendTargetSchema is the schema of the target an append writes to;
// exists is false when the write creates it.
func (c *Client) appendTargetSchema(ctx context.Context, job Job, planned *Planned) (table sparkmerge.Schema, exists bool, err error) {
	if tt := planned.Table; tt != nil {
		return tt.Schema, tt.Exists, nil
	}
	if job.Target.Path != "" && c.absentOnServer(ctx, job.Target.Path) {
		return table, false, nil
	}
	table, err = c.server.targetSchema(ctx, job.Target)
	switch errorClass(err) {
	case "TABLE_OR_VIEW_NOT_FOUND", "PATH_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA":
		return table, false, nil
	}
	if err != nil {
		return table, false, fmt.Errorf("read the schema of %s: %w", targetName(job.Target), err)
	}
	return table, true, nil
}

// withoutOwnColumns is the target's schema without its provenance and
// rescue columns from an earlier merge, which the planner adds again,
// last; it says which of them the target has.
func withoutOwnColumns(job Job, policy *sparkmerge.Options, table sparkmerge.Schema) (_ sparkmerge.Schema, hasProvenance, hasRescue bool, err error) {
	for _, own := range []struct{ name, option string }{{policy.SourceColumn, "Options.SourceColumn"}, {policy.Rescue, "Options.Rescue"}} {
		if own.name == "" {
			continue
		}
		kept := table.Fields[:0:0]
		for _, f := range table.Fields {
			switch {
			case sparkmerge.FoldName(f.Name, policy.CaseSensitive) != sparkmerge.FoldName(own.name, policy.CaseSensitive):
				kept = append(kept, f)
				continue
			case f.Type.Kind != sparkmerge.KindString:
				return table, false, false, fmt.Errorf("append to %s: its column %s is %s, and the merge's column of that name (%s) is a string: give that option another name, or write to another target", targetName(job.Target), backticked(f.Name), f.Type, own.option)
			case own.name == policy.SourceColumn:
				hasProvenance = true
			default:
				hasRescue = true
			}
		}
		table.Fields = kept
	}
	return table, hasProvenance, hasRescue, nil
}

// evolveForAppend is the target's schema evolved to take the merged
// columns (--evolve): a table by its format's own statements (recorded
// in the plan, run before the write), a file target by columns added.
// It plans without the table first to learn the merged columns.
// deltaPreview: the server's Delta widens fewer types (Delta 3.x).
func evolveForAppend(job Job, policy *sparkmerge.Options, planned *Planned, table sparkmerge.Schema, hasProvenance, hasRescue, deltaPreview bool, deltaProperties map[string]string) (sparkmerge.Schema, error) {
	open := *policy
	open.Missing, open.Reference, open.ReferenceSource = sparkmerge.MissingFill, nil, ""
	merged, err := sparkmerge.NewPlan(planSources(planned.Reads), open)
	if err != nil {
		return table, err
	}
	// The merged columns the sources give: the provenance and rescue
	// columns, which the planner adds last, are the target's own (or
	// added below).
	mergedColumns := merged.Target
	mergedColumns.Fields = slices.Clone(mergedColumns.Fields)
	for _, own := range []string{policy.Rescue, policy.SourceColumn} {
		if own != "" {
			mergedColumns.Fields = mergedColumns.Fields[:len(mergedColumns.Fields)-1]
		}
	}
	if tt := planned.Table; tt != nil {
		evo := sparkmerge.PlanEvolution(sparkmerge.Table{Name: tt.Name, Format: tt.Format, Schema: table, DeltaPreviewWidening: deltaPreview}, mergedColumns, *policy)
		if policy.SourceColumn != "" && !hasProvenance {
			evo.Added = append(evo.Added, sparkmerge.FieldChange{Path: []string{policy.SourceColumn}, To: sparkmerge.Simple(sparkmerge.KindString)})
		}
		if policy.Rescue != "" && !hasRescue {
			evo.Added = append(evo.Added, sparkmerge.FieldChange{Path: []string{policy.Rescue}, To: sparkmerge.Simple(sparkmerge.KindString)})
		}
		evo.Conflicts = append(evo.Conflicts, deltaWideningRefused(evo, deltaProperties)...)
		tt.Evolution = evo
		if err := evo.Err(); err != nil {
			return table, err
		}
		return evo.Schema, nil
	}
	have := map[string]bool{}
	for _, f := range table.Fields {
		have[sparkmerge.FoldName(f.Name, policy.CaseSensitive)] = true
	}
	for _, f := range mergedColumns.Fields {
		if !have[sparkmerge.FoldName(f.Name, policy.CaseSensitive)] {
			f.Nullable = true
			planned.AddColumns = append(planned.AddColumns, f)
			table.Fields = append(table.Fields, f)
		}
	}
	if job.Target.Path != "" && len(planned.AddColumns) > 0 && strings.EqualFold(job.Target.Format, "csv") {
		return table, fmt.Errorf("append to %s: a CSV dataset cannot gain columns (%s): its files would no longer line up by position; write to a new path, or use Parquet", targetName(job.Target), fieldNames(planned.AddColumns))
	}
	return table, nil
}

// selectExprs is the projection of read i onto the target. A multi-path
// read takes its provenance, and the file a cast's error or the rescue
// column names, from each row's file, with fileExpr. A cast checked for
// rounding is plain where the read's values make it exact; the rescue
// column is the read's own (see rescueEntries).
func (p *Planned) selectExprs(i int, fileExpr string) []string {
	r := p.Reads[i]
	where := sparkmerge.QuoteString(r.Name)
	if r.multiFile() {
		where = fileExpr
	}
	exprs := p.Plan.SelectExprs(i)
	for k, pr := range p.Plan.Projections(i) {
		col, _ := sparkmerge.QuoteIdent(pr.Column)
		src, _ := sparkmerge.QuoteIdent(pr.Source)
		switch {
		case pr.Kind == sparkmerge.ProjectLiteral && r.multiFile():
			exprs[k] = fileExpr + " AS " + col
		case pr.Kind == sparkmerge.ProjectCast && (pr.Checked || pr.MayFail):
			if pr.Checked && r.exactDoubles() && sparkmerge.RoundsValues(pr.From, pr.To) {
				pr.Checked = false
			}
			exprs[k] = p.Plan.CastExpr(pr, src, where) + " AS " + col
		case pr.Kind == sparkmerge.ProjectRescue:
			exprs[k] = sparkmerge.RescueObject(p.rescueEntries(i), where) + " AS " + col
		}
	}
	return exprs
}

// rowFileOf is a row's file as the user wrote it, from uri, the file as
// Spark reports it (_metadata.file_path): a percent-encoded URI
// (file:/abs/my%20file.csv) whose file: scheme a plain path lacks, and
// whose dbfs: scheme too (Databricks reports files of Unity Catalog
// volumes, /Volumes/..., and of DBFS as dbfs:/...) unless keepDBFS: the
// user wrote dbfs:. url_decode would turn a literal '+' into a space, so
// '+' is encoded first.
func rowFileOf(uri string, keepDBFS bool) string {
	scheme := "^(file:(//)?|dbfs:(?=/))"
	if keepDBFS {
		scheme = "^file:(//)?"
	}
	return "url_decode(replace(regexp_replace(" + uri + ", '" + scheme + "', ''), '+', '%2B'))"
}

// rowFile is a row's file as the user wrote the paths of r (see
// rowFileOf).
func (r *Read) rowFile() string {
	return rowFileOf("_metadata.file_path", slices.ContainsFunc(r.Paths, namesDBFS))
}

// namesDBFS reports whether a path is written with the dbfs: scheme.
func namesDBFS(p string) bool { return len(p) >= 5 && strings.EqualFold(p[:5], "dbfs:") }

// merged builds the frame of all rows projected onto the target, and says
// how many scans it reads (reads in positional batches share one).
func (c *Client) merged(p *Planned) (connect.Frame, int) {
	frames := c.scans(p, false,
		func(b scanBatch, scan batchRows) connect.Frame { return b.project(p.Plan.Target, scan) },
		func(i int, read connect.Frame) connect.Frame {
			read = p.Reads[i].exactHinted(read, p.Plan.Rescue != "")
			return read.SelectExpr(p.selectExprs(i, p.Reads[i].rowFile())...)
		})
	all := connect.UnionAll(frames)
	if p.Plan.Distinct {
		all = all.Distinct()
	}
	return all, len(frames)
}

// scans is one frame per scan of the plan's reads: each positional batch
// (see scanBatch) through batch, each other read through read. withSource:
// every batch row carries its source (sourceColumn), which an unrouted
// batch otherwise leaves out (see batchScan).
func (c *Client) scans(p *Planned, withSource bool, batch func(scanBatch, batchRows) connect.Frame, read func(int, connect.Frame) connect.Frame) []connect.Frame {
	scans := p.scanPlan()
	var frames []connect.Frame
	for _, b := range scans.batches {
		frames = append(frames, batch(b, c.batchScan(p.Reads, b, withSource)))
	}
	for _, i := range scans.rest {
		frames = append(frames, read(i, p.Reads[i].filtered(readFrame(c.sess, p.Reads[i]))))
	}
	return frames
}

// SQL renders the merge as one Spark SQL statement to paste into a
// notebook, which a single spark.sql(...) runs to the merge's rows: a
// WITH clause per file read (Spark's SQL on files, csv.`path`, with the
// read's options), then SELECT ... UNION ALL .... SQL on files takes no
// schema: Spark infers each file's, by the rules the client typed it by,
// and the SELECTs cast it to the target's types. A read whose schema the
// user gave cannot be written so, and fails.
func (p *Planned) SQL() (string, error) {
	var ctes []string
	relations := make([][]sqlRelation, len(p.Reads))
	for i, r := range p.Reads {
		switch {
		case r.Table != "" && r.Where != "":
			relations[i] = []sqlRelation{{name: fmt.Sprintf("(\nSELECT * FROM %s WHERE (\n%s\n)\n) AS sparkmerge_input_%d", r.Table, r.Where, i+1)}}
			continue
		case r.Table != "":
			relations[i] = []sqlRelation{{name: r.Table}}
			continue
		case r.Query != "" && r.Where != "":
			relations[i] = []sqlRelation{{name: fmt.Sprintf("(\nSELECT * FROM (\n%s\n) WHERE (\n%s\n)\n) AS sparkmerge_input_%d", r.Query, r.Where, i+1)}}
			continue
		case r.Query != "":
			relations[i] = []sqlRelation{{name: fmt.Sprintf("(\n%s\n) AS sparkmerge_input_%d", r.Query, i+1)}}
			continue
		case r.relation != nil:
			return "", fmt.Errorf("render sql: source %q is a DataFrame, which has no SQL text", r.Name)
		case r.parseChecked:
			return "", fmt.Errorf("render sql: source %q rescues the values Spark's reader cannot parse into hinted types (Options.Rescue), which needs the reader's corrupt-record column that Spark SQL on files does not give; run the merge, or register the merged rows as a view (Client.MergeView)", r.Name)
		case r.UserSchema != "":
			return "", fmt.Errorf("render sql: source %q is read with a schema given by the user (SourceSchema.Schema), which Spark SQL on files cannot take; run the merge, or register the merged rows as a view (Client.MergeView)", r.Name)
		}
		options := r.Options
		if r.partition != nil {
			// SQL pins no schema: the partition values are literals (see
			// partitionSQL), not typed again over the files alone.
			options = withoutOption(options, "basePath")
		}
		if r.Format == "csv" && r.pinned != "" {
			// The schema the read pins, inferred again by SQL.
			options = withOption(options, "inferSchema", "true")
		}
		var opts []string
		for _, k := range sortedKeys(options) {
			if k == "enforceSchema" {
				continue // a check of a pinned schema's names; SQL pins none
			}
			opts = append(opts, sparkmerge.QuoteString(k)+" = "+sparkmerge.QuoteString(options[k]))
		}
		with := ""
		if len(opts) > 0 {
			with = " WITH (" + strings.Join(opts, ", ") + ")"
		}
		from := fmt.Sprintf("%s.%s%s", backticked(r.Format), backticked(globOf(r.Paths)), with)
		if r.Where != "" {
			// Spark parsed it as one expression while planning
			// (checkWheres): in parentheses, and on lines of its own
			// so that a trailing -- comment ends with its line.
			from += " WHERE (\n" + r.Where + "\n)"
		}
		name := fmt.Sprintf("sparkmerge_input_%d", i+1)
		if !r.multiFile() {
			// Its rows' source is the read's name: no file expression.
			relations[i] = []sqlRelation{{name: name}}
			ctes = append(ctes, fmt.Sprintf("%s AS (\n  SELECT %s FROM %s\n)", name, strings.Join(partitionSQL(r, "*", ""), ", "), from))
			continue
		}
		// Files read together are one relation, as the merge reads them
		// (Parquet's mergeSchema gives every file the group's columns),
		// each row's file taken from _metadata where the relation is
		// read: it does not resolve through the WITH clause, and
		// input_file_name() is gone from Unity Catalog and DBR 17.3.
		relations[i] = []sqlRelation{{name: name, file: rowFileOf(sqlFileColumn, slices.ContainsFunc(r.Paths, namesDBFS))}}
		file := rowFileOf(sparkFilePath, slices.ContainsFunc(r.Paths, namesDBFS))
		ctes = append(ctes, fmt.Sprintf("%s AS (\n  SELECT %s, _metadata.file_path AS %s FROM %s\n)", name, strings.Join(partitionSQL(r, "*", file), ", "), sqlFileColumn, from))
	}
	if len(p.Plan.Target.Fields) == 0 {
		return "", fmt.Errorf("render sql: the target has no columns")
	}
	var b strings.Builder
	if p.Plan.CaseSensitive {
		// Its names may be apart by case alone (c and C), which a
		// session resolving names case-insensitively refuses.
		b.WriteString("-- names match case-sensitively: run with spark.sql.caseSensitive=true\n")
	}
	if len(ctes) > 0 {
		b.WriteString("WITH\n" + strings.Join(ctes, ",\n") + "\n")
	}
	first := true
	for i, rels := range relations {
		for _, rel := range rels {
			if !first {
				b.WriteString("\n" + p.Plan.UnionKeyword() + "\n")
			}
			first = false
			fmt.Fprintf(&b, "SELECT %s\nFROM %s", strings.Join(p.selectExprs(i, rel.file), ", "), rel.name)
		}
	}
	return b.String(), nil
}

// sqlFileColumn carries each row's file out of a WITH clause of
// Planned.SQL that reads files together.
const sqlFileColumn = "`__sparkmerge_file`"

// backticked quotes s as one Spark SQL identifier part.
func backticked(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// sqlRelation is what one SELECT of Planned.SQL reads: a view, table or
// query, and the expression naming a row's file (for provenance).
type sqlRelation struct {
	name, file string
}

// globOf is one Hadoop path pattern for a read's paths: the path itself,
// or their common directory followed by a {a,b} alternation of the rest.
func globOf(paths []string) string {
	if len(paths) == 1 {
		return literalPath(paths[0])
	}
	dir := commonDir(paths)
	escaped := make([]string, len(paths))
	for i, p := range paths {
		escaped[i] = globEscaper.Replace(strings.TrimPrefix(p, dir+"/"))
	}
	if dir == "." {
		return "{" + strings.Join(escaped, ",") + "}"
	}
	return dir + "/{" + strings.Join(escaped, ",") + "}"
}

var globEscaper = strings.NewReplacer(`\`, `\\`, "{", `\{`, "}", `\}`, ",", `\,`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`)

// fieldNames lists fields' names for messages.
func fieldNames(fields []sparkmerge.Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// clientRulesVersions are the Spark lines whose schema inference the
// client reproduces (CSVInferSchema, JsonInferSchema, the Parquet schema
// converter, OrcUtils.toCatalystSchema), for messages: "4.0, 4.1 and 4.3".
func clientRulesVersions() string {
	return joinAnd(infer.Known())
}

// clientRulesMatch reports whether a server of this Spark version infers
// by rules the client implements.
func clientRulesMatch(version string) bool {
	_, ok := infer.RulesFor(version)
	return ok
}

// ClientRulesApply reports whether the client infers schemas itself for a
// server of this Spark version (see [Job.SparkInference]): it implements
// that version's inference rules. Otherwise Spark types every file.
func ClientRulesApply(sparkVersion string) bool { return clientRulesMatch(sparkVersion) }

// PlanRequests count the requests [Client.Plan] sent the server, by kind,
// and the bytes of the results it got back.
type PlanRequests struct {
	// Analyses ask for a schema (Spark's schema inference runs a Spark
	// job in one) or a dataset's input files.
	Analyses int64 `json:"analyses"`
	// Executions run queries: each one or more Spark jobs (listing files
	// only the server sees, reading CSV header lines, typing files
	// together, fetching files to type them on the client, ...).
	Executions int64 `json:"executions"`
	// Settings read or set session settings: no Spark job.
	Settings int64 `json:"settings"`
	// ResultBytes are the bytes the executions sent back: the files, or
	// parts of files, the client typed, and what it learned about the
	// others.
	ResultBytes int64 `json:"result_bytes"`
}

// SparkRequests are the requests that may run Spark jobs: analyses and
// executions.
func (r PlanRequests) SparkRequests() int64 { return r.Analyses + r.Executions }

func planRequests(c connect.TrafficCounts) PlanRequests {
	return PlanRequests{Analyses: c.Analyses, Executions: c.Executions, Settings: c.Settings, ResultBytes: c.ResultBytes}
}

// deltaWideningRefused are the widenings of evo a Delta table of
// properties refuses before any statement runs (found in the field,
// where --evolve changed the table and then failed, or overrode its
// owner):
//   - every widening, where the table's owner turned type widening off
//     (delta.enableTypeWidening=false), which evolving would turn on and
//     so raise the table's reader version;
//   - a column a CHECK constraint names (delta.constraints.NAME), whose
//     type Delta does not change: the ALTER failed after the properties
//     were set.
func deltaWideningRefused(evo *sparkmerge.Evolution, properties map[string]string) []sparkmerge.EvolutionConflict {
	if len(evo.Widened) == 0 || len(properties) == 0 {
		return nil
	}
	var out []sparkmerge.EvolutionConflict
	for _, w := range evo.Widened {
		reason := ""
		if strings.EqualFold(properties["delta.enableTypeWidening"], "false") {
			reason = "the table has type widening turned off (delta.enableTypeWidening=false), which evolving it would turn on"
		}
		for _, k := range sortedKeys(properties) {
			name, ok := strings.CutPrefix(k, "delta.constraints.")
			if ok && mentionsColumn(properties[k], w.Path[0]) {
				reason = fmt.Sprintf("the table's CHECK constraint %s (%s) names it, and Delta does not change the type of such a column", name, properties[k])
				break
			}
		}
		if reason != "" {
			out = append(out, sparkmerge.EvolutionConflict{Path: w.Path, Table: w.From, Merged: w.To, Reason: reason})
		}
	}
	return out
}

// mentionsColumn reports whether the SQL expr names column (as a whole
// word, in any case, backquoted or not).
func mentionsColumn(expr, column string) bool {
	expr, column = strings.ToLower(expr), strings.ToLower(column)
	word := func(r byte) bool { return r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' }
	for i := 0; ; {
		j := strings.Index(expr[i:], column)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(column)
		if (start == 0 || !word(expr[start-1])) && (end == len(expr) || !word(expr[end])) {
			return true
		}
		i = start + 1
	}
}
