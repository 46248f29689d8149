package connect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sparkmerge/sparkmerge"
)

func TestDataTypeFromProto(t *testing.T) {
	ptr := func(d sparkmerge.DataType) *sparkmerge.DataType { return &d }
	tests := []struct {
		name, text string
		want       sparkmerge.DataType
	}{
		{"null", `null {}`, sparkmerge.DataType{Kind: sparkmerge.KindNull}},
		{"boolean", `boolean {}`, sparkmerge.DataType{Kind: sparkmerge.KindBoolean}},
		{"byte", `byte {}`, sparkmerge.DataType{Kind: sparkmerge.KindByte}},
		{"short", `short {}`, sparkmerge.DataType{Kind: sparkmerge.KindShort}},
		{"integer", `integer {}`, sparkmerge.DataType{Kind: sparkmerge.KindInt}},
		{"long", `long {}`, sparkmerge.DataType{Kind: sparkmerge.KindLong}},
		{"float", `float {}`, sparkmerge.DataType{Kind: sparkmerge.KindFloat}},
		{"double", `double {}`, sparkmerge.DataType{Kind: sparkmerge.KindDouble}},
		{"decimal", `decimal { precision: 12 scale: 4 }`, sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 12, Scale: 4}},
		{"decimal scale 0", `decimal { precision: 38 scale: 0 }`, sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 38}},
		{"decimal default", `decimal {}`, sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 10}},
		{"string", `string {}`, sparkmerge.DataType{Kind: sparkmerge.KindString}},
		{"string with collation", `string { collation: "UTF8_LCASE" }`, sparkmerge.DataType{Kind: sparkmerge.KindString}},
		{"char", `char { length: 3 }`, sparkmerge.DataType{Kind: sparkmerge.KindChar, Length: 3}},
		{"varchar", `var_char { length: 20 }`, sparkmerge.DataType{Kind: sparkmerge.KindVarchar, Length: 20}},
		{"binary", `binary {}`, sparkmerge.DataType{Kind: sparkmerge.KindBinary}},
		{"date", `date {}`, sparkmerge.DataType{Kind: sparkmerge.KindDate}},
		{"timestamp", `timestamp {}`, sparkmerge.DataType{Kind: sparkmerge.KindTimestamp}},
		{"timestamp_ntz", `timestamp_ntz {}`, sparkmerge.DataType{Kind: sparkmerge.KindTimestampNTZ}},
		{"calendar interval", `calendar_interval {}`, sparkmerge.DataType{Kind: sparkmerge.KindCalendarInterval}},
		{"interval year", `year_month_interval { start_field: 0 end_field: 0 }`, sparkmerge.DataType{Kind: sparkmerge.KindYearMonthInterval}},
		{"interval year to month default", `year_month_interval {}`, sparkmerge.DataType{Kind: sparkmerge.KindYearMonthInterval, EndField: 1}},
		{"interval month", `year_month_interval { start_field: 1 end_field: 1 }`, sparkmerge.DataType{Kind: sparkmerge.KindYearMonthInterval, StartField: 1, EndField: 1}},
		{"interval hour to second", `day_time_interval { start_field: 1 end_field: 3 }`, sparkmerge.DataType{Kind: sparkmerge.KindDayTimeInterval, StartField: 1, EndField: 3}},
		{"interval day to second default", `day_time_interval {}`, sparkmerge.DataType{Kind: sparkmerge.KindDayTimeInterval, EndField: 3}},
		{"variant", `variant {}`, sparkmerge.DataType{Kind: sparkmerge.KindVariant}},
		{"array", `array { element_type { decimal { precision: 5 scale: 2 } } contains_null: true }`,
			sparkmerge.DataType{Kind: sparkmerge.KindArray, Elem: ptr(sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 5, Scale: 2}), ContainsNull: true}},
		{"array not null", `array { element_type { string {} } }`,
			sparkmerge.DataType{Kind: sparkmerge.KindArray, Elem: ptr(sparkmerge.DataType{Kind: sparkmerge.KindString})}},
		{"map", `map { key_type { string {} } value_type { var_char { length: 4 } } value_contains_null: true }`,
			sparkmerge.DataType{Kind: sparkmerge.KindMap, Key: ptr(sparkmerge.DataType{Kind: sparkmerge.KindString}), Value: ptr(sparkmerge.DataType{Kind: sparkmerge.KindVarchar, Length: 4}), ValueContainsNull: true}},
		{"udt", `udt { type: "udt" jvm_class: "x.VectorUDT" sql_type { array { element_type { double {} } } } }`,
			sparkmerge.DataType{Kind: sparkmerge.KindArray, Elem: ptr(sparkmerge.DataType{Kind: sparkmerge.KindDouble})}},
		{"struct", `struct {
				fields { name: "a.b" data_type { integer {} } nullable: true }
				fields { name: "` + "`x` y" + `" data_type { struct { fields { name: "Ünï" data_type { timestamp_ntz {} } } } } }
				fields { name: "A" data_type { array { element_type { struct { fields { name: "n" data_type { null {} } nullable: true } } } contains_null: true } } nullable: true }
			}`,
			sparkmerge.DataType{Kind: sparkmerge.KindStruct, Fields: []sparkmerge.Field{
				{Name: "a.b", Type: sparkmerge.DataType{Kind: sparkmerge.KindInt}, Nullable: true},
				{Name: "`x` y", Type: sparkmerge.DataType{Kind: sparkmerge.KindStruct, Fields: []sparkmerge.Field{
					{Name: "Ünï", Type: sparkmerge.DataType{Kind: sparkmerge.KindTimestampNTZ}},
				}}},
				{Name: "A", Nullable: true, Type: sparkmerge.DataType{Kind: sparkmerge.KindArray, ContainsNull: true, Elem: ptr(sparkmerge.DataType{
					Kind: sparkmerge.KindStruct, Fields: []sparkmerge.Field{{Name: "n", Type: sparkmerge.DataType{Kind: sparkmerge.KindNull}, Nullable: true}},
				})}},
			}}},
		{"empty struct", `struct {}`, sparkmerge.DataType{Kind: sparkmerge.KindStruct, Fields: []sparkmerge.Field{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DataTypeFromProto(fromText(t, "DataType", tt.text))
			if err != nil {
				t.Fatalf("DataTypeFromProto: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DataTypeFromProto (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDataTypeFromProtoErrors(t *testing.T) {
	for name, text := range map[string]string{
		"no kind":                   ``,
		"array no element":          `array {}`,
		"map no value":              `map { key_type { string {} } }`,
		"struct field without type": `struct { fields { name: "a" } }`,
		"unparsed":                  `unparsed { data_type_string: "int" }`,
		"udt without sql type":      `udt { type: "udt" }`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DataTypeFromProto(fromText(t, "DataType", text)); err == nil {
				t.Error("no error")
			}
		})
	}
	// A message of another type is an error, not a panic.
	if _, err := DataTypeFromProto(newMsg("Relation").Interface()); err == nil {
		t.Error("Relation as DataType: no error")
	}
}

func TestSchemaFromProto(t *testing.T) {
	got, err := SchemaFromProto(fromText(t, "DataType", `struct {
		fields { name: "amount" data_type { decimal { precision: 12 scale: 4 } } nullable: true }
		fields { name: "ID" data_type { long {} } }
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := sparkmerge.Schema{Fields: []sparkmerge.Field{
		{Name: "amount", Type: sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 12, Scale: 4}, Nullable: true},
		{Name: "ID", Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SchemaFromProto (-want +got):\n%s", diff)
	}
	if _, err := SchemaFromProto(fromText(t, "DataType", `long {}`)); err == nil {
		t.Error("SchemaFromProto(long): no error")
	}
	if _, err := SchemaFromProto(nil); err == nil {
		t.Error("SchemaFromProto(nil): no error")
	}
}
