package spark

import (
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// String describes the plan for people: how the inputs are read, then the
// planner's table.
func (p *Planned) String() string {
	var b strings.Builder
	if run := p.Incremental; run != nil && run.NothingNew {
		b.WriteString(run.String())
		return b.String()
	}
	sources := 0
	for _, r := range p.Reads {
		sources += len(r.Sources)
	}
	local := 0
	for _, r := range p.Reads {
		if r.InferredLocally {
			local++
		}
	}
	how := "schemas fetched"
	switch {
	case local == len(p.Reads) && local > 0:
		how = "schemas inferred on the client"
	case local > 0:
		how = fmt.Sprintf("%d of %d schemas inferred on the client, the rest fetched", local, len(p.Reads))
	}
	fmt.Fprintf(&b, "strategy %s: %d %s in %d %s (%s in %s)\n", p.Strategy,
		sources, plural(sources, "source", "sources"), len(p.Reads), plural(len(p.Reads), "read", "reads"),
		how, p.Discovery.Round(time.Millisecond))
	p.writeDiscovery(&b)
	if len(p.Skipped) > 0 {
		shown := p.Skipped
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("... and %d more", len(p.Skipped)-5))
		}
		fmt.Fprintf(&b, "  skipped %d %s of another format in directory sources: %s\n", len(p.Skipped), plural(len(p.Skipped), "file", "files"), strings.Join(shown, ", "))
	}
	if len(p.Empty) > 0 {
		shown := p.Empty
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("... and %d more", len(p.Empty)-5))
		}
		fmt.Fprintf(&b, "  empty: %d %s with no rows and no columns, not read: %s\n", len(p.Empty), plural(len(p.Empty), "file", "files"), strings.Join(shown, ", "))
	}
	if len(p.AddColumns) > 0 {
		names := make([]string, len(p.AddColumns))
		for i, f := range p.AddColumns {
			names[i] = f.Name + " " + f.Type.String()
		}
		fmt.Fprintf(&b, "  evolve: add columns to the table: %s\n", strings.Join(names, ", "))
	}
	if len(p.NullColumns) > 0 {
		names := make([]string, len(p.NullColumns))
		for i, f := range p.NullColumns {
			names[i] = f.Name + " " + f.Type.String()
		}
		fmt.Fprintf(&b, "  warning: no source has the target's %s %s: every row merged gets null there", plural(len(names), "column", "columns"), strings.Join(names, ", "))
		if p.Plan.SourceColumn == "" {
			// The likeliest such column: an earlier merge's provenance.
			b.WriteString("; to fill an earlier merge's provenance column, name it (Options.SourceColumn, --source-column NAME)")
		}
		b.WriteString("\n")
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	if t := p.Table; t != nil {
		writeTable(&b, t)
	}
	if p.Incremental != nil {
		b.WriteString(p.Incremental.String())
	}
	b.WriteString("\n")
	b.WriteString(p.Plan.String())
	return b.String()
}

// writeTable describes the target table and its evolution.
func writeTable(b *strings.Builder, t *TargetTable) {
	format := t.Format
	if format == "" {
		format = "the catalog's default format"
	}
	if !t.Exists {
		fmt.Fprintf(b, "  table %s: created by the merge (%s)\n", t.Name, format)
		return
	}
	cols := make([]string, len(t.Schema.Fields))
	for i, f := range t.Schema.Fields {
		cols[i] = f.Name + " " + f.Type.String()
	}
	fmt.Fprintf(b, "  table %s (%s): %s\n", t.Name, format, strings.Join(cols, ", "))
	e := t.Evolution
	if e == nil {
		return
	}
	if len(e.Properties) > 0 {
		props := make([]string, 0, len(e.Properties))
		for _, k := range sortedKeys(e.Properties) {
			props = append(props, k+"="+e.Properties[k])
		}
		fmt.Fprintf(b, "  evolve: set table properties %s\n", strings.Join(props, ", "))
	}
	if len(e.Widened) > 0 {
		ws := make([]string, len(e.Widened))
		for i, w := range e.Widened {
			ws[i] = fmt.Sprintf("%s %s -> %s", sparkmerge.PathString(w.Path), w.From, w.To)
		}
		fmt.Fprintf(b, "  evolve: widen %s\n", strings.Join(ws, ", "))
	}
	if len(e.Added) > 0 {
		as := make([]string, len(e.Added))
		for i, a := range e.Added {
			as[i] = sparkmerge.PathString(a.Path) + " " + a.To.String()
		}
		fmt.Fprintf(b, "  evolve: add %s\n", strings.Join(as, ", "))
	}
	for _, c := range e.Conflicts {
		table := "absent from the table"
		if !c.Table.Equal(sparkmerge.DataType{}) {
			table = c.Table.String() + " in the table"
		}
		fmt.Fprintf(b, "  conflict: %s: %s, %s in the sources: %s\n", sparkmerge.PathString(c.Path), table, c.Merged, c.Reason)
	}
}

// String summarises the merge for people: the plan, then [Result.Summary].
func (r *Result) String() string {
	return r.Planned.String() + "\n" + r.Summary()
}

// Summary is what the merge did, without its plan: rows written where,
// and with Verified, the totals proven equal. Per-source counts are
// listed for up to maxSourcesListed sources (all are in RowsRead, and in
// JSON).
func (r *Result) Summary() string {
	var b strings.Builder
	if f := r.RolledForward; f != nil {
		fmt.Fprintf(&b, "first completed an interrupted overwrite of %s: copied its %d staged rows from %s\n", f.Target, f.Rows, f.Staging)
	}
	if r.Discarded {
		fmt.Fprintf(&b, "read and projected every row, kept none (noop) in %s\n", r.Elapsed.Round(time.Millisecond))
		return b.String()
	}
	if r.RowsWritten < 0 {
		b.WriteString("dry run: nothing read or written\n")
		return b.String()
	}
	if run := r.Incremental; run != nil && run.NothingNew {
		fmt.Fprintf(&b, "nothing new: no rows written, %s untouched (%s)\n", targetName(r.Target), r.Elapsed.Round(time.Millisecond))
		if run.Recorded {
			fmt.Fprintf(&b, "recorded %d empty %s in %s (run %s)\n", len(run.files), plural(len(run.files), "file", "files"), run.State, run.RunID)
		}
		return b.String()
	}
	format := r.Target.Format
	if t := r.Planned.Table; t != nil && t.Format != "" {
		format = t.Format // the table's own, or its catalog's default
	}
	if format == "" {
		format = "parquet"
	}
	mode := r.Target.Mode
	if mode == "" {
		mode = "errorifexists"
	}
	fmt.Fprintf(&b, "wrote %d rows to %s (%s, mode %s) in %s\n", r.RowsWritten, targetName(r.Target), format, mode, r.Elapsed.Round(time.Millisecond))
	if len(r.RowsRead) > 0 && len(r.RowsRead) <= maxSourcesListed {
		b.WriteString("rows read per source:\n")
		for _, s := range r.RowsRead {
			fmt.Fprintf(&b, "  %8d  %s\n", s.Rows, s.Source)
		}
	}
	if r.Plan != nil && r.Plan.Rescue != "" {
		var n int64
		for _, v := range r.Rescued {
			n += v.Values
		}
		fmt.Fprintf(&b, "rescued: %d %s into %s\n", n, plural(int(n), "value", "values"), r.Plan.Rescue)
		for i, v := range r.Rescued {
			if i == maxSourcesListed {
				fmt.Fprintf(&b, "  ... and %d more (all in -o json)\n", len(r.Rescued)-i)
				break
			}
			fmt.Fprintf(&b, "  %8d  %s in %s\n", v.Values, v.Column, v.Source)
		}
	}
	if run := r.Incremental; run != nil && run.Recorded {
		fmt.Fprintf(&b, "recorded %d %s merged in %s (run %s)\n", len(run.Merged), plural(len(run.Merged), "file", "files"), run.State, run.RunID)
	}
	if r.Verified {
		var read int64
		for _, s := range r.RowsRead {
			read += s.Rows
		}
		if r.Plan != nil && r.Plan.Distinct {
			fmt.Fprintf(&b, "verified: %d rows written = %d distinct rows of %d read from %d %s (--distinct dropped %d)\n", r.RowsWritten, r.RowsDistinct, read, len(r.RowsRead), plural(len(r.RowsRead), "source", "sources"), read-r.RowsDistinct)
		} else {
			fmt.Fprintf(&b, "verified: %d rows written = %d rows read from %d %s\n", r.RowsWritten, read, len(r.RowsRead), plural(len(r.RowsRead), "source", "sources"))
		}
	}
	return b.String()
}

// maxSourcesListed bounds the per-source lines of a summary: a merge of
// 2,000 files would print 2,000 counts that no one reads.
const maxSourcesListed = 20

// joinAnd joins words as a list in prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Rows are collected rows: column names and one slice of values per row.
// Values are Go values as the Spark Connect client converts them: int32,
// int64, float64, string, bool, nil, decimals as strings, dates and
// timestamps as time.Time, arrays as []any, structs as map[string]any.
//
// In JSON: {"columns": [...], "rows": [[...], ...]}.
type Rows struct {
	Columns []string `json:"columns"`
	Values  [][]any  `json:"rows"`
}

func rowsFrom(r connect.Rows) Rows { return Rows{Columns: r.Columns, Values: r.Values} }

// String renders rows as a table, like Spark's show().
func (r Rows) String() string {
	cells := make([][]string, 0, len(r.Values)+1)
	cells = append(cells, r.Columns)
	for _, row := range r.Values {
		line := make([]string, len(row))
		for i, v := range row {
			line[i] = formatValue(v)
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(r.Columns))
	for _, line := range cells {
		for i, c := range line {
			if i < len(widths) && utf8.RuneCountInString(c) > widths[i] {
				widths[i] = utf8.RuneCountInString(c)
			}
		}
	}
	var b strings.Builder
	sep := "+"
	for _, w := range widths {
		sep += strings.Repeat("-", w+2) + "+"
	}
	b.WriteString(sep + "\n")
	for n, line := range cells {
		b.WriteString("|")
		for i, w := range widths {
			c := ""
			if i < len(line) {
				c = line[i]
			}
			fmt.Fprintf(&b, " %s%s |", strings.Repeat(" ", w-utf8.RuneCountInString(c)), c)
		}
		b.WriteString("\n")
		if n == 0 {
			b.WriteString(sep + "\n")
		}
	}
	b.WriteString(sep + "\n")
	fmt.Fprintf(&b, "(%d %s)\n", len(r.Values), plural(len(r.Values), "row", "rows"))
	return b.String()
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05.999999")
	case *big.Int:
		return x.String()
	case []byte:
		return fmt.Sprintf("%x", x)
	}
	return fmt.Sprint(v)
}

// ByteSize is n bytes in KiB, MiB or GiB.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// String says what an incremental run takes: its new files, those it
// leaves out as merged, a changed file, a recovered run.
func (run *IncrementalRun) String() string {
	var b strings.Builder
	if run.Recovered != nil {
		outcome := "its rows are not in the target: recorded abandoned, its files merged again"
		if run.Recovered.Landed {
			outcome = "its rows are in the target: recorded merged"
		}
		fmt.Fprintf(&b, "  incremental: run %s stopped before recording its %d %s merged; %s\n", run.Recovered.RunID, run.Recovered.Files, plural(run.Recovered.Files, "file", "files"), outcome)
	}
	if len(run.Unlisted) > 0 {
		fmt.Fprintf(&b, "  incremental: %d %s no file: %s\n", len(run.Unlisted), plural(len(run.Unlisted), "source lists", "sources list"), strings.Join(run.Unlisted, ", "))
	}
	if len(run.Changed) > 0 {
		fmt.Fprintf(&b, "  incremental: %d %s changed since merged: %s\n", len(run.Changed), plural(len(run.Changed), "file", "files"), strings.Join(run.Changed, ", "))
	}
	if run.NothingNew && run.Listed == 0 {
		fmt.Fprintf(&b, "incremental: nothing new: no file listed (%s)\n", run.State)
		return b.String()
	}
	if run.NothingNew && len(run.Merged) == 0 {
		fmt.Fprintf(&b, "incremental: nothing new: the %d %s listed are merged already (%s)\n", run.Listed, plural(run.Listed, "file", "files"), run.State)
		return b.String()
	}
	if run.NothingNew {
		fmt.Fprintf(&b, "incremental: nothing new to read: %d new %s, all empty, of %d listed (%s)\n", len(run.Merged), plural(len(run.Merged), "file", "files"), run.Listed, run.State)
		return b.String()
	}
	fmt.Fprintf(&b, "  incremental: %d new %s of %d listed; %d merged already (%s)\n", len(run.Merged), plural(len(run.Merged), "file", "files"), run.Listed, run.AlreadyMerged, run.State)
	return b.String()
}

// writeDiscovery writes how the plan's schemas were found: its Spark
// requests, multi-file reads, positional scans, files typed from fetched
// contents or by Spark together, and why the client typed none.
func (p *Planned) writeDiscovery(b *strings.Builder) {
	if n := p.Requests.SparkRequests(); n > 0 {
		fmt.Fprintf(b, "  %d Spark %s (%d %s, %d %s), %s of results\n", n, plural(int(n), "request", "requests"),
			p.Requests.Analyses, plural(int(p.Requests.Analyses), "analysis", "analyses"),
			p.Requests.Executions, plural(int(p.Requests.Executions), "execution", "executions"), ByteSize(p.Requests.ResultBytes))
	}
	for _, r := range p.Reads {
		if r.multiFile() {
			fmt.Fprintf(b, "  one %s read over %d files: %s\n", r.Format, len(r.Sources), r.Name)
		}
	}
	if scans := p.scanPlan(); len(scans.batches) > 0 {
		quoted := ""
		if n := scans.quotedFiles(); n > 0 {
			quoted = fmt.Sprintf("; %d CSV %s with quoted values, their lines parsed by Spark's CSV parser", n, plural(n, "file", "files"))
		}
		fmt.Fprintf(b, "  %d %s read in %d positional %s (files typed on the client, read together%s)\n",
			scans.files(), plural(scans.files(), "file", "files"), len(scans.batches), plural(len(scans.batches), "scan", "scans"), quoted)
	}
	if p.RemoteTyped > 0 {
		fmt.Fprintf(b, "  %d %s only the server sees typed by the client, from their contents fetched with their listing and in %d more Spark %s\n", p.RemoteTyped, plural(p.RemoteTyped, "file", "files"), p.RemoteFetchJobs, plural(p.RemoteFetchJobs, "job", "jobs"))
	}
	if p.PastFetchLimit > 0 {
		fmt.Fprintf(b, "  %d %s only the server sees not fetched, past the plan's limit of files fetched whole (Job.FetchLimit): typed by Spark where %s\n", p.PastFetchLimit, plural(p.PastFetchLimit, "file", "files"), plural(p.PastFetchLimit, "it lives", "they live"))
	}
	if p.TypedTogether > 0 {
		fmt.Fprintf(b, "  %d %s typed by Spark together, each as alone, in %d %s\n", p.TypedTogether, plural(p.TypedTogether, "file", "files"), p.TogetherRequests, plural(p.TogetherRequests, "request", "requests"))
	}
	if p.TypedByHeader > 0 {
		fmt.Fprintf(b, "  %d %s typed by Spark, one inference per header line, each proven as alone, in %d %s\n", p.TypedByHeader, plural(p.TypedByHeader, "file", "files"), p.ByHeaderRequests, plural(p.ByHeaderRequests, "request", "requests"))
	}
	if p.InferenceNote != "" {
		fmt.Fprintf(b, "  %s\n", p.InferenceNote)
	}
}
