package sparkmerge

import "strings"

// RescueEntry is a value of a source's row that the rescue column
// (Options.Rescue) may keep: under Key, the text Text when Cond holds.
// Cond and Text are SQL expressions over the source's columns.
type RescueEntry struct {
	// Key is the rescue object's key: the target column, or the source's
	// own spelling of a column the target drops.
	Key string
	// Column is the source column the value comes from.
	Column string
	// Cond is true where the value is rescued.
	Cond string
	// Text is the value's text.
	Text string
}

// RescueFilePath is the key under which the rescue object names the
// row's source (Auto Loader's name for it).
const RescueFilePath = "_file_path"

// RescueEntries are the values of source i's rows that the rescue column
// keeps, in target order, then the dropped columns in source order: a
// value a cast may not convert (MayFail), rescued where the cast fails
// (try_cast is null where the cast raises an error); a value a cast may
// round (Checked), where it would round; and, with DropExtra, every
// non-null value of a column the target drops. Columns the selection
// (Options.Columns, Exclude) drops are dropped by the user's choice and
// not kept. None without Rescue. It panics if i is out of range.
func (p *Plan) RescueEntries(i int) []RescueEntry {
	if p.Rescue == "" {
		return nil
	}
	var out []RescueEntry
	for _, pr := range p.Projections(i) {
		if pr.Kind != ProjectCast {
			continue
		}
		src := ident(pr.Source)
		switch {
		case pr.Checked:
			out = append(out, RescueEntry{Key: pr.Column, Column: pr.Source, Cond: roundsCond(src, pr.From, pr.To), Text: valueText(src, pr.From)})
		case pr.MayFail:
			out = append(out, RescueEntry{Key: pr.Column, Column: pr.Source, Cond: castFailsCond(src, pr.To), Text: valueText(src, pr.From)})
		}
	}
	if p.RescueDropped {
		sp := &p.Sources[i]
		used := make([]bool, len(sp.Schema.Fields))
		for _, j := range sp.Excluded {
			used[j] = true // dropped by the user's choice
		}
		for _, j := range sp.Columns {
			if j >= 0 {
				used[j] = true
			}
		}
		for j, f := range sp.Schema.Fields {
			if !used[j] {
				src := ident(f.Name)
				out = append(out, RescueEntry{Key: f.Name, Column: f.Name, Cond: src + " IS NOT NULL", Text: valueText(src, f.Type)})
			}
		}
	}
	return out
}

// RescueObject is the rescue column's expression over entries: null where
// no entry's Cond holds, else a JSON object of the rescued values' texts by
// Key, and the row's source (file, a SQL string expression) under
// RescueFilePath.
func RescueObject(entries []RescueEntry, file string) string {
	if len(entries) == 0 {
		return "CAST(NULL AS STRING)"
	}
	conds := make([]string, len(entries))
	var keys []string
	texts := map[string]string{} // a key's CASE branches: one key per column, as a map's keys must be
	for k, e := range entries {
		conds[k] = "(" + e.Cond + ")"
		if _, seen := texts[e.Key]; !seen {
			keys = append(keys, e.Key)
		}
		texts[e.Key] += " WHEN " + e.Cond + " THEN " + e.Text
	}
	var m strings.Builder
	m.WriteString("map(")
	for _, k := range keys {
		m.WriteString(QuoteString(k) + ", CASE" + texts[k] + " END, ")
	}
	m.WriteString(QuoteString(RescueFilePath) + ", " + file + ")")
	return "CASE WHEN " + strings.Join(conds, " OR ") + " THEN to_json(map_filter(" + m.String() + ", (k, v) -> v IS NOT NULL)) END"
}
