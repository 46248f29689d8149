package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sparkmerge/sparkmerge/spark"
)

type planOptions struct {
	global *globalOptions
	job    jobFlags
	emit   string

	args    []string
	changed func(string) bool
}

func newPlanCmd(g *globalOptions) *cobra.Command {
	opts := &planOptions{global: g}
	cmd := &cobra.Command{
		Use:   "plan SOURCE...",
		Short: "Show the unified schema and what each source needs, without reading rows",
		Long: `plan fetches the schema of every source from Spark (no rows are read, except
what schema inference needs), computes the unified schema and prints, per
source, which columns are kept, added as typed nulls, widened or dropped.

--emit sql prints one Spark SQL statement (SELECT ... UNION ALL ...) that
does the merge, to paste into a notebook.`,
		Example: `  sparkmerge plan data/2024-*.csv
  sparkmerge plan --types strict --emit sql a.parquet b.parquet`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.args = args
			opts.changed = func(name string) bool { return cmd.Flags().Changed(name) }
			return runPlan(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	opts.job.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.emit, "emit", "plan", "what to print: plan or sql")
	return cmd
}

func runPlan(ctx context.Context, opts *planOptions, stdout, stderr io.Writer) error {
	if opts.emit != "plan" && opts.emit != "sql" {
		return usagef("--emit %q: use plan or sql", opts.emit)
	}
	job, jf, err := opts.job.buildJob(opts.args, opts.changed)
	if err != nil {
		return err
	}
	opts.global.useFileRemote(jf)
	job.DryRun = true
	job.Progress = stderr
	client, stop, err := opts.global.connect(ctx, stderr, &job)
	if err != nil {
		return err
	}
	defer stop()
	planned, err := client.Plan(ctx, job)
	if err != nil {
		return err
	}
	return printPlanned(stdout, opts.global.output, opts.emit, planned)
}

func printPlanned(w io.Writer, output, emit string, planned *spark.Planned) error {
	if emit == "sql" {
		stmt, err := planned.SQL()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, stmt)
		return err
	}
	return writeOutput(w, output, planned, planned.String)
}
