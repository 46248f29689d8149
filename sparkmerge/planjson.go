package sparkmerge

import "encoding/json"

// MarshalJSON renders the plan for pipelines, with a stable key order:
//
//	{"target": [{"name", "type", "nullable"}],
//	 "source_column", "case_sensitive", "distinct", "rescue", "hinted",
//	 "sources": [{"name",
//	   "projections": [{"column", "op", "source", "from_type", "type", "value", "sql"}],
//	   "added", "widened": [{"column", "from", "to"}], "conflicts",
//	   "dropped", "renamed": [{"from", "to"}]}]}
//
// Types are in Spark's SQL syntax (DataType.String); "op" is a
// ProjectionKind's String; "sql" is the select expression (SelectExprs).
// Lists are never null.
func (p *Plan) MarshalJSON() ([]byte, error) {
	out := planJSON{
		SourceColumn:  p.SourceColumn,
		CaseSensitive: p.CaseSensitive,
		Distinct:      p.Distinct,
		Rescue:        p.Rescue,
		Hinted:        nonNil(p.Hinted),
		Sources:       make([]sourceJSON, 0, len(p.Sources)),
	}
	out.Target = p.Target.Columns()
	for i := range p.Sources {
		d := p.Diagnostics(i)
		sj := sourceJSON{
			Name:        p.Sources[i].Name,
			Projections: []projectionJSON{},
			Added:       nonNil(d.Added),
			Widened:     changesJSON(d.Widened),
			Conflicts:   changesJSON(d.Conflicts),
			Dropped:     nonNil(d.Dropped),
			Renamed:     []renameJSON{},
			NoRows:      p.Sources[i].NoRows,
		}
		if len(d.Untyped) > 0 {
			sj.Untyped = changesJSON(d.Untyped)
		}
		if len(d.Narrowed) > 0 {
			sj.Narrowed = changesJSON(d.Narrowed)
		}
		for _, e := range p.RescueEntries(i) {
			sj.Rescuable = append(sj.Rescuable, e.Key)
		}
		for _, pr := range p.Projections(i) {
			pj := projectionJSON{Column: pr.Column, Op: pr.Kind.String(), Type: pr.To.String(), SQL: p.selectExpr(i, pr)}
			switch pr.Kind {
			case ProjectTake, ProjectCast, ProjectRebuild:
				pj.Source = pr.Source
				if pr.Kind != ProjectTake {
					pj.FromType = pr.From.String()
				}
			case ProjectLiteral:
				v := pr.Value
				pj.Value = &v
			}
			sj.Projections = append(sj.Projections, pj)
		}
		for _, r := range d.Renamed {
			sj.Renamed = append(sj.Renamed, renameJSON(r))
		}
		out.Sources = append(out.Sources, sj)
	}
	return json.Marshal(out)
}

type planJSON struct {
	Target        []Column     `json:"target"`
	SourceColumn  string       `json:"source_column"`
	CaseSensitive bool         `json:"case_sensitive"`
	Distinct      bool         `json:"distinct"`
	Rescue        string       `json:"rescue,omitempty"`
	Hinted        []string     `json:"hinted"`
	Sources       []sourceJSON `json:"sources"`
}

// Column is a field as the JSON outputs write it: its type in Spark's SQL
// syntax (DataType.String: "int", "array<string>"), the names a user types,
// not the JSON schema form's ("integer").
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// Columns are s's fields as [Column]s, never nil.
func (s Schema) Columns() []Column {
	out := make([]Column, 0, len(s.Fields))
	for _, f := range s.Fields {
		out = append(out, Column{Name: f.Name, Type: f.Type.String(), Nullable: f.Nullable})
	}
	return out
}

type sourceJSON struct {
	Name        string           `json:"name"`
	Projections []projectionJSON `json:"projections"`
	Added       []string         `json:"added"`
	Widened     []changeJSON     `json:"widened"`
	Conflicts   []changeJSON     `json:"conflicts"`
	Dropped     []string         `json:"dropped"`
	Renamed     []renameJSON     `json:"renamed"`
	// Rescuable are the keys of the values the rescue column may keep.
	Rescuable []string `json:"rescuable,omitempty"`
	// NoRows and Untyped: the source has no rows, and these columns'
	// types, inferred from no value, yield to the target's.
	NoRows  bool         `json:"no_rows,omitempty"`
	Untyped []changeJSON `json:"untyped,omitempty"`
	// Narrowed are the columns cast to a narrower type (a hint's, a
	// table's), checked value by value unless lossy widening is allowed.
	Narrowed []changeJSON `json:"narrowed,omitempty"`
}

type projectionJSON struct {
	Column   string  `json:"column"`
	Op       string  `json:"op"`
	Source   string  `json:"source,omitempty"`
	FromType string  `json:"from_type,omitempty"`
	Type     string  `json:"type"`
	Value    *string `json:"value,omitempty"`
	SQL      string  `json:"sql"`
}

type changeJSON struct {
	Column string `json:"column"`
	From   string `json:"from"`
	To     string `json:"to"`
}

type renameJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func changesJSON(cs []TypeChange) []changeJSON {
	out := make([]changeJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, changeJSON{Column: c.Column, From: c.From.String(), To: c.To.String()})
	}
	return out
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
