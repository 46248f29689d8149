package infer

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sparkmerge/sparkmerge"
)

// The JSON rules infer the schema of a JSON-lines file exactly as Spark's
// JsonInferSchema does with the default options: integers are bigint
// (decimal(p,0) past bigint, double past 38 digits), other numbers double,
// empty strings count as null, objects are structs with fields sorted by
// name, arrays take the merged type of their elements, a type conflict
// gives string, and after merging every record, null becomes string and
// empty structs vanish. Files Spark would parse differently (a record over
// several lines, NaN, single quotes, duplicate or non-ASCII keys, other
// options) are refused.

// JSONFile is what the rules learn from a JSON-lines file.
type JSONFile struct {
	// Raw is the merged type of the file's records before Spark's final
	// canonicalisation ([Rules.JSONSchema]), which merging with other
	// files must precede: a struct whose fields may still be void (null
	// so far) or empty structs.
	Raw sparkmerge.DataType
	// Reprinted are the top-level keys (as spelled) with a value whose
	// text Spark's JSON reader keeps in a string column while from_json
	// prints the parsed value (1.50 is "1.50" to the reader, "1.5" to
	// from_json, as Spark 4's exact string parsing needs the raw bytes):
	// a number with a fraction or an exponent, -0, an object or an array.
	// A scan that parses the file with from_json cannot read such a key
	// into a string column.
	Reprinted map[string]bool
	// ShortNumbers: no number in the file has more than 15 digits, so
	// every one becomes a double exactly (see sparkmerge.RoundsValues).
	ShortNumbers bool
	// Rounded are the top-level keys (as spelled) typed as double that
	// hold a number with more significant digits than a double keeps
	// (see CSVFile.Rounded): by key, the first such number.
	Rounded map[string]string
}

// JSONFile infers the raw schema of the JSON-lines file at path, a path of
// this machine's file system, under the given reader options. The error is
// an [*Unsupported] when the options or the file are outside what the
// rules reproduce.
func (r Rules) JSONFile(path string, options map[string]string) (JSONFile, error) {
	if err := r.jsonOptions(options); err != nil {
		return JSONFile{}, err
	}
	data, err := readSmall(path)
	if err != nil {
		return JSONFile{}, err
	}
	return jsonFile(data)
}

// JSONLines is [Rules.JSONFile] on a file's bytes.
func (r Rules) JSONLines(data []byte, options map[string]string) (JSONFile, error) {
	if err := r.jsonOptions(options); err != nil {
		return JSONFile{}, err
	}
	if err := checkText(data); err != nil {
		return JSONFile{}, err
	}
	return jsonFile(data)
}

// jsonOptions refuses every reader option but mode, which does not affect
// inference.
func (r Rules) jsonOptions(options map[string]string) error {
	if err := r.check(); err != nil {
		return err
	}
	for k := range options {
		if !strings.EqualFold(k, "mode") {
			return unsupported(UnsupportedOptions, "reader option %s", k)
		}
	}
	return nil
}

// JSONSchema is the schema Spark reads a JSON file with, from the raw
// type of its records ([JSONFile.Raw], or several files' raw types
// merged): JsonInferSchema.canonicalizeType. It refuses a type that has
// no column left.
func (r Rules) JSONSchema(raw sparkmerge.DataType) (sparkmerge.Schema, error) {
	if err := r.check(); err != nil {
		return sparkmerge.Schema{}, err
	}
	schema, ok := jsonSchemaOf(raw)
	if !ok {
		return schema, unsupported(UnsupportedContents, "no column is left once empty structs vanish")
	}
	return schema, nil
}

// jsonSchemaOf is the read schema of a raw inferred struct.
func jsonSchemaOf(raw sparkmerge.DataType) (sparkmerge.Schema, bool) {
	t, ok := jsonCanonical(raw)
	if !ok {
		return sparkmerge.Schema{}, false
	}
	return sparkmerge.NewSchema(t.Fields...), true
}

// jsonFile is what the rules learn from a file's bytes.
func jsonFile(data []byte) (JSONFile, error) {
	f, err := scanJSONLines(data)
	f.ShortNumbers = err == nil && shortNumbers(data)
	return f, err
}

// scanJSONLines is jsonFile but for ShortNumbers.
func scanJSONLines(data []byte) (JSONFile, error) {
	raw := sparkmerge.StructOf()
	if err := checkText(data); err != nil {
		return JSONFile{Raw: raw}, err
	}
	// The records' fields merge by name, whatever their order: one map for
	// the file instead of a sorted struct per record.
	var (
		sc        jsonScanner
		columns   []sparkmerge.DataType // by key id; Kind 0 (void) until seen
		seenKey   []bool                // by key id: in some record
		reprinted []bool                // by key id: see JSONFile.Reprinted
		rounded   []string              // by key id: see JSONFile.Rounded
		stamp     []int                 // by folded key id: the record that last had it
	)
	records, lines := 0, 0
	for len(data) > 0 {
		var line []byte
		var ok bool
		lines++
		if line, data, ok = nextLine(data); !ok {
			return JSONFile{Raw: raw}, unsupported(UnsupportedContents, "has a carriage return that does not end a line")
		}
		if len(bytes.Trim(line, " \t")) == 0 {
			continue
		}
		sc.data, sc.pos = line, 0
		sc.skipSpace()
		if sc.peek() != '{' {
			return JSONFile{Raw: raw}, unsupported(UnsupportedContents, "a record that is not an object")
		}
		sc.depth = 0
		if err := sc.record(&columns, &seenKey, &reprinted, &rounded, &stamp, records+1); errors.Is(err, errJSONTooDeep) {
			return JSONFile{Raw: raw}, &TooDeepError{Line: lines, Depth: nestingDepth(line)}
		} else if err != nil {
			return JSONFile{Raw: raw}, unsupported(UnsupportedContents, "a record: %s", err)
		}
		if sc.skipSpace(); sc.pos != len(sc.data) {
			return JSONFile{Raw: raw}, unsupported(UnsupportedContents, "a line holds more than one record")
		}
		records++
	}
	if records == 0 {
		return JSONFile{Raw: raw}, unsupported(UnsupportedContents, "no records")
	}
	fields := make([]sparkmerge.Field, 0, len(sc.names))
	spelled := map[int]bool{}
	var reprintedKeys map[string]bool
	var roundedKeys map[string]string
	for _, k := range sc.names {
		if k.id >= len(columns) || !seenKey[k.id] {
			continue // a key of nested objects only
		}
		t := &columns[k.id]
		if spelled[k.foldedID] {
			return JSONFile{Raw: raw}, unsupported(UnsupportedContents, "spells a key two ways") // Spark fails on it
		}
		spelled[k.foldedID] = true
		fields = append(fields, sparkmerge.NewField(k.name, *t))
		if reprinted[k.id] {
			if reprintedKeys == nil {
				reprintedKeys = map[string]bool{}
			}
			reprintedKeys[k.name] = true
		}
		if k.id < len(rounded) && rounded[k.id] != "" && t.Kind == sparkmerge.KindDouble {
			if roundedKeys == nil {
				roundedKeys = map[string]string{}
			}
			roundedKeys[k.name] = rounded[k.id]
		}
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Name < fields[j].Name })
	return JSONFile{Raw: sparkmerge.StructOf(fields...), Reprinted: reprintedKeys, Rounded: roundedKeys}, nil
}

var errJSONUnsupported = errors.New("a value Spark may read differently")

// MaxJSONDepth is how many objects and arrays deep a JSON record may
// nest, the record itself counting one. Spark reads no deeper safely:
// its JSON schema inference recurses once per level on a task's thread,
// and a record nested 400 levels deep ran a Spark 4.0.1 server (local[2],
// the JVM's default thread stack) out of stack, which ended it (a fatal
// error ends the executor, with local[N] the whole server), where 300
// levels were inferred; Jackson, its parser, takes a record of more than
// 1,000 levels for a malformed one. The rules refuse a deeper record
// (a [*TooDeepError]), which also bounds what typing one costs: a record
// of 100,000 levels took the client 10 GB (the type's text, rendered
// level by level, grows with the square of the depth).
const MaxJSONDepth = 256

// TooDeepError is the error of a JSON file holding a record nested more
// than [MaxJSONDepth] levels deep: Spark cannot read it safely.
type TooDeepError struct {
	// Line is the line of the first such record (1 is the first), and
	// Depth how deep it nests.
	Line, Depth int
}

func (e *TooDeepError) Error() string {
	return fmt.Sprintf("its record on line %d nests objects and arrays %d levels deep, past the %d that Spark reads safely", e.Line, e.Depth, MaxJSONDepth)
}

// nestingDepth is how deep a JSON text nests objects and arrays, counted
// in one pass without recursion: brackets outside strings.
func nestingDepth(text []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// errJSONTooDeep is the scanner's error of a record past MaxJSONDepth.
var errJSONTooDeep = errors.New("nested too deep")

// enter notes that the scanner enters an object or an array, refusing
// one past MaxJSONDepth before scanning it.
func (s *jsonScanner) enter() error {
	if s.depth >= MaxJSONDepth {
		return errJSONTooDeep
	}
	s.depth++
	return nil
}

// leave notes that the scanner left an object or an array.
func (s *jsonScanner) leave() { s.depth-- }

// jsonScanner walks one JSON record by the strict grammar of RFC 8259,
// which Spark's Jackson parser (with Spark's options) reads the same way;
// anything looser (NaN, single quotes, leading zeros, comments) is an
// error here, and Spark infers that file. It computes types, not values.
type jsonScanner struct {
	data []byte
	pos  int
	// names interns keys: records of one file repeat the same few.
	names  map[string]jsonKey
	folded map[string]int
	// order is the keys of the last top-level record by position, the
	// likely keys of the next (a file's records mostly share one shape):
	// comparing bytes is cheaper than hashing them.
	order []jsonKey
	// depth is how many objects and arrays hold the scanner's position.
	depth int
}

type jsonKey struct {
	name, folded string
	ok           bool // non-empty ASCII, which Spark sorts as Go does
	id, foldedID int  // dense numbers of name and folded name in this file
}

// key is the interned key for the bytes of a name.
func (s *jsonScanner) key(b []byte) jsonKey {
	if k, ok := s.names[string(b)]; ok {
		return k
	}
	name := string(b)
	k := jsonKey{name: name, folded: strings.ToLower(name), ok: name != "" && isASCII(name), id: len(s.names)}
	if s.names == nil {
		s.names, s.folded = map[string]jsonKey{}, map[string]int{}
	}
	if id, ok := s.folded[k.folded]; ok {
		k.foldedID = id
	} else {
		k.foldedID = len(s.folded)
		s.folded[k.folded] = k.foldedID
	}
	s.names[name] = k
	return k
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *jsonScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return false
	}
	s.pos += len(word)
	return true
}

// value is JsonInferSchema.inferField on the value at the scanner.
func (s *jsonScanner) value() (sparkmerge.DataType, error) {
	switch c := s.peek(); {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start, end, err := s.str(false)
		if err != nil {
			return sparkmerge.DataType{}, err
		}
		if start == end {
			// Spark takes empty strings for nulls while inferring.
			return sparkmerge.Simple(sparkmerge.KindNull), nil
		}
		return sparkmerge.Simple(sparkmerge.KindString), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case s.literal("true"), s.literal("false"):
		return sparkmerge.Simple(sparkmerge.KindBoolean), nil
	case s.literal("null"):
		return sparkmerge.Simple(sparkmerge.KindNull), nil
	}
	return sparkmerge.DataType{}, errJSONUnsupported
}

// record scans a top-level object, the n-th record, and merges its
// fields' types into columns (by key id), marking in reprinted the keys
// of numbers from_json prints otherwise (see JSONFile.Reprinted); stamp
// (by folded key id) finds a key repeated in the record.
func (s *jsonScanner) record(columns *[]sparkmerge.DataType, seenKey, reprinted *[]bool, rounded *[]string, stamp *[]int, n int) error {
	return s.members(true, func(k jsonKey) bool {
		for len(*stamp) <= k.foldedID {
			*stamp = append(*stamp, 0)
		}
		if (*stamp)[k.foldedID] == n {
			return false
		}
		(*stamp)[k.foldedID] = n
		return true
	}, func(k jsonKey, t sparkmerge.DataType, text []byte) {
		for len(*columns) <= k.id {
			*columns = append(*columns, sparkmerge.DataType{})
			*seenKey = append(*seenKey, false)
			*reprinted = append(*reprinted, false)
			*rounded = append(*rounded, "")
		}
		if len(text) > 16 && (*rounded)[k.id] == "" && (t.Kind == sparkmerge.KindDouble || t.Kind == sparkmerge.KindLong || t.Kind == sparkmerge.KindDecimal) && roundedByDouble(text) {
			// (A long or decimal too, which a double elsewhere in the
			// column makes a double.)
			(*rounded)[k.id] = string(text)
		}
		if t.Kind == sparkmerge.KindDouble || string(text) == "-0" || t.Kind.IsComplex() {
			// An object or array in a string column is its raw text to
			// the reader and a re-print to from_json ({"k": 1.50} is
			// {"k":1.5}).
			(*reprinted)[k.id] = true
		}
		if !(*seenKey)[k.id] {
			(*columns)[k.id], (*seenKey)[k.id] = t, true
		} else if c := &(*columns)[k.id]; c.Kind != t.Kind || !isScalarJSONType(t.Kind) {
			*c = jsonCompatible(*c, t)
		}
	})
}

func (s *jsonScanner) object() (sparkmerge.DataType, error) {
	var fields []sparkmerge.Field
	seen := map[int]bool{}
	err := s.members(false, func(k jsonKey) bool {
		if seen[k.foldedID] {
			return false
		}
		seen[k.foldedID] = true
		return true
	}, func(k jsonKey, t sparkmerge.DataType, _ []byte) {
		fields = append(fields, sparkmerge.NewField(k.name, t))
	})
	if err != nil {
		return sparkmerge.DataType{}, err
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Name < fields[j].Name })
	return sparkmerge.StructOf(fields...), nil
}

// members scans an object's members and passes each key, value type and
// value text to add. first says whether a key's folded spelling is new in
// the object; top, whether the object is a record (see order).
func (s *jsonScanner) members(top bool, first func(jsonKey) bool, add func(jsonKey, sparkmerge.DataType, []byte)) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.pos++ // {
	s.skipSpace()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.skipSpace()
		if s.peek() != '"' {
			return errJSONUnsupported
		}
		start, end, err := s.str(true)
		if err != nil {
			return err
		}
		// Spark keeps both of two equal keys (and fails later), drops
		// empty names, and sorts in UTF-16 order.
		var k jsonKey
		switch name := s.data[start:end]; {
		case !top:
			k = s.key(name)
		case i < len(s.order) && string(name) == s.order[i].name:
			k = s.order[i]
		default:
			k = s.key(name)
			if i < len(s.order) {
				s.order[i] = k
			} else {
				s.order = append(s.order, k)
			}
		}
		if !k.ok || !first(k) {
			return errJSONUnsupported
		}
		s.skipSpace()
		if s.peek() != ':' {
			return errJSONUnsupported
		}
		s.pos++
		s.skipSpace()
		at := s.pos
		t, err := s.value()
		if err != nil {
			return err
		}
		add(k, t, s.data[at:s.pos])
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
			continue
		case '}':
			s.pos++
			return nil
		}
		return errJSONUnsupported
	}
}

func (s *jsonScanner) array() (sparkmerge.DataType, error) {
	if err := s.enter(); err != nil {
		return sparkmerge.DataType{}, err
	}
	defer s.leave()
	s.pos++ // [
	elem := sparkmerge.Simple(sparkmerge.KindNull)
	s.skipSpace()
	if s.peek() == ']' {
		s.pos++
		return sparkmerge.ArrayOf(elem, true), nil
	}
	for {
		s.skipSpace()
		t, err := s.value()
		if err != nil {
			return sparkmerge.DataType{}, err
		}
		elem = jsonCompatible(elem, t)
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
			continue
		case ']':
			s.pos++
			return sparkmerge.ArrayOf(elem, true), nil
		}
		return sparkmerge.DataType{}, errJSONUnsupported
	}
}

// str scans a string and returns where its text starts and ends; keys
// with escapes are left to Spark.
func (s *jsonScanner) str(key bool) (start, end int, err error) {
	s.pos++ // opening quote
	start = s.pos
	// Most strings hold no escape: find the closing quote at once.
	if j := bytes.IndexByte(s.data[s.pos:], '"'); j >= 0 {
		plain := true
		for _, c := range s.data[s.pos : s.pos+j] {
			if c < 0x20 || c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			s.pos += j + 1
			return start, s.pos - 1, nil
		}
	}
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			end = s.pos
			s.pos++
			return start, end, nil
		case c < 0x20:
			return 0, 0, errJSONUnsupported
		case c == '\\':
			if key {
				return 0, 0, errJSONUnsupported
			}
			s.pos++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				if s.pos+5 > len(s.data) {
					return 0, 0, errJSONUnsupported
				}
				for _, h := range s.data[s.pos+1 : s.pos+5] {
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(h)) {
						return 0, 0, errJSONUnsupported
					}
				}
				s.pos += 5
			default:
				return 0, 0, errJSONUnsupported
			}
		default:
			s.pos++
		}
	}
	return 0, 0, errJSONUnsupported
}

// digits consumes one or more digits; false when there are none.
func (s *jsonScanner) digits() bool {
	d := leadingDigits(s.data[s.pos:])
	s.pos += d
	return d > 0
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and types it.
func (s *jsonScanner) number() (sparkmerge.DataType, error) {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	if s.peek() == '0' && leadingDigits(s.data[s.pos:]) > 1 {
		return sparkmerge.DataType{}, errJSONUnsupported // a leading zero
	}
	if !s.digits() {
		return sparkmerge.DataType{}, errJSONUnsupported
	}
	fraction := false
	if s.peek() == '.' {
		s.pos++
		if !s.digits() {
			return sparkmerge.DataType{}, errJSONUnsupported
		}
		fraction = true
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return sparkmerge.DataType{}, errJSONUnsupported
		}
		if overflowsDouble(s.data[start:s.pos]) {
			// 1e400: Spark's reader gives Infinity, which a positional
			// scan's cast from text would not: left to Spark.
			return sparkmerge.DataType{}, errJSONUnsupported
		}
		fraction = true
	}
	if fraction {
		return sparkmerge.Simple(sparkmerge.KindDouble), nil
	}
	t := jsonNumberType(s.data[start:s.pos])
	if t.Kind == sparkmerge.KindDouble && overflowsDouble(s.data[start:s.pos]) {
		return sparkmerge.DataType{}, errJSONUnsupported
	}
	return t, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// jsonNumberType types an integer literal: Jackson reports INT or LONG
// when it fits a long (bigint), else BIG_INTEGER (decimal(precision,0) up
// to 38 digits, then double). Numbers with a fraction or exponent are
// DOUBLE (see number).
func jsonNumberType(n []byte) sparkmerge.DataType {
	if fitsInt(n, 64) {
		return sparkmerge.Simple(sparkmerge.KindLong)
	}
	if p := significantDigits(n); p <= sparkmerge.MaxDecimalPrecision {
		return sparkmerge.NewDecimal(p, 0)
	}
	return sparkmerge.Simple(sparkmerge.KindDouble)
}

// isScalarJSONType says whether two types of kind k are always equal (and
// so compatible as they are).
func isScalarJSONType(k sparkmerge.Kind) bool {
	return k == sparkmerge.KindLong || k == sparkmerge.KindDouble || k == sparkmerge.KindString ||
		k == sparkmerge.KindBoolean || k == sparkmerge.KindNull
}

// jsonCompatible is JsonInferSchema.compatibleType (with string as the
// fallback) on the types JSON inference produces: void, boolean, bigint,
// decimal(p,0), double, string, structs with sorted fields and arrays.
func jsonCompatible(a, b sparkmerge.DataType) sparkmerge.DataType {
	switch {
	case a.Equal(b):
		return a
	case a.Kind == sparkmerge.KindNull:
		return b
	case b.Kind == sparkmerge.KindNull:
		return a
	}
	str := sparkmerge.Simple(sparkmerge.KindString)
	switch {
	case a.Kind == sparkmerge.KindLong && b.Kind == sparkmerge.KindDouble, a.Kind == sparkmerge.KindDouble && b.Kind == sparkmerge.KindLong:
		return sparkmerge.Simple(sparkmerge.KindDouble)
	case a.Kind == sparkmerge.KindDouble && b.Kind == sparkmerge.KindDecimal, a.Kind == sparkmerge.KindDecimal && b.Kind == sparkmerge.KindDouble:
		return sparkmerge.Simple(sparkmerge.KindDouble)
	case a.Kind == sparkmerge.KindLong && b.Kind == sparkmerge.KindDecimal:
		return jsonCompatible(sparkmerge.NewDecimal(20, 0), b)
	case a.Kind == sparkmerge.KindDecimal && b.Kind == sparkmerge.KindLong:
		return jsonCompatible(a, sparkmerge.NewDecimal(20, 0))
	case a.Kind == sparkmerge.KindDecimal && b.Kind == sparkmerge.KindDecimal:
		// Scale 0 on both sides: the range is the larger precision.
		return sparkmerge.NewDecimal(max(a.Precision, b.Precision), 0)
	case a.Kind == sparkmerge.KindStruct && b.Kind == sparkmerge.KindStruct:
		return mergeSortedStructs(a, b)
	case a.Kind == sparkmerge.KindArray && b.Kind == sparkmerge.KindArray:
		return sparkmerge.ArrayOf(jsonCompatible(*a.Elem, *b.Elem), true)
	}
	return str
}

// mergeSortedStructs merges two structs whose fields are sorted by name,
// as Spark does: one field per name, in name order.
func mergeSortedStructs(a, b sparkmerge.DataType) sparkmerge.DataType {
	var out []sparkmerge.Field
	i, j := 0, 0
	for i < len(a.Fields) && j < len(b.Fields) {
		fa, fb := a.Fields[i], b.Fields[j]
		switch {
		case fa.Name == fb.Name:
			out = append(out, sparkmerge.NewField(fa.Name, jsonCompatible(fa.Type, fb.Type)))
			i++
			j++
		case fa.Name < fb.Name:
			out = append(out, fa)
			i++
		default:
			out = append(out, fb)
			j++
		}
	}
	out = append(out, a.Fields[i:]...)
	out = append(out, b.Fields[j:]...)
	return sparkmerge.StructOf(out...)
}

// jsonCanonical is JsonInferSchema.canonicalizeType: void becomes string,
// structs without fields vanish (and arrays of them). ok is false for a
// type that vanishes.
func jsonCanonical(t sparkmerge.DataType) (sparkmerge.DataType, bool) {
	switch t.Kind {
	case sparkmerge.KindNull:
		return sparkmerge.Simple(sparkmerge.KindString), true
	case sparkmerge.KindArray:
		elem, ok := jsonCanonical(*t.Elem)
		if !ok {
			return t, false
		}
		return sparkmerge.ArrayOf(elem, t.ContainsNull), true
	case sparkmerge.KindStruct:
		var fields []sparkmerge.Field
		for _, f := range t.Fields {
			if ft, ok := jsonCanonical(f.Type); ok {
				fields = append(fields, sparkmerge.NewField(f.Name, ft))
			}
		}
		if len(fields) == 0 {
			return t, false
		}
		return sparkmerge.StructOf(fields...), true
	}
	return t, true
}

// overflowsDouble reports whether a JSON number is too large for a double.
func overflowsDouble(n []byte) bool {
	_, err := strconv.ParseFloat(string(n), 64)
	return err != nil
}
