package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// globalOptions are the flags every command that talks to Spark shares.
type globalOptions struct {
	remote    string
	local     bool
	output    string
	progress  string
	conf      []string
	keepAlive time.Duration
	// tokenCommand prints an access token; run again before it expires.
	tokenCommand string
	// newSession: a session of the run's own, released at exit, rather
	// than one kept from an earlier run (see sessionPool).
	newSession bool
	getenv     func(string) string
}

// newRoot is the root command over g, which holds the global flags once
// parsed.
func newRoot(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "sparkmerge",
		Short: "Merge data sources whose schemas drift into one table on Apache Spark",
		Long: `sparkmerge reads many files or tables whose columns drift (added, missing,
reordered, renamed by case, widened types), computes one unified schema and
writes every row into it on a real Spark cluster over Spark Connect.

Nothing is lost silently: missing columns become typed nulls, types only
widen, and conflicts are errors that name the source and column.`,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		Version:                    readBuildInfo().short(),
		// Check the output format before any work: a typo must not cost a
		// whole merge.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return checkFlagValues(cmd)
		},
	}
	// A root with a RunE checks its own arguments, so that a mistyped
	// command is a usage error like any other.
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := ""
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			hint = "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint)
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if hint := unknownFlagHint(cmd, err); hint != "" {
			err = fmt.Errorf("%w%s", err, hint)
		}
		return &usageError{err}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.remote, "remote", "", "Spark Connect server, e.g. sc://host:15002/;token=...;use_ssl=true (default $SPARK_REMOTE, else sc://localhost:15002)")
	pf.BoolVar(&g.local, "local", false, "start the project's Spark container for this run and stop it after (needs Docker)")
	pf.StringVarP(&g.output, "output", "o", "text", "result format: text or json")
	pf.StringVar(&g.progress, "progress", "auto", "progress on stderr: auto (a live status line at a terminal, else one line per phase), always (live) or never")
	pf.DurationVar(&g.keepAlive, "keepalive", 0, "ping a silent connection after this long; one the server does not answer within 20s is dropped and the call picked up on a new connection, or failed (exit 4) when the server stays unreachable for 2 minutes (default 5m30s, just over what Spark Connect servers accept during a call; negative: never)")
	pf.StringVar(&g.tokenCommand, "token-command", "", "command that prints an access token (alone, or JSON with access_token and expiry), run again before each token expires, e.g. 'databricks auth token --host https://...' (default $SPARKMERGE_TOKEN_COMMAND)")
	pf.BoolVar(&g.newSession, "new-session", false, "run in a new Spark session, released at exit, instead of one an earlier run on this machine kept (a kept session has the code Spark compiled for that run, which a repeated merge then skips; each run gets one no other run is using, its settings as new, nothing of the last run left running)")
	pf.StringArrayVar(&g.conf, "conf", nil, "Spark session setting `key=value` for this run, as with spark-submit (repeatable)")

	root.AddCommand(
		newPlanCmd(g),
		newMergeCmd(g),
		newSchemaCmd(g),
		newVersionCmd(g),
	)
	for _, c := range root.Commands() {
		usageArgs(c)
	}
	registerCompletions(root, g)
	return root
}

// usageArgs makes the positional-argument checks of cmd and its
// subcommands report usage errors (exit code 2).
func usageArgs(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		usageArgs(c)
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return &usageError{err}
			}
			return nil
		}
	}
}
