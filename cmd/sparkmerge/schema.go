package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

type schemaOptions struct {
	global *globalOptions
	job    jobFlags
	args   []string

	changed func(string) bool
}

func newSchemaCmd(g *globalOptions) *cobra.Command {
	opts := &schemaOptions{global: g}
	cmd := &cobra.Command{
		Use:   "schema SOURCE...",
		Short: "Print the exact schema Spark reads from each source",
		Example: `  sparkmerge schema data/part-0001.parquet
  sparkmerge schema table:lake.events -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.args = args
			opts.changed = func(name string) bool { return cmd.Flags().Changed(name) }
			return runSchema(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	opts.job.register(cmd.Flags())
	return cmd
}

func runSchema(ctx context.Context, opts *schemaOptions, stdout, stderr io.Writer) error {
	job, jf, err := opts.job.buildJob(opts.args, opts.changed)
	if err != nil {
		return err
	}
	opts.global.useFileRemote(jf)
	job.Progress = stderr
	client, stop, err := opts.global.connect(ctx, stderr, &job)
	if err != nil {
		return err
	}
	defer stop()
	schemas, err := client.Schemas(ctx, job)
	if err != nil {
		return err
	}
	return writeOutput(stdout, opts.global.output, schemas, func() string {
		var b strings.Builder
		for _, s := range schemas {
			fmt.Fprintf(&b, "%s (%s)\n", s.Name, s.Format)
			for _, f := range s.Schema.Fields {
				null := ""
				if !f.Nullable {
					null = " NOT NULL"
				}
				fmt.Fprintf(&b, "  %s %s%s\n", f.Name, f.Type, null)
			}
		}
		return b.String()
	})
}
