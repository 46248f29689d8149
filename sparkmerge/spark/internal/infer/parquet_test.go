package infer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark/internal/parquetfooter"
)

// defaultParquetConf is Spark 4.0's defaults.
var defaultParquetConf = ParquetConf{Int96AsTimestamp: true, InferNTZ: true}

// fixture is a Parquet file of the executor's testdata/parquet (gen.py),
// which the integration tests give Spark too.
func fixture(name string) string { return filepath.Join("..", "..", "testdata", "parquet", name) }

// The schemas Spark 4.0.1 infers for the fixtures (the integration test
// TestLocalParquetInferenceMatchesSpark compares with the server itself).
func TestLocalParquetSchema(t *testing.T) {
	cases := []struct {
		file, want string
	}{
		{"primitives.parquet", "b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, u8 smallint, u16 int, u32 bigint, u64 decimal(20,0), " +
			"f32 float, f64 double, s string, ls string, dict string, bin binary, fixed binary, day date, " +
			"dec9 decimal(9,2), dec18 decimal(18,4), dec38 decimal(38,10), " +
			"ts_ms_utc timestamp, ts_us_utc timestamp, ts_us_local timestamp_ntz, ts_ms_local timestamp_ntz"},
		{"decimals-as-integers.parquet", "dec4 decimal(4,2), dec9 decimal(9,2), dec18 decimal(18,4), dec30 decimal(30,5)"},
		// Required columns are nullable too: Spark makes file schemas nullable.
		{"required.parquet", "id bigint, Name string, score double"},
		{"int96.parquet", "id int, at timestamp"},
		// Parquet's Null logical type: an int to Spark.
		{"null-typed.parquet", "id bigint, paid int"},
	}
	for _, tc := range cases {
		s, err := Spark40.ParquetFile(fixture(tc.file), nil, defaultParquetConf)
		if err != nil {
			t.Errorf("%s: not inferred: %v", tc.file, err)
			continue
		}
		if s.String() != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.file, s, tc.want)
		}
		for _, f := range s.Fields {
			if !f.Nullable {
				t.Errorf("%s: %s is not nullable", tc.file, f.Name)
			}
		}
	}

	declined := map[string]string{
		"nested.parquet":          "nested column",
		"time-of-day.parquet":     `column "t"`,
		"nanos.parquet":           `column "at"`,
		"case-duplicates.parquet": "twice",
	}
	for file, why := range declined {
		s, err := Spark40.ParquetFile(fixture(file), nil, defaultParquetConf)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: inferred %v (%s), reason %v: want it left to Spark for %q", file, err == nil, s, err, why)
		} else if err.(*Unsupported).Reason != UnsupportedContents {
			t.Errorf("%s: %#v, want refused for its contents", file, err)
		}
	}
	if _, err := Spark40.ParquetFile(fixture("day-1.parquet"), map[string]string{"recursiveFileLookup": "true"}, defaultParquetConf); err == nil || err.(*Unsupported).Reason != UnsupportedOptions {
		t.Errorf("inferred with an unknown reader option (%v)", err)
	}
	if _, err := Spark40.ParquetFile(fixture("day-1.parquet"), map[string]string{"mergeSchema": "true"}, defaultParquetConf); err != nil {
		t.Error("mergeSchema=true is a schema-neutral option for one file")
	}
	if _, err := Spark40.ParquetFile(fixture("gen.py"), nil, defaultParquetConf); err == nil || err.(*Unsupported).Reason != UnsupportedFile {
		t.Errorf("not a Parquet file: %v, want refused for the file", err)
	}
	if _, err := (Rules{}).ParquetFile(fixture("day-1.parquet"), nil, defaultParquetConf); err == nil || err.(*Unsupported).Reason != NoRules {
		t.Errorf("zero Rules: %v", err)
	}
}

// Session settings change the conversion as they change Spark's.
func TestParquetConfSettings(t *testing.T) {
	conf, err := ParquetConfFrom(map[string]string{
		"spark.sql.parquet.binaryAsString":            "TRUE",
		"spark.sql.parquet.int96AsTimestamp":          "false",
		"spark.sql.parquet.inferTimestampNTZ.enabled": "false",
		"spark.sql.legacy.parquet.nanosAsLong":        "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Spark40.ParquetFile(fixture("primitives.parquet"), nil, conf)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); !strings.Contains(got, "bin string") || !strings.Contains(got, "ts_us_local timestamp,") {
		t.Errorf("with binaryAsString and without NTZ inference: %s", got)
	}
	if s, err := Spark40.ParquetFile(fixture("nanos.parquet"), nil, conf); err != nil || s.String() != "at bigint" {
		t.Errorf("nanos with nanosAsLong: %v %s, want at bigint", err == nil, s)
	}
	if _, err := Spark40.ParquetFile(fixture("int96.parquet"), nil, conf); err == nil || !strings.Contains(err.Error(), `"at"`) {
		t.Errorf("int96 without int96AsTimestamp: inferred %v (%v), want Spark's error", err == nil, err)
	}
	if _, err := ParquetConfFrom(map[string]string{}); err == nil {
		t.Error("missing settings: no error")
	}
	keys := ParquetConfKeys()
	values := map[string]string{}
	for _, k := range keys {
		values[k] = " False "
	}
	if conf, err := ParquetConfFrom(values); err != nil || conf != (ParquetConf{}) {
		t.Errorf("all false: %+v, %v", conf, err)
	}
	keys[0] = "changed"
	if ParquetConfKeys()[0] == "changed" {
		t.Error("ParquetConfKeys shares its slice")
	}
}

// Spark's own files carry their schema in the footer, nested types and
// all; Spark reads it instead of converting the Parquet types.
func TestParquetSparkRowMetadata(t *testing.T) {
	stored := `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
		`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},` +
		`{"name":"c","type":"string","nullable":true,"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"char(3)"}}]}`
	meta := &parquetfooter.Meta{
		Schema:   []parquetfooter.Element{{Name: "spark_schema", NumChildren: 1}, {Name: "ignored", Type: parquetfooter.Int32, NumChildren: -1, Converted: -1}},
		KeyValue: map[string]string{sparkRowMetadataKey: stored},
	}
	s, err := parquetSchemaOf(meta, defaultParquetConf)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "id bigint, tags array<string>, c char(3)" && got != "id bigint, tags array<string>, c string" {
		t.Errorf("schema %s", got)
	}
	if !s.Fields[0].Nullable || !s.Fields[1].Type.ContainsNull {
		t.Errorf("not made nullable: %+v", s.Fields[:2])
	}
	meta.KeyValue[sparkRowMetadataKey] = "StructType(StructField(id,LongType,true))" // Spark 1.x form
	if _, err := parquetSchemaOf(meta, defaultParquetConf); err == nil {
		t.Error("legacy schema string: inferred, want it left to Spark")
	}
}

// Writers before LogicalType set only ConvertedType; parquet-mr reads it
// as the matching annotation.
func TestParquetConvertedTypes(t *testing.T) {
	cases := []struct {
		physical, converted, precision, scale int
		want                                  string
	}{
		{parquetfooter.ByteArray, parquetfooter.ConvertedUTF8, 0, 0, "string"},
		{parquetfooter.ByteArray, parquetfooter.ConvertedEnum, 0, 0, "string"},
		{parquetfooter.ByteArray, parquetfooter.ConvertedJSON, 0, 0, "string"},
		{parquetfooter.ByteArray, parquetfooter.ConvertedBSON, 0, 0, "binary"},
		{parquetfooter.ByteArray, -1, 0, 0, "binary"},
		{parquetfooter.ByteArray, parquetfooter.ConvertedDecimal, 40, 2, ""}, // over 38 digits
		{parquetfooter.ByteArray, parquetfooter.ConvertedDecimal, 25, 2, "decimal(25,2)"},
		{parquetfooter.Int32, parquetfooter.ConvertedDate, 0, 0, "date"},
		{parquetfooter.Int32, parquetfooter.ConvertedInt8, 0, 0, "tinyint"},
		{parquetfooter.Int32, parquetfooter.ConvertedUint8, 0, 0, "smallint"},
		{parquetfooter.Int32, parquetfooter.ConvertedUint32, 0, 0, "bigint"},
		{parquetfooter.Int32, parquetfooter.ConvertedInt64, 0, 0, ""}, // illegal
		{parquetfooter.Int32, parquetfooter.ConvertedDecimal, 9, 2, "decimal(9,2)"},
		{parquetfooter.Int32, parquetfooter.ConvertedDecimal, 10, 2, ""}, // too many digits for INT32
		{parquetfooter.Int32, parquetfooter.ConvertedTimeMillis, 0, 0, ""},
		{parquetfooter.Int64, parquetfooter.ConvertedTimestampMillis, 0, 0, "timestamp"},
		{parquetfooter.Int64, parquetfooter.ConvertedTimestampMicros, 0, 0, "timestamp"},
		{parquetfooter.Int64, parquetfooter.ConvertedUint64, 0, 0, "decimal(20,0)"},
		{parquetfooter.Int64, parquetfooter.ConvertedDecimal, 18, 0, "decimal(18,0)"},
		{parquetfooter.Int64, parquetfooter.ConvertedDecimal, 19, 0, ""},
		{parquetfooter.FixedLenByteArray, -1, 0, 0, "binary"},
		{parquetfooter.FixedLenByteArray, parquetfooter.ConvertedInterval, 0, 0, ""},
		{parquetfooter.Int96, -1, 0, 0, "timestamp"},
		{parquetfooter.Boolean, parquetfooter.ConvertedUTF8, 0, 0, ""},
	}
	for _, tc := range cases {
		e := parquetfooter.Element{Name: "c", Type: tc.physical, Repetition: parquetfooter.Optional, NumChildren: -1,
			Converted: tc.converted, Precision: tc.precision, Scale: tc.scale, FieldID: -1}
		got, _, ok := parquetColumnType(e, defaultParquetConf)
		if !ok {
			if tc.want != "" {
				t.Errorf("physical %d converted %d: declined, want %s", tc.physical, tc.converted, tc.want)
			}
			continue
		}
		if got.String() != tc.want {
			t.Errorf("physical %d converted %d: %s, want %q", tc.physical, tc.converted, got, tc.want)
		}
	}
	// A fixed-length decimal holds at most Decimal.maxPrecisionForBytes digits.
	for n, want := range map[int]int{1: 2, 2: 4, 4: 9, 5: 11, 8: 18, 9: 21, 16: 38} {
		if got := maxPrecisionForBytes(n); got != want {
			t.Errorf("maxPrecisionForBytes(%d) = %d, want %d", n, got, want)
		}
	}
}

// A column of Parquet's Null logical type (pyarrow's null type, pandas'
// column of None) is an int to Spark and named as holding no value: it
// was left to Spark, and taken as int evidence (found in the field).
func TestParquetNullTypedColumns(t *testing.T) {
	f, err := Spark40.ParquetFileSchema(fixture("null-typed.parquet"), nil, defaultParquetConf)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Schema.String(), "id bigint, paid int"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if len(f.NullTyped) != 1 || f.NullTyped[0] != "paid" {
		t.Errorf("null-typed columns %q, want paid", f.NullTyped)
	}
	if f, err := Spark40.ParquetFileSchema(fixture("primitives.parquet"), nil, defaultParquetConf); err != nil || len(f.NullTyped) != 0 {
		t.Errorf("primitives.parquet: null-typed %v, %v; want none", f.NullTyped, err)
	}
}
