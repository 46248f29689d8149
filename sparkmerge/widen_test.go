package sparkmerge

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wideningMatrix documents what two sources' column types widen to under
// the default policy. want "error" means no common type. differs marks the
// pairs where Spark 4.0's own union (ANSI mode) gives something else: the
// deliberate string rule (Spark: bigint, double, boolean, binary, date or
// timestamp, a cast that can fail at run time, or an error for boolean with
// a number), struct merging by name (Spark: error), and decimals whose
// common type needs more than 38 digits (Spark: a decimal(38,s) that
// rounds every value; see TestWiderTypeLossless).
var wideningMatrix = []struct {
	a, b    string
	want    string
	differs bool
}{
	{"boolean", "boolean", "boolean", false},
	{"boolean", "tinyint", "string", true},
	{"boolean", "smallint", "string", true},
	{"boolean", "int", "string", true},
	{"boolean", "bigint", "string", true},
	{"boolean", "float", "string", true},
	{"boolean", "double", "string", true},
	{"boolean", "decimal(10,2)", "string", true},
	{"boolean", "decimal(12,4)", "string", true},
	{"boolean", "decimal(38,0)", "string", true},
	{"boolean", "string", "string", true},
	{"boolean", "binary", "error", false},
	{"boolean", "date", "error", false},
	{"boolean", "timestamp", "error", false},
	{"boolean", "timestamp_ntz", "error", false},
	{"boolean", "void", "boolean", false},

	{"tinyint", "tinyint", "tinyint", false},
	{"tinyint", "smallint", "smallint", false},
	{"tinyint", "int", "int", false},
	{"tinyint", "bigint", "bigint", false},
	{"tinyint", "float", "double", false},
	{"tinyint", "double", "double", false},
	{"tinyint", "decimal(10,2)", "decimal(10,2)", false},
	{"tinyint", "decimal(12,4)", "decimal(12,4)", false},
	{"tinyint", "decimal(38,0)", "decimal(38,0)", false},
	{"tinyint", "string", "string", true},
	{"tinyint", "binary", "error", false},
	{"tinyint", "date", "error", false},
	{"tinyint", "timestamp", "error", false},
	{"tinyint", "timestamp_ntz", "error", false},
	{"tinyint", "void", "tinyint", false},

	{"smallint", "smallint", "smallint", false},
	{"smallint", "int", "int", false},
	{"smallint", "bigint", "bigint", false},
	{"smallint", "float", "double", false},
	{"smallint", "double", "double", false},
	{"smallint", "decimal(10,2)", "decimal(10,2)", false},
	{"smallint", "decimal(12,4)", "decimal(12,4)", false},
	{"smallint", "decimal(38,0)", "decimal(38,0)", false},
	{"smallint", "string", "string", true},
	{"smallint", "binary", "error", false},
	{"smallint", "date", "error", false},
	{"smallint", "timestamp", "error", false},
	{"smallint", "timestamp_ntz", "error", false},
	{"smallint", "void", "smallint", false},

	{"int", "int", "int", false},
	{"int", "bigint", "bigint", false},
	{"int", "float", "double", false},
	{"int", "double", "double", false},
	{"int", "decimal(10,2)", "decimal(12,2)", false},
	{"int", "decimal(12,4)", "decimal(14,4)", false},
	{"int", "decimal(38,0)", "decimal(38,0)", false},
	{"int", "string", "string", true},
	{"int", "binary", "error", false},
	{"int", "date", "error", false},
	{"int", "timestamp", "error", false},
	{"int", "timestamp_ntz", "error", false},
	{"int", "void", "int", false},

	{"bigint", "bigint", "bigint", false},
	{"bigint", "float", "double", false},
	{"bigint", "double", "double", false},
	{"bigint", "decimal(10,2)", "decimal(22,2)", false},
	{"bigint", "decimal(12,4)", "decimal(24,4)", false},
	{"bigint", "decimal(38,0)", "decimal(38,0)", false},
	{"bigint", "string", "string", true},
	{"bigint", "binary", "error", false},
	{"bigint", "date", "error", false},
	{"bigint", "timestamp", "error", false},
	{"bigint", "timestamp_ntz", "error", false},
	{"bigint", "void", "bigint", false},

	{"float", "float", "float", false},
	{"float", "double", "double", false},
	{"float", "decimal(10,2)", "double", false},
	{"float", "decimal(12,4)", "double", false},
	{"float", "decimal(38,0)", "double", false},
	{"float", "string", "string", true},
	{"float", "binary", "error", false},
	{"float", "date", "error", false},
	{"float", "timestamp", "error", false},
	{"float", "timestamp_ntz", "error", false},
	{"float", "void", "float", false},

	{"double", "double", "double", false},
	{"double", "decimal(10,2)", "double", false},
	{"double", "decimal(12,4)", "double", false},
	{"double", "decimal(38,0)", "double", false},
	{"double", "string", "string", true},
	{"double", "binary", "error", false},
	{"double", "date", "error", false},
	{"double", "timestamp", "error", false},
	{"double", "timestamp_ntz", "error", false},
	{"double", "void", "double", false},

	{"decimal(10,2)", "decimal(10,2)", "decimal(10,2)", false},
	{"decimal(10,2)", "decimal(12,4)", "decimal(12,4)", false},
	// 38 integer digits + 2 fraction digits > 38: Spark 4.0 keeps the
	// integer digits (SPARK-45905).
	{"decimal(10,2)", "decimal(38,0)", "error", true},
	{"decimal(10,2)", "string", "string", true},
	{"decimal(10,2)", "binary", "error", false},
	{"decimal(10,2)", "date", "error", false},
	{"decimal(10,2)", "timestamp", "error", false},
	{"decimal(10,2)", "timestamp_ntz", "error", false},
	{"decimal(10,2)", "void", "decimal(10,2)", false},

	{"decimal(12,4)", "decimal(12,4)", "decimal(12,4)", false},
	{"decimal(12,4)", "decimal(38,0)", "error", true},
	{"decimal(12,4)", "string", "string", true},
	{"decimal(12,4)", "binary", "error", false},
	{"decimal(12,4)", "date", "error", false},
	{"decimal(12,4)", "timestamp", "error", false},
	{"decimal(12,4)", "timestamp_ntz", "error", false},
	{"decimal(12,4)", "void", "decimal(12,4)", false},

	{"decimal(38,0)", "decimal(38,0)", "decimal(38,0)", false},
	{"decimal(38,0)", "string", "string", true},
	{"decimal(38,0)", "binary", "error", false},
	{"decimal(38,0)", "date", "error", false},
	{"decimal(38,0)", "timestamp", "error", false},
	{"decimal(38,0)", "timestamp_ntz", "error", false},
	{"decimal(38,0)", "void", "decimal(38,0)", false},

	{"string", "string", "string", false},
	{"string", "binary", "string", true},
	{"string", "date", "string", true},
	{"string", "timestamp", "string", true},
	{"string", "timestamp_ntz", "string", true},
	{"string", "void", "string", false},

	{"binary", "binary", "binary", false},
	{"binary", "date", "error", false},
	{"binary", "timestamp", "error", false},
	{"binary", "timestamp_ntz", "error", false},
	{"binary", "void", "binary", false},

	{"date", "date", "date", false},
	{"date", "timestamp", "timestamp", false},
	{"date", "timestamp_ntz", "timestamp_ntz", false},
	{"date", "void", "date", false},

	{"timestamp", "timestamp", "timestamp", false},
	{"timestamp", "timestamp_ntz", "timestamp", false},
	{"timestamp", "void", "timestamp", false},

	{"timestamp_ntz", "timestamp_ntz", "timestamp_ntz", false},
	{"timestamp_ntz", "void", "timestamp_ntz", false},

	{"void", "void", "void", false},

	// Nested and other kinds.
	{"array<int>", "array<bigint>", "array<bigint>", false},
	{"array<boolean>", "array<int>", "array<string>", true},
	{"map<string,int>", "map<string,bigint>", "map<string,bigint>", false},
	{"map<int,string>", "map<bigint,string>", "map<bigint,string>", false},
	{"struct<a:int,b:string>", "struct<a:bigint,b:string>", "struct<a:bigint,b:string>", false},
	{"struct<a:int,B:string>", "struct<A:int,b:string>", "struct<a:int,B:string>", false},
	{"struct<a:int>", "struct<b:string>", "struct<a:int,b:string>", true},
	{"struct<a:int,b:string>", "struct<b:string,a:int>", "struct<a:int,b:string>", true},
	{"array<struct<a:int>>", "array<struct<a:int,b:double>>", "array<struct<a:int,b:double>>", true},
	{"map<string,struct<a:int>>", "map<string,struct<b:date>>", "map<string,struct<a:int,b:date>>", true},
	{"array<int>", "int", "error", false},
	{"struct<a:int>", "string", "error", false},
	{"array<int>", "map<int,int>", "error", false},
	{"array<void>", "array<date>", "array<date>", false},
	{"interval year", "interval month", "interval year to month", false},
	{"interval day", "interval hour to second", "interval day to second", false},
	{"interval day", "interval year", "error", false},
	{"interval day", "string", "string", true},
	{"variant", "variant", "variant", false},
	{"variant", "string", "variant", false},
	{"variant", "int", "error", false},
	// Spark replaces char/varchar by string in DataFrame schemas (CAST(x AS
	// char(3)) is a string column); the planner keeps equal declared types.
	{"char(3)", "char(3)", "char(3)", true},
	{"char(3)", "varchar(5)", "string", false},
	{"varchar(5)", "int", "string", true},
}

func TestWiderTypeMatrix(t *testing.T) {
	for _, c := range wideningMatrix {
		t.Run(c.a+"+"+c.b, func(t *testing.T) {
			a, b := typ(t, c.a), typ(t, c.b)
			for i, order := range [][2]DataType{{a, b}, {b, a}} {
				got, err := WiderType(order[0], order[1], Options{})
				if c.want == "error" {
					var tce *TypeConflictError
					if !errors.As(err, &tce) || !errors.Is(err, ErrSchemaConflict) {
						t.Fatalf("WiderType(%s, %s) = %s, %v; want a *TypeConflictError", order[0], order[1], got, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("WiderType(%s, %s): %v", order[0], order[1], err)
				}
				// Field order and spelling follow the first-seen side:
				// compare fields sorted, and reversed also case-folded.
				want := sortFields(typ(t, c.want), i == 0)
				if diff := cmp.Diff(want, sortFields(got, i == 0)); diff != "" {
					t.Errorf("WiderType(%s, %s) (-want +got):\n%s", order[0], order[1], diff)
				}
			}
		})
	}
}

func TestWiderTypeFieldOrderAndNullability(t *testing.T) {
	got, err := WiderType(typ(t, "struct<b:int NOT NULL,a:string NOT NULL>"), typ(t, "struct<a:string NOT NULL,c:date>"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// b is missing on one side: nullable; a is not null on both: not null.
	want := typ(t, "struct<b:int,a:string NOT NULL,c:date>")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Case-sensitive: A and a are different fields.
	got, err = WiderType(typ(t, "struct<A:int>"), typ(t, "struct<a:int>"), Options{CaseSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(typ(t, "struct<A:int,a:int>"), got); diff != "" {
		t.Errorf("case-sensitive (-want +got):\n%s", diff)
	}
	// Spark's Cast.forceNullable says date -> timestamp_ntz may give null:
	// the array's elements become nullable.
	a := ArrayOf(Simple(KindDate), false)
	b := ArrayOf(Simple(KindTimestampNTZ), false)
	got, err = WiderType(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ArrayOf(Simple(KindTimestampNTZ), true), got); diff != "" {
		t.Errorf("forceNullable (-want +got):\n%s", diff)
	}
	got, _ = WiderType(ArrayOf(Simple(KindInt), false), ArrayOf(Simple(KindLong), false), Options{})
	if diff := cmp.Diff(ArrayOf(Simple(KindLong), false), got); diff != "" {
		t.Errorf("int to bigint keeps containsNull=false (-want +got):\n%s", diff)
	}
}

// Widening never changes a value silently: decimals past 38 digits are a
// conflict naming why, casts to double that may round are checked per
// value at the top level (see TestCheckedCast) and a conflict when nested;
// LossyWidening accepts Spark's rule.
func TestWiderTypeLossless(t *testing.T) {
	cases := []struct {
		a, b        string
		want, lossy string
	}{
		{"decimal(38,18)", "decimal(38,2)", "error", "decimal(38,2)"},
		{"decimal(38,0)", "decimal(38,10)", "error", "decimal(38,0)"},
		{"decimal(38,20)", "bigint", "error", "decimal(38,18)"},
		{"decimal(30,10)", "bigint", "decimal(30,10)", "decimal(30,10)"},
		{"decimal(20,2)", "decimal(36,0)", "decimal(38,2)", "decimal(38,2)"},
		{"bigint", "double", "double", "double"}, // checked per value
		{"int", "double", "double", "double"},    // exact
		{"array<bigint>", "array<double>", "error", "array<double>"},
		{"struct<a:decimal(20,0)>", "struct<a:double>", "error", "struct<a:double>"},
		{"struct<a:int>", "struct<a:double>", "struct<a:double>", "struct<a:double>"},
		{"map<string,decimal(15,2)>", "map<string,double>", "map<string,double>", "map<string,double>"},
	}
	for _, c := range cases {
		for _, lossy := range []bool{false, true} {
			want := c.want
			if lossy {
				want = c.lossy
			}
			got, err := WiderType(typ(t, c.a), typ(t, c.b), Options{LossyWidening: lossy})
			if want == "error" {
				var tce *TypeConflictError
				if !errors.As(err, &tce) || tce.Conflicts[0].Reason == "" {
					t.Errorf("%s+%s: %s, %v; want a conflict with a reason", c.a, c.b, got, err)
				} else if !strings.Contains(err.Error(), "Options.LossyWidening") {
					t.Errorf("%s+%s: error does not say how to accept the rounding: %v", c.a, c.b, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s+%s (lossy %v): %v", c.a, c.b, lossy, err)
				continue
			}
			if got.String() != want {
				t.Errorf("%s+%s (lossy %v) = %s, want %s", c.a, c.b, lossy, got, want)
			}
		}
	}
}

func TestWiderTypePolicies(t *testing.T) {
	cases := []struct {
		a, b   string
		policy TypePolicy
		want   string
	}{
		{"int", "bigint", TypesStrict, "error"},
		{"int", "int", TypesStrict, "int"},
		{"int", "void", TypesStrict, "int"},
		{"struct<a:int>", "struct<b:int>", TypesStrict, "struct<a:int,b:int>"},
		{"struct<a:int>", "struct<a:bigint>", TypesStrict, "error"},
		{"int", "bigint", TypesString, "string"},
		{"array<int>", "int", TypesString, "string"},
		{"struct<a:int,b:date>", "struct<a:bigint,b:date>", TypesString, "struct<a:string,b:date>"},
		{"date", "boolean", TypesString, "string"},
	}
	for _, c := range cases {
		t.Run(c.policy.String()+"/"+c.a+"+"+c.b, func(t *testing.T) {
			got, err := WiderType(typ(t, c.a), typ(t, c.b), Options{Types: c.policy})
			if c.want == "error" {
				if !errors.Is(err, ErrSchemaConflict) {
					t.Fatalf("got %s, %v; want a schema conflict", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(typ(t, c.want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// sortFields returns t with struct fields sorted by name, recursively, and
// with the names lower-cased unless exact.
func sortFields(t DataType, exact bool) DataType {
	switch t.Kind {
	case KindStruct:
		fs := make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			f.Type = sortFields(f.Type, exact)
			fs[i] = f
		}
		sort.Slice(fs, func(i, j int) bool {
			li, lj := strings.ToLower(fs[i].Name), strings.ToLower(fs[j].Name)
			if li != lj {
				return li < lj
			}
			return fs[i].Name < fs[j].Name
		})
		if !exact {
			for i := range fs {
				fs[i].Name = strings.ToLower(fs[i].Name)
			}
		}
		if len(fs) == 0 {
			fs = nil
		}
		t.Fields = fs
	case KindArray:
		t = ArrayOf(sortFields(deref(t.Elem), exact), t.ContainsNull)
	case KindMap:
		t = MapOf(sortFields(deref(t.Key), exact), sortFields(deref(t.Value), exact), t.ValueContainsNull)
	}
	return t
}

// NarrowsValues marks the narrowing casts that may change a value
// without failing, which the planner checks value by value.
func TestNarrowsValues(t *testing.T) {
	dec := func(p, s int) DataType { return DataType{Kind: KindDecimal, Precision: p, Scale: s} }
	simple := func(k Kind) DataType { return DataType{Kind: k} }
	tests := []struct {
		from, to DataType
		want     bool
	}{
		{dec(10, 4), dec(12, 2), true},
		{dec(10, 2), dec(12, 2), false}, // wider: overflow fails instead
		{dec(10, 2), dec(12, 4), false},
		{simple(KindDouble), dec(12, 2), true},
		{simple(KindFloat), dec(38, 18), true},
		{simple(KindDouble), simple(KindFloat), true},
		{simple(KindString), dec(10, 2), true},
		{simple(KindString), dec(38, 2), true}, // told by the text's digits
		{simple(KindString), simple(KindFloat), true},
		{simple(KindString), simple(KindDate), true},
		{simple(KindString), simple(KindInt), false},
		{simple(KindString), simple(KindDouble), false},
		{simple(KindFloat), simple(KindDouble), false},
		{simple(KindDouble), simple(KindInt), true},
		{dec(10, 2), simple(KindLong), true},
		{dec(10, 0), simple(KindInt), false},
		{simple(KindLong), simple(KindInt), false}, // overflow fails instead
		{simple(KindTimestamp), simple(KindDate), true},
		{simple(KindTimestampNTZ), simple(KindDate), true},
		{simple(KindDate), simple(KindTimestamp), false},
		{simple(KindString), simple(KindInt), false},
		{simple(KindLong), simple(KindDouble), false}, // RoundsValues' widening
	}
	for _, tt := range tests {
		if got := NarrowsValues(tt.from, tt.to); got != tt.want {
			t.Errorf("NarrowsValues(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestExactTextType(t *testing.T) {
	for _, tc := range []struct {
		hint, want string // want "": read in the hint itself
	}{
		{"decimal(10,2)", "decimal(38,30)"},
		{"decimal(5,0)", "decimal(38,33)"},
		{"decimal(37,37)", "decimal(38,38)"},
		{"decimal(38,2)", ""}, // no wider decimal
		{"float", "double"},
		{"double", ""},
		{"date", ""},
		{"int", ""},
		{"string", ""},
	} {
		hint, err := ParseType(tc.hint)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ExactTextType(hint)
		switch {
		case tc.want == "" && ok:
			t.Errorf("%s: read as %s, want the hint itself", tc.hint, got)
		case tc.want != "" && (!ok || got.String() != tc.want):
			t.Errorf("%s: read as %s (%v), want %s", tc.hint, got, ok, tc.want)
		case ok && (integerDigits(got) != integerDigits(hint) && hint.Kind == KindDecimal):
			t.Errorf("%s: %s holds %d integer digits, the hint %d: a value too large for the hint must fail to parse either way",
				tc.hint, got, integerDigits(got), integerDigits(hint))
		}
	}
}

func TestRescueObjectOneKeyPerColumn(t *testing.T) {
	// Two reasons to rescue one column's value (a value the reader could
	// not parse, one a narrowing changes) are one key of the object: a
	// map with a key twice fails the query (DUPLICATED_MAP_KEY).
	got := RescueObject([]RescueEntry{
		{Key: "a", Cond: "x IS NULL", Text: "t1"},
		{Key: "b", Cond: "y IS NULL", Text: "t2"},
		{Key: "a", Cond: "z IS NULL", Text: "t3"},
	}, "'f.csv'")
	if strings.Count(got, "'a'") != 1 || !strings.Contains(got, "'a', CASE WHEN x IS NULL THEN t1 WHEN z IS NULL THEN t3 END") {
		t.Errorf("RescueObject = %s, want key a once, with both texts", got)
	}
	if !strings.Contains(got, "(x IS NULL) OR (y IS NULL) OR (z IS NULL)") {
		t.Errorf("RescueObject = %s, want every entry's condition", got)
	}
}
