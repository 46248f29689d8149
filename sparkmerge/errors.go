package sparkmerge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSchemaConflict is matched (errors.Is) by every error that says the
// sources' schemas cannot be merged under the chosen policies: type
// conflicts (*TypeConflictError) and column set differences
// (*MissingColumnsError). The CLI maps it to its own exit code.
var ErrSchemaConflict = errors.New("schema conflict")

// ErrNoSources is returned by NewPlan when it is given no sources.
var ErrNoSources = errors.New("no sources")

// TypeConflictError says that some columns' types cannot be unified under
// Policy. It lists every such column.
type TypeConflictError struct {
	Policy    TypePolicy
	Reference bool // the conflicts are with an external reference schema
	// Target names the target the reference is (Options.ReferenceTarget),
	// if it is one, and Evolves says that it evolves already
	// (Options.ReferenceEvolves).
	Target    string
	Evolves   bool
	Conflicts []ColumnConflict
}

// ColumnConflict is one column whose types cannot be unified: each source
// that has the column, with the column's type in that source. With a
// reference, the first entry is the reference, named "(reference)", or
// after the target it is ("(table lake.events)": Options.ReferenceTarget).
type ColumnConflict struct {
	Column string
	// Path is where inside the column the types clash, e.g. "addr.zip" or
	// "tags.element"; it equals Column when the top-level types clash.
	Path    string
	Sources []string
	Types   []DataType
	// Reason says why, when the types have a common type in Spark that
	// would change values (see Options.LossyWidening).
	Reason string
}

func (e *TypeConflictError) Error() string {
	var b strings.Builder
	b.WriteString("merge schemas: ")
	switch {
	case e.Reference && e.Target != "":
		fmt.Fprintf(&b, "%s not fit %s: ", plural(len(e.Conflicts), "column does", "columns do"), e.Target)
	case e.Reference:
		fmt.Fprintf(&b, "%s not fit the reference: ", plural(len(e.Conflicts), "column does", "columns do"))
	case e.Policy == TypesStrict:
		fmt.Fprintf(&b, "strict type policy: %s in type: ", plural(len(e.Conflicts), "column differs", "columns differ"))
	default:
		fmt.Fprintf(&b, "%s no common type: ", plural(len(e.Conflicts), "column has", "columns have"))
	}
	for i, c := range e.Conflicts {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strconv.Quote(c.Column))
		if c.Path != "" && c.Path != c.Column {
			fmt.Fprintf(&b, " (at %s)", c.Path)
		}
		b.WriteString(": ")
		writeGroupedTypes(&b, c.Sources, c.Types)
		if c.Reason != "" {
			fmt.Fprintf(&b, " (%s)", c.Reason)
		}
	}
	switch {
	case e.Reference && e.Target != "" && e.Evolves:
		fmt.Fprintf(&b, "; its format cannot widen the type there (Target.Evolve is on): read the column in the type it has in %s (Options.Hints), or cast the column in the source", e.Target)
	case e.Reference && e.Target != "":
		fmt.Fprintf(&b, "; read the column in the type it has in %s (Options.Hints), widen it there where the format can (Target.Evolve), or cast the column in the source", e.Target)
	case e.Reference:
		b.WriteString("; cast the column in the source, or change the reference")
	case e.Policy == TypesStrict:
		b.WriteString("; cast the sources to one type, or use the widen type policy (Options.Types = TypesWiden)")
	default:
		b.WriteString("; use the string type policy (Options.Types = TypesString) to merge such columns as strings, or cast or rename the column in one source")
		for _, c := range e.Conflicts {
			if c.Reason != "" {
				b.WriteString(", or accept Spark's rounding (Options.LossyWidening)")
				break
			}
		}
	}
	return b.String()
}

// Unwrap returns ErrSchemaConflict.
func (e *TypeConflictError) Unwrap() error { return ErrSchemaConflict }

// writeGroupedTypes writes "int in a.csv, b.csv; array<int> in c.csv",
// grouping sources by type in first-seen order and naming at most three
// sources per type.
func writeGroupedTypes(b *strings.Builder, sources []string, types []DataType) {
	type group struct {
		typ   string
		names []string
	}
	var groups []*group
	byType := map[string]*group{}
	for i, t := range types {
		s := t.String()
		g := byType[s]
		if g == nil {
			g = &group{typ: s}
			byType[s] = g
			groups = append(groups, g)
		}
		if i < len(sources) {
			g.names = append(g.names, sources[i])
		}
	}
	for i, g := range groups {
		if i > 0 {
			b.WriteString(" vs ")
		}
		b.WriteString(g.typ)
		b.WriteString(" in ")
		writeNames(b, g.names, 3)
	}
}

func writeNames(b *strings.Builder, names []string, max int) {
	for i, n := range names {
		if i == max {
			fmt.Fprintf(b, " and %d more", len(names)-max)
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
}

// MissingColumnsError says that sources differ in their columns where the
// policy does not allow it: under MissingFail each source's Missing columns
// (those other sources have), under MissingReference each source's Extra
// columns (those the reference lacks, when DropExtra is off).
type MissingColumnsError struct {
	Policy  MissingPolicy
	Sources []SourceColumns
	// Near are the groups of columns, one of them listed, that a rewrite
	// of names would make one (NearNames): likely one column spelled two
	// ways.
	Near []NearNames
}

// SourceColumns lists the columns one source lacks or has in excess.
type SourceColumns struct {
	Source  string
	Index   int // position of the source in NewPlan's input
	Missing []string
	Extra   []string
}

func (e *MissingColumnsError) Error() string {
	var b strings.Builder
	b.WriteString("merge schemas: ")
	if e.Policy == MissingReference {
		fmt.Fprintf(&b, "%s the reference lacks: ", plural(len(e.Sources), "source has columns", "sources have columns"))
	} else {
		fmt.Fprintf(&b, "sources differ in columns (missing policy %q): ", e.Policy.String())
	}
	for i, s := range e.Sources {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "source %d %q", s.Index+1, s.Source)
		if len(s.Missing) > 0 {
			b.WriteString(" lacks ")
			writeNames(&b, s.Missing, 10)
		}
		if len(s.Extra) > 0 {
			if len(s.Missing) > 0 {
				b.WriteString(" and")
			}
			b.WriteString(" has extra ")
			writeNames(&b, s.Extra, 10)
		}
	}
	for _, n := range e.Near {
		b.WriteString("; ")
		b.WriteString(n.Hint())
	}
	if e.Policy == MissingReference {
		b.WriteString("; drop them (Options.DropExtra), add them to the reference, or rename them (Options.Renames)")
	} else {
		b.WriteString("; pad missing columns with nulls (Options.Missing = MissingFill), or keep only the common columns (Options.Missing = MissingIntersect)")
	}
	return b.String()
}

// Unwrap returns ErrSchemaConflict.
func (e *MissingColumnsError) Unwrap() error { return ErrSchemaConflict }

// DuplicateColumnError says that two columns (or struct fields, then named
// by their path) of one source match the same name after case folding,
// normalizing or renaming.
type DuplicateColumnError struct {
	Source  string
	Index   int // position of the source in NewPlan's input; -1 for the reference
	Columns []string
	Name    string // the name both match
}

func (e *DuplicateColumnError) Error() string {
	return fmt.Sprintf("merge schemas: %s: columns %q and %q both match %q; rename one (Options.Renames) or match names case-sensitively (Options.CaseSensitive)",
		sourceLabel(e.Source, e.Index), e.Columns[0], e.Columns[1], e.Name)
}

// InvalidNameError says that a column (or struct field) has an empty name,
// possibly only after normalizing.
type InvalidNameError struct {
	Source   string
	Index    int    // position of the source in NewPlan's input; -1 for the reference
	Position int    // 1-based position of the column in the source
	Path     string // the struct field's path, or the column's original name
	Reason   string
}

func (e *InvalidNameError) Error() string {
	where := fmt.Sprintf("column %d", e.Position)
	if e.Path != "" {
		where += " (" + strconv.Quote(e.Path) + ")"
	}
	return fmt.Sprintf("merge schemas: %s: %s %s; give it a name in the source or rename it (Options.Renames)",
		sourceLabel(e.Source, e.Index), where, e.Reason)
}

// OptionError says that an option value is invalid or that options
// contradict each other.
type OptionError struct {
	Option string
	Value  string
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("invalid option %s %q: %s", e.Option, e.Value, e.Reason)
}

func sourceLabel(name string, index int) string {
	if index < 0 {
		return "reference schema"
	}
	return fmt.Sprintf("source %d %q", index+1, name)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
