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
	switch kf.Name() {
	case "null":
		t.Kind = sparkmerge.KindNull
	case "boolean":
		t.Kind = sparkmerge.KindBoolean
	case "byte":
		t.Kind = sparkmerge.KindByte
	case "short":
		t.Kind = sparkmerge.KindShort
	case "integer":
		t.Kind = sparkmerge.KindInt
	case "long":
		t.Kind = sparkmerge.KindLong
	case "float":
		t.Kind = sparkmerge.KindFloat
	case "double":
		t.Kind = sparkmerge.KindDouble
	case "decimal":
		t.Kind = sparkmerge.KindDecimal
		t.Precision = optInt("precision", 10)
		t.Scale = optInt("scale", 0)
	case "string":
		t.Kind = sparkmerge.KindString
	case "char":
		t.Kind = sparkmerge.KindChar
		t.Length = optInt("length", 0)
	case "var_char":
		t.Kind = sparkmerge.KindVarchar
		t.Length = optInt("length", 0)
	case "binary":
		t.Kind = sparkmerge.KindBinary
	case "date":
		t.Kind = sparkmerge.KindDate
	case "timestamp":
		t.Kind = sparkmerge.KindTimestamp
	case "timestamp_ntz":
		t.Kind = sparkmerge.KindTimestampNTZ
	case "calendar_interval":
		t.Kind = sparkmerge.KindCalendarInterval
	case "year_month_interval":
		t.Kind = sparkmerge.KindYearMonthInterval
		t.StartField = optInt("start_field", 0)
		t.EndField = optInt("end_field", 1)
	case "day_time_interval":
		t.Kind = sparkmerge.KindDayTimeInterval
		t.StartField = optInt("start_field", 0)
		t.EndField = optInt("end_field", 3)
	case "variant":
		t.Kind = sparkmerge.KindVariant
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

// at renders a nested field path for error messages.
func at(path string) string {
	if path == "" {
		return ""
	}
	return " at " + path[1:]
}
