package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparkmerge/sparkmerge/spark"
)

// flagChoices are the values of each enumerated flag, for shell completion
// and for "did you mean" on a mistyped value. closed: any other value is
// an error (checked before any work); open flags (formats) accept any data
// source Spark has, and only a value within two edits of a known one and
// equal to none is taken for a typo.
var flagChoices = map[string]struct {
	values []string
	closed bool
}{
	"strategy":            {[]string{"auto", "union", "multipath"}, true},
	"types":               {[]string{"widen", "strict", "string"}, true},
	"missing":             {[]string{"fill", "fail", "intersect", "reference"}, true},
	"order":               {[]string{"first-seen", "sorted", "reference"}, true},
	"normalize":           {[]string{"trim", "lower", "snake_case", "none"}, true},
	"mode":                {[]string{"errorifexists", "overwrite", "append", "ignore"}, true},
	"emit":                {[]string{"plan", "sql"}, true},
	"incremental-changed": {[]string{"error", "remerge", "skip"}, true},
	"output":              {[]string{"text", "json"}, true},
	"progress":            {[]string{"auto", "always", "never"}, true},
	"format":              {[]string{"csv", "json", "parquet", "orc", "text", "avro", "xml"}, false},
	"out-format":          {[]string{"parquet", "csv", "json", "orc", "text", "avro", "delta", "noop", "xml"}, false},
	"table-format":        {[]string{"delta", "iceberg", "parquet", "orc", "csv", "json", "avro"}, false},
}

// hintTypes are the types --hint completes (any Spark SQL type is
// accepted).
var hintTypes = []string{"string", "int", "bigint", "double", "decimal(38,18)", "boolean", "date", "timestamp", "timestamp_ntz", "binary"}

// catalogTimeout bounds how long completing a table name waits for the
// server: a shell waits on it.
const catalogTimeout = 2 * time.Second

// registerCompletions adds value completion to every enumerated flag of
// cmd and its subcommands, and table names (from the server's catalog)
// to --table and to table: sources.
func registerCompletions(cmd *cobra.Command, g *globalOptions) {
	for _, c := range cmd.Commands() {
		registerCompletions(c, g)
	}
	register := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if _, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
				return
			}
			choices, ok := flagChoices[f.Name]
			switch {
			case ok:
				values := choices.values
				list := f.Name == "normalize"
				_ = cmd.RegisterFlagCompletionFunc(f.Name, func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
					prefix := ""
					if list {
						// A comma-separated list: complete its last item.
						if i := strings.LastIndex(typed, ","); i >= 0 {
							prefix = typed[:i+1]
						}
					}
					out := make([]string, len(values))
					for i, v := range values {
						out[i] = prefix + v
					}
					return out, cobra.ShellCompDirectiveNoFileComp
				})
			case f.Name == "hint":
				// column=type: the column is the user's; complete the
				// type once '=' is typed.
				_ = cmd.RegisterFlagCompletionFunc(f.Name, func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
					col, _, ok := strings.Cut(typed, "=")
					if !ok {
						return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
					}
					var out []string
					for _, t := range hintTypes {
						out = append(out, col+"="+t)
					}
					return out, cobra.ShellCompDirectiveNoFileComp
				})
			case f.Name == "table":
				_ = cmd.RegisterFlagCompletionFunc(f.Name, func(c *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
					return g.completeTables(c.Context(), "", typed), cobra.ShellCompDirectiveNoFileComp
				})
			case f.Name == "file":
				_ = cmd.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return []string{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
				})
			}
		})
	}
	register(cmd.LocalFlags())
	if !cmd.HasParent() {
		register(cmd.PersistentFlags())
	}
	if cmd.Name() == "plan" || cmd.Name() == "merge" || cmd.Name() == "schema" {
		cmd.ValidArgsFunction = func(c *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
			if strings.HasPrefix(typed, "table:") {
				return g.completeTables(c.Context(), "table:", strings.TrimPrefix(typed, "table:")), cobra.ShellCompDirectiveNoFileComp
			}
			// Sources are paths: the shell completes file names.
			return nil, cobra.ShellCompDirectiveDefault
		}
	}
}

// completeTables lists the catalog's tables (and views) whose names start
// with typed, each prefixed, when the server answers within
// catalogTimeout; none otherwise.
func (g *globalOptions) completeTables(ctx context.Context, prefix, typed string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	remote, err := g.remoteAddress()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	opts, err := g.connectOptions(remote, nil)
	if err != nil {
		return nil
	}
	client, err := spark.Connect(ctx, remote, opts)
	if err != nil {
		return nil
	}
	defer client.Close()
	names, err := client.TableNames(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, typed) {
			out = append(out, prefix+n)
		}
	}
	return out
}

// checkFlagValues fails on a value of an enumerated flag that is not one
// of its choices (closed flags), or that is a near miss of a known format
// (open flags), saying which was meant: before any work, so that a typo
// costs no discovery.
func checkFlagValues(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		choices, ok := flagChoices[f.Name]
		if !ok || err != nil {
			return
		}
		values := []string{f.Value.String()}
		if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
			values = sv.GetSlice()
		}
		for _, v := range values {
			if f.Name == "normalize" {
				for _, part := range strings.Split(v, ",") {
					if e := checkChoice(f.Name, strings.TrimSpace(part), choices.values, true); e != nil && !slices.Contains([]string{"", "snake", "snake-case"}, strings.ToLower(strings.TrimSpace(part))) {
						err = e
						return
					}
				}
				continue
			}
			if e := checkChoice(f.Name, v, choices.values, choices.closed); e != nil {
				err = e
				return
			}
		}
	})
	return err
}

// checkChoice is checkFlagValues for one value.
func checkChoice(flag, value string, choices []string, closed bool) error {
	for _, c := range choices {
		if strings.EqualFold(value, c) {
			return nil
		}
	}
	if flag == "mode" && strings.EqualFold(value, "error") {
		return nil // Spark's other name of errorifexists
	}
	near := closest(value, choices)
	switch {
	case !closed && near == "":
		return nil // another data source: Spark says whether it has it
	case near != "":
		return usagef("--%s %q: did you mean %s? (one of %s)", flag, value, near, strings.Join(choices, ", "))
	}
	return usagef("--%s %q: use one of %s", flag, value, strings.Join(choices, ", "))
}

// closest is the choice within two edits of s (case-insensitive, the
// nearest, the first of equals), or "".
func closest(s string, choices []string) string {
	best, bestD := "", 3
	for _, c := range choices {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// unknownFlagHint is " (did you mean --x?)" for an unknown flag close to
// one of cmd's flags, or "".
func unknownFlagHint(cmd *cobra.Command, err error) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	if near := closest(name, names); near != "" {
		return fmt.Sprintf("; did you mean --%s?", near)
	}
	// A flag of which the typed one is a prefix, e.g. --partition.
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			return fmt.Sprintf("; did you mean --%s?", n)
		}
	}
	return ""
}
