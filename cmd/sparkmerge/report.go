package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// reportPage is the drift report: one self-contained HTML page (its
// style, script and data inline; it loads nothing), the sources × columns
// matrix drawn by its script from the data.
//
//go:embed report.html
var reportPage string

var reportTemplate = template.Must(template.New("report").Parse(reportPage))

// Cell states of the drift report, as its page colours them.
const (
	cellPresent  = "present"  // the source has the column, as the target types it
	cellAdded    = "added"    // the source lacks it: a typed null
	cellWidened  = "widened"  // cast to a wider type
	cellRenamed  = "renamed"  // the source spells it otherwise
	cellConflict = "conflict" // the types conflicted; cast to string
	cellSource   = "source"   // the provenance column, a literal
)

// reportData is what the page draws: the target's columns and, per source
// (a file or table; files read together share their read's cells), a
// state and a hover text per column.
type reportData struct {
	Title     string         `json:"title"`
	Generated string         `json:"generated"`
	Columns   []reportColumn `json:"columns"`
	Sources   []reportSource `json:"sources"`
	// Warnings are the plan's (a file read with the wrong separator, a
	// column spelled two ways, zeros lost), in the CLI's terms.
	Warnings []string `json:"warnings,omitempty"`
}

type reportColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type reportSource struct {
	Name string `json:"name"`
	// Read names the read it belongs to, when files are read together.
	Read string `json:"read,omitempty"`
	// Rows is its row count, when known (merge --verify).
	Rows *int64 `json:"rows,omitempty"`
	// Cells are [state, hover text] per target column.
	Cells [][2]string `json:"cells"`
	// Dropped are its columns not in the target.
	Dropped []string `json:"dropped,omitempty"`
}

// buildReport lays out planned's drift; rows, when not nil, are row
// counts by source name.
func buildReport(planned *spark.Planned, rows map[string]int64, title string) reportData {
	plan := planned.Plan
	data := reportData{Title: title, Generated: time.Now().UTC().Format(time.RFC3339)}
	if plan == nil {
		return data // an incremental merge with nothing new: no source, no column
	}
	for _, f := range plan.Target.Fields {
		data.Columns = append(data.Columns, reportColumn{Name: f.Name, Type: f.Type.String()})
	}
	for _, w := range planned.Warnings {
		data.Warnings = append(data.Warnings, withFlagHints(w))
	}
	for i, read := range planned.Reads {
		d := plan.Diagnostics(i)
		state := map[string]string{}
		for _, c := range d.Widened {
			state[c.Column] = cellWidened
		}
		for _, c := range d.Conflicts {
			state[c.Column] = cellConflict
		}
		renamed := map[string]string{}
		for _, r := range d.Renamed {
			renamed[r.To] = r.From
		}
		var cells [][2]string
		for _, pr := range plan.Projections(i) {
			cells = append(cells, reportCell(pr, state[pr.Column], renamed[pr.Column]))
		}
		names := read.Sources
		if len(names) == 0 {
			names = []string{read.Name}
		}
		for _, name := range names {
			src := reportSource{Name: name, Cells: cells, Dropped: d.Dropped}
			if len(names) > 1 {
				src.Read = read.Name
			}
			if n, ok := rows[name]; ok {
				src.Rows = &n
			}
			data.Sources = append(data.Sources, src)
		}
	}
	return data
}

// reportCell is a projection's state and hover text.
func reportCell(pr sparkmerge.Projection, state, renamedFrom string) [2]string {
	to := pr.To.String()
	switch pr.Kind {
	case sparkmerge.ProjectNull:
		return [2]string{cellAdded, "missing: NULL as " + to}
	case sparkmerge.ProjectLiteral:
		return [2]string{cellSource, fmt.Sprintf("%q", pr.Value)}
	}
	from := pr.From.String()
	hover := from
	if from != to {
		hover = from + " → " + to
	}
	if renamedFrom != "" {
		hover = renamedFrom + " → " + pr.Column + ": " + hover
	}
	switch {
	case state == cellConflict:
		return [2]string{cellConflict, "conflict, cast to " + to + ": " + hover}
	case state == cellWidened || pr.Kind == sparkmerge.ProjectCast:
		return [2]string{cellWidened, "widened: " + hover}
	case renamedFrom != "":
		return [2]string{cellRenamed, "renamed: " + hover}
	case pr.Kind == sparkmerge.ProjectRebuild:
		return [2]string{cellWidened, "nested fields added or widened: " + hover}
	}
	return [2]string{cellPresent, hover}
}

// writeReport writes the report's page to path.
func writeReport(path string, data reportData) error {
	js, err := json.Marshal(data)
	if err != nil {
		return err
	}
	// Inside <script>, "</" must not close the element.
	safe := strings.ReplaceAll(string(js), "</", `<\/`)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := renderReport(f, data.Title, safe); err != nil {
		f.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return f.Close()
}

func renderReport(w io.Writer, title, dataJSON string) error {
	return reportTemplate.Execute(w, struct {
		Title string
		Data  template.JS
	}{title, template.JS(dataJSON)})
}
