package spark

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Two CSV files read with the wrong options still give a schema, and the
// merge runs: a file separated by ';' (Excel's export in much of Europe)
// is one column named after its whole header line, each row one string;
// a file with no header line has its first row taken for names, and that
// row is not merged. Spark does the same reading either alone, so nothing
// here fails; the plan says what it sees, by name, with the option that
// would read the file as meant.

// separatorCandidates are the separators a CSV file read as one column is
// checked for, besides the one it was read with.
var separatorCandidates = []string{";", "\t", "|", ","}

// sourceWarnings are the plan's warnings about reads whose schema suggests
// a reader option the read lacks, in the reads' order.
func sourceWarnings(reads []*Read) []string {
	var out []string
	for _, r := range reads {
		if r.Format != "csv" || !strings.EqualFold(optionValue(r.Options, "header"), "true") {
			continue
		}
		schema := r.Schema
		if r.partition != nil {
			schema = r.dataSchema // the file's own columns, not the tree's
		}
		if w := separatorWarning(r, schema); w != "" {
			out = append(out, w)
			continue
		}
		if w := headerAsDataWarning(r, schema); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// separatorWarning is the warning for a CSV read of one column whose name
// splits at another separator into several names, "" for any other read.
func separatorWarning(r *Read, schema sparkmerge.Schema) string {
	if len(schema.Fields) != 1 {
		return ""
	}
	name := schema.Fields[0].Name
	sep := optionValue(r.Options, "sep")
	if sep == "" {
		sep = optionValue(r.Options, "delimiter")
	}
	if sep == "" {
		sep = ","
	}
	for _, candidate := range separatorCandidates {
		if candidate == sep {
			continue
		}
		parts := strings.Split(name, candidate)
		if len(parts) < 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
			continue
		}
		shown := candidate
		if candidate == "\t" {
			shown = `\t` // as Spark's sep option takes a tab too
		}
		return fmt.Sprintf("source %s: one column, named %q: its values look separated by '%s', not '%s'; if so, each row is merged as one string: read it with the reader option sep='%s' (Job.ReaderOptions or SourceSpec.Options)",
			quoteName(r.Name), name, shown, sep, shown)
	}
	return ""
}

// headerAsDataWarning is the warning for a CSV read whose typed columns
// are all named by values of their own types (a header line "7,g,70" over
// columns of int, string, int): the file's first row of data taken for its
// header, "" for any other read. A column of strings says nothing either
// way; at least one typed column must.
func headerAsDataWarning(r *Read, schema sparkmerge.Schema) string {
	var valued []string
	for _, f := range schema.Fields {
		if f.Type.Kind == sparkmerge.KindString {
			continue
		}
		if !infer.CSVValueOfType(f.Name, f.Type) {
			return ""
		}
		valued = append(valued, f.Name)
	}
	if len(valued) == 0 {
		return ""
	}
	return fmt.Sprintf("source %s: its header line names %s %s, %s of %s own %s: if the file has no header line, its first row was taken for names and is not merged: read it with the reader option header=false and its columns' names in its schema (SourceSpec.Options, SourceSpec.Schema)",
		quoteName(r.Name), plural(len(valued), "a column", "columns"), strings.Join(valued, ", "),
		plural(len(valued), "a value", "values"), plural(len(valued), "its", "their"), plural(len(valued), "type", "types"))
}

// nameWarnings are the plan's warnings of columns likely spelled two ways
// (sparkmerge.Plan.NearNames), each spelling with the first source that
// has it.
func nameWarnings(p *sparkmerge.Plan) []string {
	var out []string
	for _, near := range p.NearNames {
		var from []string
		for _, name := range near.Names {
			j := slices.IndexFunc(p.Target.Fields, func(f sparkmerge.Field) bool { return f.Name == name })
			first, more := -1, 0
			for i, sp := range p.Sources {
				if j < 0 || j >= len(sp.Columns) || sp.Columns[j] < 0 {
					continue
				}
				if first < 0 {
					first = i
				} else {
					more++
				}
			}
			if first < 0 {
				continue // the reference's or table's alone
			}
			s := fmt.Sprintf("%q in source %d %s", name, first+1, quoteName(p.Sources[first].Name))
			if more > 0 {
				s += fmt.Sprintf(" and %d more", more)
			}
			from = append(from, s)
		}
		out = append(out, fmt.Sprintf("%s: each is merged as a column of its own, null in the rows of the sources that spell it otherwise (%s); %s",
			near.What(), strings.Join(from, "; "), near.Remedy()))
	}
	return out
}

// zeroWarnings are the plan's warnings of columns merged as numbers that
// hold integers written with leading zeros in CSV files the client typed
// ("02134", a ZIP code): Spark reads the number, 2134, and the zeros are
// lost, as when Spark reads the file alone; a column typed as a string
// (a hint, or another source's text) keeps the values as written. One
// warning a column, naming its first such file and value and how many
// other files hold such values. The files Spark types are not checked (it
// would take a scan of their text).
func zeroWarnings(p *sparkmerge.Plan, reads []*Read) []string {
	type padded struct {
		file, value string
		others      int
	}
	byColumn := map[int]*padded{}
	for i, r := range reads {
		if i >= len(p.Sources) {
			break
		}
		for k, f := range r.Schema.Fields {
			j := slices.Index(p.Sources[i].Columns, k)
			if j < 0 || p.Target.Fields[j].Type.Kind == sparkmerge.KindString {
				continue
			}
			for _, part := range r.parts() {
				v, ok := part.zeroPadded[f.Name]
				switch {
				case !ok:
				case byColumn[j] == nil:
					byColumn[j] = &padded{file: part.Name, value: v}
				default:
					byColumn[j].others++
				}
			}
		}
	}
	var out []string
	for j, f := range p.Target.Fields {
		z := byColumn[j]
		if z == nil {
			continue
		}
		others := ""
		if z.others > 0 {
			others = fmt.Sprintf(" and %s", plural(z.others, "another file", "other files"))
		}
		out = append(out, fmt.Sprintf("column %s is merged as %s, and source %s%s hold%s integers written with leading zeros (%q, merged as %s): the zeros are lost; to keep the values as written, type the column as a string (Options.Hints, %s=string)",
			f.Name, f.Type, quoteName(z.file), others, map[bool]string{true: "", false: "s"}[z.others > 0], z.value, withoutLeadingZeros(z.value), f.Name))
	}
	return out
}

// withoutLeadingZeros is an integer's text as the number it is read as:
// "-012" is -12, "000" is 0.
func withoutLeadingZeros(v string) string {
	sign := ""
	if v[0] == '-' {
		sign = "-"
	}
	digits := strings.TrimLeft(strings.TrimLeft(v, "+-"), "0")
	if digits == "" {
		return "0"
	}
	return sign + digits
}
