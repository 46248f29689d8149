package sparkmerge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindPredicates(t *testing.T) {
	var numeric, integral, floating, stringLike, datetime, interval, complexKinds []string
	for kind := KindNull; kind <= KindMap; kind++ {
		name := kind.String()
		if kind.IsNumeric() {
			numeric = append(numeric, name)
		}
		if kind.IsIntegral() {
			integral = append(integral, name)
		}
		if kind.IsFloatingPoint() {
			floating = append(floating, name)
		}
		if kind.IsStringLike() {
			stringLike = append(stringLike, name)
		}
		if kind.IsDatetime() {
			datetime = append(datetime, name)
		}
		if kind.IsInterval() {
			interval = append(interval, name)
		}
		if kind.IsComplex() {
			complexKinds = append(complexKinds, name)
		}
	}
	got := map[string][]string{"numeric": numeric, "integral": integral, "floating": floating,
		"string": stringLike, "datetime": datetime, "interval": interval, "complex": complexKinds}
	want := map[string][]string{
		"numeric":  {"tinyint", "smallint", "int", "bigint", "float", "double", "decimal"},
		"integral": {"tinyint", "smallint", "int", "bigint"},
		"floating": {"float", "double"},
		"string":   {"string", "char", "varchar"},
		"datetime": {"date", "timestamp", "timestamp_ntz"},
		"interval": {"interval year to month", "interval day to second", "interval"},
		"complex":  {"struct", "array", "map"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kind predicates (-want +got):\n%s", diff)
	}
	if s := Kind(99).String(); s != "Kind(99)" {
		t.Errorf("Kind(99).String() = %q", s)
	}
}

func TestEqual(t *testing.T) {
	a := StructOf(NewField("a", ArrayOf(kt(KindInt), true)))
	tests := []struct {
		name string
		x, y DataType
		want bool
	}{
		{"same", a, StructOf(NewField("a", ArrayOf(kt(KindInt), true))), true},
		{"containsNull", a, StructOf(NewField("a", ArrayOf(kt(KindInt), false))), false},
		{"nullable", a, StructOf(Field{"a", ArrayOf(kt(KindInt), true), false}), false},
		{"name case", a, StructOf(NewField("A", ArrayOf(kt(KindInt), true))), false},
		{"decimal", NewDecimal(10, 2), NewDecimal(10, 3), false},
		{"ignores unrelated fields", DataType{Kind: KindInt, Precision: 3}, kt(KindInt), true},
		{"empty struct nil vs empty", DataType{Kind: KindStruct, Fields: []Field{}}, StructOf(), true},
		{"nil elem is void", DataType{Kind: KindArray, ContainsNull: true}, ArrayOf(kt(KindNull), true), true},
		{"map value", MapOf(kt(KindString), kt(KindInt), true), MapOf(kt(KindString), kt(KindLong), true), false},
		{"interval", NewDayTimeInterval(0, 3), NewDayTimeInterval(1, 3), false},
		{"char length", NewChar(3), NewChar(4), false},
		{"kind", NewChar(3), NewVarchar(3), false},
	}
	for _, tt := range tests {
		if got := tt.x.Equal(tt.y); got != tt.want {
			t.Errorf("%s: %v.Equal(%v) = %v, want %v", tt.name, tt.x, tt.y, got, tt.want)
		}
		if got := cmp.Equal(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: cmp.Equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSchemaHelpers(t *testing.T) {
	s := NewSchema(NewField("id", kt(KindLong)), NewField("name", kt(KindString)))
	if diff := cmp.Diff([]string{"id", "name"}, s.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if got := s.Type().String(); got != "struct<id:bigint,name:string>" {
		t.Errorf("Type() = %s", got)
	}
	if got := Simple(KindDecimal).String(); got != "decimal(10,0)" {
		t.Errorf("Simple(KindDecimal) = %s", got)
	}
}

func TestValidate(t *testing.T) {
	valid := []DataType{kt(KindInt), NewDecimal(38, 38), NewChar(0), NewDayTimeInterval(1, 3),
		StructOf(NewField("a", ArrayOf(MapOf(kt(KindString), NewDecimal(5, 2), false), false)))}
	for _, v := range valid {
		if err := v.Validate(); err != nil {
			t.Errorf("%v.Validate() = %v", v, err)
		}
	}
	invalid := []DataType{{Kind: 99}, NewDecimal(39, 0), NewDecimal(5, 6), NewDecimal(5, -1), NewVarchar(-1),
		NewYearMonthInterval(1, 0), NewDayTimeInterval(0, 4), NewYearMonthInterval(0, 2),
		StructOf(NewField("a", ArrayOf(NewDecimal(50, 0), true))), MapOf(kt(KindInt), DataType{Kind: -1}, true)}
	for _, v := range invalid {
		if err := v.Validate(); err == nil {
			t.Errorf("%#v.Validate() = nil, want an error", v)
		}
	}
}

// sparkSchemaJSON is what Spark 4.0.1 printed for df.schema.json() of
//
//	SELECT CAST(NULL AS int) i, CAST(NULL AS tinyint) b, CAST(NULL AS smallint) s, ...
//
// (fields assembled from the probes: same names, order and spelling).
const sparkSchemaJSON = `{"fields":[` +
	`{"metadata":{},"name":"i","nullable":true,"type":"integer"},` +
	`{"metadata":{},"name":"b","nullable":true,"type":"byte"},` +
	`{"metadata":{},"name":"s","nullable":true,"type":"short"},` +
	`{"metadata":{},"name":"l","nullable":false,"type":"long"},` +
	`{"metadata":{},"name":"f","nullable":true,"type":"float"},` +
	`{"metadata":{},"name":"d","nullable":true,"type":"double"},` +
	`{"metadata":{},"name":"dec","nullable":true,"type":"decimal(10,0)"},` +
	`{"metadata":{},"name":"str","nullable":true,"type":"string"},` +
	`{"metadata":{},"name":"bin","nullable":true,"type":"binary"},` +
	`{"metadata":{},"name":"bool","nullable":true,"type":"boolean"},` +
	`{"metadata":{},"name":"date","nullable":true,"type":"date"},` +
	`{"metadata":{},"name":"ts","nullable":true,"type":"timestamp"},` +
	`{"metadata":{},"name":"ntz","nullable":true,"type":"timestamp_ntz"},` +
	`{"metadata":{},"name":"ym","nullable":true,"type":"interval year to month"},` +
	`{"metadata":{},"name":"dt","nullable":true,"type":"interval hour to second"},` +
	`{"metadata":{},"name":"cal","nullable":true,"type":"interval"},` +
	`{"metadata":{},"name":"v","nullable":true,"type":"variant"},` +
	`{"metadata":{},"name":"n","nullable":true,"type":"void"},` +
	`{"metadata":{},"name":"a` + "`" + `b.c d \u00e9","nullable":false,"type":"integer"},` +
	`{"metadata":{},"name":"arr","nullable":false,"type":{"containsNull":false,"elementType":"integer","type":"array"}},` +
	`{"metadata":{},"name":"m","nullable":false,"type":{"keyType":"integer","type":"map","valueContainsNull":false,"valueType":"integer"}},` +
	`{"metadata":{},"name":"st","nullable":true,"type":{"fields":[{"metadata":{"comment":"x"},"name":"b","nullable":false,"type":"string"}],"type":"struct"}}` +
	`],"type":"struct"}`

func TestSchemaJSONFromSpark(t *testing.T) {
	s, err := ParseSchemaJSON([]byte(sparkSchemaJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := "i int, b tinyint, s smallint, l bigint NOT NULL, f float, d double, dec decimal(10,0), str string, " +
		"bin binary, bool boolean, date date, ts timestamp, ntz timestamp_ntz, ym interval year to month, " +
		"dt interval hour to second, cal interval, v variant, n void, `a``b.c d é` int NOT NULL, " +
		"arr array<int> NOT NULL, m map<int,int> NOT NULL, st struct<b:string NOT NULL>"
	if got := s.String(); got != want {
		t.Errorf("schema:\n got %s\nwant %s", got, want)
	}
	if arr := s.Fields[19].Type; arr.ContainsNull {
		t.Errorf("arr containsNull = true, want false")
	}
	if m := s.Fields[20].Type; m.ValueContainsNull {
		t.Errorf("m valueContainsNull = true, want false")
	}
	// Writing it back gives Spark's text, except that names are not \u-escaped
	// and comments (metadata) are dropped.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := strings.NewReplacer(`\u00e9`, "é", `{"comment":"x"}`, `{}`).Replace(sparkSchemaJSON)
	if string(b) != wantJSON {
		t.Errorf("MarshalJSON:\n got %s\nwant %s", b, wantJSON)
	}
}

func TestTypeJSONRoundTrip(t *testing.T) {
	types := []DataType{
		kt(KindNull), kt(KindBoolean), kt(KindByte), kt(KindShort), kt(KindInt), kt(KindLong), kt(KindFloat), kt(KindDouble),
		NewDecimal(38, 10), kt(KindString), NewChar(3), NewVarchar(5), kt(KindBinary), kt(KindDate), kt(KindTimestamp),
		kt(KindTimestampNTZ), NewYearMonthInterval(0, 0), NewYearMonthInterval(1, 1), NewYearMonthInterval(0, 1),
		NewDayTimeInterval(0, 3), NewDayTimeInterval(2, 2), kt(KindCalendarInterval), kt(KindVariant),
		StructOf(), ArrayOf(kt(KindInt), false), ArrayOf(kt(KindInt), true),
		MapOf(kt(KindString), ArrayOf(NewDecimal(5, 2), false), false),
		StructOf(Field{"a`b \"c\" <d>&", MapOf(NewChar(2), StructOf(NewField("x", kt(KindVariant))), true), false},
			NewField("", ArrayOf(ArrayOf(kt(KindNull), false), true))),
	}
	for _, typ := range types {
		b, err := json.Marshal(typ)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", typ, err)
		}
		var got DataType
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if diff := cmp.Diff(typ, got); diff != "" {
			t.Errorf("JSON round trip of %s (-want +got):\n%s", b, diff)
		}
	}
	// Fields and schemas embed in other JSON documents.
	type doc struct {
		Target Schema
		Extra  Field
		Types  []DataType
	}
	in := doc{NewSchema(NewField("id", kt(KindLong))), Field{"x", NewVarchar(3), false}, types}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("embedded round trip (-want +got):\n%s", diff)
	}
}

func TestTypeJSONLenient(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"null"`, "void"},
		{`"timestamp_ltz"`, "timestamp"},
		{`"decimal"`, "decimal(10,0)"},
		{`"decimal( 12 , 2 )"`, "decimal(12,2)"},
		{`"bigint"`, "bigint"},
		{`{"fields":[{"name":"a","type":"integer"}],"type":"struct"}`, "struct<a:int>"},
		{`{"fields":[{"name":"a","nullable":false,"type":"integer","metadata":{"comment":"c"}}],"type":"struct"}`, "struct<a:int NOT NULL>"},
		{`{"type":"array","elementType":"long"}`, "array<bigint>"},
		// Spark keeps the declared char/varchar type in the metadata of string columns.
		{`{"fields":[{"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"char(3)"},"name":"c","nullable":true,"type":"string"}],"type":"struct"}`, "struct<c:char(3)>"},
		{`{"fields":[{"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"map<int,varchar(2)>"},"name":"c","nullable":true,"type":{"keyType":"integer","type":"map","valueContainsNull":true,"valueType":"string"}}],"type":"struct"}`, "struct<c:map<int,varchar(2)>>"},
		// ... but only when it fits the actual type.
		{`{"fields":[{"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"char(3)"},"name":"c","nullable":true,"type":"integer"}],"type":"struct"}`, "struct<c:int>"},
	}
	for _, tt := range tests {
		got, err := ParseTypeJSON([]byte(tt.in))
		if err != nil {
			t.Errorf("ParseTypeJSON(%s): %v", tt.in, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ParseTypeJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestTypeJSONErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{``, "missing type"},
		{`42`, "must be a string or an object"},
		{`"integr"`, `unsupported data type "integr"`},
		{`"string collate UTF8_LCASE"`, "collated strings"},
		{`{"fields":[{"metadata":{"__COLLATIONS":{"c":"spark.UTF8_LCASE"}},"name":"c","nullable":true,"type":"string"}],"type":"struct"}`, "collated strings"},
		{`{"type":"udt","class":"x"}`, "user-defined types"},
		{`{"type":"struct"}`, `no "fields"`},
		{`{"fields":[{"type":"integer"}],"type":"struct"}`, `no "name"`},
		{`{"fields":[{"name":"a","type":"foo"}],"type":"struct"}`, `field 0: field "a": type "foo"`},
		{`{"elementType":"int"}`, `no "type" key`},
		{`{"type":"array","elementType":{"type":"map","keyType":"int"}}`, "map valueType: missing type"},
		{`{"type":"tuple"}`, `unsupported type object "tuple"`},
		{`"int" "int"`, "invalid character"},
	}
	for _, tt := range tests {
		_, err := ParseTypeJSON([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "parse type JSON: ") {
			t.Errorf("ParseTypeJSON(%s) error = %v, want one containing %q", tt.in, err, tt.msg)
		}
	}
	if _, err := ParseSchemaJSON([]byte(`"int"`)); err == nil || !strings.Contains(err.Error(), "want a struct") {
		t.Errorf("ParseSchemaJSON(int) error = %v", err)
	}
	if _, err := json.Marshal(DataType{Kind: 77}); err == nil {
		t.Errorf("Marshal(kind 77) succeeded")
	}
}

func TestTypeJSONRejectsInvalidUTF8(t *testing.T) {
	_, err := json.Marshal(StructOf(NewField("a\xffb", kt(KindInt))))
	if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("Marshal of a non-UTF-8 name: error = %v, want one saying it is not valid UTF-8", err)
	}
}
