package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sparkmerge/sparkmerge/spark"
)

type mergeOptions struct {
	jobCommand

	// target is the target as the flags give it (--out, --table,
	// --out-format, --mode, --partition-by, --evolve, --files); the job
	// file's target fills in those not given (see buildTarget).
	target       spark.Target
	writeOptions []string
	// tableFormat and tableProperties are --table-format and
	// --table-property: the format and properties of a table the merge
	// creates.
	tableFormat     string
	tableProperties []string
	verify          bool
	dryRun          bool
	show            int
	report          string
	// view or globalView, at most one of them, is the view to register
	// instead of writing.
	view, globalView string
	// incremental, incrementalChanged and incrementalLease are
	// --incremental STATE, --incremental-changed and --incremental-lease.
	incremental, incrementalChanged, incrementalLease string
	// incrementalNewState is --incremental-new-state.
	incrementalNewState bool
}

func newMergeCmd(g *globalOptions) *cobra.Command {
	opts := &mergeOptions{jobCommand: jobCommand{global: g}}
	cmd := &cobra.Command{
		Use:   "merge SOURCE... (--out PATH | --table NAME | --view NAME | --global-view NAME)",
		Short: "Merge sources into one path or table",
		Long: `merge reads every source, unifies their schemas (see 'sparkmerge plan'),
pads missing columns with typed nulls, widens types, and writes all rows,
duplicates included, to a path or a table.

Sources are paths, directories or globs on the cluster's filesystem
(/data, file:, s3a://, hdfs://, abfss://, dbfs:/) or table:NAME.`,
		Example: `  sparkmerge merge tides/*.csv --out /data/tides --mode overwrite
  sparkmerge merge a.json b.json --table lake.events --mode append --evolve
  sparkmerge merge landing/ --table lake.events --table-format delta --mode append --evolve --verify
  sparkmerge merge landing/ --table iceberg.lake.events --mode append --evolve --partition-by day
  sparkmerge merge -f nightly.yaml --verify`,
		RunE: opts.runE(opts.run),
	}
	fs := cmd.Flags()
	opts.job.register(fs)
	fs.StringVar(&opts.target.Path, "out", "", "output directory on the cluster's filesystem")
	fs.StringVar(&opts.target.Table, "table", "", "output table (created if missing)")
	fs.StringVar(&opts.target.Format, "out-format", "", "output format: parquet (default), csv, json, orc, delta, ...; noop runs the merge and keeps no rows (no --out needed), to time it or check that it runs")
	fs.StringVar(&opts.tableFormat, "table-format", "", "format of a table the merge creates: delta, iceberg, parquet, ... (default: its catalog's: iceberg in an Iceberg catalog, else spark.sql.sources.default); an existing table keeps its own")
	fs.StringArrayVar(&opts.tableProperties, "table-property", nil, "property key=value of a table the merge creates (repeatable), e.g. --table-property delta.appendOnly=true")
	fs.StringVar(&opts.target.Mode, "mode", "", "when the output exists: errorifexists (default), overwrite, append or ignore")
	fs.StringSliceVar(&opts.target.PartitionBy, "partition-by", nil, "partition the output by these columns (comma-separated)")
	fs.StringArrayVar(&opts.writeOptions, "write-option", nil, "writer option key=value (repeatable), e.g. --write-option compression=zstd")
	fs.BoolVar(&opts.target.Evolve, "evolve", false, "appending to or overwriting a table: evolve it first by its format's own statements instead of failing: add the columns and nested fields it lacks, widen types where the format can (Delta, Iceberg)")
	fs.BoolVar(&opts.verify, "verify", false, "after writing, prove rows written = rows read, per source; fail otherwise")
	fs.BoolVar(&opts.dryRun, "dry-run", false, "plan and print, refusing what the run would refuse (an existing --out in the default mode...); read no rows, write nothing")
	fs.IntVar(&opts.show, "show", 0, "print the first N merged rows after writing, as Spark's show() prints them")
	fs.StringVar(&opts.view, "view", "", "instead of writing, register the merged rows as this temporary view of the session (lazy; share the session with session_id in --remote)")
	fs.StringVar(&opts.globalView, "global-view", "", "instead of writing, register the merged rows as global_temp.NAME, seen by every session of the server (lazy)")
	fs.StringVar(&opts.report, "report", "", "also write the drift report to this HTML file (see 'sparkmerge plan --report'); with --verify it holds each source's row count")
	fs.StringVar(&opts.incremental, "incremental", "", "merge only the files no earlier run recorded in STATE (a path, a Parquet dataset, or table:NAME), append them and record them there; a run with no new file writes nothing")
	fs.StringVar(&opts.incrementalChanged, "incremental-changed", "error", "with --incremental, a file STATE records whose size or modification time changed: error (fail naming it), remerge (append its rows again; the earlier ones stay) or skip")
	fs.StringVar(&opts.incrementalLease, "incremental-lease", "10m", "with --incremental, how long a run of STATE on another machine that recorded files pending counts as running after its last sign of life (it renews it every fifth of it); a run finding such a running run refuses")
	fs.BoolVar(&opts.incrementalNewState, "incremental-new-state", false, "with --incremental, start a new STATE for a target that already holds rows, appending every listed file (without it such a run refuses: a STATE lost or spelled otherwise would merge every file again)")
	fs.IntVar(&opts.target.Files, "files", 0, "write at most N files (coalesced, no shuffle); 0: automatic, about one per 128 MiB of local input")
	return cmd
}

func (opts *mergeOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	var view string
	var globalView bool
	prepare := func(job *spark.Job, jf *jobFile) (err error) {
		view, globalView, err = opts.buildTarget(job, jf)
		return err
	}
	return opts.withClient(ctx, stderr, prepare, func(client *spark.Client, job spark.Job) error {
		return opts.merge(ctx, client, job, view, globalView, stdout)
	})
}

// merge runs the merge job describes and prints what it did: the plan
// only with --dry-run, the view registered with --view or --global-view,
// else the result of the write, and with --show the first rows written.
func (opts *mergeOptions) merge(ctx context.Context, client *spark.Client, job spark.Job, view string, globalView bool, stdout io.Writer) error {
	if job.DryRun {
		// The library's dry run, not a plan alone: it refuses what the
		// run would refuse before reading a row (a target that exists in
		// the default mode, an interrupted overwrite to complete, a
		// partition column the merge lacks), so a dry run that passes
		// says the run will get as far as its first read.
		result, err := client.Merge(ctx, job)
		if err != nil {
			return err
		}
		return showPlan(result.Planned, stdout, opts.global.output, "plan", opts.report)
	}
	if view != "" {
		return mergeToView(ctx, client, job, view, globalView, opts.global.output, stdout)
	}
	// The plan is printed as soon as it is made, before any row is
	// read: what the merge will do, while it does it.
	planShown := false
	if opts.global.output == "text" && opts.status != nil {
		opts.status.onPlan = func(p *spark.Planned) {
			opts.status.pause()
			fmt.Fprintln(stdout, strings.TrimRight(planText(p), "\n"))
			fmt.Fprintln(stdout)
			planShown = true
		}
	}
	result, err := client.Merge(ctx, job)
	opts.status.close()
	resultInCLITerms(result)
	if result != nil && opts.report != "" {
		var rows map[string]int64
		if len(result.RowsRead) > 0 {
			rows = map[string]int64{}
			for _, r := range result.RowsRead {
				rows[r.Source] = r.Rows
			}
		}
		if rerr := writeReport(opts.report, buildReport(result.Planned, rows, "sparkmerge drift report")); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err == nil && opts.show > 0 && opts.global.output == "json" {
		// One document: the result with the rows shown.
		rows, err := client.ReadTarget(ctx, job, opts.show)
		if err != nil {
			return fmt.Errorf("show merged rows: %w", err)
		}
		return writeOutput(stdout, "json", struct {
			*spark.Result
			Shown spark.Rows `json:"shown"`
		}{result, rows}, nil)
	}
	if result != nil && (err == nil || opts.global.output != "json") {
		text := func() string { return withFlagHints(result.String()) }
		if planShown {
			text = result.Summary
		}
		if perr := writeOutput(stdout, opts.global.output, result, text); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return err
	}
	if opts.show > 0 {
		// Spark's own show(): values formatted as Spark prints them.
		shown, err := client.ShowTarget(ctx, job, opts.show)
		if err != nil {
			return fmt.Errorf("show merged rows: %w", err)
		}
		fmt.Fprintln(stdout)
		_, err = io.WriteString(stdout, shown)
		return err
	}
	return nil
}

// buildTarget completes job with where and how the merge writes: the
// target from the flags and the job file, or the view to register instead
// (see viewTarget), with the checks of what the user asked.
func (opts *mergeOptions) buildTarget(job *spark.Job, jf *jobFile) (view string, globalView bool, err error) {
	t := jf.Target
	pick := opts.changed.pick
	writeOptions, err := parseKeyValues("write-option", opts.writeOptions, "")
	if err != nil {
		return "", false, err
	}
	t.Path = pick("out", opts.target.Path, t.Path)
	t.Table = pick("table", opts.target.Table, t.Table)
	t.Format = pick("out-format", opts.target.Format, t.Format)
	if opts.changed("table-format") {
		if opts.changed("out-format") && !strings.EqualFold(opts.tableFormat, opts.target.Format) {
			return "", false, usagef("--table-format %s and --out-format %s: give one (--table-format for --table, --out-format for --out)", opts.tableFormat, opts.target.Format)
		}
		t.Format = opts.tableFormat
	}
	tableProperties, err := parseKeyValues("table-property", opts.tableProperties, "delta.appendOnly=true")
	if err != nil {
		return "", false, err
	}
	t.Properties = mergeMaps(t.Properties, tableProperties)
	t.Mode = pick("mode", opts.target.Mode, t.Mode)
	t.Options = mergeMaps(t.Options, writeOptions)
	t.Evolve = opts.changed.pickBool("evolve", opts.target.Evolve, t.Evolve)
	if opts.changed("files") || t.Files <= 0 {
		t.Files = opts.target.Files
	}
	if opts.changed("partition-by") {
		t.PartitionBy = opts.target.PartitionBy
	}
	job.Target = t
	if view, globalView, err = viewTarget(opts, job, jf); err != nil {
		return "", false, err
	}
	if job.Incremental, err = opts.incrementalRun(jf, view); err != nil {
		return "", false, err
	}
	if job.Incremental != nil {
		switch strings.ToLower(job.Target.Mode) {
		case "":
			job.Target.Mode = "append"
		case "append":
		default:
			return "", false, usagef("--incremental appends the new files to the target, and --mode %s would not keep the earlier runs' rows: drop --mode (or give append)", job.Target.Mode)
		}
	}
	if err := opts.checkTarget(job.Target, view, jf); err != nil {
		return "", false, err
	}
	job.Verify = opts.changed.pickBool("verify", opts.verify, jf.Verify)
	job.DryRun = opts.dryRun
	if job.DryRun && !opts.changed("verify") {
		// A job file's verify: true is for its runs; --dry-run of it
		// shows what a run would do.
		job.Verify = false
	}
	if job.DryRun && job.Verify {
		return "", false, usagef("--verify counts the rows a merge writes and --dry-run writes none: drop one of them")
	}
	return view, globalView, nil
}

// checkTarget refuses a target the flags describe inconsistently, naming
// the flags to change.
func (opts *mergeOptions) checkTarget(t spark.Target, view string, jf *jobFile) error {
	noop := strings.EqualFold(t.Format, "noop")
	switch {
	case noop && (t.Path != "" || t.Table != "" || opts.show != 0 || opts.verify || jf.Verify):
		return usagef("--out-format noop keeps no rows: drop --out, --table, --show and --verify")
	case view == "" && !noop && (t.Path == "") == (t.Table == ""):
		return usagef("give exactly one of --out PATH and --table NAME")
	case t.Table == "" && (opts.changed("table-format") || len(t.Properties) > 0):
		return usagef("--table-format and --table-property describe the table of --table; for --out give --out-format (--out-format delta writes a Delta table there)")
	case t.Files < 0:
		return usagef("--files %d: want 0 (automatic) or more", t.Files)
	case opts.show < 0:
		return usagef("--show %d: want 0 or more", opts.show)
	case !slices.Contains([]string{"", "error", "errorifexists", "overwrite", "append", "ignore"}, strings.ToLower(t.Mode)):
		return usagef("--mode %q: use errorifexists, overwrite, append or ignore", t.Mode)
	}
	return nil
}

// writeOutput writes v as JSON or, for text, what text returns. The JSON
// is indented for a terminal and compact (one line) for a pipe or a file,
// as gh prints it: a merge of 2,000 files has a plan of 2,000 sources'
// projections, which indented took 51 MB, and measurably longer, against
// 32 MB compact, measured on the benchmark's JSON corpus.
func writeOutput(w io.Writer, output string, v any, text func() string) error {
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		if isTerminal(w) {
			enc.SetIndent("", "  ")
		}
		return enc.Encode(v)
	case "text":
		_, err := io.WriteString(w, strings.TrimRight(text(), "\n")+"\n")
		return err
	}
	return usagef("--output %q: use text or json", output)
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// viewTarget reads --view and --global-view: the view's name ("" when
// the merge writes) and whether it is global. A merge to a view writes
// nothing, so write flags are usage errors; job's target is cleared.
func viewTarget(opts *mergeOptions, job *spark.Job, jf *jobFile) (name string, global bool, err error) {
	switch {
	case opts.view == "" && opts.globalView == "":
		return "", false, nil
	case opts.view != "" && opts.globalView != "":
		return "", false, usagef("give one of --view and --global-view")
	case opts.globalView != "":
		name, global = opts.globalView, true
	default:
		name = opts.view
	}
	for _, conflict := range []struct {
		set  bool
		flag string
	}{
		{job.Target.Path != "" || job.Target.Table != "", "--out or --table"},
		{opts.verify || jf.Verify, "--verify"},
		{opts.show != 0, "--show"},
		{opts.changed("mode") || opts.changed("partition-by") || opts.changed("write-option") || opts.changed("out-format") || opts.changed("files") || opts.target.Evolve ||
			opts.changed("table-format") || opts.changed("table-property"), "write flags (--mode, --partition-by, --write-option, --out-format, --table-format, --table-property, --files, --evolve)"},
	} {
		if conflict.set {
			return "", false, usagef("--view and --global-view write nothing: drop %s", conflict.flag)
		}
	}
	job.Target = spark.Target{}
	return name, global, nil
}

// mergeToView registers the merged rows as a temporary view and prints the
// plan, the view and the session it lives in.
func mergeToView(ctx context.Context, client *spark.Client, job spark.Job, name string, global bool, output string, stdout io.Writer) error {
	planned, err := client.MergeView(ctx, job, name, global)
	if err != nil {
		return err
	}
	shown := name
	if global {
		shown = "global_temp." + name
	}
	return writeOutput(stdout, output, struct {
		*spark.Planned
		View      string `json:"view"`
		SessionID string `json:"session_id"`
	}{planned, shown, client.SessionID()}, func() string {
		return planText(planned) + fmt.Sprintf("\nview %s registered in session %s (nothing read yet)\n", shown, client.SessionID())
	})
}

// incrementalRun is --incremental and --incremental-changed over the job
// file's incremental section (nil: not incremental).
func (opts *mergeOptions) incrementalRun(jf *jobFile, view string) (*spark.Incremental, error) {
	state := opts.changed.pick("incremental", opts.incremental, jf.Incremental.State)
	changed := opts.changed.pick("incremental-changed", opts.incrementalChanged, jf.Incremental.Changed)
	leaseText := opts.changed.pick("incremental-lease", opts.incrementalLease, jf.Incremental.Lease)
	if state == "" {
		if opts.changed("incremental-changed") || jf.Incremental.Changed != "" {
			return nil, usagef("--incremental-changed needs --incremental STATE (or incremental: state: in the job file)")
		}
		if opts.changed("incremental-lease") || jf.Incremental.Lease != "" {
			return nil, usagef("--incremental-lease needs --incremental STATE (or incremental: state: in the job file)")
		}
		if opts.incrementalNewState || jf.Incremental.NewState {
			return nil, usagef("--incremental-new-state needs --incremental STATE (or incremental: state: in the job file)")
		}
		return nil, nil
	}
	lease, err := time.ParseDuration(leaseText)
	if err != nil || lease <= 0 {
		return nil, usagef("--incremental-lease %s: give a duration such as 10m or 1h", leaseText)
	}
	if view != "" {
		return nil, usagef("--incremental records the files a merge writes, and --view and --global-view write nothing: drop one of them")
	}
	policy, err := spark.ParseChangedFiles(changed)
	if err != nil {
		return nil, usagef("--incremental-changed: %w", err)
	}
	newState := opts.incrementalNewState || jf.Incremental.NewState
	return &spark.Incremental{State: state, Changed: policy, Lease: lease, NewState: newState}, nil
}
