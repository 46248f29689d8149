package sparkmerge

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func kt(kind Kind) DataType { return DataType{Kind: kind} }

func TestParseType(t *testing.T) {
	tests := []struct {
		in   string
		want DataType
		str  string // canonical rendering
	}{
		{"boolean", kt(KindBoolean), "boolean"},
		{"tinyint", kt(KindByte), "tinyint"},
		{"BYTE", kt(KindByte), "tinyint"},
		{"smallint", kt(KindShort), "smallint"},
		{"short", kt(KindShort), "smallint"},
		{"int", kt(KindInt), "int"},
		{"Integer", kt(KindInt), "int"},
		{"bigint", kt(KindLong), "bigint"},
		{"long", kt(KindLong), "bigint"},
		{"float", kt(KindFloat), "float"},
		{"real", kt(KindFloat), "float"},
		{"double", kt(KindDouble), "double"},
		{"decimal", NewDecimal(10, 0), "decimal(10,0)"},
		{"dec(5)", NewDecimal(5, 0), "decimal(5,0)"},
		{"numeric( 12 , 4 )", NewDecimal(12, 4), "decimal(12,4)"},
		{"DECIMAL(38,38)", NewDecimal(38, 38), "decimal(38,38)"},
		{"decimal(0,0)", NewDecimal(0, 0), "decimal(0,0)"}, // Spark 4.0.1 accepts it
		{"string", kt(KindString), "string"},
		{"char(3)", NewChar(3), "char(3)"},
		{"character(3)", NewChar(3), "char(3)"},
		{"varchar(5)", NewVarchar(5), "varchar(5)"},
		{"binary", kt(KindBinary), "binary"},
		{"date", kt(KindDate), "date"},
		{"timestamp", kt(KindTimestamp), "timestamp"},
		{"timestamp_ltz", kt(KindTimestamp), "timestamp"},
		{"TIMESTAMP_NTZ", kt(KindTimestampNTZ), "timestamp_ntz"},
		{"interval year", NewYearMonthInterval(IntervalYear, IntervalYear), "interval year"},
		{"interval month", NewYearMonthInterval(IntervalMonth, IntervalMonth), "interval month"},
		{"INTERVAL YEAR TO MONTH", NewYearMonthInterval(IntervalYear, IntervalMonth), "interval year to month"},
		{"interval day", NewDayTimeInterval(IntervalDay, IntervalDay), "interval day"},
		{"interval day to hour", NewDayTimeInterval(IntervalDay, IntervalHour), "interval day to hour"},
		{"interval day to second", NewDayTimeInterval(IntervalDay, IntervalSecond), "interval day to second"},
		{"interval hour to minute", NewDayTimeInterval(IntervalHour, IntervalMinute), "interval hour to minute"},
		{"interval minute to second", NewDayTimeInterval(IntervalMinute, IntervalSecond), "interval minute to second"},
		{"interval second", NewDayTimeInterval(IntervalSecond, IntervalSecond), "interval second"},
		{"interval", kt(KindCalendarInterval), "interval"},
		{"variant", kt(KindVariant), "variant"},
		{"void", kt(KindNull), "void"},
		{"null", kt(KindNull), "void"},
		{"array<int>", ArrayOf(kt(KindInt), true), "array<int>"},
		{" Array < Int > ", ArrayOf(kt(KindInt), true), "array<int>"},
		{"array<interval>", ArrayOf(kt(KindCalendarInterval), true), "array<interval>"},
		{"map<string,bigint>", MapOf(kt(KindString), kt(KindLong), true), "map<string,bigint>"},
		{"struct<>", StructOf(), "struct<>"},
		{"struct<a:int>", StructOf(NewField("a", kt(KindInt))), "struct<a:int>"},
		{
			"struct<a int, b : string not null comment 'it\\'s', c interval>",
			StructOf(NewField("a", kt(KindInt)), Field{"b", kt(KindString), false}, NewField("c", kt(KindCalendarInterval))),
			"struct<a:int,b:string NOT NULL,c:interval>",
		},
		{
			"struct<`a``b`:int,`b c`:string,`x.y`:date,`é`:binary,``:int,`1a`:int,select:int,_ok1:int>",
			StructOf(NewField("a`b", kt(KindInt)), NewField("b c", kt(KindString)), NewField("x.y", kt(KindDate)),
				NewField("é", kt(KindBinary)), NewField("", kt(KindInt)), NewField("1a", kt(KindInt)),
				NewField("select", kt(KindInt)), NewField("_ok1", kt(KindInt))),
			"struct<`a``b`:int,`b c`:string,`x.y`:date,`é`:binary,``:int,`1a`:int,`select`:int,_ok1:int>",
		},
		{
			// keywords are valid field names
			"struct<struct:int,array:int,int:int,not:int,comment:int>",
			StructOf(NewField("struct", kt(KindInt)), NewField("array", kt(KindInt)), NewField("int", kt(KindInt)),
				NewField("not", kt(KindInt)), NewField("comment", kt(KindInt))),
			"struct<struct:int,array:int,int:int,`not`:int,comment:int>",
		},
		{
			"array<struct<a:int,b:array<map<string,decimal(12,4)>>>>",
			ArrayOf(StructOf(NewField("a", kt(KindInt)),
				NewField("b", ArrayOf(MapOf(kt(KindString), NewDecimal(12, 4), true), true))), true),
			"array<struct<a:int,b:array<map<string,decimal(12,4)>>>>",
		},
		{
			"map<struct<k:int>,array<void>>",
			MapOf(StructOf(NewField("k", kt(KindInt))), ArrayOf(kt(KindNull), true), true),
			"map<struct<k:int>,array<void>>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseType(tt.in)
			if err != nil {
				t.Fatalf("ParseType(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseType(%q) (-want +got):\n%s", tt.in, diff)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			again, err := ParseType(got.String())
			if err != nil || !again.Equal(got) {
				t.Errorf("ParseType(String()) = %v, %v; want %v", again, err, got)
			}
		})
	}
}

func TestParseTypeErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string // substring of ParseError.Msg
	}{
		{"", 0, "expected a type, found end of input"},
		{"   ", 3, "expected a type"},
		{"integr", 0, `unsupported data type "integr"`},
		{"int(3)", 3, "takes no parameters"},
		{"array<int", 9, `expected ">", found end of input`},
		{"array<int,int>", 9, `expected ">", found ","`},
		{"array", 5, `expected "<"`},
		{"map<string>", 10, `expected ","`},
		{"struct<a:int,>", 13, "expected a field name"},
		{"struct<a:int", 12, `expected "," or ">"`},
		{"struct<a-b:int>", 8, "unexpected character '-'"},
		{"struct<é:int>", 7, "unexpected character 'é'"},
		{"struct<a:int COMMENT 'x' NOT NULL>", 25, `expected "," or ">"`},
		{"struct<a:int not>", 16, `expected "NULL" after "NOT"`},
		{"struct<a:int comment>", 20, "expected a string literal"},
		{"struct<`a:int>", 7, "unterminated quoted name"},
		{"struct<a:int comment 'x>", 21, "unterminated string literal"},
		{"decimal(39,0)", 0, "precision 39 exceeds the maximum 38"},
		{"decimal(5,6)", 0, "scale 6 is greater than precision 5"},
		{"decimal(10,2,3)", 12, `expected ")"`},
		{"decimal(-1,0)", 8, "unexpected character '-'"},
		{"decimal(x)", 8, "expected a non-negative integer"},
		{"decimal(99999999999999999999)", 8, "too large"},
		{"char", 0, "char requires a length"},
		{"varchar()", 8, "expected a non-negative integer"},
		{"interval month to month", 18, "end field must come after"},
		{"interval year to year", 17, "end field must come after"},
		{"interval second to day", 19, "end field must come after"},
		{"interval year to day", 17, "expected one of month"},
		{"interval day to", 15, "expected one of hour, minute, second"},
		{"timestamp without time zone", 10, "expected end of input"},
		{"string collate utf8_lcase", 7, "collated strings are not supported"},
		{"int int", 4, "expected end of input"},
		{"array<" + strings.Repeat("array<", maxNesting+1) + "int" + strings.Repeat(">", maxNesting+2), 0, "nested more than"},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			_, err := ParseType(tt.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseType(%q) error = %v, want *ParseError", tt.in, err)
			}
			if !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("ParseType(%q) msg = %q, want it to contain %q", tt.in, pe.Msg, tt.msg)
			}
			if tt.msg != "nested more than" && pe.Offset != tt.offset {
				t.Errorf("ParseType(%q) offset = %d, want %d (%v)", tt.in, pe.Offset, tt.offset, err)
			}
			if pe.Input != tt.in || !strings.HasPrefix(err.Error(), "parse type ") {
				t.Errorf("error %q does not name the input", err)
			}
		})
	}
}

func TestParseSchema(t *testing.T) {
	tests := []struct {
		in   string
		want Schema
		str  string
	}{
		{"", Schema{}, ""},
		{"id bigint NOT NULL, name string", NewSchema(Field{"id", kt(KindLong), false}, NewField("name", kt(KindString))),
			"id bigint NOT NULL, name string"},
		{"`a b` int COMMENT 'the a', `select` date, `x``y` decimal(10,2) not null",
			NewSchema(NewField("a b", kt(KindInt)), NewField("select", kt(KindDate)), Field{"x`y", NewDecimal(10, 2), false}),
			"`a b` int, `select` date, `x``y` decimal(10,2) NOT NULL"},
		{"struct<a:int,b:string>", NewSchema(NewField("a", kt(KindInt)), NewField("b", kt(KindString))), "a int, b string"},
		{"struct<>", Schema{}, ""},
		{"struct int, map map<int,int>", NewSchema(NewField("struct", kt(KindInt)), NewField("map", MapOf(kt(KindInt), kt(KindInt), true))),
			"struct int, map map<int,int>"},
		{"ts timestamp_ntz, iv interval day to second, s struct<x:int>",
			NewSchema(NewField("ts", kt(KindTimestampNTZ)), NewField("iv", NewDayTimeInterval(IntervalDay, IntervalSecond)),
				NewField("s", StructOf(NewField("x", kt(KindInt))))),
			"ts timestamp_ntz, iv interval day to second, s struct<x:int>"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSchema(tt.in)
			if err != nil {
				t.Fatalf("ParseSchema(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSchema(%q) (-want +got):\n%s", tt.in, diff)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			again, err := ParseSchema(got.String())
			if err != nil || !again.Equal(got) {
				t.Errorf("ParseSchema(String()) = %v, %v; want %v", again, err, got)
			}
		})
	}
}

func TestParseSchemaErrors(t *testing.T) {
	for _, in := range []string{"id", "id bigint,", "id bigint name string", "a:int", "struct<a:int> x", ", a int", "a int NOT"} {
		_, err := ParseSchema(in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseSchema(%q) error = %v, want *ParseError", in, err)
		}
	}
}
