package sparkmerge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The JSON form is Spark's own, as df.schema.json() prints it and
// DataType.fromJson reads it: simple types are strings ("integer", "long",
// "decimal(10,2)", "char(3)", "interval day to second", "timestamp_ntz",
// "void", ...), complex types are objects with their keys in Spark's
// (alphabetical) order:
//
//	{"containsNull":true,"elementType":"integer","type":"array"}
//	{"keyType":"string","type":"map","valueContainsNull":true,"valueType":"long"}
//	{"fields":[{"metadata":{},"name":"a","nullable":true,"type":"integer"}],"type":"struct"}
//
// Unlike the SQL syntax it keeps containsNull and valueContainsNull, so it is
// the full-fidelity form. Reading is lenient where Spark is: "null" for void,
// "timestamp_ltz", bare "decimal", missing "metadata" or "nullable" (true).
// A string holding any SQL type (e.g. "bigint") is read with ParseType.
// Field names must be valid UTF-8 to be written (Spark's always are).

// jsonNames are Spark's typeName values where they differ from the SQL name.
var jsonNames = map[Kind]string{
	KindByte:  "byte",
	KindShort: "short",
	KindInt:   "integer",
	KindLong:  "long",
}

// charVarcharKey is the field metadata key in which Spark records the declared
// char/varchar type of a column whose type it replaced by string.
const charVarcharKey = "__CHAR_VARCHAR_TYPE_STRING"

// collationsKey is the field metadata key in which Spark records collations.
const collationsKey = "__COLLATIONS"

// MarshalJSON writes t in Spark's JSON schema form.
func (t DataType) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := t.writeJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MarshalJSON writes f as a Spark StructField: metadata (always empty), name,
// nullable and type.
func (f Field) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := f.writeJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MarshalJSON writes s as a Spark struct type, like df.schema.json().
func (s Schema) MarshalJSON() ([]byte, error) { return s.Type().MarshalJSON() }

func (t DataType) writeJSON(b *bytes.Buffer) error {
	switch t.Kind {
	case KindStruct:
		b.WriteString(`{"fields":[`)
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := f.writeJSON(b); err != nil {
				return err
			}
		}
		b.WriteString(`],"type":"struct"}`)
	case KindArray:
		fmt.Fprintf(b, `{"containsNull":%t,"elementType":`, t.ContainsNull)
		if err := deref(t.Elem).writeJSON(b); err != nil {
			return err
		}
		b.WriteString(`,"type":"array"}`)
	case KindMap:
		b.WriteString(`{"keyType":`)
		if err := deref(t.Key).writeJSON(b); err != nil {
			return err
		}
		fmt.Fprintf(b, `,"type":"map","valueContainsNull":%t,"valueType":`, t.ValueContainsNull)
		if err := deref(t.Value).writeJSON(b); err != nil {
			return err
		}
		b.WriteByte('}')
	default:
		if !t.Kind.valid() {
			return fmt.Errorf("marshal type: unknown kind %d", int(t.Kind))
		}
		name, ok := jsonNames[t.Kind]
		if !ok {
			name = t.String()
		}
		b.WriteByte('"')
		b.WriteString(name) // type names need no escaping
		b.WriteByte('"')
	}
	return nil
}

func (f Field) writeJSON(b *bytes.Buffer) error {
	if !utf8.ValidString(f.Name) {
		// JSON cannot carry it: encoding/json would replace the bad bytes.
		return fmt.Errorf("marshal field %q: name is not valid UTF-8", f.Name)
	}
	b.WriteString(`{"metadata":{},"name":`)
	writeJSONString(b, f.Name)
	fmt.Fprintf(b, `,"nullable":%t,"type":`, f.Nullable)
	if err := f.Type.writeJSON(b); err != nil {
		return fmt.Errorf("field %q: %w", f.Name, err)
	}
	b.WriteByte('}')
	return nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // encoding a string cannot fail
	b.Truncate(b.Len() - 1) // Encode appends a newline
}

// ParseTypeJSON reads a type in Spark's JSON form, e.g. the output of
// df.schema.json() or DataType.MarshalJSON.
func ParseTypeJSON(data []byte) (DataType, error) {
	t, err := typeFromJSON(json.RawMessage(data), 0)
	if err != nil {
		return DataType{}, fmt.Errorf("parse type JSON: %w", err)
	}
	return t, nil
}

// ParseSchemaJSON reads a schema in Spark's JSON form: a struct type, as
// df.schema.json() prints it.
func ParseSchemaJSON(data []byte) (Schema, error) {
	t, err := ParseTypeJSON(data)
	if err != nil {
		return Schema{}, err
	}
	if t.Kind != KindStruct {
		return Schema{}, fmt.Errorf("parse schema JSON: got %s, want a struct", t)
	}
	return Schema{Fields: t.Fields}, nil
}

// UnmarshalJSON reads t from Spark's JSON form (see ParseTypeJSON).
func (t *DataType) UnmarshalJSON(data []byte) error {
	v, err := ParseTypeJSON(data)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// UnmarshalJSON reads f from a Spark StructField in JSON form.
func (f *Field) UnmarshalJSON(data []byte) error {
	v, err := fieldFromJSON(data, 0)
	if err != nil {
		return fmt.Errorf("parse field JSON: %w", err)
	}
	*f = v
	return nil
}

// UnmarshalJSON reads s from a Spark struct type in JSON form (see
// ParseSchemaJSON).
func (s *Schema) UnmarshalJSON(data []byte) error {
	v, err := ParseSchemaJSON(data)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

type jsonComplex struct {
	Type              *string
	Fields            []json.RawMessage
	ElementType       json.RawMessage
	ContainsNull      *bool
	KeyType           json.RawMessage
	ValueType         json.RawMessage
	ValueContainsNull *bool
}

type jsonField struct {
	Name     *string
	Type     json.RawMessage
	Nullable *bool
	Metadata map[string]json.RawMessage
}

func typeFromJSON(data json.RawMessage, depth int) (DataType, error) {
	if depth > maxNesting {
		return DataType{}, fmt.Errorf("types nested more than %d deep", maxNesting)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return DataType{}, errors.New("missing type")
	}
	if data[0] == '"' {
		var name string
		if err := json.Unmarshal(data, &name); err != nil {
			return DataType{}, err
		}
		return typeFromJSONName(name)
	}
	if data[0] != '{' {
		return DataType{}, fmt.Errorf("type must be a string or an object, got %s", abbrev(data))
	}
	var c jsonComplex
	if err := strictUnmarshal(data, &c); err != nil {
		return DataType{}, err
	}
	if c.Type == nil {
		return DataType{}, errors.New(`type object has no "type" key`)
	}
	switch *c.Type {
	case "struct":
		if c.Fields == nil {
			return DataType{}, errors.New(`struct has no "fields" list`)
		}
		fields := make([]Field, 0, len(c.Fields))
		for i, raw := range c.Fields {
			f, err := fieldFromJSON(raw, depth+1)
			if err != nil {
				return DataType{}, fmt.Errorf("field %d: %w", i, err)
			}
			fields = append(fields, f)
		}
		return StructOf(fields...), nil
	case "array":
		elem, err := typeFromJSON(c.ElementType, depth+1)
		if err != nil {
			return DataType{}, fmt.Errorf("array elementType: %w", err)
		}
		return ArrayOf(elem, c.ContainsNull == nil || *c.ContainsNull), nil
	case "map":
		k, err := typeFromJSON(c.KeyType, depth+1)
		if err != nil {
			return DataType{}, fmt.Errorf("map keyType: %w", err)
		}
		v, err := typeFromJSON(c.ValueType, depth+1)
		if err != nil {
			return DataType{}, fmt.Errorf("map valueType: %w", err)
		}
		return MapOf(k, v, c.ValueContainsNull == nil || *c.ValueContainsNull), nil
	case "udt":
		return DataType{}, errors.New("user-defined types are not supported")
	}
	return DataType{}, fmt.Errorf("unsupported type object %q", *c.Type)
}

func typeFromJSONName(name string) (DataType, error) {
	t, err := ParseType(name)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return DataType{}, fmt.Errorf("type %q: %s", name, pe.Msg)
		}
		return DataType{}, err
	}
	return t, nil
}

func fieldFromJSON(data json.RawMessage, depth int) (Field, error) {
	var jf jsonField
	if err := strictUnmarshal(data, &jf); err != nil {
		return Field{}, err
	}
	if jf.Name == nil {
		return Field{}, errors.New(`field has no "name"`)
	}
	t, err := typeFromJSON(jf.Type, depth)
	if err != nil {
		return Field{}, fmt.Errorf("field %q: %w", *jf.Name, err)
	}
	if _, ok := jf.Metadata[collationsKey]; ok {
		return Field{}, fmt.Errorf("field %q: collated strings are not supported", *jf.Name)
	}
	if raw, ok := jf.Metadata[charVarcharKey]; ok {
		var decl string
		if json.Unmarshal(raw, &decl) == nil {
			if d, err := ParseType(decl); err == nil {
				if u, ok := applyCharVarchar(t, d); ok {
					t = u
				}
			}
		}
	}
	return Field{Name: *jf.Name, Type: t, Nullable: jf.Nullable == nil || *jf.Nullable}, nil
}

// applyCharVarchar puts the char/varchar types of decl into t, where t has
// string. It reports false when the two do not have the same shape.
func applyCharVarchar(t, decl DataType) (DataType, bool) {
	switch {
	case t.Kind == KindString && (decl.Kind == KindChar || decl.Kind == KindVarchar):
		return decl, true
	case t.Kind != decl.Kind:
		return t, false
	}
	switch t.Kind {
	case KindStruct:
		if len(t.Fields) != len(decl.Fields) {
			return t, false
		}
		fields := make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			if f.Name != decl.Fields[i].Name {
				return t, false
			}
			ft, ok := applyCharVarchar(f.Type, decl.Fields[i].Type)
			if !ok {
				return t, false
			}
			f.Type = ft
			fields[i] = f
		}
		return StructOf(fields...), true
	case KindArray:
		e, ok := applyCharVarchar(deref(t.Elem), deref(decl.Elem))
		return ArrayOf(e, t.ContainsNull), ok
	case KindMap:
		k, ok1 := applyCharVarchar(deref(t.Key), deref(decl.Key))
		v, ok2 := applyCharVarchar(deref(t.Value), deref(decl.Value))
		return MapOf(k, v, t.ValueContainsNull), ok1 && ok2
	}
	return t, t.Equal(decl)
}

// strictUnmarshal decodes one JSON object into v and rejects trailing data.
// Unknown keys are ignored, as Spark's reader does for metadata.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

func abbrev(data []byte) string {
	s := string(data)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strings.TrimSpace(s)
}
