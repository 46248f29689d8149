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

// unifyingFlags shape the unified schema, which schema does not print.
var unifyingFlags = []string{"types", "missing", "order", "case-sensitive", "lossy-widening", "normalize", "rename", "source-column", "reference", "drop-extra"}

func (opts *schemaOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	for _, f := range unifyingFlags {
		if opts.changed(f) {
			return usagef("--%s shapes the merged schema, and schema prints each source's own: use it with plan or merge", f)
		}
	}
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
			kind := s.Format
			if kind == "" {
				kind = "table or query"
			}
			fmt.Fprintf(&b, "%s (%s)\n", s.Name, kind)
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
