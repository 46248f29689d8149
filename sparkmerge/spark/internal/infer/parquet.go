package infer

import (
	"fmt"
	"math"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/parquetfooter"
)

// A Parquet schema is all in the file's footer: the Parquet rules read the
// footer and convert it as Spark 4.0's
// ParquetFileFormat.readSchemaFromFooter does: the Spark schema a Spark
// writer stored in the key-value metadata if there is one, else
// ParquetToSparkSchemaConverter's rules for each column. Anything outside
// the rules reproduced here (nested columns from other writers, types
// Spark rejects, names equal but for case) is refused: Spark then gives
// its own schema or error.

// sparkRowMetadataKey is where Spark's Parquet writer stores the schema
// (ParquetReadSupport.SPARK_METADATA_KEY).
const sparkRowMetadataKey = "org.apache.spark.sql.parquet.row.metadata"

// ParquetConf holds the session settings that Spark's Parquet schema
// conversion reads (see [ParquetConfKeys]); the executor fetches them
// from the server.
type ParquetConf struct {
	BinaryAsString   bool // spark.sql.parquet.binaryAsString
	Int96AsTimestamp bool // spark.sql.parquet.int96AsTimestamp
	InferNTZ         bool // spark.sql.parquet.inferTimestampNTZ.enabled
	NanosAsLong      bool // spark.sql.legacy.parquet.nanosAsLong
}

// parquetConfKeys are the settings ParquetConf holds, in field order.
var parquetConfKeys = []string{
	"spark.sql.parquet.binaryAsString",
	"spark.sql.parquet.int96AsTimestamp",
	"spark.sql.parquet.inferTimestampNTZ.enabled",
	"spark.sql.legacy.parquet.nanosAsLong",
}

// ParquetConfKeys are the names of the session settings [ParquetConf]
// holds, for [ParquetConfFrom].
func ParquetConfKeys() []string { return append([]string(nil), parquetConfKeys...) }

// ParquetConfFrom reads the settings from their values by name, as the
// server reports them; each must be true or false.
func ParquetConfFrom(values map[string]string) (ParquetConf, error) {
	var c ParquetConf
	for i, dst := range []*bool{&c.BinaryAsString, &c.Int96AsTimestamp, &c.InferNTZ, &c.NanosAsLong} {
		switch v := strings.ToLower(strings.TrimSpace(values[parquetConfKeys[i]])); v {
		case "true":
			*dst = true
		case "false":
		default:
			return c, fmt.Errorf("setting %s is %q, not true or false", parquetConfKeys[i], v)
		}
	}
	return c, nil
}

// parquetSchemaOptions are the reader options that leave a Parquet file's
// schema as its footer says; with any other option Spark infers it.
var parquetSchemaOptions = map[string]bool{
	"mergeschema":        true,
	"datetimerebasemode": true,
	"int96rebasemode":    true,
}

// ParquetFile returns the schema Spark would give the Parquet file at
// path, a path of this machine's file system, from its footer, under the
// given reader options and session settings. The error is an
// [*Unsupported] when the file or options are outside what the rules
// reproduce.
func (r Rules) ParquetFile(path string, options map[string]string, conf ParquetConf) (sparkmerge.Schema, error) {
	f, err := r.ParquetFileSchema(path, options, conf)
	return f.Schema, err
}

// ParquetSchema is the schema Spark gives a Parquet file, and what its
// footer says of it beyond that.
type ParquetSchema struct {
	Schema sparkmerge.Schema
	// NullTyped are the columns of Parquet's Null logical type (UNKNOWN
	// in parquet.thrift), which Spark reads as int: a column that holds
	// no value, as pandas writes an all-None column, and every object
	// column of an empty frame.
	NullTyped []string
}

// ParquetFileSchema is [Rules.ParquetFile] with what the footer says
// beyond the schema.
func (r Rules) ParquetFileSchema(path string, options map[string]string, conf ParquetConf) (ParquetSchema, error) {
	if err := r.check(); err != nil {
		return ParquetSchema{}, err
	}
	for k := range options {
		if !parquetSchemaOptions[strings.ToLower(k)] {
			return ParquetSchema{}, unsupported(UnsupportedOptions, "reader option %q", k)
		}
	}
	meta, err := parquetfooter.ReadFile(path)
	if err != nil {
		return ParquetSchema{}, &Unsupported{Reason: UnsupportedFile, Msg: err.Error(), Err: err}
	}
	var out ParquetSchema
	if out.Schema, err = parquetFooterSchema(meta, conf, &out.NullTyped); err != nil {
		return ParquetSchema{}, err
	}
	return out, nil
}

// parquetSchemaOf converts a footer as readSchemaFromFooter does, then
// makes every field nullable, as Spark does for any file source.
func parquetSchemaOf(meta *parquetfooter.Meta, conf ParquetConf) (sparkmerge.Schema, error) {
	var nullTyped []string
	return parquetFooterSchema(meta, conf, &nullTyped)
}

// parquetFooterSchema is parquetSchemaOf, appending the columns of the
// Null logical type to nullTyped.
func parquetFooterSchema(meta *parquetfooter.Meta, conf ParquetConf, nullTyped *[]string) (sparkmerge.Schema, error) {
	var schema sparkmerge.Schema
	if stored, present := meta.KeyValue[sparkRowMetadataKey]; present {
		t, err := sparkmerge.ParseTypeJSON([]byte(stored))
		if err != nil || t.Kind != sparkmerge.KindStruct {
			// Spark would try its legacy schema string parser, then
			// the converter.
			return schema, unsupported(UnsupportedContents, "the footer's Spark schema is not in JSON form")
		}
		schema.Fields = t.Fields
	} else {
		root := meta.Schema[0]
		if root.NumChildren != len(meta.Schema)-1 {
			return schema, unsupported(UnsupportedContents, "nested columns")
		}
		for _, e := range meta.Schema[1:] {
			if e.NumChildren >= 0 {
				return schema, unsupported(UnsupportedContents, "nested column %q", e.Name)
			}
			if e.Repetition == parquetfooter.Repeated {
				return schema, unsupported(UnsupportedContents, "repeated column %q", e.Name)
			}
			t, why, ok := parquetColumnType(e, conf)
			if !ok {
				return schema, unsupported(UnsupportedContents, "column %q: %s", e.Name, why)
			}
			if l := logicalOf(e); l != nil && l.Kind == parquetfooter.LogicalUnknown {
				*nullTyped = append(*nullTyped, e.Name)
			}
			schema.Fields = append(schema.Fields, sparkmerge.Field{Name: e.Name, Type: t})
		}
	}
	seen := make(map[string]bool, len(schema.Fields))
	for i, f := range schema.Fields {
		// Spark refuses names equal but for case (in a case-insensitive
		// session): leave the error to it.
		folded := strings.ToLower(f.Name)
		if f.Name == "" || seen[folded] {
			return sparkmerge.Schema{}, unsupported(UnsupportedContents, "column name %q twice, or empty", f.Name)
		}
		seen[folded] = true
		schema.Fields[i].Nullable = true
		schema.Fields[i].Type = asNullable(f.Type)
	}
	return schema, nil
}

// parquetColumnType is ParquetToSparkSchemaConverter.convertPrimitiveField
// (Spark 4.0.1) for a column without a Spark read type.
func parquetColumnType(e parquetfooter.Element, conf ParquetConf) (t sparkmerge.DataType, why string, ok bool) {
	l := logicalOf(e)
	kind := 0
	if l != nil {
		kind = l.Kind
	}
	switch e.Type {
	case parquetfooter.Boolean:
		t, ok = plainType(kind, sparkmerge.KindBoolean)
	case parquetfooter.Float:
		t, ok = plainType(kind, sparkmerge.KindFloat)
	case parquetfooter.Double:
		t, ok = plainType(kind, sparkmerge.KindDouble)
	case parquetfooter.Int32:
		t, ok = int32Type(l, kind)
	case parquetfooter.Int64:
		t, ok = int64Type(l, kind, conf)
	case parquetfooter.Int96:
		t, ok = sparkmerge.Simple(sparkmerge.KindTimestamp), conf.Int96AsTimestamp
	case parquetfooter.ByteArray:
		t, ok = byteArrayType(l, kind, conf)
	case parquetfooter.FixedLenByteArray:
		switch kind {
		case 0:
			t, ok = sparkmerge.Simple(sparkmerge.KindBinary), true
		case parquetfooter.LogicalDecimal:
			t, ok = decimalType(l, maxPrecisionForBytes(e.TypeLength))
		}
	}
	if !ok {
		return t, fmt.Sprintf("Spark does not read physical type %d with annotation %+v", e.Type, l), false
	}
	return t, "", true
}

// plainType is k for a column without annotation.
func plainType(kind int, k sparkmerge.Kind) (sparkmerge.DataType, bool) {
	return sparkmerge.Simple(k), kind == 0
}

// decimalType is the decimal of annotation l, within maxPrecision digits
// (-1: up to Spark's 38).
func decimalType(l *parquetfooter.Logical, maxPrecision int) (sparkmerge.DataType, bool) {
	p, s := l.Precision, l.Scale
	if maxPrecision >= 0 && (p < 1 || p > maxPrecision) || p < 1 || p > 38 || s < 0 || s > p {
		return sparkmerge.DataType{}, false
	}
	return sparkmerge.NewDecimal(p, s), true
}

// int32Type is the type of an INT32 column.
func int32Type(l *parquetfooter.Logical, kind int) (sparkmerge.DataType, bool) {
	switch kind {
	case 0:
		return sparkmerge.Simple(sparkmerge.KindInt), true
	case parquetfooter.LogicalInteger:
		k, ok := int32Integers[intAnnotation{l.BitWidth, l.Signed}]
		return sparkmerge.Simple(k), ok
	case parquetfooter.LogicalDate:
		return sparkmerge.Simple(sparkmerge.KindDate), true
	case parquetfooter.LogicalDecimal:
		return decimalType(l, 9) // Decimal.MAX_INT_DIGITS
	case parquetfooter.LogicalUnknown:
		// The Null logical type (pyarrow writes a column of Arrow's null
		// type so), which Spark 4.0.1 reads as an int.
		return sparkmerge.Simple(sparkmerge.KindInt), true
	}
	return sparkmerge.DataType{}, false
}

// int64Type is the type of an INT64 column.
func int64Type(l *parquetfooter.Logical, kind int, conf ParquetConf) (sparkmerge.DataType, bool) {
	switch kind {
	case 0:
		return sparkmerge.Simple(sparkmerge.KindLong), true
	case parquetfooter.LogicalInteger:
		switch {
		case l.Signed && l.BitWidth == 64:
			return sparkmerge.Simple(sparkmerge.KindLong), true
		case !l.Signed && l.BitWidth == 64:
			return sparkmerge.NewDecimal(20, 0), true
		}
	case parquetfooter.LogicalDecimal:
		return decimalType(l, 18) // Decimal.MAX_LONG_DIGITS
	case parquetfooter.LogicalTimestamp:
		switch {
		case l.Unit == parquetfooter.Millis || l.Unit == parquetfooter.Micros:
			if l.AdjustedToUTC || !conf.InferNTZ {
				return sparkmerge.Simple(sparkmerge.KindTimestamp), true
			}
			return sparkmerge.Simple(sparkmerge.KindTimestampNTZ), true
		case l.Unit == parquetfooter.Nanos && conf.NanosAsLong:
			return sparkmerge.Simple(sparkmerge.KindLong), true
		}
	}
	return sparkmerge.DataType{}, false
}

// byteArrayType is the type of a BYTE_ARRAY column.
func byteArrayType(l *parquetfooter.Logical, kind int, conf ParquetConf) (sparkmerge.DataType, bool) {
	switch kind {
	case parquetfooter.LogicalString, parquetfooter.LogicalEnum, parquetfooter.LogicalJSON:
		return sparkmerge.Simple(sparkmerge.KindString), true
	case 0:
		if conf.BinaryAsString {
			return sparkmerge.Simple(sparkmerge.KindString), true
		}
		return sparkmerge.Simple(sparkmerge.KindBinary), true
	case parquetfooter.LogicalBSON:
		return sparkmerge.Simple(sparkmerge.KindBinary), true
	case parquetfooter.LogicalDecimal:
		return decimalType(l, -1)
	}
	return sparkmerge.DataType{}, false
}

// intAnnotation is an integer annotation: its bit width and signedness.
type intAnnotation struct {
	bits   int
	signed bool
}

// int32Integers are the types of INT32 columns annotated as integers: an
// unsigned one takes the next wider type.
var int32Integers = map[intAnnotation]sparkmerge.Kind{
	{8, true}: sparkmerge.KindByte, {16, true}: sparkmerge.KindShort, {32, true}: sparkmerge.KindInt,
	{8, false}: sparkmerge.KindShort, {16, false}: sparkmerge.KindInt, {32, false}: sparkmerge.KindLong,
}

// logicalOf returns e's annotation as parquet-mr reads it: the LogicalType
// when the file has one, else the one its ConvertedType stands for
// (ParquetMetadataConverter.getLogicalTypeAnnotation). An annotation with
// no Spark meaning here comes back with Kind -1.
func logicalOf(e parquetfooter.Element) *parquetfooter.Logical {
	switch {
	case e.Logical != nil:
		return e.Logical
	case e.Converted == -1:
		return nil
	case e.Converted == parquetfooter.ConvertedDecimal:
		return &parquetfooter.Logical{Kind: parquetfooter.LogicalDecimal, Scale: e.Scale, Precision: e.Precision}
	}
	if l, ok := convertedLogical[e.Converted]; ok {
		return &l
	}
	return &parquetfooter.Logical{Kind: -1}
}

// convertedLogical is the annotation each ConvertedType without
// parameters stands for, as parquet-mr reads it.
var convertedLogical = map[int]parquetfooter.Logical{
	parquetfooter.ConvertedUTF8:            {Kind: parquetfooter.LogicalString},
	parquetfooter.ConvertedEnum:            {Kind: parquetfooter.LogicalEnum},
	parquetfooter.ConvertedJSON:            {Kind: parquetfooter.LogicalJSON},
	parquetfooter.ConvertedBSON:            {Kind: parquetfooter.LogicalBSON},
	parquetfooter.ConvertedDate:            {Kind: parquetfooter.LogicalDate},
	parquetfooter.ConvertedTimestampMillis: {Kind: parquetfooter.LogicalTimestamp, AdjustedToUTC: true, Unit: parquetfooter.Millis},
	parquetfooter.ConvertedTimestampMicros: {Kind: parquetfooter.LogicalTimestamp, AdjustedToUTC: true, Unit: parquetfooter.Micros},
	parquetfooter.ConvertedInt8:            {Kind: parquetfooter.LogicalInteger, BitWidth: 8, Signed: true},
	parquetfooter.ConvertedInt16:           {Kind: parquetfooter.LogicalInteger, BitWidth: 16, Signed: true},
	parquetfooter.ConvertedInt32:           {Kind: parquetfooter.LogicalInteger, BitWidth: 32, Signed: true},
	parquetfooter.ConvertedInt64:           {Kind: parquetfooter.LogicalInteger, BitWidth: 64, Signed: true},
	parquetfooter.ConvertedUint8:           {Kind: parquetfooter.LogicalInteger, BitWidth: 8},
	parquetfooter.ConvertedUint16:          {Kind: parquetfooter.LogicalInteger, BitWidth: 16},
	parquetfooter.ConvertedUint32:          {Kind: parquetfooter.LogicalInteger, BitWidth: 32},
	parquetfooter.ConvertedUint64:          {Kind: parquetfooter.LogicalInteger, BitWidth: 64},
}

// maxPrecisionForBytes is Decimal.maxPrecisionForBytes: the most decimal
// digits a signed n-byte integer holds.
func maxPrecisionForBytes(n int) int {
	switch {
	case n < 1:
		return 0
	case n > 64:
		return math.MaxInt32
	}
	return int(math.Floor(math.Log10(math.Pow(2, float64(8*n-1)) - 1)))
}

// asNullable is Spark's DataType.asNullable: every field, array element
// and map value nullable.
func asNullable(t sparkmerge.DataType) sparkmerge.DataType {
	switch t.Kind {
	case sparkmerge.KindStruct:
		fields := make([]sparkmerge.Field, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = sparkmerge.Field{Name: f.Name, Type: asNullable(f.Type), Nullable: true}
		}
		return sparkmerge.StructOf(fields...)
	case sparkmerge.KindArray:
		return sparkmerge.ArrayOf(asNullable(*t.Elem), true)
	case sparkmerge.KindMap:
		return sparkmerge.MapOf(asNullable(*t.Key), asNullable(*t.Value), true)
	}
	return t
}
