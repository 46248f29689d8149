package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/sparkmerge/sparkmerge/spark"
)

type planOptions struct {
	jobCommand
	emit   string
	report string
	// table and tableFormat are --table and --table-format: plan an
	// append to that table, with --evolve.
	table, tableFormat string
}

func newPlanCmd(g *globalOptions) *cobra.Command {
	opts := &planOptions{jobCommand: jobCommand{global: g}}
	cmd := &cobra.Command{
		Use:   "plan SOURCE...",
		Short: "Show the unified schema and what each source needs, without reading rows",
		Long: `plan fetches the schema of every source from Spark (no rows are read, except
what schema inference needs), computes the unified schema and prints, per
source, which columns are kept, added as typed nulls, widened or dropped.

--emit sql prints one Spark SQL statement (WITH ... SELECT ... UNION ALL
...) that gives the merge's rows, to paste into a notebook: a single
spark.sql(...) runs it.

--table T plans an append to table T as 'merge --table T --mode append
--evolve' would run it: the table's format and schema beside the sources,
the columns it would gain and the types it would widen; a change its
format cannot make is a conflict (exit code 3).`,
		Example: `  sparkmerge plan data/2024-*.csv
  sparkmerge plan --types strict --emit sql a.parquet b.parquet
  sparkmerge plan landing/ --table lake.events`,
		RunE: opts.runE(opts.run),
	}
	opts.job.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.emit, "emit", "plan", "what to print: plan or sql")
	cmd.Flags().StringVar(&opts.table, "table", "", "plan an append to this table, evolved as --evolve would (the table's schema, columns added, types widened, conflicts)")
	cmd.Flags().StringVar(&opts.tableFormat, "table-format", "", "with --table, the format of a table the merge would create (default: its catalog's)")
	cmd.Flags().StringVar(&opts.report, "report", "", "also write the drift report to this HTML file: sources × columns, coloured by present, added as null, widened, renamed and conflict (one self-contained page)")
	return cmd
}

func (opts *planOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if opts.emit != "plan" && opts.emit != "sql" {
		return usagef("--emit %q: use plan or sql", opts.emit)
	}
	if opts.tableFormat != "" && opts.table == "" {
		return usagef("--table-format is the format of --table: give --table too")
	}
	dryRun := func(job *spark.Job, _ *jobFile) error {
		job.DryRun = true
		if opts.table != "" {
			job.Target = spark.Target{Table: opts.table, Format: opts.tableFormat, Mode: "append", Evolve: true}
		}
		return nil
	}
	return opts.withClient(ctx, stderr, dryRun, func(client *spark.Client, job spark.Job) error {
		return printPlan(ctx, client, job, stdout, opts.global.output, opts.emit, opts.report)
	})
}

// printPlan plans job and prints the plan (emit "plan") or the SQL
// statement that does the merge (emit "sql"), and writes the drift
// report to report, if not "".
func printPlan(ctx context.Context, client *spark.Client, job spark.Job, w io.Writer, output, emit, report string) error {
	planned, err := client.Plan(ctx, job)
	if err != nil {
		return err
	}
	return showPlan(planned, w, output, emit, report)
}

// showPlan prints planned as printPlan does.
func showPlan(planned *spark.Planned, w io.Writer, output, emit, report string) error {
	if report != "" {
		if err := writeReport(report, buildReport(planned, nil, "sparkmerge drift report")); err != nil {
			return err
		}
	}
	if emit == "sql" {
		if err := planned.Err(); err != nil {
			return err // no statement for a merge that cannot run
		}
		stmt, err := planned.SQL()
		if err != nil {
			return err
		}
		return writeOutput(w, output, struct {
			SQL string `json:"sql"`
		}{stmt}, func() string { return stmt })
	}
	text := planText(planned) // rewrites the warnings for JSON too
	if err := writeOutput(w, output, planned, func() string { return text }); err != nil {
		return err
	}
	if err := planned.Err(); err != nil {
		// The plan shows the conflicts; the exit code says them.
		return &reportedError{err}
	}
	return nil
}
