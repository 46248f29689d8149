package sparkmerge

import (
	"errors"
	"testing"
)

func TestQuoteIdent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a", "`a`"},
		{"a`b.c d é", "`a``b.c d é`"}, // Spark 4.0.1: SELECT 1 AS `a``b.c d é` names the column a`b.c d é
		{"`", "````"},
		{"x.y", "`x.y`"},
		{"it's \"q\"", "`it's \"q\"`"},
		{"line\nbreak", "`line\nbreak`"},
		{"select", "`select`"},
		{"日本", "`日本`"},
	}
	for _, tt := range tests {
		got, err := QuoteIdent(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("QuoteIdent(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if back, ok := unquoteIdent(got); !ok || back != tt.in {
			t.Errorf("unquote(QuoteIdent(%q)) = %q, %v", tt.in, back, ok)
		}
	}
	if _, err := QuoteIdent(""); !errors.Is(err, ErrEmptyIdent) {
		t.Errorf("QuoteIdent(\"\") error = %v, want ErrEmptyIdent", err)
	}
}

// unquoteIdent reads a backquoted identifier as Spark's lexer does
// (a backquote inside is doubled), using the type lexer.
func unquoteIdent(s string) (string, bool) {
	toks := lex(s)
	if len(toks) != 2 || toks[0].kind != tokQuoted || toks[1].kind != tokEOF {
		return "", false
	}
	return toks[0].text, true
}

func TestQuoteName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a", "a"},
		{"_a1", "_a1"},
		{"A_B", "A_B"},
		{"1a", "`1a`"},
		{"", "``"},
		{"a b", "`a b`"},
		{"SELECT", "`SELECT`"},
		{"from", "`from`"},
		{"array", "array"}, // not reserved even under ANSI
	}
	for _, tt := range tests {
		if got := quoteName(tt.in); got != tt.want {
			t.Errorf("quoteName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuoteString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"abc", "'abc'"},
		// Checked on Spark 4.0.1: this literal reads back as the input.
		{`it's \n "x" \\`, `'it\'s \\n "x" \\\\'`},
		{"a\nb\té", "'a\nb\té'"},
		{`\%`, `'\\%'`},
	}
	for _, tt := range tests {
		got := QuoteString(tt.in)
		if got != tt.want {
			t.Errorf("QuoteString(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// Spark's default unescaping (mirrored by the comment lexer) gives the input back.
		if back, n, ok := unquoteSQLString(got); !ok || n != len(got) || back != tt.in {
			t.Errorf("unescape(QuoteString(%q)) = %q, %d, %v", tt.in, back, n, ok)
		}
	}
}
