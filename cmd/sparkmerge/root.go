package main

import (
	"github.com/spf13/cobra"
)

// globalOptions are the flags every command that talks to Spark shares.
type globalOptions struct {
	remote string
	local  bool
	output string
	getenv func(string) string
}

func newRootCmd(getenv func(string) string) *cobra.Command {
	g := &globalOptions{getenv: getenv}
	root := &cobra.Command{
		Use:   "sparkmerge",
		Short: "Merge data sources whose schemas drift into one table on Apache Spark",
		Long: `sparkmerge reads many files or tables whose columns drift (added, missing,
reordered, renamed by case, widened types), computes one unified schema and
writes every row into it on a real Spark cluster over Spark Connect.

Nothing is lost silently: missing columns become typed nulls, types only
widen, and conflicts are errors that name the source and column.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Check the output format before any work: a typo must not cost a
		// whole merge.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if g.output != "text" && g.output != "json" {
				return usagef("--output %q: use text or json", g.output)
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.remote, "remote", "", "Spark Connect server, e.g. sc://host:15002/;token=...;use_ssl=true (default $SPARK_REMOTE, else sc://localhost:15002)")
	pf.BoolVar(&g.local, "local", false, "start the project's Spark container for this run and stop it after (needs Docker)")
	pf.StringVarP(&g.output, "output", "o", "text", "result format: text or json")

	root.AddCommand(
		newPlanCmd(g),
		newMergeCmd(g),
		newSchemaCmd(g),
		newVersionCmd(),
	)
	return root
}
