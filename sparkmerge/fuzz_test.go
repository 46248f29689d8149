package sparkmerge

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var typeSeeds = []string{
	"int", "BIGINT", "decimal(38,38)", "dec", "char(3)", "varchar(0)", "interval", "interval day to second",
	"interval year to month", "timestamp_ltz", "void", "null", "variant", "struct<>",
	"struct<a:int,b string NOT NULL COMMENT 'x\\'y',`a``b`:array<map<string,decimal(5,2)>>>",
	"array<struct<`select`:int,``:void>>", "map<struct<k:int>,array<interval month>>",
	"struct<a:interval,b:interval hour>", "struct<`é\n`:int>", "array<int", "decimal(99999999999)",
	"struct<a:int comment \"q\\\"\">", "  Array < Int >  ",
}

// FuzzParseType checks that ParseType never panics and that every type it
// accepts renders to a string that parses back to the same type, and survives
// the JSON form unchanged.
func FuzzParseType(f *testing.F) {
	for _, s := range typeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := ParseType(s)
		if err != nil {
			return
		}
		if err := typ.Validate(); err != nil {
			t.Fatalf("ParseType(%q) = %v, which is invalid: %v", s, typ, err)
		}
		str := typ.String()
		again, err := ParseType(str)
		if err != nil {
			t.Fatalf("ParseType(%q) = %s, which does not parse: %v", s, str, err)
		}
		if !again.Equal(typ) {
			t.Fatalf("ParseType(%q) = %s, re-parsed as %s", s, str, again)
		}
		if again.String() != str {
			t.Fatalf("String not stable: %q then %q", str, again.String())
		}
		b, err := json.Marshal(typ)
		if err != nil {
			if utf8.ValidString(s) {
				t.Fatalf("Marshal(%s): %v", str, err)
			}
			return // a field name that is not UTF-8 cannot be written as JSON
		}
		fromJSON, err := ParseTypeJSON(b)
		if err != nil || !fromJSON.Equal(typ) {
			t.Fatalf("JSON round trip of %s: %v, %v", b, fromJSON, err)
		}
	})
}

// FuzzParseSchema checks that ParseSchema never panics and that Schema.String
// reads back to the same schema.
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{"", "id bigint NOT NULL, name string", "`a b` int COMMENT 'c', `select` date",
		"struct<a:int>", "struct int", "a array<struct<x:int>>, b map<string,int>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sch, err := ParseSchema(s)
		if err != nil {
			return
		}
		again, err := ParseSchema(sch.String())
		if err != nil || !again.Equal(sch) {
			t.Fatalf("ParseSchema(%q).String() = %q re-parsed as %v, %v", s, sch.String(), again, err)
		}
	})
}

// FuzzQuoteIdent checks that QuoteIdent never panics, rejects only the empty
// name, and that Spark's backquote rule reads the result back as the input,
// also when embedded in a struct type.
func FuzzQuoteIdent(f *testing.F) {
	for _, s := range []string{"a", "a`b.c d é", "`", "``", "", "x\ny", "it's \"q\"", "select", "1a", "\x00", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q, err := QuoteIdent(name)
		if name == "" {
			if err == nil {
				t.Fatal("QuoteIdent(\"\") succeeded")
			}
			return
		}
		if err != nil {
			t.Fatalf("QuoteIdent(%q): %v", name, err)
		}
		back, ok := unquoteIdent(q)
		if !ok || back != name {
			t.Fatalf("QuoteIdent(%q) = %q, reads back as %q (%v)", name, q, back, ok)
		}
		typ := StructOf(NewField(name, kt(KindInt)))
		parsed, err := ParseType(typ.String())
		if err != nil || !parsed.Equal(typ) {
			t.Fatalf("struct with field %q renders as %s, parses as %v, %v", name, typ, parsed, err)
		}
		lit := QuoteString(name)
		if v, n, ok := unquoteSQLString(lit); !ok || n != len(lit) || v != name {
			t.Fatalf("QuoteString(%q) = %s reads back as %q", name, lit, v)
		}
	})
}
