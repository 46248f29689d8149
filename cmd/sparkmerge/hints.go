package main

import (
	"strings"

	"github.com/sparkmerge/sparkmerge/spark"
)

// The library's errors name what to change in its own terms (Go options
// and fields, e.g. "(Options.Types = TypesString)"); the CLI says the
// same with its flags. flagHints rewrites each such phrase (longer phrases
// first: a Replacer tries its pairs in order); a test checks that every
// phrase the library writes has a rewrite.
var flagHints = strings.NewReplacer(
	"(Options.Types = TypesWiden)", "(--types widen)",
	"(Options.Types = TypesString)", "(--types string)",
	"(Options.LossyWidening)", "(--lossy-widening)",
	"(Options.DropExtra)", "(--drop-extra)",
	"(Options.Hints)", "(--hint column=type)",
	"(Options.Hints, ", "(--hint ",
	"(Options.Rescue)", "(--rescue COLUMN)",
	"(Options.SourceColumn, --source-column NAME)", "(--source-column NAME)",
	"(Options.SourceColumn)", "(--source-column)",
	"(Options.Renames)", "(--rename old=new)",
	"(Options.Missing = MissingFill)", "(--missing fill)",
	"(Options.Missing = MissingIntersect)", "(--missing intersect)",
	"(Options.CaseSensitive)", "(--case-sensitive)",
	"(Incremental.Changed = remerge: ", "(--incremental-changed remerge: ",
	"(Incremental.Changed = skip)", "(--incremental-changed skip)",
	"(Incremental.NewState)", "(--incremental-new-state, or incremental: new_state: true in a job file)",
	"(Job.Format or SourceSpec.Format)", "(--format, or format per source in a job file)",
	"the reader option encoding=ISO-8859-1 (Job.ReaderOptions or SourceSpec.Options)", "--option encoding=ISO-8859-1 (or options per source in a job file)",
	"(SourceSpec.Options, SourceSpec.Schema)", "(options and schema per source in a job file; --option and --schema when every source is such a file)",
	"(SourceSpec.Schema)", "(--schema)",
	"(Job.Strategy = StrategyAuto or StrategyUnion)", "(--strategy auto or union)",
	`(Target.Mode = "overwrite")`, "(--mode overwrite)",
	"(Target.Mode)", "(--mode)",
	"(Target.Evolve)", "(--evolve)",
	"(Target.Evolve is on)", "(--evolve is given)",
	"(Target.Format)", "(--table-format)",
	"(Target.PartitionBy)", "(--partition-by)",
	"(Target.Properties apply", "(--table-property values apply",
	"the reader option mode=PERMISSIVE (such values become null) or mode=DROPMALFORMED (such rows are dropped) (Job.ReaderOptions)",
	"--option mode=PERMISSIVE (such values become null) or --option mode=DROPMALFORMED (such rows are dropped)",
	"(Job.ReaderOptions or SourceSpec.Options)", "(--option, or options per source in a job file)",
	"(Job.ReaderOptions)", "(--option)",
	"normalize names with trim (Options.Normalize)", "normalize names with --normalize trim",
	"normalize names with snake_case (Options.Normalize)", "normalize names with --normalize snake_case",
	"(Options.Normalize)", "(--normalize)",
	"(ConnectOptions.Conf)", "(--conf)",
	"(Job.FetchLimit)", "(--fetch-limit)",
	"(check the connection string, and that a Spark Connect server runs there)", "(check --remote or SPARK_REMOTE, and that a Spark Connect server runs there; or use --local to start Spark in Docker for this run)",
)

// withFlagHints is an error's message as the CLI prints it.
func withFlagHints(msg string) string { return flagHints.Replace(msg) }

// inCLITerms rewrites a plan's warnings as the CLI prints them, in text
// and in JSON: with its flags (see flagHints).
func inCLITerms(p *spark.Planned) {
	if p == nil {
		return
	}
	for i, w := range p.Warnings {
		p.Warnings[i] = withFlagHints(w)
	}
}

// resultInCLITerms is inCLITerms for a merge's result, if any.
func resultInCLITerms(r *spark.Result) {
	if r != nil {
		inCLITerms(r.Planned)
	}
}

// planText is a plan's text as the CLI prints it (see inCLITerms).
func planText(p *spark.Planned) string {
	inCLITerms(p)
	return withFlagHints(p.String())
}
