package sparkmerge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustSchema(t *testing.T, ddl string) Schema {
	t.Helper()
	s, err := ParseSchema(ddl)
	if err != nil {
		t.Fatalf("ParseSchema(%q): %v", ddl, err)
	}
	return s
}

// mustType parses a Spark SQL type for a test.
func mustType(t *testing.T, s string) DataType {
	t.Helper()
	d, err := ParseType(s)
	if err != nil {
		t.Fatalf("ParseType(%q): %v", s, err)
	}
	return d
}

// change is a FieldChange or conflict written for a test: "s.b: int -> bigint".
func changes(cs []FieldChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, PathString(c.Path)+": "+c.From.String()+" -> "+c.To.String())
	}
	return out
}

func conflicts(cs []EvolutionConflict) []string {
	var out []string
	for _, c := range cs {
		out = append(out, PathString(c.Path)+": "+c.Table.String()+" vs "+c.Merged.String())
	}
	return out
}

func TestPlanEvolution(t *testing.T) {
	for _, tc := range []struct {
		name          string
		format        string
		deltaPreview  bool // Table.DeltaPreviewWidening: Delta 3 on Spark 3.5
		table, merged string
		opts          Options
		added         []string
		widened       []string
		conflicts     []string
		properties    map[string]string
		schema        string // the evolved schema
	}{
		{
			name:       "delta adds nested fields and widens, in the table's order and spelling",
			format:     "delta",
			table:      "ID int, s struct<a:int>, tags array<struct<x:int>>, m map<string,struct<v:float>>, keep string",
			merged:     "extra string, id bigint, S struct<A:int, b:string>, tags array<struct<X:int,y:string>>, m map<string,struct<v:double,w:int>>",
			added:      []string{"extra: void -> string", "s.b: void -> string", "tags.element.y: void -> string", "m.value.w: void -> int"},
			widened:    []string{"ID: int -> bigint", "m.value.v: float -> double"},
			properties: map[string]string{"delta.enableTypeWidening": "true"},
			schema:     "ID bigint, s struct<a:int,b:string>, tags array<struct<x:int,y:string>>, m map<string,struct<v:double,w:int>>, keep string, extra string",
		},
		{
			// Measured on Delta 3.3.3 (Spark 3.5.7): ALTER COLUMN TYPE takes
			// these, top-level and nested, and refuses every other change.
			name:         "delta 3 widens tinyint and smallint only",
			format:       "delta",
			deltaPreview: true,
			table:        "b tinyint, s smallint, n struct<a:tinyint>, i int, f float, d decimal(5,2), dt date",
			merged:       "b int, s int, n struct<a:smallint>, i bigint, f double, d decimal(6,2), dt timestamp_ntz",
			widened:      []string{"b: tinyint -> int", "s: smallint -> int", "n.a: tinyint -> smallint"},
			conflicts:    []string{"i: int vs bigint", "f: float vs double", "d: decimal(5,2) vs decimal(6,2)", "dt: date vs timestamp_ntz"},
			properties:   map[string]string{"delta.enableTypeWidening": "true"},
			schema:       "b int, s int, n struct<a:smallint>, i int, f float, d decimal(5,2), dt date",
		},
		{
			name:    "delta's widenings",
			format:  "Delta",
			table:   "b tinyint, i int, l bigint, f float, d decimal(10,2), dt date, i2 int",
			merged:  "b int, i decimal(12,2), l decimal(22,2), f double, d decimal(14,4), dt timestamp_ntz, i2 double",
			widened: []string{"b: tinyint -> int", "i: int -> decimal(12,2)", "l: bigint -> decimal(22,2)", "f: float -> double", "d: decimal(10,2) -> decimal(14,4)", "dt: date -> timestamp_ntz", "i2: int -> double"},
			properties: map[string]string{
				"delta.enableTypeWidening":   "true",
				"delta.feature.timestampNtz": "supported",
			},
			schema: "b int, i decimal(12,2), l decimal(22,2), f double, d decimal(14,4), dt timestamp_ntz, i2 double",
		},
		{
			name:      "delta refuses what its type widening does not do",
			format:    "delta",
			table:     "l bigint, s int, t date, n int, f double",
			merged:    "l double, s string, t timestamp, n array<int>, f decimal(10,2)",
			conflicts: []string{"l: bigint vs double", "s: int vs string", "t: date vs timestamp", "n: int vs array<int>"},
			schema:    "l bigint, s int, t date, n int, f double",
		},
		{
			name:      "iceberg promotes int, float and decimal precision",
			format:    "iceberg",
			table:     "i int, f float, d decimal(10,2), s struct<a:int>, x int, y decimal(10,2)",
			merged:    "i bigint, f double, d decimal(12,2), s struct<a:bigint,b:date>, x double, y decimal(10,4)",
			added:     []string{"s.b: void -> date"},
			widened:   []string{"i: int -> bigint", "f: float -> double", "d: decimal(10,2) -> decimal(12,2)", "s.a: int -> bigint"},
			conflicts: []string{"x: int vs double", "y: decimal(10,2) vs decimal(12,4)"},
			schema:    "i bigint, f double, d decimal(12,2), s struct<a:bigint,b:date>, x int, y decimal(10,2)",
		},
		{
			name:      "a parquet table gains top-level columns only, and no type",
			format:    "parquet",
			table:     "i int, s struct<a:int>",
			merged:    "i bigint, s struct<a:int,b:string>, c string",
			added:     []string{"c: void -> string"},
			conflicts: []string{"i: int vs bigint", "s.b: void vs string"},
			schema:    "i int, s struct<a:int>, c string",
		},
		{
			name:   "narrower and all-null sources change nothing",
			format: "iceberg",
			table:  "i bigint, d double, s struct<a:bigint,b:string>",
			merged: "i int, d void, s struct<a:tinyint>",
			schema: "i bigint, d double, s struct<a:bigint,b:string>",
		},
		{
			name:      "the strict type policy widens nothing",
			format:    "delta",
			table:     "i int",
			merged:    "i bigint",
			opts:      Options{Types: TypesStrict},
			conflicts: []string{"i: int vs bigint"},
			schema:    "i int",
		},
		{
			name:      "map keys do not change",
			format:    "delta",
			table:     "m map<int,string>",
			merged:    "m map<bigint,string>",
			conflicts: []string{"m.key: int vs bigint"},
			schema:    "m map<int,string>",
		},
		{
			name:   "case-sensitive names add a column of another case",
			format: "delta",
			table:  "id int",
			merged: "ID int",
			opts:   Options{CaseSensitive: true},
			added:  []string{"ID: void -> int"},
			schema: "id int, ID int",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := PlanEvolution(Table{Name: "db.t", Format: tc.format, Schema: mustSchema(t, tc.table), DeltaPreviewWidening: tc.deltaPreview}, mustSchema(t, tc.merged), tc.opts)
			if diff := cmp.Diff(tc.added, changes(e.Added)); diff != "" {
				t.Errorf("added (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.widened, changes(e.Widened)); diff != "" {
				t.Errorf("widened (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conflicts, conflicts(e.Conflicts)); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.properties, e.Properties); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
			// Nullability aside: added fields are nullable, the rest as parsed.
			if got, want := e.Schema.String(), mustSchema(t, tc.schema).String(); got != want {
				t.Errorf("evolved schema\n got %s\nwant %s", got, want)
			}
			if err := e.Err(); (err != nil) != (len(tc.conflicts) > 0) {
				t.Errorf("Err() = %v with %d conflicts", err, len(tc.conflicts))
			}
		})
	}
}

func TestEvolutionStatements(t *testing.T) {
	e := PlanEvolution(Table{Name: "spark_catalog.lake.events", Format: "delta", Schema: mustSchema(t, "id int, `a b` struct<c:int>")},
		mustSchema(t, "id bigint, `a b` struct<c:int, `d``e`:string>, tags array<struct<x:int>>"), Options{})
	want := []string{
		"ALTER TABLE spark_catalog.lake.events SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
		"ALTER TABLE spark_catalog.lake.events ALTER COLUMN `id` TYPE bigint",
		"ALTER TABLE spark_catalog.lake.events ADD COLUMNS (`a b`.`d``e` string, `tags` array<struct<x:int>>)",
	}
	if diff := cmp.Diff(want, e.Statements()); diff != "" {
		t.Errorf("Statements (-want +got):\n%s", diff)
	}
	if !(&Evolution{}).Empty() || e.Empty() {
		t.Errorf("Empty: an empty evolution is, this one is not")
	}
	if got := (&Evolution{Table: "t"}).Statements(); len(got) != 0 {
		t.Errorf("an empty evolution has statements: %q", got)
	}
}

func TestEvolutionJSON(t *testing.T) {
	e := PlanEvolution(Table{Name: "iceberg.db.t", Format: "iceberg", Schema: mustSchema(t, "id int, x int")},
		mustSchema(t, "id bigint, x double, s struct<a:int>"), Options{})
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"table":"iceberg.db.t","format":"iceberg",` +
		`"widen_columns":[{"column":"id","from":"int","to":"bigint"}],` +
		`"add_columns":[{"column":"s","to":"struct\u003ca:int\u003e"}],` +
		`"conflicts":[{"column":"x","table_type":"int","merged_type":"double","reason":"Iceberg does not change int to double (it promotes int to bigint, float to double and a decimal to more digits of the same scale)"}]}`
	if string(got) != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

func TestEvolutionConflictError(t *testing.T) {
	e := PlanEvolution(Table{Name: "lake.events", Format: "parquet", Schema: mustSchema(t, "id int, s struct<a:int>")},
		mustSchema(t, "id bigint, s struct<a:int,b:int>"), Options{})
	err := e.Err()
	var ec *EvolutionConflictError
	if !errors.As(err, &ec) || !errors.Is(err, ErrSchemaConflict) {
		t.Fatalf("Err() = %v, want an *EvolutionConflictError matching ErrSchemaConflict", err)
	}
	for _, want := range []string{
		"lake.events (parquet)",
		`"id" is int in the table and bigint in the sources: a parquet table changes no column's type`,
		`"s.b" is new (int): a parquet table gains top-level columns only`,
		"merge into a new table",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// Delta 3's refusal says what that Delta widens and that Delta 4 widens
// more, so a user on Spark 3.5 knows why a change Delta 4 makes is refused.
func TestEvolutionConflictDelta3(t *testing.T) {
	e := PlanEvolution(Table{Name: "lake.events", Format: "delta", Schema: mustSchema(t, "id int"), DeltaPreviewWidening: true},
		mustSchema(t, "id bigint"), Options{})
	want := `"id" is int in the table and bigint in the sources: the server's Delta 3 (Spark 3.5) does not change int to bigint (its type widening preview widens tinyint to smallint and int, smallint to int; Delta 4.0 on Spark 4 widens more)`
	if err := e.Err(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Err() = %v, want it to say %q", err, want)
	}
	if len(e.Properties) != 0 || len(e.Widened) != 0 {
		t.Errorf("a refused widening still changes the table: properties %v, widened %v", e.Properties, changes(e.Widened))
	}
}
