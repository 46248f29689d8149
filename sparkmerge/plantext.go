package sparkmerge

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String renders the plan for people: the target schema, a matrix with one
// row per target column and one column per source, and each source's
// diagnostics. Matrix cells:
//
//	=             taken as is
//	= (hight)     taken from the source column hight (renamed)
//	~ int         cast from int to the target type
//	* struct<..>  rebuilt field by field from that type
//	+ null        missing in the source: typed null
//	source name   the provenance column's value
//
// The matrix is left out above 12 sources; the per-source lines remain.
//
// The text is stable: the same plan always renders the same way.
func (p *Plan) String() string {
	var b strings.Builder
	b.WriteString("target: ")
	b.WriteString(plural(len(p.Target.Fields), "column", "columns"))
	b.WriteByte('\n')
	rows := make([][]string, 0, len(p.Target.Fields))
	for _, f := range p.Target.Fields {
		t := f.Type.String()
		if !f.Nullable {
			t += " NOT NULL"
		}
		rows = append(rows, []string{shownName(f.Name), t})
	}
	writeTable(&b, "  ", rows)

	if len(p.Sources) <= maxMatrixSources {
		p.writeMatrix(&b, rows[:0])
	}

	b.WriteString("\nsources:\n")
	for i := range p.Sources {
		sp := &p.Sources[i]
		b.WriteString("  ")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(" ")
		b.WriteString(sp.Name)
		b.WriteString(": ")
		b.WriteString(plural(len(sp.Schema.Fields), "column", "columns"))
		d := p.Diagnostics(i)
		writeList(&b, "added", d.Added)
		writeChanges(&b, "widened", d.Widened)
		writeChanges(&b, "narrowed", d.Narrowed)
		// Conflicts here are resolved: the values are kept, as text.
		writeChanges(&b, "cast to string (types conflicted)", d.Conflicts)
		writeList(&b, "dropped", d.Dropped)
		if sp.NoRows {
			b.WriteString("; no rows")
		}
		writeChanges(&b, "typed as the other sources", d.Untyped)
		if len(d.Renamed) > 0 {
			b.WriteString("; renamed ")
			for j, r := range d.Renamed {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(shownName(r.From) + " -> " + shownName(r.To))
			}
		}
		b.WriteByte('\n')
	}
	if p.Distinct {
		b.WriteString("\nrows: UNION DISTINCT: rows equal in every column are kept once\n")
	}
	return b.String()
}

// maxMatrixSources is the most sources shown as matrix columns; more would
// not fit a terminal, and the per-source lines say the same.
const maxMatrixSources = 12

// writeMatrix writes one row per target column and one column per source,
// headed by the source's number in the list below it.
func (p *Plan) writeMatrix(b *strings.Builder, rows [][]string) {
	b.WriteString("\nprojections (sources by number):\n")
	header := []string{"column"}
	for i := range p.Sources {
		header = append(header, strconv.Itoa(i+1))
	}
	rows = append(rows, header)
	projs := make([][]Projection, len(p.Sources))
	for i := range p.Sources {
		projs[i] = p.Projections(i)
	}
	for k, f := range p.Target.Fields {
		row := []string{shownName(f.Name)}
		for i := range p.Sources {
			row = append(row, cell(projs[i][k]))
		}
		rows = append(rows, row)
	}
	writeTable(b, "  ", rows)
}

func cell(pr Projection) string {
	renamed := ""
	if pr.Source != pr.Column {
		renamed = " (" + shownName(pr.Source) + ")"
	}
	switch pr.Kind {
	case ProjectTake:
		return "=" + renamed
	case ProjectCast:
		return "~ " + pr.From.String() + renamed
	case ProjectRebuild:
		return "* " + pr.From.String() + renamed
	case ProjectNull:
		if pr.NoValue {
			return "+ null (no value)"
		}
		return "+ null"
	case ProjectLiteral:
		return "source name"
	case ProjectRescue:
		return "rescued values"
	}
	return "?"
}

func writeList(b *strings.Builder, label string, names []string) {
	if len(names) == 0 {
		return
	}
	b.WriteString("; " + label + " ")
	for j, n := range names {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(shownName(n))
	}
}

func writeChanges(b *strings.Builder, label string, cs []TypeChange) {
	if len(cs) == 0 {
		return
	}
	b.WriteString("; " + label + " ")
	for j, c := range cs {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(shownName(c.Column) + " " + c.From.String() + " -> " + c.To.String())
	}
}

// writeTable writes rows as left-aligned columns separated by two spaces,
// without trailing blanks.
func writeTable(b *strings.Builder, indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		line := indent
		for i, c := range r {
			if i > 0 {
				line += "  "
			}
			line += c
			if i < len(r)-1 {
				line += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			}
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
}

// shownName is a name as the text shows it: as it is, or quoted where
// that would hide what it is (white space around it, which aligned
// columns swallow, a character not printed, a comma, which lists use).
func shownName(name string) string {
	if name == "" || name != strings.TrimSpace(name) || strings.Contains(name, ",") ||
		strings.IndexFunc(name, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(name)
	}
	return name
}
