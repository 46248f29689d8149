package connect

import (
	"fmt"

	"github.com/sparkmerge/sparkmerge"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// SchemaFromProto converts a spark.connect.DataType message holding a
// struct (as AnalyzePlan returns it) to a schema, field names kept exactly.
func SchemaFromProto(m proto.Message) (sparkmerge.Schema, error) {
	if m == nil {
		return sparkmerge.Schema{}, fmt.Errorf("convert schema: no data type")
	}
	dt, err := DataTypeFromProto(m)
	if err != nil {
		return sparkmerge.Schema{}, err
	}
	if dt.Kind != sparkmerge.KindStruct {
		return sparkmerge.Schema{}, fmt.Errorf("convert schema: the data type is not a struct")
	}
	return sparkmerge.Schema{Fields: dt.Fields}, nil
}

// FieldMetadataFromProto is the metadata (JSON, as Spark writes a
// StructField's) of each top-level field of a spark.connect.DataType
// struct message, by name, of the fields that have some: a table's column
// DEFAULT (CURRENT_DEFAULT), Delta's identity and generated columns.
func FieldMetadataFromProto(m proto.Message) (out map[string]string, err error) {
	defer guard("convert data type", &err)
	body := m.ProtoReflect()
	kind := body.WhichOneof(body.Descriptor().Oneofs().ByName("kind"))
	if kind == nil || kind.Name() != "struct" {
		return nil, fmt.Errorf("convert schema: the data type is not a struct")
	}
	st := body.Get(kind).Message()
	fields := st.Get(fd(st, "fields")).List()
	for i := 0; i < fields.Len(); i++ {
		sf := fields.Get(i).Message()
		md := fd(sf, "metadata")
		if !sf.Has(md) || sf.Get(md).String() == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[sf.Get(fd(sf, "name")).String()] = sf.Get(md).String()
	}
	return out, nil
}

// DataTypeFromProto converts a spark.connect.DataType message to a
// [sparkmerge.DataType] with full fidelity: decimal precision and scale
// (absent: Spark's default decimal(10,0)), char/varchar length, interval
// start and end fields (absent: YEAR TO MONTH, DAY TO SECOND), nested
// fields with nullability. A user-defined type converts to its SQL type.
// String collations are dropped (sparkmerge does not model them). Unknown
// kinds are an error.
func DataTypeFromProto(m proto.Message) (t sparkmerge.DataType, err error) {
	defer guard("convert data type", &err)
	return dataType(m.ProtoReflect(), "")
}

func dataType(m protoreflect.Message, path string) (sparkmerge.DataType, error) {
	var t sparkmerge.DataType
	if m == nil || !m.IsValid() {
		return t, fmt.Errorf("convert data type%s: missing", at(path))
	}
	od := m.Descriptor().Oneofs().ByName("kind")
	if od == nil {
		return t, fmt.Errorf("convert data type%s: %s is not a spark.connect.DataType", at(path), m.Descriptor().FullName())
	}
	kf := m.WhichOneof(od)
	if kf == nil {
		return t, fmt.Errorf("convert data type%s: no kind set", at(path))
	}
	body := m.Get(kf).Message()
	optInt := func(name string, def int) int {
		f := fd(body, name)
		if !body.Has(f) {
			return def
		}
		return int(body.Get(f).Int())
	}
	if kind, ok := protoKinds[string(kf.Name())]; ok {
		t.Kind = kind
		switch kind {
		case sparkmerge.KindDecimal:
			t.Precision, t.Scale = optInt("precision", 10), optInt("scale", 0)
		case sparkmerge.KindChar, sparkmerge.KindVarchar:
			t.Length = optInt("length", 0)
		case sparkmerge.KindYearMonthInterval:
			t.StartField, t.EndField = optInt("start_field", 0), optInt("end_field", 1)
		case sparkmerge.KindDayTimeInterval:
			t.StartField, t.EndField = optInt("start_field", 0), optInt("end_field", 3)
		}
		return t, nil
	}
	switch kf.Name() {
	case "array":
		t.Kind = sparkmerge.KindArray
		elem, err := dataType(getMsg(body, "element_type"), path+".element")
		if err != nil {
			return t, err
		}
		t.Elem = &elem
		t.ContainsNull = body.Get(fd(body, "contains_null")).Bool()
	case "map":
		t.Kind = sparkmerge.KindMap
		k, err := dataType(getMsg(body, "key_type"), path+".key")
		if err != nil {
			return t, err
		}
		v, err := dataType(getMsg(body, "value_type"), path+".value")
		if err != nil {
			return t, err
		}
		t.Key, t.Value = &k, &v
		t.ValueContainsNull = body.Get(fd(body, "value_contains_null")).Bool()
	case "struct":
		t.Kind = sparkmerge.KindStruct
		fields := body.Get(fd(body, "fields")).List()
		t.Fields = make([]sparkmerge.Field, 0, fields.Len())
		for i := 0; i < fields.Len(); i++ {
			sf := fields.Get(i).Message()
			name := sf.Get(fd(sf, "name")).String()
			ft, err := dataType(getMsg(sf, "data_type"), path+"."+name)
			if err != nil {
				return t, err
			}
			t.Fields = append(t.Fields, sparkmerge.Field{
				Name:     name,
				Type:     ft,
				Nullable: sf.Get(fd(sf, "nullable")).Bool(),
			})
		}
	case "udt":
		sql := getMsg(body, "sql_type")
		if sql == nil {
			return t, fmt.Errorf("convert data type%s: user-defined type %q has no SQL type", at(path), body.Get(fd(body, "type")).String())
		}
		return dataType(sql, path)
	case "unparsed":
		return t, fmt.Errorf("convert data type%s: unparsed type %q", at(path), body.Get(fd(body, "data_type_string")).String())
	default:
		return t, fmt.Errorf("convert data type%s: unsupported kind %s", at(path), kf.Name())
	}
	return t, nil
}

// protoKinds are the kinds of spark.connect.DataType without nested
// types, by the name of their field in its kind oneof; a missing parameter
// (precision, length, interval fields) takes Spark's default.
var protoKinds = map[string]sparkmerge.Kind{
	"null":                sparkmerge.KindNull,
	"boolean":             sparkmerge.KindBoolean,
	"byte":                sparkmerge.KindByte,
	"short":               sparkmerge.KindShort,
	"integer":             sparkmerge.KindInt,
	"long":                sparkmerge.KindLong,
	"float":               sparkmerge.KindFloat,
	"double":              sparkmerge.KindDouble,
	"decimal":             sparkmerge.KindDecimal,
	"string":              sparkmerge.KindString,
	"char":                sparkmerge.KindChar,
	"var_char":            sparkmerge.KindVarchar,
	"binary":              sparkmerge.KindBinary,
	"date":                sparkmerge.KindDate,
	"timestamp":           sparkmerge.KindTimestamp,
	"timestamp_ntz":       sparkmerge.KindTimestampNTZ,
	"calendar_interval":   sparkmerge.KindCalendarInterval,
	"year_month_interval": sparkmerge.KindYearMonthInterval,
	"day_time_interval":   sparkmerge.KindDayTimeInterval,
	"variant":             sparkmerge.KindVariant,
}

// at renders a nested field path for error messages.
func at(path string) string {
	if path == "" {
		return ""
	}
	return " at " + path[1:]
}
