package sparkmerge

// Notes on the type model (package-level notes live here; doc.go belongs to the planner):
//
//   - Kinds, names and defaults follow Spark 4.0 (sql/api DataType.scala,
//     DataTypeAstBuilder.scala, SqlBaseParser.g4 rule dataType), checked against a
//     running Spark Connect 4.0.1 server.
//   - The SQL syntax (ParseType, DataType.String) cannot express
//     containsNull=false or valueContainsNull=false: Spark's parser always sets
//     both to true. The JSON form (DataType.MarshalJSON, ParseTypeJSON) carries
//     them, and is the full-fidelity form for plans.
//   - Field comments (COMMENT '...' and JSON "metadata") are accepted and
//     dropped: the model has no metadata.
//   - Collated strings (string collate X) are rejected: merging them as plain
//     strings would change comparison semantics silently.
//   - Char and varchar are kept as declared. Spark replaces them with string in
//     most DataFrame schemas (CAST(x AS char(3)) yields a string column) and
//     records the declared type in the field metadata
//     "__CHAR_VARCHAR_TYPE_STRING", which the JSON reader honours.

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of a Spark SQL data type.
type Kind int

// The kinds of Spark SQL data types sparkmerge models. The zero value is
// KindNull (Spark's NullType, rendered "void"), the type of an all-null column.
const (
	KindNull Kind = iota
	KindBoolean
	KindByte
	KindShort
	KindInt
	KindLong
	KindFloat
	KindDouble
	KindDecimal
	KindString
	KindChar
	KindVarchar
	KindBinary
	KindDate
	KindTimestamp
	KindTimestampNTZ
	KindYearMonthInterval
	KindDayTimeInterval
	KindCalendarInterval
	KindVariant
	KindStruct
	KindArray
	KindMap
)

// The interval fields as Spark numbers them, for DataType.StartField and
// DataType.EndField.
const (
	IntervalYear  = 0 // year-month interval: YEAR
	IntervalMonth = 1 // year-month interval: MONTH

	IntervalDay    = 0 // day-time interval: DAY
	IntervalHour   = 1 // day-time interval: HOUR
	IntervalMinute = 2 // day-time interval: MINUTE
	IntervalSecond = 3 // day-time interval: SECOND
)

// Decimal limits and defaults, as in Spark's DecimalType.
const (
	MaxDecimalPrecision     = 38 // the largest precision Spark accepts
	DefaultDecimalPrecision = 10 // precision of a bare "decimal"
)

var kindNames = [...]string{
	KindNull:              "void",
	KindBoolean:           "boolean",
	KindByte:              "tinyint",
	KindShort:             "smallint",
	KindInt:               "int",
	KindLong:              "bigint",
	KindFloat:             "float",
	KindDouble:            "double",
	KindDecimal:           "decimal",
	KindString:            "string",
	KindChar:              "char",
	KindVarchar:           "varchar",
	KindBinary:            "binary",
	KindDate:              "date",
	KindTimestamp:         "timestamp",
	KindTimestampNTZ:      "timestamp_ntz",
	KindYearMonthInterval: "interval year to month",
	KindDayTimeInterval:   "interval day to second",
	KindCalendarInterval:  "interval",
	KindVariant:           "variant",
	KindStruct:            "struct",
	KindArray:             "array",
	KindMap:               "map",
}

// String returns the Spark SQL name of the kind, e.g. "bigint", "decimal",
// "struct". Parameterised kinds give their bare name.
func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func (k Kind) valid() bool { return k >= KindNull && k <= KindMap }

// IsIntegral reports whether k is tinyint, smallint, int or bigint.
func (k Kind) IsIntegral() bool { return k >= KindByte && k <= KindLong }

// IsFloatingPoint reports whether k is float or double.
func (k Kind) IsFloatingPoint() bool { return k == KindFloat || k == KindDouble }

// IsNumeric reports whether k is integral, floating point or decimal.
func (k Kind) IsNumeric() bool { return k >= KindByte && k <= KindDecimal }

// IsStringLike reports whether k is string, char or varchar.
func (k Kind) IsStringLike() bool { return k >= KindString && k <= KindVarchar }

// IsDatetime reports whether k is date, timestamp or timestamp_ntz.
func (k Kind) IsDatetime() bool { return k >= KindDate && k <= KindTimestampNTZ }

// IsInterval reports whether k is one of the three interval kinds.
func (k Kind) IsInterval() bool { return k >= KindYearMonthInterval && k <= KindCalendarInterval }

// IsComplex reports whether k is struct, array or map.
func (k Kind) IsComplex() bool { return k >= KindStruct && k <= KindMap }

// DataType is a Spark SQL data type. It is a plain value: two types are equal
// when cmp.Equal says so, and String renders Spark's SQL syntax so that
// ParseType(t.String()) == t.
//
// Only the fields that belong to Kind are set; the others stay zero.
// Constructors and parsers always set Elem, Key and Value of arrays and maps,
// and leave Fields nil for an empty struct; a nil Elem, Key or Value counts as
// void.
type DataType struct {
	Kind Kind

	// Precision and Scale of a decimal.
	Precision, Scale int
	// Length of a char(n) or varchar(n).
	Length int
	// StartField and EndField of an interval, as Spark numbers them
	// (year-month: 0 YEAR, 1 MONTH; day-time: 0 DAY, 1 HOUR, 2 MINUTE, 3 SECOND).
	StartField, EndField int

	// Fields of a struct, in order.
	Fields []Field
	// Elem and ContainsNull of an array.
	Elem         *DataType
	ContainsNull bool
	// Key, Value and ValueContainsNull of a map.
	Key, Value        *DataType
	ValueContainsNull bool
}

// Field is a named column of a schema or a field of a struct.
type Field struct {
	Name     string
	Type     DataType
	Nullable bool
}

// Schema is an ordered list of top-level columns.
type Schema struct {
	Fields []Field
}

// Simple returns the type of a kind that has no parameters, such as
// Simple(KindLong) for bigint. For decimal it gives decimal(10,0), for an
// interval kind its widest form, for char/varchar length 0, for struct the
// empty struct and for array/map nullable elements of type void.
func Simple(k Kind) DataType {
	switch k {
	case KindDecimal:
		return NewDecimal(DefaultDecimalPrecision, 0)
	case KindYearMonthInterval:
		return NewYearMonthInterval(IntervalYear, IntervalMonth)
	case KindDayTimeInterval:
		return NewDayTimeInterval(IntervalDay, IntervalSecond)
	case KindArray:
		return ArrayOf(DataType{}, true)
	case KindMap:
		return MapOf(DataType{}, DataType{}, true)
	}
	return DataType{Kind: k}
}

// NewDecimal returns decimal(precision,scale).
func NewDecimal(precision, scale int) DataType {
	return DataType{Kind: KindDecimal, Precision: precision, Scale: scale}
}

// NewChar returns char(length).
func NewChar(length int) DataType { return DataType{Kind: KindChar, Length: length} }

// NewVarchar returns varchar(length).
func NewVarchar(length int) DataType { return DataType{Kind: KindVarchar, Length: length} }

// NewYearMonthInterval returns the year-month interval from start to end
// (IntervalYear or IntervalMonth), e.g. "interval year to month".
func NewYearMonthInterval(start, end int) DataType {
	return DataType{Kind: KindYearMonthInterval, StartField: start, EndField: end}
}

// NewDayTimeInterval returns the day-time interval from start to end
// (IntervalDay ... IntervalSecond), e.g. "interval day to second".
func NewDayTimeInterval(start, end int) DataType {
	return DataType{Kind: KindDayTimeInterval, StartField: start, EndField: end}
}

// ArrayOf returns array<elem>. Spark's parser gives containsNull=true.
func ArrayOf(elem DataType, containsNull bool) DataType {
	return DataType{Kind: KindArray, Elem: &elem, ContainsNull: containsNull}
}

// MapOf returns map<key,value>. Spark's parser gives valueContainsNull=true.
func MapOf(key, value DataType, valueContainsNull bool) DataType {
	return DataType{Kind: KindMap, Key: &key, Value: &value, ValueContainsNull: valueContainsNull}
}

// StructOf returns struct<fields...>.
func StructOf(fields ...Field) DataType {
	if len(fields) == 0 {
		return DataType{Kind: KindStruct}
	}
	return DataType{Kind: KindStruct, Fields: append([]Field(nil), fields...)}
}

// NewField returns a nullable field, Spark's default.
func NewField(name string, t DataType) Field { return Field{Name: name, Type: t, Nullable: true} }

// NewSchema returns the schema with the given columns.
func NewSchema(fields ...Field) Schema {
	if len(fields) == 0 {
		return Schema{}
	}
	return Schema{Fields: append([]Field(nil), fields...)}
}

// Names returns the column names of s in order.
func (s Schema) Names() []string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names
}

// Type returns s as a struct type.
func (s Schema) Type() DataType { return StructOf(s.Fields...) }

// Equal reports whether t and u are the same type, including nullability and
// field names (compared exactly). Fields that do not belong to the kind are
// ignored, a nil and an empty field list are the same, and a nil Elem, Key or
// Value equals void.
func (t DataType) Equal(u DataType) bool {
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case KindDecimal:
		return t.Precision == u.Precision && t.Scale == u.Scale
	case KindChar, KindVarchar:
		return t.Length == u.Length
	case KindYearMonthInterval, KindDayTimeInterval:
		return t.StartField == u.StartField && t.EndField == u.EndField
	case KindStruct:
		if len(t.Fields) != len(u.Fields) {
			return false
		}
		for i := range t.Fields {
			if !t.Fields[i].Equal(u.Fields[i]) {
				return false
			}
		}
		return true
	case KindArray:
		return t.ContainsNull == u.ContainsNull && deref(t.Elem).Equal(deref(u.Elem))
	case KindMap:
		return t.ValueContainsNull == u.ValueContainsNull &&
			deref(t.Key).Equal(deref(u.Key)) && deref(t.Value).Equal(deref(u.Value))
	}
	return true
}

// Equal reports whether f and g have the same name, nullability and type.
func (f Field) Equal(g Field) bool {
	return f.Name == g.Name && f.Nullable == g.Nullable && f.Type.Equal(g.Type)
}

// Equal reports whether s and o have the same columns in the same order.
func (s Schema) Equal(o Schema) bool { return s.Type().Equal(o.Type()) }

func deref(p *DataType) DataType {
	if p == nil {
		return DataType{}
	}
	return *p
}

// String renders t in Spark's SQL type syntax, as CAST accepts it: "int",
// "decimal(12,4)", "interval day to second", "struct<a:int,`b c`:string NOT NULL>",
// "array<int>", "map<string,bigint>". Field names are backquoted unless they
// are plain identifiers that are not reserved words.
//
// ParseType(t.String()) equals t for every valid t whose arrays and maps have
// containsNull and valueContainsNull true: the SQL syntax cannot say false.
// Use the JSON form (MarshalJSON) to keep them.
func (t DataType) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t DataType) write(b *strings.Builder) {
	switch t.Kind {
	case KindDecimal:
		fmt.Fprintf(b, "decimal(%d,%d)", t.Precision, t.Scale)
	case KindChar, KindVarchar:
		fmt.Fprintf(b, "%s(%d)", t.Kind, t.Length)
	case KindYearMonthInterval, KindDayTimeInterval:
		b.WriteString(t.intervalName())
	case KindStruct:
		b.WriteString("struct<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteName(f.Name))
			b.WriteByte(':')
			f.Type.write(b)
			if !f.Nullable {
				b.WriteString(" NOT NULL")
			}
		}
		b.WriteByte('>')
	case KindArray:
		b.WriteString("array<")
		deref(t.Elem).write(b)
		b.WriteByte('>')
	case KindMap:
		b.WriteString("map<")
		deref(t.Key).write(b)
		b.WriteByte(',')
		deref(t.Value).write(b)
		b.WriteByte('>')
	default:
		b.WriteString(t.Kind.String())
	}
}

// intervalName gives Spark's name of a year-month or day-time interval, e.g.
// "interval year", "interval hour to second". Out-of-range fields render as
// "?" so that the result does not parse.
func (t DataType) intervalName() string {
	names := intervalFieldNames[0]
	if t.Kind == KindDayTimeInterval {
		names = intervalFieldNames[1]
	}
	name := func(i int) string {
		if i < 0 || i >= len(names) {
			return "?"
		}
		return names[i]
	}
	if t.StartField == t.EndField {
		return "interval " + name(t.StartField)
	}
	return "interval " + name(t.StartField) + " to " + name(t.EndField)
}

// String renders s as a DDL column list that ParseSchema reads back, e.g.
// "id bigint NOT NULL, name string". Column names are backquoted when needed.
func (s Schema) String() string {
	var b strings.Builder
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteName(f.Name))
		b.WriteByte(' ')
		f.Type.write(&b)
		if !f.Nullable {
			b.WriteString(" NOT NULL")
		}
	}
	return b.String()
}

// Validate reports whether t is a type Spark accepts: a known kind, decimal
// precision 0..38 with scale 0..precision, non-negative char/varchar length,
// interval fields in range with start <= end, and valid nested types.
func (t DataType) Validate() error {
	switch {
	case !t.Kind.valid():
		return fmt.Errorf("invalid type: unknown kind %d", int(t.Kind))
	case t.Kind == KindDecimal && (t.Precision < 0 || t.Precision > MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision):
		return fmt.Errorf("invalid type: decimal(%d,%d) needs 0 <= scale <= precision <= %d", t.Precision, t.Scale, MaxDecimalPrecision)
	case (t.Kind == KindChar || t.Kind == KindVarchar) && t.Length < 0:
		return fmt.Errorf("invalid type: %s(%d) has a negative length", t.Kind, t.Length)
	case t.Kind == KindYearMonthInterval && !(0 <= t.StartField && t.StartField <= t.EndField && t.EndField <= IntervalMonth),
		t.Kind == KindDayTimeInterval && !(0 <= t.StartField && t.StartField <= t.EndField && t.EndField <= IntervalSecond):
		return fmt.Errorf("invalid type: %s fields %d to %d are out of range", t.Kind, t.StartField, t.EndField)
	}
	switch t.Kind {
	case KindStruct:
		for _, f := range t.Fields {
			if err := f.Type.Validate(); err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
	case KindArray:
		return deref(t.Elem).Validate()
	case KindMap:
		if err := deref(t.Key).Validate(); err != nil {
			return err
		}
		return deref(t.Value).Validate()
	}
	return nil
}
