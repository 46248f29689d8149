package sparkmerge

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseError reports a type or schema string that does not parse. Offset is
// the byte offset in Input where the problem was found.
type ParseError struct {
	Input  string
	Offset int
	Msg    string // what was expected or what is wrong, e.g. `expected ">", found ","`
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("parse type %q: at offset %d: %s", e.Input, e.Offset, e.Msg)
}

// maxNesting bounds the depth of nested types, so hostile input cannot
// exhaust the stack.
const maxNesting = 1000

// ParseType parses Spark's SQL type syntax, e.g. "decimal(10,2)" or
// "array<struct<a:int,`b c`:string>>".
//
// It accepts what Spark 4.0 accepts in CAST(x AS <type>): keywords in any case
// with Spark's aliases (byte, short, integer, long, real, dec, numeric,
// character, timestamp_ltz), "null" as a synonym of void, struct fields in
// both "a:int" and "a int" forms with optional NOT NULL and COMMENT '...'
// (dropped), and backquoted names (a backquote inside is doubled). Arrays and map values
// come out with containsNull/valueContainsNull true, struct fields nullable
// unless NOT NULL: Spark's defaults. Errors are *ParseError.
func ParseType(s string) (DataType, error) {
	p := newParser(s)
	t, err := p.dataType(0)
	if err != nil {
		return DataType{}, err
	}
	if err := p.expectEOF(); err != nil {
		return DataType{}, err
	}
	return t, nil
}

// ParseSchema parses a DDL column list such as "id bigint NOT NULL, name string",
// as DataFrameReader.schema(String) accepts it. A "struct<...>" type is also
// accepted and gives its fields. The empty string is the empty schema.
// Errors are *ParseError.
func ParseSchema(ddl string) (Schema, error) {
	p := newParser(ddl)
	if p.peek().kind == tokEOF {
		return Schema{}, nil
	}
	if tk := p.peek(); tk.kind == tokWord && strings.EqualFold(tk.text, "struct") {
		// "struct<...>" or a column named struct: try the type form first.
		save := p.pos
		if t, err := p.dataType(0); err == nil && p.peek().kind == tokEOF {
			return Schema{Fields: t.Fields}, nil
		}
		p.pos = save
	}
	fields, err := p.fieldList(false, 0, tokEOF)
	if err != nil {
		return Schema{}, err
	}
	return Schema{Fields: fields}, nil
}

type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // identifier or keyword: [A-Za-z0-9_]+ not all digits
	tokNumber         // [0-9]+
	tokQuoted         // `...` with `` for a backquote; text is the unquoted name
	tokString         // '...' or "..."; text is the unescaped value
	tokPunct          // one of < > ( ) , :
	tokBad            // a character or literal that cannot start a token
)

type token struct {
	kind tokKind
	text string
	off  int
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokQuoted:
		return "quoted name `" + strings.ReplaceAll(t.text, "`", "``") + "`"
	case tokString:
		return "string literal"
	case tokBad:
		return t.text
	}
	return strconv.Quote(t.text)
}

type parser struct {
	in   string
	toks []token
	pos  int
}

func newParser(s string) *parser {
	return &parser{in: s, toks: lex(s)}
}

func lex(s string) []token {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case isWordByte(c):
			j := i
			digits := true
			for j < len(s) && isWordByte(s[j]) {
				if s[j] < '0' || s[j] > '9' {
					digits = false
				}
				j++
			}
			k := tokWord
			if digits {
				k = tokNumber
			}
			toks = append(toks, token{k, s[i:j], i})
			i = j
		case c == '`':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return append(toks, token{tokBad, "unterminated quoted name", i})
			}
			toks = append(toks, token{tokQuoted, b.String(), i})
			i = j
		case c == '\'' || c == '"':
			v, n, ok := unquoteSQLString(s[i:])
			if !ok {
				return append(toks, token{tokBad, "unterminated string literal", i})
			}
			toks = append(toks, token{tokString, v, i})
			i += n
		case strings.IndexByte("<>(),:", c) >= 0:
			toks = append(toks, token{tokPunct, s[i : i+1], i})
			i++
		default:
			r := []rune(s[i:min(len(s), i+4)])[0]
			return append(toks, token{tokBad, fmt.Sprintf("unexpected character %q", r), i})
		}
	}
	return append(toks, token{tokEOF, "", len(s)})
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// unquoteSQLString reads a Spark string literal at the start of s (quote
// character s[0]) with Spark's default backslash escapes, returning the value
// and the number of bytes consumed.
func unquoteSQLString(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case '0':
				b.WriteByte(0)
			case 'Z':
				b.WriteByte(26)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) errorf(t token, format string, args ...any) *ParseError {
	return &ParseError{Input: p.in, Offset: t.off, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) expected(what string) *ParseError {
	t := p.peek()
	return p.errorf(t, "expected %s, found %s", what, t.describe())
}

// is reports whether the next token is of kind k with the text s, in any
// case for a word (a keyword).
func (p *parser) is(k tokKind, s string) bool {
	t := p.peek()
	return t.kind == k && (t.text == s || k == tokWord && strings.EqualFold(t.text, s))
}

// accept consumes the next token if it is (see is) of kind k with text s.
func (p *parser) accept(k tokKind, s string) bool {
	if p.is(k, s) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) isKeyword(kw string) bool     { return p.is(tokWord, kw) }
func (p *parser) acceptKeyword(kw string) bool { return p.accept(tokWord, kw) }
func (p *parser) isPunct(c string) bool        { return p.is(tokPunct, c) }
func (p *parser) acceptPunct(c string) bool    { return p.accept(tokPunct, c) }

func (p *parser) expectPunct(c string) error {
	if !p.acceptPunct(c) {
		return p.expected(strconv.Quote(c))
	}
	return nil
}

func (p *parser) expectEOF() error {
	if p.peek().kind != tokEOF {
		return p.expected("end of input")
	}
	return nil
}

var simpleTypes = map[string]Kind{
	"boolean":       KindBoolean,
	"tinyint":       KindByte,
	"byte":          KindByte,
	"smallint":      KindShort,
	"short":         KindShort,
	"int":           KindInt,
	"integer":       KindInt,
	"bigint":        KindLong,
	"long":          KindLong,
	"float":         KindFloat,
	"real":          KindFloat,
	"double":        KindDouble,
	"string":        KindString,
	"binary":        KindBinary,
	"date":          KindDate,
	"timestamp":     KindTimestamp,
	"timestamp_ltz": KindTimestamp,
	"timestamp_ntz": KindTimestampNTZ,
	"variant":       KindVariant,
	"void":          KindNull,
	"null":          KindNull,
}

var yearMonthFields = map[string]int{"year": IntervalYear, "month": IntervalMonth}

var dayTimeFields = map[string]int{
	"day": IntervalDay, "hour": IntervalHour, "minute": IntervalMinute, "second": IntervalSecond,
}

var intervalFieldNames = [2][]string{
	{"year", "month"},
	{"day", "hour", "minute", "second"},
}

func (p *parser) dataType(depth int) (DataType, error) {
	if depth > maxNesting {
		return DataType{}, p.errorf(p.peek(), "types nested more than %d deep", maxNesting)
	}
	start := p.peek()
	if start.kind != tokWord {
		return DataType{}, p.expected("a type")
	}
	p.pos++
	name := strings.ToLower(start.text)
	switch name {
	case "array":
		t, err := p.typeParams(depth, 1)
		if err != nil {
			return DataType{}, err
		}
		return ArrayOf(t[0], true), nil
	case "map":
		t, err := p.typeParams(depth, 2)
		if err != nil {
			return DataType{}, err
		}
		return MapOf(t[0], t[1], true), nil
	case "struct":
		if err := p.expectPunct("<"); err != nil {
			return DataType{}, err
		}
		if p.acceptPunct(">") {
			return StructOf(), nil
		}
		fields, err := p.fieldList(true, depth+1, tokPunct)
		if err != nil {
			return DataType{}, err
		}
		if err := p.expectPunct(">"); err != nil {
			return DataType{}, err
		}
		return StructOf(fields...), nil
	case "interval":
		return p.interval()
	case "decimal", "dec", "numeric":
		args, err := p.typeArgs(start, 2)
		if err != nil {
			return DataType{}, err
		}
		switch len(args) {
		case 0:
			return NewDecimal(DefaultDecimalPrecision, 0), nil
		case 1:
			args = append(args, 0)
		}
		if args[0] > MaxDecimalPrecision {
			return DataType{}, p.errorf(start, "decimal precision %d exceeds the maximum %d", args[0], MaxDecimalPrecision)
		}
		if args[1] > args[0] {
			return DataType{}, p.errorf(start, "decimal scale %d is greater than precision %d", args[1], args[0])
		}
		return NewDecimal(args[0], args[1]), nil
	case "char", "character", "varchar":
		args, err := p.typeArgs(start, 1)
		if err != nil {
			return DataType{}, err
		}
		if len(args) == 0 {
			return DataType{}, p.errorf(start, "%s requires a length, e.g. %s(10)", name, name)
		}
		if name == "varchar" {
			return NewVarchar(args[0]), nil
		}
		return NewChar(args[0]), nil
	}
	k, ok := simpleTypes[name]
	if !ok {
		return DataType{}, p.errorf(start, "unsupported data type %q", start.text)
	}
	if k == KindString && p.isKeyword("collate") {
		return DataType{}, p.errorf(p.peek(), "collated strings are not supported")
	}
	if p.isPunct("(") {
		return DataType{}, p.errorf(p.peek(), "type %s takes no parameters", name)
	}
	return DataType{Kind: k}, nil
}

// typeParams reads the n comma-separated types between angle brackets
// that follow array or map: <T> or <K, V>.
func (p *parser) typeParams(depth, n int) ([]DataType, error) {
	if err := p.expectPunct("<"); err != nil {
		return nil, err
	}
	types := make([]DataType, n)
	for i := range types {
		if i > 0 {
			if err := p.expectPunct(","); err != nil {
				return nil, err
			}
		}
		t, err := p.dataType(depth + 1)
		if err != nil {
			return nil, err
		}
		types[i] = t
	}
	if err := p.expectPunct(">"); err != nil {
		return nil, err
	}
	return types, nil
}

// typeArgs reads an optional "(n[,n...])" with at most max numbers.
func (p *parser) typeArgs(typeTok token, max int) ([]int, error) {
	if !p.acceptPunct("(") {
		return nil, nil
	}
	var args []int
	for {
		t := p.peek()
		if t.kind != tokNumber {
			return nil, p.expected("a non-negative integer")
		}
		n, err := strconv.Atoi(t.text)
		if err != nil || n > 1<<30 {
			return nil, p.errorf(t, "number %s is too large", t.text)
		}
		p.pos++
		args = append(args, n)
		if p.acceptPunct(")") {
			break
		}
		if len(args) == max {
			return nil, p.expected(`")"`)
		}
		if err := p.expectPunct(","); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// interval parses what follows the keyword INTERVAL.
func (p *parser) interval() (DataType, error) {
	t := p.peek()
	if t.kind != tokWord {
		return DataType{Kind: KindCalendarInterval}, nil
	}
	unit := strings.ToLower(t.text)
	kind, fields := KindYearMonthInterval, yearMonthFields
	if _, ok := fields[unit]; !ok {
		kind, fields = KindDayTimeInterval, dayTimeFields
		if _, ok := fields[unit]; !ok {
			// Not a unit: a bare INTERVAL, the calendar interval.
			return DataType{Kind: KindCalendarInterval}, nil
		}
	}
	p.pos++
	start := fields[unit]
	end := start
	if p.acceptKeyword("to") {
		et := p.peek()
		e, ok := fields[strings.ToLower(et.text)]
		if et.kind != tokWord || !ok {
			names := intervalFieldNames[0]
			if kind == KindDayTimeInterval {
				names = intervalFieldNames[1]
			}
			return DataType{}, p.expected("one of " + strings.Join(names[start+1:], ", "))
		}
		if e <= start {
			return DataType{}, p.errorf(et, "interval %s to %s is not supported: the end field must come after the start field", unit, strings.ToLower(et.text))
		}
		p.pos++
		end = e
	}
	return DataType{Kind: kind, StartField: start, EndField: end}, nil
}

// fieldList reads "name [:] type [NOT NULL] [COMMENT 'x']" entries separated
// by commas, up to (not including) a token of kind stop ('>' for structs,
// end of input for a schema). colon says whether the ':' form is allowed.
func (p *parser) fieldList(colon bool, depth int, stop tokKind) ([]Field, error) {
	var fields []Field
	for {
		nt := p.peek()
		if nt.kind != tokWord && nt.kind != tokQuoted {
			return nil, p.expected("a field name")
		}
		p.pos++
		if colon {
			p.acceptPunct(":")
		}
		t, err := p.dataType(depth)
		if err != nil {
			return nil, err
		}
		f := Field{Name: nt.text, Type: t, Nullable: true}
		if p.acceptKeyword("not") {
			if !p.acceptKeyword("null") {
				return nil, p.expected(`"NULL" after "NOT"`)
			}
			f.Nullable = false
		}
		if p.acceptKeyword("comment") {
			if p.peek().kind != tokString {
				return nil, p.expected("a string literal after COMMENT")
			}
			p.pos++
		}
		fields = append(fields, f)
		if !p.acceptPunct(",") {
			break
		}
	}
	if stop == tokEOF {
		if err := p.expectEOF(); err != nil {
			if p.peek().kind != tokBad {
				err = p.expected(`"," or end of input`)
			}
			return nil, err
		}
	} else if !p.isPunct(">") {
		return nil, p.expected(`"," or ">"`)
	}
	return fields, nil
}
