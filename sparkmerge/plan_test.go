package sparkmerge

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewPlanTargets(t *testing.T) {
	cases := []struct {
		name    string
		sources []Source
		opts    Options
		want    string // target DDL
	}{{
		name: "case-insensitive, first spelling wins",
		sources: []Source{
			{Name: "a", Schema: schema(t, "Id int, name string")},
			{Name: "b", Schema: schema(t, "ID bigint, NAME string, extra date")},
		},
		want: "Id bigint, name string, extra date",
	}, {
		name: "case-sensitive keeps both",
		sources: []Source{
			{Name: "a", Schema: schema(t, "Id int")},
			{Name: "b", Schema: schema(t, "id int")},
		},
		opts: Options{CaseSensitive: true},
		want: "Id int, id int",
	}, {
		name: "rename before matching (seed 003's typo)",
		sources: []Source{
			{Name: "old", Schema: schema(t, "name string, hight double")},
			{Name: "new", Schema: schema(t, "name string, height double, weight double")},
		},
		opts: Options{Renames: map[string]string{"HIGHT": "height"}},
		want: "name string, height double, weight double",
	}, {
		name: "snake_case normalizer",
		sources: []Source{
			{Name: "a", Schema: schema(t, "ReadingId string, `Tide Number` int")},
			{Name: "b", Schema: schema(t, "reading_id string, tide_number bigint")},
		},
		opts: Options{Normalize: NormalizeSnakeCase},
		want: "reading_id string, tide_number bigint",
	}, {
		name: "trim normalizer",
		sources: []Source{
			{Name: "a", Schema: schema(t, "` id ` int")},
			{Name: "b", Schema: schema(t, "id int")},
		},
		opts: Options{Normalize: NormalizeTrim},
		want: "id int",
	}, {
		name: "intersect keeps common columns",
		sources: []Source{
			{Name: "a", Schema: schema(t, "x int, y int, z int")},
			{Name: "b", Schema: schema(t, "z bigint, x int")},
		},
		opts: Options{Missing: MissingIntersect},
		want: "x int, z bigint",
	}, {
		name: "sorted",
		sources: []Source{
			{Name: "a", Schema: schema(t, "b int, c int")},
			{Name: "b", Schema: schema(t, "a int")},
		},
		opts: Options{Order: OrderSorted},
		want: "a int, b int, c int",
	}, {
		name: "order by reference, others after",
		sources: []Source{
			{Name: "a", Schema: schema(t, "x int, y int, z int")},
			{Name: "b", Schema: schema(t, "z int, w int")},
		},
		opts: Options{Order: OrderReference, ReferenceSource: "b"},
		want: "z int, w int, x int, y int",
	}, {
		name: "external reference: its types and order, extra dropped",
		sources: []Source{
			{Name: "a", Schema: schema(t, "id int, name string, junk int")},
			{Name: "b", Schema: schema(t, "name string, id bigint")},
		},
		opts: Options{Missing: MissingReference, Reference: ptr(schema(t, "id bigint NOT NULL, name string, created timestamp")), DropExtra: true},
		// Sources can give null ids: the target says so.
		want: "id bigint, name string, created timestamp",
	}, {
		name: "reference source: union types widened",
		sources: []Source{
			{Name: "old", Schema: schema(t, "name string, age int")},
			{Name: "new", Schema: schema(t, "name string, age bigint, weight double")},
		},
		opts: Options{Missing: MissingReference, ReferenceSource: "new"},
		want: "name string, age bigint, weight double",
	}, {
		name: "void widens to anything; all-void stays void",
		sources: []Source{
			{Name: "a", Schema: schema(t, "x void, y void")},
			{Name: "b", Schema: schema(t, "x decimal(12,4), y void")},
		},
		want: "x decimal(12,4), y void",
	}, {
		name: "zero-column source pads everything",
		sources: []Source{
			{Name: "empty", Schema: Schema{}},
			{Name: "b", Schema: schema(t, "x int NOT NULL")},
		},
		want: "x int",
	}, {
		name: "duplicate source names are separate sources",
		sources: []Source{
			{Name: "same", Schema: schema(t, "x int")},
			{Name: "same", Schema: schema(t, "y int")},
		},
		opts: Options{SourceColumn: "_source"},
		want: "x int, y int, _source string NOT NULL",
	}, {
		name: "string policy",
		sources: []Source{
			{Name: "a", Schema: schema(t, "x int, y date, z int")},
			{Name: "b", Schema: schema(t, "x bigint, y boolean, z int")},
		},
		opts: Options{Types: TypesString},
		want: "x string, y string, z int",
	}, {
		name: "nested struct drift inside arrays and maps",
		sources: []Source{
			{Name: "a", Schema: schema(t, "items array<struct<sku:string,qty:int>>, attrs map<string,struct<v:int>>")},
			{Name: "b", Schema: schema(t, "items array<struct<qty:bigint,price:decimal(10,2)>>, attrs map<string,struct<w:string>>")},
		},
		want: "items array<struct<sku:string,qty:bigint,price:decimal(10,2)>>, attrs map<string,struct<v:int,w:string>>",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.sources, c.opts)
			if err != nil {
				t.Fatalf("NewPlan: %v", err)
			}
			if diff := cmp.Diff(schema(t, c.want), p.Target); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestNewPlanSourcePlans(t *testing.T) {
	sources := []Source{
		{Name: "old.csv", Schema: schema(t, "name string, Age int, hight double, legacy string")},
		{Name: "new.csv", Schema: schema(t, "name string, age bigint, height double, flag boolean, weight double")},
		{Name: "odd.csv", Schema: schema(t, "name string, flag int")},
	}
	p, err := NewPlan(sources, Options{Missing: MissingReference, ReferenceSource: "new.csv", DropExtra: true,
		Renames: map[string]string{"hight": "height"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &Plan{
		Target: schema(t, "name string, age bigint, height double, flag string, weight double"),
		Sources: []SourcePlan{
			{Name: "old.csv", Schema: sources[0].Schema, Columns: []int{0, 1, 2, -1, -1}},
			{Name: "new.csv", Schema: sources[1].Schema, Columns: []int{0, 1, 2, 3, 4}},
			{Name: "odd.csv", Schema: sources[2].Schema, Columns: []int{0, -1, -1, 1, -1}},
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	wantDiag := []Diagnostics{{
		Added:   []string{"flag", "weight"},
		Widened: []TypeChange{{Column: "age", From: Simple(KindInt), To: Simple(KindLong)}},
		Dropped: []string{"legacy"},
		Renamed: []Rename{{From: "Age", To: "age"}, {From: "hight", To: "height"}},
	}, {
		Conflicts: []TypeChange{{Column: "flag", From: Simple(KindBoolean), To: Simple(KindString)}},
	}, {
		Added:     []string{"age", "height", "weight"},
		Conflicts: []TypeChange{{Column: "flag", From: Simple(KindInt), To: Simple(KindString)}},
	}}
	for i, w := range wantDiag {
		if diff := cmp.Diff(w, p.Diagnostics(i)); diff != "" {
			t.Errorf("Diagnostics(%d) (-want +got):\n%s", i, diff)
		}
	}
	wantExprs := []string{"`name`", "CAST(`Age` AS bigint) AS `age`", "`hight` AS `height`",
		"CAST(NULL AS string) AS `flag`", "CAST(NULL AS double) AS `weight`"}
	if diff := cmp.Diff(wantExprs, p.SelectExprs(0)); diff != "" {
		t.Errorf("SelectExprs(0) (-want +got):\n%s", diff)
	}
	wantProj := []Projection{
		{Kind: ProjectTake, Column: "name", Source: "name", From: Simple(KindString), To: Simple(KindString), Nullable: true},
		{Kind: ProjectNull, Column: "age", To: Simple(KindLong)},
		{Kind: ProjectNull, Column: "height", To: Simple(KindDouble)},
		{Kind: ProjectCast, Column: "flag", Source: "flag", From: Simple(KindInt), To: Simple(KindString), Nullable: true},
		{Kind: ProjectNull, Column: "weight", To: Simple(KindDouble)},
	}
	if diff := cmp.Diff(wantProj, p.Projections(2)); diff != "" {
		t.Errorf("Projections(2) (-want +got):\n%s", diff)
	}
}

func TestSelectExprsNested(t *testing.T) {
	sources := []Source{
		{Name: "a", Schema: schema(t, "s struct<`a b`:int,c:string>, arr array<struct<x:int>>, m map<int,struct<v:int>>, n struct<p:int> NOT NULL, k map<int,string>")},
		{Name: "b", Schema: schema(t, "s struct<c:string,d:date>, arr array<struct<x:bigint,y:string>>, m map<bigint,struct<v:int,w:int>>, n struct<p:int,q:int> NOT NULL, k map<bigint,string>")},
	}
	p, err := NewPlan(sources, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CASE WHEN `s` IS NULL THEN NULL ELSE named_struct('a b', `s`.`a b`, 'c', `s`.`c`, 'd', CAST(NULL AS date)) END AS `s`",
		"transform(`arr`, x0 -> CASE WHEN x0 IS NULL THEN NULL ELSE named_struct('x', CAST(x0.`x` AS bigint), 'y', CAST(NULL AS string)) END) AS `arr`",
		"transform_keys(transform_values(`m`, (k0, v0) -> CASE WHEN v0 IS NULL THEN NULL ELSE named_struct('v', v0.`v`, 'w', CAST(NULL AS int)) END), (k0, v0) -> CAST(k0 AS bigint)) AS `m`",
		"named_struct('p', `n`.`p`, 'q', CAST(NULL AS int)) AS `n`",
		"CAST(`k` AS map<bigint,string>) AS `k`",
	}
	if diff := cmp.Diff(want, p.SelectExprs(0)); diff != "" {
		t.Errorf("SelectExprs(0) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s.d", "arr.element.y", "m.value.w", "n.q"}, p.Diagnostics(0).Added); diff != "" {
		t.Errorf("nested added (-want +got):\n%s", diff)
	}
}

func TestNewPlanErrors(t *testing.T) {
	two := func(a, b string) []Source {
		return []Source{{Name: "a.csv", Schema: schema(t, a)}, {Name: "b.csv", Schema: schema(t, b)}}
	}
	cases := []struct {
		name    string
		sources []Source
		opts    Options
		check   func(t *testing.T, err error)
		msg     []string // substrings of the message
	}{{
		name: "no sources",
		check: func(t *testing.T, err error) {
			if !errors.Is(err, ErrNoSources) {
				t.Errorf("got %v, want ErrNoSources", err)
			}
		},
	}, {
		name:    "widen conflict names column, sources, types and the way out",
		sources: two("x int, y array<int>", "x boolean, y int"),
		check: func(t *testing.T, err error) {
			var e *TypeConflictError
			if !errors.As(err, &e) || !errors.Is(err, ErrSchemaConflict) {
				t.Fatalf("got %v, want *TypeConflictError", err)
			}
			want := []ColumnConflict{{Column: "y", Path: "y", Sources: []string{"a.csv", "b.csv"},
				Types: []DataType{ArrayOf(Simple(KindInt), true), Simple(KindInt)}}}
			if diff := cmp.Diff(want, e.Conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		},
		msg: []string{`"y"`, "array<int> in \"a.csv\"", "int in \"b.csv\"", "Options.Types = TypesString"},
	}, {
		name:    "nested conflict has a path",
		sources: two("s struct<a:int>", "s struct<a:array<int>>"),
		check: func(t *testing.T, err error) {
			var e *TypeConflictError
			if !errors.As(err, &e) || e.Conflicts[0].Path != "s.a" {
				t.Fatalf("got %#v, want a conflict at s.a", err)
			}
		},
		msg: []string{"(at s.a)"},
	}, {
		name:    "strict lists every column",
		sources: two("x int, y date, z string", "x bigint, y timestamp, z string"),
		opts:    Options{Types: TypesStrict},
		check: func(t *testing.T, err error) {
			var e *TypeConflictError
			if !errors.As(err, &e) || !errors.Is(err, ErrSchemaConflict) {
				t.Fatalf("got %v", err)
			}
			var cols []string
			for _, c := range e.Conflicts {
				cols = append(cols, c.Column)
			}
			if diff := cmp.Diff([]string{"x", "y"}, cols); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
		},
		msg: []string{"strict", "2 columns differ", "int in \"a.csv\" vs bigint in \"b.csv\""},
	}, {
		name:    "fail lists what each source lacks",
		sources: []Source{{Name: "a", Schema: schema(t, "x int, y int")}, {Name: "b", Schema: schema(t, "x int, z int")}, {Name: "c", Schema: schema(t, "x int, y int, z int")}},
		opts:    Options{Missing: MissingFail},
		check: func(t *testing.T, err error) {
			var e *MissingColumnsError
			if !errors.As(err, &e) || !errors.Is(err, ErrSchemaConflict) {
				t.Fatalf("got %v", err)
			}
			want := []SourceColumns{{Source: "a", Index: 0, Missing: []string{"z"}}, {Source: "b", Index: 1, Missing: []string{"y"}}}
			if diff := cmp.Diff(want, e.Sources); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
		msg: []string{`source 1 "a" lacks "z"`, "Options.Missing = MissingFill"},
	}, {
		name:    "reference without DropExtra lists extra columns",
		sources: two("x int, junk int", "x int"),
		opts:    Options{Missing: MissingReference, ReferenceSource: "b.csv"},
		check: func(t *testing.T, err error) {
			var e *MissingColumnsError
			if !errors.As(err, &e) {
				t.Fatalf("got %v", err)
			}
			want := []SourceColumns{{Source: "a.csv", Index: 0, Extra: []string{"junk"}}}
			if diff := cmp.Diff(want, e.Sources); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
		msg: []string{"DropExtra"},
	}, {
		name:    "type that does not fit an external reference",
		sources: two("x bigint", "x int"),
		opts:    Options{Missing: MissingReference, Reference: ptr(schema(t, "x int"))},
		check: func(t *testing.T, err error) {
			var e *TypeConflictError
			if !errors.As(err, &e) || !e.Reference || !errors.Is(err, ErrSchemaConflict) {
				t.Fatalf("got %v", err)
			}
		},
		msg: []string{"does not fit the reference", "bigint in \"a.csv\""},
	}, {
		// The table a merge is appended to is named, with what fits a
		// column to it (found in the field: "the reference" and "change
		// the reference" where no reference was given).
		name:    "type that does not fit the target table",
		sources: two("x bigint", "x int"),
		opts:    Options{Missing: MissingReference, Reference: ptr(schema(t, "x int")), ReferenceTarget: "table lake.events"},
		check: func(t *testing.T, err error) {
			var e *TypeConflictError
			if !errors.As(err, &e) || !e.Reference || e.Target != "table lake.events" || e.Conflicts[0].Sources[0] != "(table lake.events)" {
				t.Fatalf("got %v", err)
			}
		},
		msg: []string{"does not fit table lake.events", `int in "(table lake.events)"`, "bigint in \"a.csv\"", "Options.Hints", "Target.Evolve"},
	}, {
		// A target that evolves already cannot widen the type: the
		// error does not say to evolve it (found in the field).
		name:    "type that does not fit a target that evolves",
		sources: two("x bigint", "x int"),
		opts:    Options{Missing: MissingReference, Reference: ptr(schema(t, "x int")), ReferenceTarget: "the dataset at /lake/events", ReferenceEvolves: true},
		check: func(t *testing.T, err error) {
			var e *TypeConflictError
			if !errors.As(err, &e) || !e.Evolves || strings.Contains(err.Error(), "widen it there") {
				t.Fatalf("got %v", err)
			}
		},
		msg: []string{"does not fit the dataset at /lake/events", "its format cannot widen the type there (Target.Evolve is on)", "Options.Hints"},
	}, {
		name:    "duplicate after case folding",
		sources: two("x int", "Age int, age int"),
		check: func(t *testing.T, err error) {
			var e *DuplicateColumnError
			if !errors.As(err, &e) {
				t.Fatalf("got %v", err)
			}
			want := &DuplicateColumnError{Source: "b.csv", Index: 1, Columns: []string{"Age", "age"}, Name: "age"}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		},
		msg: []string{`source 2 "b.csv"`, `"Age" and "age"`},
	}, {
		name:    "duplicate after rename",
		sources: two("hight int, height int", "x int"),
		opts:    Options{Renames: map[string]string{"hight": "height"}},
		check: func(t *testing.T, err error) {
			var e *DuplicateColumnError
			if !errors.As(err, &e) || e.Columns[0] != "hight" || e.Columns[1] != "height" {
				t.Fatalf("got %v", err)
			}
		},
	}, {
		name:    "duplicate nested field",
		sources: two("s struct<a:int,A:int>", "x int"),
		check: func(t *testing.T, err error) {
			var e *DuplicateColumnError
			if !errors.As(err, &e) {
				t.Fatalf("got %v", err)
			}
		},
		msg: []string{"s.a", "s.A"},
	}, {
		name:    "empty name",
		sources: []Source{{Name: "a", Schema: Schema{Fields: []Field{NewField("x", Simple(KindInt)), NewField("", Simple(KindInt))}}}},
		check: func(t *testing.T, err error) {
			var e *InvalidNameError
			if !errors.As(err, &e) || e.Position != 2 || e.Source != "a" {
				t.Fatalf("got %v", err)
			}
		},
		msg: []string{"column 2", "empty name"},
	}, {
		name:    "empty after trimming",
		sources: []Source{{Name: "a", Schema: Schema{Fields: []Field{NewField("  ", Simple(KindInt))}}}},
		opts:    Options{Normalize: NormalizeTrim},
		check: func(t *testing.T, err error) {
			var e *InvalidNameError
			if !errors.As(err, &e) || e.Position != 1 {
				t.Fatalf("got %v", err)
			}
		},
	}, {
		name:    "provenance column collides",
		sources: two("_source string", "x int"),
		opts:    Options{SourceColumn: "_SOURCE"},
		check:   wantOptionError("source-column"),
	}, {
		name:    "reference policy without reference",
		sources: two("x int", "x int"),
		opts:    Options{Missing: MissingReference},
		check:   wantOptionError("reference"),
	}, {
		name:    "unused reference",
		sources: two("x int", "x int"),
		opts:    Options{ReferenceSource: "a.csv"},
		check:   wantOptionError("reference"),
	}, {
		name:    "unknown reference source",
		sources: two("x int", "x int"),
		opts:    Options{Missing: MissingReference, ReferenceSource: "nope"},
		check:   wantOptionError("reference-source"),
	}, {
		name:    "drop extra without reference",
		sources: two("x int", "x int"),
		opts:    Options{DropExtra: true},
		check:   wantOptionError("drop-extra"),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.sources, c.opts)
			if err == nil {
				t.Fatalf("NewPlan succeeded with target %v; want an error", p.Target)
			}
			c.check(t, err)
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not contain %q", err, m)
				}
			}
		})
	}
}

func wantOptionError(option string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		var e *OptionError
		if !errors.As(err, &e) || e.Option != option {
			t.Errorf("got %v, want an *OptionError for %s", err, option)
		}
	}
}

func TestSQLErrors(t *testing.T) {
	p, err := NewPlan([]Source{{Name: "a", Schema: schema(t, "x int")}, {Name: "b", Schema: schema(t, "x int")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SQL([]string{"t1"}); err == nil {
		t.Error("SQL with one relation for two sources succeeded")
	}
	if _, err := p.SQL([]string{"t1", " "}); err == nil {
		t.Error("SQL with an empty relation succeeded")
	}
	empty, err := NewPlan([]Source{{Name: "a"}, {Name: "b"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.SQL([]string{"t1", "t2"}); err == nil {
		t.Error("SQL over zero columns succeeded")
	}
	withSource, err := NewPlan([]Source{{Name: "it's"}}, Options{SourceColumn: "src"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := withSource.SQL([]string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT 'it\\'s' AS `src`\nFROM t"; got != want {
		t.Errorf("SQL = %q, want %q", got, want)
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	for p := TypesWiden; p <= TypesString; p++ {
		if got, err := ParseTypePolicy(p.String()); err != nil || got != p {
			t.Errorf("ParseTypePolicy(%q) = %v, %v", p, got, err)
		}
	}
	for p := MissingFill; p <= MissingReference; p++ {
		if got, err := ParseMissingPolicy(p.String()); err != nil || got != p {
			t.Errorf("ParseMissingPolicy(%q) = %v, %v", p, got, err)
		}
	}
	for p := OrderFirstSeen; p <= OrderReference; p++ {
		if got, err := ParseOrderPolicy(p.String()); err != nil || got != p {
			t.Errorf("ParseOrderPolicy(%q) = %v, %v", p, got, err)
		}
	}
	for n := NameNormalizer(0); n < 8; n++ {
		if got, err := ParseNameNormalizer(n.String()); err != nil || got != n {
			t.Errorf("ParseNameNormalizer(%q) = %v, %v", n, got, err)
		}
	}
	if _, err := ParseTypePolicy("wide"); err == nil {
		t.Error("ParseTypePolicy(wide) succeeded")
	}
	if _, err := ParseNameNormalizer("trim,upper"); err == nil {
		t.Error("ParseNameNormalizer(trim,upper) succeeded")
	}
	var tp TypePolicy
	if err := tp.UnmarshalText([]byte("STRICT")); err != nil || tp != TypesStrict {
		t.Errorf("UnmarshalText(STRICT) = %v, %v", tp, err)
	}
	m, err := ParseRenames([]string{"hight=height", "a=b"})
	if diff := cmp.Diff(map[string]string{"hight": "height", "a": "b"}, m); diff != "" || err != nil {
		t.Errorf("ParseRenames: %v (-want +got):\n%s", err, diff)
	}
	for _, bad := range []string{"x", "=y", "x="} {
		if _, err := ParseRenames([]string{bad}); err == nil {
			t.Errorf("ParseRenames(%q) succeeded", bad)
		}
	}
}

func TestSnakeCase(t *testing.T) {
	cases := map[string]string{
		"TideNumber":    "tide_number",
		"ReadingId":     "reading_id",
		"HTTPServer":    "http_server",
		"Time UTC":      "time_utc",
		"already_snake": "already_snake",
		"_id":           "_id",
		"a--b  c":       "a_b_c",
		"Höhe Max":      "höhe_max",
		"col2Value":     "col2_value",
		"trailing!":     "trailing",
	}
	for in, want := range cases {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// A conflict the policy resolved (string wins over numbers) is said as
// what happens to the values, not as an unresolved "conflict".
func TestPlanTextSaysResolvedConflictsAsCasts(t *testing.T) {
	p, err := NewPlan([]Source{
		{Name: "a", Schema: Schema{Fields: []Field{{Name: "amount", Type: DataType{Kind: KindInt}, Nullable: true}}}},
		{Name: "b", Schema: Schema{Fields: []Field{{Name: "amount", Type: DataType{Kind: KindString}, Nullable: true}}}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := p.String()
	if !strings.Contains(text, "cast to string (types conflicted) amount int -> string") || strings.Contains(text, "conflicts amount") {
		t.Errorf("plan text:\n%s", text)
	}
}

// A source without rows (a CSV file of its header alone, every column a
// string to Spark's inference) carries no evidence of its columns' types:
// they take the others' (with a typed null, there being no value to
// cast, not even where Spark casts no string, as to a struct), so that
// one empty drop does not turn the merge's typed columns into strings
// ("string wins" with a file of rows); a column only it has keeps its
// type. With no source of rows at all, its types stand.
func TestNewPlanSourceWithoutRows(t *testing.T) {
	sources := []Source{
		{Name: "a.csv", Schema: schema(t, "id int, ts timestamp, s struct<x:int>")},
		{Name: "h.csv", Schema: schema(t, "id string, ts string, extra string, s string"), NoRows: true},
		{Name: "b.json", Schema: schema(t, "id bigint")},
	}
	p, err := NewPlan(sources, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Target.String(), "id bigint, ts timestamp, s struct<x:int>, extra string"; got != want {
		t.Errorf("target %s, want %s", got, want)
	}
	// Typed nulls, guarded: a value there would be rows the file gained
	// since it was planned without.
	guard := func(col, t string) string {
		return "CASE WHEN `" + col + "` IS NULL THEN CAST(NULL AS " + t + ") ELSE raise_error(concat('sparkmerge: column " + col + ": ', 'h.csv', ' had no value there when the merge was planned and now has the value ', `" + col + "`, ': plan the merge again')) END AS `" + col + "`"
	}
	wantExprs := []string{guard("id", "bigint"), guard("ts", "timestamp"), guard("s", "struct<x:int>"), "`extra`"}
	if diff := cmp.Diff(wantExprs, p.SelectExprs(1)); diff != "" {
		t.Errorf("SelectExprs of the source without rows (-want +got):\n%s", diff)
	}
	wantDiag := Diagnostics{Untyped: []TypeChange{
		{Column: "id", From: Simple(KindString), To: Simple(KindLong)},
		{Column: "ts", From: Simple(KindString), To: Simple(KindTimestamp)},
		{Column: "s", From: Simple(KindString), To: mustType(t, "struct<x:int>")},
	}}
	if diff := cmp.Diff(wantDiag, p.Diagnostics(1)); diff != "" {
		t.Errorf("Diagnostics (-want +got):\n%s", diff)
	}
	text := p.String()
	if !strings.Contains(text, "h.csv: 4 columns; no rows; typed as the other sources id string -> bigint, ts string -> timestamp, s string -> struct<x:int>") || !strings.Contains(text, "+ null (no value)") {
		t.Errorf("plan text:\n%s", text)
	}
	// The same file with rows: string wins, as before.
	withRows := []Source{sources[0], sources[1]}
	withRows[0].Schema = schema(t, "id int, ts timestamp")
	withRows[1].NoRows = false
	if p, err = NewPlan(withRows, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Target.String(), "id string, ts string, extra string, s string"; got != want {
		t.Errorf("with rows: target %s, want %s", got, want)
	}
	// Only sources without rows: their types stand.
	p, err = NewPlan([]Source{sources[1], {Name: "h2.csv", Schema: schema(t, "id int"), NoRows: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Target.String(), "id string, ts string, extra string, s string"; got != want {
		t.Errorf("no rows anywhere: target %s, want %s", got, want)
	}
}

// A column whose values were all empty in one file (a sparse column on a
// quiet day), typed a string by Spark's inference from no value, is no
// evidence either (Source.NoValues): the column takes the others' type,
// that file's projection is a guarded typed null, the file's other
// columns keep their types, an append to a table of numbers fits, and
// --types strict sees no conflict. A column empty in every file keeps its
// type; the same file with values in the column makes it a string, as
// before.
func TestNewPlanColumnWithoutValues(t *testing.T) {
	full := Source{Name: "full.csv", Schema: schema(t, "id int, amount int, note string")}
	sparse := Source{Name: "sparse.csv", Schema: schema(t, "id string, amount string, note string"), NoValues: []int{1}}
	sparse.Schema.Fields[0].Type = Simple(KindString) // a column with values: string wins over int
	p, err := NewPlan([]Source{full, sparse}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Target.String(), "id string, amount int, note string"; got != want {
		t.Errorf("target %s, want %s", got, want)
	}
	want := []string{"`id`", "CASE WHEN `amount` IS NULL THEN CAST(NULL AS int) ELSE raise_error(concat('sparkmerge: column amount: ', 'sparse.csv', ' had no value there when the merge was planned and now has the value ', `amount`, ': plan the merge again')) END AS `amount`", "`note`"}
	if diff := cmp.Diff(want, p.SelectExprs(1)); diff != "" {
		t.Errorf("SelectExprs of the sparse file (-want +got):\n%s", diff)
	}
	if d := p.Diagnostics(1); !cmp.Equal(d.Untyped, []TypeChange{{Column: "amount", From: Simple(KindString), To: Simple(KindInt)}}) || len(d.Conflicts) != 0 {
		t.Errorf("Diagnostics of the sparse file: %+v", d)
	}
	if text := p.String(); !strings.Contains(text, "sparse.csv: 3 columns; typed as the other sources amount string -> int") || !strings.Contains(text, "+ null (no value)") {
		t.Errorf("plan text:\n%s", text)
	}

	sparse.Schema = schema(t, "id int, amount string, note string")
	if _, err := NewPlan([]Source{full, sparse}, Options{Types: TypesStrict}); err != nil {
		t.Errorf("strict: %v", err)
	}
	if _, err := NewPlan([]Source{sparse}, Options{Missing: MissingReference, Reference: ptr(schema(t, "id int, amount int, note string"))}); err != nil {
		t.Errorf("appended to a table of ints: %v", err)
	}
	if p, err := NewPlan([]Source{sparse, {Name: "sparse2.csv", Schema: schema(t, "amount string"), NoValues: []int{0}}}, Options{}); err != nil || p.Target.String() != "id int, amount string, note string" {
		t.Errorf("empty everywhere: %v, %v", p, err)
	}
	sparse.NoValues = nil
	if p, err := NewPlan([]Source{full, sparse}, Options{}); err != nil || p.Target.String() != "id int, amount string, note string" {
		t.Errorf("with values: %v, %v", p, err)
	}
}

// A table's struct fields in another order than the source's fit it by
// name: Spark's JSON inference sorts a struct's fields by name, so a table
// of struct<name, age> refused every append of JSON (found in the field,
// Delta and Iceberg, also after Target.Evolve added a field). The
// projection rebuilds the struct in the table's order.
func TestNewPlanReferenceStructFieldsByName(t *testing.T) {
	cases := []struct {
		name, source, table string
		caseSensitive       bool
		want                string // the source's select expression; "" for a conflict
	}{{
		name:   "reordered",
		source: "user struct<age:bigint,name:string>",
		table:  "user struct<name:string,age:bigint>",
		want:   "CASE WHEN `user` IS NULL THEN NULL ELSE named_struct('name', `user`.`name`, 'age', `user`.`age`) END AS `user`",
	}, {
		name:   "reordered and widened",
		source: "user struct<age:int,name:string>",
		table:  "user struct<name:string,age:bigint>",
		want:   "CASE WHEN `user` IS NULL THEN NULL ELSE named_struct('name', `user`.`name`, 'age', CAST(`user`.`age` AS bigint)) END AS `user`",
	}, {
		name:   "reordered in an array, names of another case",
		source: "user array<struct<AGE:bigint,name:string>>",
		table:  "user array<struct<name:string,age:bigint>>",
		want:   "transform(`user`, x0 -> CASE WHEN x0 IS NULL THEN NULL ELSE named_struct('name', x0.`name`, 'age', x0.`AGE`) END) AS `user`",
	}, {
		name:          "names of another case, case-sensitive",
		source:        "user struct<AGE:bigint,name:string>",
		table:         "user struct<name:string,age:bigint>",
		caseSensitive: true,
	}, {
		name:   "a field the table lacks",
		source: "user struct<age:bigint,name:string,zip:string>",
		table:  "user struct<name:string,age:bigint>",
	}, {
		name:   "a field of another type",
		source: "user struct<age:string,name:string>",
		table:  "user struct<name:string,age:bigint>",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Missing: MissingReference, Reference: ptr(schema(t, c.table)), ReferenceTarget: "table lake.users", CaseSensitive: c.caseSensitive}
			p, err := NewPlan([]Source{{Name: "n1.json", Schema: schema(t, c.source)}}, opts)
			if c.want == "" {
				var e *TypeConflictError
				if !errors.As(err, &e) {
					t.Fatalf("got %v, want a type conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Target.String(); got != schema(t, c.table).String() {
				t.Errorf("target %s, want the table's %s", got, c.table)
			}
			if diff := cmp.Diff([]string{c.want}, p.SelectExprs(0)); diff != "" {
				t.Errorf("SelectExprs(0) (-want +got):\n%s", diff)
			}
		})
	}
}

// A table evolved to take a nested field whose name sorts before the
// table's (Target.Evolve) takes the JSON struct, whose fields are sorted
// by name: it failed, the table's evolved struct<name,age> against the
// source's struct<age,name> (found in the field).
func TestEvolvedStructTakesFieldsInAnotherOrder(t *testing.T) {
	source := []Source{{Name: "n2.json", Schema: schema(t, "id bigint, user struct<age:bigint,name:string>")}}
	e := PlanEvolution(Table{Name: "lake.users", Format: FormatDelta, Schema: schema(t, "id bigint, user struct<name:string>")}, source[0].Schema, Options{})
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(source, Options{Missing: MissingReference, Reference: &e.Schema, ReferenceTarget: "table lake.users"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Target.String(), schema(t, "id bigint, user struct<name:string,age:bigint>").String(); got != want {
		t.Errorf("target %s, want %s", got, want)
	}
}
