package spark

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

func mustSchema(t *testing.T, ddl string) sparkmerge.Schema {
	t.Helper()
	s, err := sparkmerge.ParseSchema(ddl)
	if err != nil {
		t.Fatalf("ParseSchema(%q): %v", ddl, err)
	}
	return s
}

// testPlanned is a plan over a single CSV file, a multi-file JSON read and a
// table, built by hand as Client.Plan would.
func testPlanned(t *testing.T, sourceColumn string) *Planned {
	t.Helper()
	csv := &Read{
		Name: "/d/a.csv", Sources: []string{"/d/a.csv"}, Format: "csv", Paths: []string{"/d/a.csv"},
		Options: map[string]string{"header": "true", "mode": "FAILFAST", "inferSchema": "true"},
		Schema:  mustSchema(t, "id int, name string"),
	}
	csv.pinned = csv.Schema.String()
	json := &Read{
		Name: "/d/x/ (2 json files)", Sources: []string{"/d/x/1.json", "/d/x/2.json"}, Format: "json",
		Paths:   []string{"/d/x/1.json", "/d/x/2.json"},
		Options: map[string]string{"mode": "FAILFAST"},
		Schema:  mustSchema(t, "id bigint, note string"),
	}
	json.pinned = json.Schema.String()
	table := &Read{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t", Options: map[string]string{}, Schema: mustSchema(t, "name string")}
	reads := []*Read{csv, json, table}
	plan, err := sparkmerge.NewPlan(planSources(reads), sparkmerge.Options{SourceColumn: sourceColumn})
	if err != nil {
		t.Fatalf("NewPlan: %v", err)
	}
	return &Planned{Strategy: StrategyAuto, Reads: reads, Plan: plan, Discovery: 1234567 * time.Microsecond}
}

func TestPlannedSQL(t *testing.T) {
	p := testPlanned(t, "_source")
	got, err := p.SQL()
	if err != nil {
		t.Fatal(err)
	}
	// One statement: a WITH clause per file read, with the read's
	// options (the pinned schema's header check dropped: SQL pins none);
	// files read together are one relation, each row's file from its
	// _metadata.
	want := "WITH\n" +
		"sparkmerge_input_1 AS (\n" +
		"  SELECT * FROM `csv`.`/d/a.csv` WITH ('header' = 'true', 'inferSchema' = 'true', 'mode' = 'FAILFAST')\n" +
		"),\n" +
		"sparkmerge_input_2 AS (\n" +
		"  SELECT *, _metadata.file_path AS `__sparkmerge_file` FROM `json`.`/d/x/{1.json,2.json}` WITH ('mode' = 'FAILFAST')\n" +
		")\n" +
		"SELECT CAST(`id` AS bigint) AS `id`, `name`, CAST(NULL AS string) AS `note`, '/d/a.csv' AS `_source`\n" +
		"FROM sparkmerge_input_1\n" +
		"UNION ALL\n" +
		"SELECT `id`, CAST(NULL AS string) AS `name`, `note`, " + rowFileOf("`__sparkmerge_file`", false) + " AS `_source`\n" +
		"FROM sparkmerge_input_2\n" +
		"UNION ALL\n" +
		"SELECT CAST(NULL AS bigint) AS `id`, `name`, CAST(NULL AS string) AS `note`, 'db.t' AS `_source`\n" +
		"FROM db.t"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SQL() (-want +got):\n%s", diff)
	}
}

// Quotes in paths, options and names; a query source inline; a read
// with the user's schema, which SQL on files cannot take, refused.
func TestPlannedSQLQuotingAndUserSchema(t *testing.T) {
	r := &Read{
		Name: "it's.csv", Sources: []string{"it's.csv"}, Format: "csv", Paths: []string{"/d/it's `x`.csv"},
		Options: map[string]string{"sep": ";", "nullValue": `\N`, "header": "true", "enforceSchema": "false"},
		Schema:  mustSchema(t, "id bigint, v string"),
		pinned:  "id bigint, v string",
	}
	q := &Read{Name: "q", Sources: []string{"q"}, Query: "WITH x AS (SELECT 1 AS id) SELECT id FROM x", Schema: mustSchema(t, "id int")}
	plan, err := sparkmerge.NewPlan(planSources([]*Read{r, q}), sparkmerge.Options{SourceColumn: "src"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := (&Planned{Reads: []*Read{r, q}, Plan: plan}).SQL()
	if err != nil {
		t.Fatal(err)
	}
	want := "WITH\n" +
		"sparkmerge_input_1 AS (\n" +
		"  SELECT * FROM `csv`.`/d/it's ``x``.csv` WITH ('header' = 'true', 'inferSchema' = 'true', 'nullValue' = '\\\\N', 'sep' = ';')\n" +
		")\n" +
		"SELECT `id`, `v`, 'it\\'s.csv' AS `src`\n" +
		"FROM sparkmerge_input_1\n" +
		"UNION ALL\n" +
		"SELECT CAST(`id` AS bigint) AS `id`, CAST(NULL AS string) AS `v`, 'q' AS `src`\n" +
		"FROM (\nWITH x AS (SELECT 1 AS id) SELECT id FROM x\n) AS sparkmerge_input_2"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SQL() (-want +got):\n%s", diff)
	}

	r.UserSchema = "id bigint, v string"
	if _, err := (&Planned{Reads: []*Read{r, q}, Plan: plan}).SQL(); err == nil || !strings.Contains(err.Error(), "it's.csv") || !strings.Contains(err.Error(), "schema given by the user") {
		t.Errorf("SQL() of a read with the user's schema: err = %v, want it refused, naming the source", err)
	}
}

func TestPlannedSQLNoColumns(t *testing.T) {
	r := &Read{Name: "db.t", Sources: []string{"db.t"}, Table: "db.t"}
	plan, err := sparkmerge.NewPlan(planSources([]*Read{r}), sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Planned{Reads: []*Read{r}, Plan: plan}).SQL(); err == nil || !strings.Contains(err.Error(), "no columns") {
		t.Errorf("SQL() of a plan without columns: err = %v, want \"no columns\"", err)
	}
}

func TestSelectExprsProvenance(t *testing.T) {
	// Without a provenance column a multi-file read is projected like any other.
	p := testPlanned(t, "")
	if diff := cmp.Diff([]string{"`id`", "CAST(NULL AS string) AS `name`", "`note`"}, p.selectExprs(1, p.Reads[1].rowFile())); diff != "" {
		t.Errorf("selectExprs(multi-file, no provenance) (-want +got):\n%s", diff)
	}
	p = testPlanned(t, "_source")
	if got := p.sourceKeyExpr(0); got != "'/d/a.csv'" {
		t.Errorf("sourceKeyExpr(single) = %q", got)
	}
	if got, want := p.sourceKeyExpr(1), rowFileOf("_metadata.file_path", false); got != want {
		t.Errorf("sourceKeyExpr(multi-file) = %q, want %q", got, want)
	}
	// Files the user named with dbfs: keep it in their rows' provenance;
	// other rows lose the dbfs: Databricks reports for volume files.
	p.Reads[1].Paths = []string{"dbfs:/d/x/1.json", "dbfs:/d/x/2.json"}
	if got, want := p.sourceKeyExpr(1), rowFileOf("_metadata.file_path", true); got != want {
		t.Errorf("sourceKeyExpr(multi-file on dbfs:) = %q, want %q", got, want)
	}
}

// The emitted SQL never calls input_file_name() (gone from Unity Catalog
// and DBR 17.3); _metadata is read only where a read's files are, inside
// its WITH clause (it does not resolve through one).
func TestPlannedSQLNamesFilesWithoutInputFileName(t *testing.T) {
	got, err := testPlanned(t, "_source").SQL()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "input_file_name") {
		t.Errorf("SQL() uses input_file_name:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "_metadata") && !strings.Contains(line, "_metadata.file_path AS `__sparkmerge_file` FROM `json`") {
			t.Errorf("SQL() reads _metadata outside a file read: %s", line)
		}
	}
}

func TestPlannedString(t *testing.T) {
	p := testPlanned(t, "_source")
	p.AddColumns = []sparkmerge.Field{{Name: "note", Type: sparkmerge.DataType{Kind: sparkmerge.KindString}, Nullable: true}}
	got := p.String()
	head := "strategy auto: 4 sources in 3 reads (schemas fetched in 1.235s)\n" +
		"  one json read over 2 files: /d/x/ (2 json files)\n" +
		"  evolve: add columns to the table: note string\n" +
		"\n"
	if !strings.HasPrefix(got, head) {
		t.Errorf("String() starts with:\n%s\nwant:\n%s", got[:min(len(got), len(head))], head)
	}
	if diff := cmp.Diff(p.Plan.String(), strings.TrimPrefix(got, head)); diff != "" {
		t.Errorf("String() after the header is not the plan's table (-want +got):\n%s", diff)
	}

	one := &Planned{Strategy: StrategyUnion, Reads: p.Reads[:1], Plan: p.Plan}
	if line, _, _ := strings.Cut(one.String(), "\n"); line != "strategy union: 1 source in 1 read (schemas fetched in 0s)" {
		t.Errorf("String() first line = %q", line)
	}
	local := *p.Reads[0]
	local.InferredLocally = true
	one.Reads = []*Read{&local}
	if line, _, _ := strings.Cut(one.String(), "\n"); line != "strategy union: 1 source in 1 read (schemas inferred on the client in 0s)" {
		t.Errorf("String() first line = %q", line)
	}
	mixed := &Planned{Strategy: StrategyAuto, Reads: append([]*Read{&local}, p.Reads[1:]...), Plan: p.Plan}
	if line, _, _ := strings.Cut(mixed.String(), "\n"); line != "strategy auto: 4 sources in 3 reads (1 of 3 schemas inferred on the client, the rest fetched in 0s)" {
		t.Errorf("String() first line = %q", line)
	}
}

func TestResultString(t *testing.T) {
	p := testPlanned(t, "_source")
	plan := p.String()
	tests := []struct {
		name   string
		result Result
		want   string
	}{
		{
			name:   "dry run",
			result: Result{Planned: p, RowsWritten: -1},
			want:   plan + "\ndry run: nothing read or written\n",
		},
		{
			name:   "written to a path, defaults shown",
			result: Result{Planned: p, Target: Target{Path: "/out"}, RowsWritten: 42, Elapsed: 2500 * time.Millisecond},
			want:   plan + "\nwrote 42 rows to \"/out\" (parquet, mode errorifexists) in 2.5s\n",
		},
		{
			name: "verified into a table",
			result: Result{
				Planned: p, Target: Target{Table: "db.out", Format: "delta", Mode: "append"}, RowsWritten: 1234567,
				RowsRead: []SourceRows{{Source: "/d/a.csv", Rows: 1234560}, {Source: "db.t", Rows: 7}},
				Verified: true, Elapsed: time.Second,
			},
			want: plan + "\nwrote 1234567 rows to table \"db.out\" (delta, mode append) in 1s\n" +
				"rows read per source:\n" +
				"   1234560  /d/a.csv\n" +
				"         7  db.t\n" +
				"verified: 1234567 rows written = 1234567 rows read from 2 sources\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.result.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckTarget(t *testing.T) {
	tests := []struct {
		target Target
		err    string // "" means valid
	}{
		{Target{Path: "/out"}, ""},
		{Target{Table: "db.t", Mode: "append"}, ""},
		{Target{Path: "/out", Mode: "OVERWRITE"}, ""},
		{Target{Path: "/out", Mode: "error"}, ""},
		{Target{Path: "/out", Mode: "errorifexists"}, ""},
		{Target{Path: "/out", Mode: "Ignore"}, ""},
		{Target{}, "target: give exactly one of a path and a table"},
		{Target{Path: "/out", Table: "db.t"}, "target: give exactly one of a path and a table"},
		{Target{Path: "/out", Mode: "upsert"}, `target: unknown mode "upsert": use errorifexists, overwrite, append or ignore`},
	}
	for _, tt := range tests {
		err := checkTarget(tt.target)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.err {
			t.Errorf("checkTarget(%+v) = %q, want %q", tt.target, got, tt.err)
		}
	}
}

func TestTargetName(t *testing.T) {
	if got := targetName(Target{Path: "/o ut"}); got != `"/o ut"` {
		t.Errorf("targetName(path) = %s", got)
	}
	if got := targetName(Target{Table: "db.t"}); got != `table "db.t"` {
		t.Errorf("targetName(table) = %s", got)
	}
}

func TestStrategyRoundTrip(t *testing.T) {
	for _, s := range []Strategy{StrategyAuto, StrategyUnion, StrategyMultipath} {
		got, err := ParseStrategy(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
		text, _ := s.MarshalText()
		var back Strategy
		if err := back.UnmarshalText(text); err != nil || back != s {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, s)
		}
	}
	names := map[Strategy]string{StrategyAuto: "auto", StrategyUnion: "union", StrategyMultipath: "multipath", Strategy(7): "Strategy(7)"}
	for s, want := range names {
		if s.String() != want {
			t.Errorf("Strategy(%d).String() = %q, want %q", int(s), s.String(), want)
		}
	}
	if got, err := ParseStrategy("MultiPath"); err != nil || got != StrategyMultipath {
		t.Errorf("ParseStrategy(MultiPath) = %v, %v", got, err)
	}
	_, err := ParseStrategy("fast")
	if err == nil || err.Error() != `unknown strategy "fast": use one of auto, union, multipath` {
		t.Errorf("ParseStrategy(fast) error = %v", err)
	}
	var s Strategy
	if err := s.UnmarshalText([]byte("fast")); err == nil {
		t.Error("UnmarshalText(fast): no error")
	}
}

func TestClientRulesMatch(t *testing.T) {
	for v, want := range map[string]bool{"4.0.1": true, "4.0.0": true, "4.0": true, "4.1.0": true, "4.3.0": true, "4.2.1": true, "4.4.0": false, "3.5.2": true, "3.4.1": false, "4.00.1": false, "": false} {
		if got := clientRulesMatch(v); got != want {
			t.Errorf("clientRulesMatch(%q) = %v, want %v", v, got, want)
		}
	}
}

// Files are typed together on the Spark lines the version matrix proves
// it on, and each alone on any other (after 4.3, before 3.5).
func TestTypesTogether(t *testing.T) {
	for v, want := range map[string]bool{"4.0.1": true, "4.0.5": true, "4.0": true, "3.5.7": true, "4.1.4": true, "4.2.1": true, "4.3.0": true,
		"4.4.0": false, "3.4.1": false, "4.00.1": false, "4.10.0": false, "5.0.0": false, "": false} {
		if got := typesTogether(v); got != want {
			t.Errorf("typesTogether(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestStrategyStringOutOfRange(t *testing.T) {
	for s, want := range map[Strategy]string{StrategyAuto: "auto", Strategy(-1): "Strategy(-1)", Strategy(9): "Strategy(9)"} {
		if got := s.String(); got != want {
			t.Errorf("Strategy(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}

// A table's columns it fills itself where a write leaves them out (a
// DEFAULT) are read from their metadata; a merge whose sources lack one
// is refused, naming the column, its default and the sources, where
// sparkmerge would write NULL.
func TestFilledColumnsRefused(t *testing.T) {
	filled := filledColumns(map[string]string{
		"note":  `{"EXISTS_DEFAULT":"'new'","CURRENT_DEFAULT":"'new'"}`,
		"plain": `{"comment":"just a comment"}`,
		"bad":   `not json`,
	})
	if want := map[string]string{"note": "a column with a default value (DEFAULT 'new')"}; !maps.Equal(filled, want) {
		t.Errorf("filled %v, want %v", filled, want)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for path, text := range map[string]string{a: "id,v\n1,2\n", b: "id,note,v\n1,x,2\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	client, fake := newFakeClient()
	fake.schemas["tableSchema db.t"] = "id bigint, note string, v int"
	fake.providers = map[string]string{"db.t": "parquet"}
	fake.columnMetadata = map[string]map[string]string{"db.t": {"note": `{"CURRENT_DEFAULT":"'new'"}`}}
	_, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{a}}, {Paths: []string{b}}},
		Target: Target{Table: "db.t", Mode: "append"}, DryRun: true})
	if err == nil || !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "column `note` is a column with a default value (DEFAULT 'new'), and source 1 \""+a+"\" lacks it") || strings.Contains(err.Error(), "b.csv") {
		t.Errorf("got %v", err)
	}
	// A NOT NULL column a source lacks is refused alike.
	fake.schemas["tableSchema db.n"] = "id bigint, note string NOT NULL, v int"
	fake.providers["db.n"] = "delta"
	_, err = client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{a}}, {Paths: []string{b}}},
		Target: Target{Table: "db.n", Mode: "append"}, DryRun: true})
	if err == nil || !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "column `note` is NOT NULL in the table, and source 1 \""+a+"\" lacks it") {
		t.Errorf("a NOT NULL column: got %v", err)
	}
	_, err = client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{b}}},
		Target: Target{Table: "db.t", Mode: "append"}, DryRun: true})
	if err != nil {
		t.Errorf("every source has the column: %v", err)
	}
}

// A table's partition columns are those DESCRIBE TABLE EXTENDED lists
// under "# Partition Information", none for a table without.
func TestPartitionColumnsOf(t *testing.T) {
	rows := [][]any{{"id", "int", nil}, {"dt", "string", nil}, {"# Partition Information", "", ""}, {"# col_name", "data_type", "comment"}, {"dt", "string", nil},
		{"", "", ""}, {"# Detailed Table Information", "", ""}, {"Provider", "parquet", ""}}
	if got := partitionColumnsOf(rows); !slices.Equal(got, []string{"dt"}) {
		t.Errorf("partitioned: %v", got)
	}
	if got := partitionColumnsOf(rows[5:]); got != nil {
		t.Errorf("not partitioned: %v", got)
	}
}

// A Delta table refuses, before any statement, the widenings its owner
// turned off or a CHECK constraint blocks; a constraint names a column
// as a whole word only.
func TestDeltaWideningRefused(t *testing.T) {
	int32T, int64T := sparkmerge.Simple(sparkmerge.KindInt), sparkmerge.Simple(sparkmerge.KindLong)
	evo := &sparkmerge.Evolution{Widened: []sparkmerge.FieldChange{{Path: []string{"amount"}, From: int32T, To: int64T}, {Path: []string{"n"}, From: int32T, To: int64T}}}
	reasons := func(props map[string]string) []string {
		var out []string
		for _, c := range deltaWideningRefused(evo, props) {
			out = append(out, c.Path[0]+": "+c.Reason)
		}
		return out
	}
	if got := reasons(map[string]string{"delta.enableTypeWidening": "true", "delta.constraints.positive": "amount_cents > 0"}); got != nil {
		t.Errorf("widening on, a constraint on another column: %q", got)
	}
	if got := reasons(map[string]string{"delta.enableTypeWidening": "false"}); len(got) != 2 || !strings.Contains(got[0], "delta.enableTypeWidening=false") {
		t.Errorf("widening off: %q", got)
	}
	got := reasons(map[string]string{"delta.constraints.positive": "`Amount` > 0 AND n2 < 5"})
	if len(got) != 1 || got[0] != "amount: the table's CHECK constraint positive (`Amount` > 0 AND n2 < 5) names it, and Delta does not change the type of such a column" {
		t.Errorf("a constraint: %q", got)
	}
}

// The table properties a merge asks for are said not to be set where the
// table exists (they apply to a table the merge creates); nothing is said
// of a table the merge creates or where none are asked for.
func TestKeptPropertiesWarned(t *testing.T) {
	props := Target{Table: "db.t", Mode: "append", Properties: map[string]string{"team": "data", "delta.appendOnly": "true"}}
	got := keptPropertiesWarnings(props, &TargetTable{Name: "db.t", Exists: true})
	want := []string{"table db.t exists, and keeps its own properties: delta.appendOnly, team not set (Target.Properties apply to a table the merge creates; set them with ALTER TABLE ... SET TBLPROPERTIES)"}
	if !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if got := keptPropertiesWarnings(props, &TargetTable{Name: "db.t"}); got != nil {
		t.Errorf("a table the merge creates: %q", got)
	}
	if got := keptPropertiesWarnings(Target{Table: "db.t"}, &TargetTable{Name: "db.t", Exists: true}); got != nil {
		t.Errorf("no properties asked for: %q", got)
	}
}

// TestDeltaRowsCommitted: the rows a run's Delta commit added come from
// its numOutputRows; a replaceWhere overwrite that wrote no file (a header
// alone) leaves the metric out and added 0; any other commit without it,
// or a mark on no commit or on two, is an error.
func TestDeltaRowsCommitted(t *testing.T) {
	columns := []string{"version", "operation", "userMetadata", "operationMetrics"}
	commit := func(version int64, mark string, metrics ...string) []any {
		var entries []connect.MapEntry
		for i := 0; i+1 < len(metrics); i += 2 {
			entries = append(entries, connect.MapEntry{Key: metrics[i], Value: metrics[i+1]})
		}
		return []any{version, "WRITE", mark, entries}
	}
	tests := []struct {
		name    string
		rows    [][]any
		want    int64
		wantErr string
	}{
		{"rows added", [][]any{commit(3, "sparkmerge m", "numFiles", "1", "numOutputRows", "7"), commit(2, "other", "numOutputRows", "9")}, 7, ""},
		{"no file written", [][]any{commit(3, "sparkmerge m", "numFiles", "0", "numRemovedFiles", "1", "numOutputBytes", "0")}, 0, ""},
		{"files written, no count", [][]any{commit(3, "sparkmerge m", "numFiles", "2")}, 0, "has no numOutputRows metric"},
		{"mark on no commit", [][]any{commit(3, "other", "numOutputRows", "1")}, 0, "0 commits carry its mark"},
		{"mark on two commits", [][]any{commit(3, "sparkmerge m", "numOutputRows", "1"), commit(2, "sparkmerge m", "numOutputRows", "1")}, 0, "2 commits carry its mark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deltaRowsCommitted(columns, tt.rows, "sparkmerge m", "db.t")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("deltaRowsCommitted = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
