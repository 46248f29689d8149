package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkmerge/sparkmerge/spark"
)

type schemaOptions struct {
	jobCommand
}

func newSchemaCmd(g *globalOptions) *cobra.Command {
	opts := &schemaOptions{jobCommand{global: g}}
	cmd := &cobra.Command{
		Use:   "schema SOURCE...",
		Short: "Print the exact schema Spark reads from each source",
		Example: `  sparkmerge schema data/part-0001.parquet
  sparkmerge schema table:lake.events -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: opts.runE(opts.run),
	}
	opts.job.register(cmd.Flags())
	return cmd
}

func (opts *schemaOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	return opts.withClient(ctx, stderr, nil, func(client *spark.Client, job spark.Job) error {
		return printSchemas(ctx, client, job, stdout, opts.global.output)
	})
}

// printSchemas prints the schema Spark reads from each of job's sources.
func printSchemas(ctx context.Context, client *spark.Client, job spark.Job, w io.Writer, output string) error {
	schemas, err := client.Schemas(ctx, job)
	if err != nil {
		return err
	}
	return writeOutput(w, output, schemas, func() string {
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
