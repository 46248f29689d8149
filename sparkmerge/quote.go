package sparkmerge

import (
	"errors"
	"strings"
)

// ErrEmptyIdent is returned by QuoteIdent for the empty name: Spark accepts
// an empty pair of backquotes, but an empty column name is almost always a
// bug upstream.
var ErrEmptyIdent = errors.New("empty identifier")

// QuoteIdent quotes a column name for Spark SQL with backticks, doubling any
// backtick inside. It rejects the empty name with ErrEmptyIdent.
//
// Every other name is quoted, whatever it contains: dots, spaces, quotes,
// newlines and non-ASCII letters are all literal inside backticks (checked on
// Spark 4.0.1: QuoteIdent("a`b.c d é") used as an alias yields exactly that
// column name).
func QuoteIdent(name string) (string, error) {
	if name == "" {
		return "", ErrEmptyIdent
	}
	return quoteBackticks(name), nil
}

func quoteBackticks(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// quoteName renders a field name inside a type or schema string: bare when it
// is a plain identifier that is not a reserved word, backquoted otherwise
// (including the empty name, which Spark's parser accepts as two backquotes).
func quoteName(name string) string {
	if isPlainIdent(name) && !reservedWords[strings.ToLower(name)] {
		return name
	}
	return quoteBackticks(name)
}

// isPlainIdent reports whether name matches [A-Za-z_][A-Za-z0-9_]*.
func isPlainIdent(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isWordByte(c) || i == 0 && c >= '0' && c <= '9' {
			return false
		}
	}
	return true
}

// reservedWords are the keywords Spark reserves when
// spark.sql.ansi.enforceReservedKeywords is on (SqlBaseParser.g4: the
// keywords outside ansiNonReserved). With that setting
// CAST(NULL AS struct<select:int>) fails to parse, so such names are always
// quoted. Quoting a word that is not reserved is harmless.
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all and any as authorization both case cast check
		collate collation column constraint create cross current_date current_time
		current_timestamp current_user distinct else end escape except execute false fetch
		filter for foreign from full grant group having in inner intersect into is join
		lateral leading left minus natural not null offset on only or order outer
		overlaps primary references right select session_user some table then time to
		trailing union unique unknown user using when where with within`) {
		m[w] = true
	}
	return m
}()

// QuoteString renders s as a Spark SQL string literal: single quotes, with
// backslashes and single quotes escaped by a backslash.
//
// This relies on Spark's default spark.sql.parser.escapedStringLiterals=false,
// under which a backslash escapes the next character. Doubling a quote does
// not work in Spark: two quotes in a row end one literal and start the next,
// which Spark concatenates, so the quote is lost (it reads "its").
// Checked on Spark 4.0.1: QuoteString(`it's \n "x" \\`) reads back unchanged,
// and newlines, tabs and non-ASCII text are kept literally.
func QuoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}
