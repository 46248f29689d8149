package infer

import (
	"errors"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark/internal/orcfooter"
)

func orcPrimitive(kind orcfooter.Kind) *orcfooter.Type { return &orcfooter.Type{Kind: kind} }

func orcStruct(names []string, children ...*orcfooter.Type) *orcfooter.Type {
	return &orcfooter.Type{Kind: orcfooter.Struct, FieldNames: names, Children: children}
}

func withAttribute(t *orcfooter.Type, value string) *orcfooter.Type {
	t.Attributes = map[string]string{catalystTypeAttribute: value}
	return t
}

// The conversion of every ORC type, as OrcUtils.toCatalystSchema gives it
// (the integration test TestLocalORCInferenceMatchesSpark checks Spark
// itself on files Spark wrote).
func TestORCSchema(t *testing.T) {
	root := orcStruct(
		[]string{"b", "i8", "i16", "i32", "i64", "f", "d", "s", "bin", "ts", "dt", "dec", "dec_default", "vc", "ch", "ntz", "ym", "dt_iv", "list", "m", "nested"},
		orcPrimitive(orcfooter.Boolean),
		orcPrimitive(orcfooter.Byte),
		orcPrimitive(orcfooter.Short),
		orcPrimitive(orcfooter.Int),
		orcPrimitive(orcfooter.Long),
		orcPrimitive(orcfooter.Float),
		orcPrimitive(orcfooter.Double),
		orcPrimitive(orcfooter.String),
		orcPrimitive(orcfooter.Binary),
		orcPrimitive(orcfooter.Timestamp),
		orcPrimitive(orcfooter.Date),
		&orcfooter.Type{Kind: orcfooter.Decimal, Precision: 12, Scale: 3, HasPrecision: true, HasScale: true},
		&orcfooter.Type{Kind: orcfooter.Decimal},
		&orcfooter.Type{Kind: orcfooter.Varchar, MaxLength: 10},
		&orcfooter.Type{Kind: orcfooter.Char, MaxLength: 3},
		withAttribute(orcPrimitive(orcfooter.Long), "timestamp_ntz"),
		withAttribute(orcPrimitive(orcfooter.Int), "interval year to month"),
		withAttribute(orcPrimitive(orcfooter.Long), "interval day to second"),
		&orcfooter.Type{Kind: orcfooter.List, Children: []*orcfooter.Type{withAttribute(orcPrimitive(orcfooter.String), "varchar(4)")}},
		&orcfooter.Type{Kind: orcfooter.Map, Children: []*orcfooter.Type{orcPrimitive(orcfooter.String), orcPrimitive(orcfooter.Double)}},
		orcStruct([]string{"x", "Y"}, orcPrimitive(orcfooter.Int), orcPrimitive(orcfooter.Char)),
	)
	got, err := orcSchemaOf(root, ORCConf{})
	if err != nil {
		t.Fatal(err)
	}
	want := "b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, f float, d double, s string, bin binary, ts timestamp, dt date, " +
		"dec decimal(12,3), dec_default decimal(38,10), vc string, ch string, ntz timestamp_ntz, ym interval year to month, dt_iv interval day to second, " +
		"list array<string>, m map<string,double>, nested struct<x:int,Y:string>"
	if got.String() != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	for _, f := range got.Fields {
		if !f.Nullable {
			t.Errorf("%s not nullable", f.Name)
		}
	}
	if m := got.Fields[19].Type; !m.ValueContainsNull {
		t.Errorf("map values not nullable: %+v", m)
	}

	// Under TIMESTAMP_NTZ, a timestamp is left to Spark; other types,
	// timestamp_ntz and timestamp_ltz stored by Spark included, are not.
	ntz, err := orcSchemaOf(orcStruct([]string{"ntz", "ltz"}, withAttribute(orcPrimitive(orcfooter.Long), "timestamp_ntz"), withAttribute(orcPrimitive(orcfooter.Long), "timestamp_ltz")), ORCConf{TimestampNTZ: true})
	if err != nil || ntz.String() != "ntz timestamp_ntz, ltz timestamp" {
		t.Errorf("under TIMESTAMP_NTZ: %s, %v", ntz, err)
	}
	for _, ts := range []*orcfooter.Type{orcPrimitive(orcfooter.Timestamp), withAttribute(orcPrimitive(orcfooter.Timestamp), "timestamp")} {
		if _, err := orcSchemaOf(orcStruct([]string{"ts"}, ts), ORCConf{TimestampNTZ: true}); !isReason(err, UnsupportedContents) {
			t.Errorf("a timestamp under TIMESTAMP_NTZ: %v, want it left to Spark", err)
		}
	}
}

// Types Spark would refuse or convert otherwise are left to Spark.
func TestORCSchemaRefuses(t *testing.T) {
	cases := []struct {
		name string
		root *orcfooter.Type
		want string
	}{
		{"no columns", orcStruct(nil), "no columns"},
		{"union", orcStruct([]string{"u"}, &orcfooter.Type{Kind: orcfooter.Union, Children: []*orcfooter.Type{orcPrimitive(orcfooter.Int)}}), "union"},
		{"instant", orcStruct([]string{"t"}, orcPrimitive(orcfooter.TimestampInstant)), "local time zone"},
		{"case duplicates", orcStruct([]string{"id", "ID"}, orcPrimitive(orcfooter.Int), orcPrimitive(orcfooter.Int)), `"ID" twice`},
		{"nested case duplicates", orcStruct([]string{"s"}, orcStruct([]string{"a", "A"}, orcPrimitive(orcfooter.Int), orcPrimitive(orcfooter.Int))), `"A" twice`},
		{"decimal too wide", orcStruct([]string{"d"}, &orcfooter.Type{Kind: orcfooter.Decimal, Precision: 39, Scale: 2, HasPrecision: true, HasScale: true}), "decimal(39,2)"},
		{"decimal of precision 0", orcStruct([]string{"d"}, &orcfooter.Type{Kind: orcfooter.Decimal, Precision: 0, HasPrecision: true}), "decimal(0,10)"},
		{"unparsable attribute", orcStruct([]string{"x"}, withAttribute(orcPrimitive(orcfooter.Long), "time(6)")), `"time(6)"`},
		{"nested attribute", orcStruct([]string{"x"}, withAttribute(orcPrimitive(orcfooter.String), "array<int>")), `"array<int>"`},
		{"list of a union", orcStruct([]string{"l"}, &orcfooter.Type{Kind: orcfooter.List, Children: []*orcfooter.Type{{Kind: orcfooter.Union}}}), "union"},
	}
	for _, tc := range cases {
		_, err := orcSchemaOf(tc.root, ORCConf{})
		var refused *Unsupported
		if !errors.As(err, &refused) || refused.Reason != UnsupportedContents || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an UnsupportedContents error with %q", tc.name, err, tc.want)
		}
	}
}

func TestORCConfFrom(t *testing.T) {
	c, err := ORCConfFrom(map[string]string{"spark.sql.timestampType": "TIMESTAMP_NTZ", "spark.sql.orc.impl": "native"})
	if err != nil || !c.TimestampNTZ {
		t.Errorf("NTZ: %+v, %v", c, err)
	}
	c, err = ORCConfFrom(map[string]string{"spark.sql.timestampType": "timestamp_ltz", "spark.sql.orc.impl": "NATIVE"})
	if err != nil || c.TimestampNTZ {
		t.Errorf("LTZ: %+v, %v", c, err)
	}
	for _, values := range []map[string]string{
		{"spark.sql.timestampType": "TIMESTAMP_LTZ", "spark.sql.orc.impl": "hive"},
		{"spark.sql.timestampType": "", "spark.sql.orc.impl": "native"},
		{},
	} {
		if _, err := ORCConfFrom(values); err == nil {
			t.Errorf("%v: read without error", values)
		}
	}
	if keys := ORCConfKeys(); len(keys) != 2 {
		t.Errorf("keys %v", keys)
	}
}

// ORCFile refuses reader options that may change the schema, files that
// are not ORC, and the zero Rules.
func TestORCFileRefuses(t *testing.T) {
	path := t.TempDir() + "/not.orc"
	if _, err := Spark40.ORCFile(path, map[string]string{"recursiveFileLookup": "true"}, ORCConf{}); !isReason(err, UnsupportedOptions) {
		t.Errorf("option: %v", err)
	}
	if _, err := Spark40.ORCFile(path, map[string]string{"mergeSchema": "true"}, ORCConf{}); !isReason(err, UnsupportedFile) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := (Rules{}).ORCFile(path, nil, ORCConf{}); !isReason(err, NoRules) {
		t.Errorf("zero rules: %v", err)
	}
}

func isReason(err error, reason Reason) bool {
	var refused *Unsupported
	return errors.As(err, &refused) && refused.Reason == reason
}
