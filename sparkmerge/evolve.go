package sparkmerge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Table is an existing table a merge appends to, as the catalog describes
// it.
type Table struct {
	// Name is the table's name as the user gave it (one, two or three
	// parts); the statements of an [Evolution] use it as given.
	Name string
	// Format is the table's provider as Spark reports it: "delta",
	// "iceberg", "parquet", "orc", "hive", ... It decides how the table
	// may evolve (see [PlanEvolution]).
	Format string
	// Schema is the table's columns, in its order and spelling.
	Schema Schema
	// DeltaPreviewWidening says the server's Delta Lake is 3.x, the Delta
	// of Spark 3.5, whose type widening (a preview) changes only tinyint
	// to smallint or int and smallint to int; Delta 4.0 added the other
	// changes [PlanEvolution] lists. The zero value is Delta 4.0's rules.
	// Only a Delta table reads it.
	DeltaPreviewWidening bool
}

// The table formats whose own mechanisms [PlanEvolution] knows beyond
// adding top-level columns.
const (
	FormatDelta   = "delta"
	FormatIceberg = "iceberg"
)

// Evolution is how an existing table changes, through its format's own
// statements, so that a merge can be appended to it without rewriting or
// dropping a row: columns and nested fields added (null in the rows the
// table holds), and column types widened where the format changes a type
// in its metadata alone. It is a plain value, like [Plan].
type Evolution struct {
	// Table and Format are the table's name and format.
	Table  string `json:"table"`
	Format string `json:"format"`
	// Properties are table properties set before the types are widened:
	// Delta's type widening table feature (delta.enableTypeWidening), and
	// its timestampNtz feature for a date widened to timestamp_ntz.
	Properties map[string]string `json:"table_properties,omitempty"`
	// Widened are the columns and nested fields whose type widens, in
	// the table's order.
	Widened []FieldChange `json:"widen_columns,omitempty"`
	// Added are the columns and nested fields the table gains, in the
	// merge's order, each appended to its struct (top-level columns to
	// the table).
	Added []FieldChange `json:"add_columns,omitempty"`
	// Conflicts are the changes the merge needs that the format cannot
	// make without rewriting the table. A merge with conflicts is refused
	// ([EvolutionConflictError]).
	Conflicts []EvolutionConflict `json:"conflicts,omitempty"`
	// Schema is the table's schema once evolved (as it was, where a
	// change conflicts): the reference the merge is planned against, so
	// that column order and spelling follow the table.
	Schema Schema `json:"-"`
}

// FieldChange is one column or nested field an [Evolution] adds or
// widens. Path names it from the top-level column down, with "element",
// "key" and "value" for the inside of arrays and maps, as Spark's ALTER
// TABLE does.
type FieldChange struct {
	Path []string
	// From is the table's type of a widened field (void for an added one).
	From DataType
	// To is the new type.
	To DataType
}

// EvolutionConflict is a change a merge needs that the table's format
// cannot make: the field, the table's type and the merge's, and why.
type EvolutionConflict struct {
	Path   []string
	Table  DataType
	Merged DataType
	Reason string
}

// Empty reports whether the evolution changes nothing.
func (e *Evolution) Empty() bool {
	return e == nil || len(e.Properties) == 0 && len(e.Widened) == 0 && len(e.Added) == 0
}

// PlanEvolution computes how table t evolves to take rows of the merged
// schema (the sources' schema merged without the table): for each column
// and nested struct field the merge has and the table lacks, an added
// field; for each whose merged type is wider than the table's (by
// [WiderType] under opts, the table's type first), a widened type, where
// the format widens it without rewriting data:
//
//   - Delta (the type widening table feature, which it turns on):
//     tinyint, smallint and int to a wider integer, to double, or to a
//     decimal with at least 10 integer digits; bigint to a decimal with at
//     least 20; float to double; decimal(p,s) to decimal(p+k1,s+k2) with
//     k1 >= k2 >= 0; date to timestamp_ntz. Delta 3.x
//     ([Table.DeltaPreviewWidening]): tinyint to smallint or int and
//     smallint to int only.
//   - Iceberg: int to bigint, float to double, decimal(p,s) to
//     decimal(p2,s) with p2 > p.
//   - Other formats (Spark's Parquet, ORC, CSV, JSON and Hive tables): no
//     type change, and new top-level columns only.
//
// Nested fields are added and widened in structs, array elements and map
// values of Delta and Iceberg tables. Columns the merge lacks stay (null
// in the new rows). Names match as opts says (case-insensitively by
// default); the table's spelling and order are kept. Everything else is a
// conflict, listed in the result, never an error: see
// [Evolution.Err].
func PlanEvolution(t Table, merged Schema, opts Options) *Evolution {
	e := &Evolution{Table: t.Name, Format: strings.ToLower(t.Format)}
	ev := evolver{e: e, opts: opts, deltaPreview: t.DeltaPreviewWidening}
	if opts.Types == TypesString {
		// As a reference is fitted (see builder.fits): string with
		// another type still widens to string.
		ev.opts.Types = TypesWiden
	}
	fields := append([]Field(nil), t.Schema.Fields...)
	for _, m := range merged.Fields {
		i := fieldIndex(fields, m.Name, opts.CaseSensitive)
		if i < 0 {
			f := m
			f.Nullable = true
			fields = append(fields, f)
			e.Added = append(e.Added, FieldChange{Path: []string{m.Name}, To: m.Type})
			continue
		}
		fields[i].Type = ev.walk([]string{fields[i].Name}, fields[i].Type, m.Type)
	}
	if len(fields) > 0 {
		e.Schema.Fields = fields
	}
	sort.SliceStable(e.Widened, func(i, j int) bool {
		return columnIndex(t.Schema, e.Widened[i].Path[0], opts) < columnIndex(t.Schema, e.Widened[j].Path[0], opts)
	})
	if len(e.Widened) > 0 && e.Format == FormatDelta {
		e.Properties = map[string]string{"delta.enableTypeWidening": "true"}
		for _, w := range e.Widened {
			if w.To.Kind == KindTimestampNTZ {
				e.Properties["delta.feature.timestampNtz"] = "supported"
			}
		}
	}
	return e
}

func columnIndex(s Schema, name string, opts Options) int {
	return fieldIndex(s.Fields, name, opts.CaseSensitive)
}

func fieldIndex(fields []Field, name string, caseSensitive bool) int {
	for i := range fields {
		if fields[i].Name == name {
			return i
		}
	}
	if !caseSensitive {
		for i := range fields {
			if equalFold(fields[i].Name, name) {
				return i
			}
		}
	}
	return -1
}

type evolver struct {
	e            *Evolution
	opts         Options
	deltaPreview bool // Table.DeltaPreviewWidening
}

// nested reports whether the format adds and widens nested fields.
func (ev *evolver) nested() bool {
	return ev.e.Format == FormatDelta || ev.e.Format == FormatIceberg
}

// walk returns the table's type at path once evolved to take the merged
// type, recording the changes and conflicts on the way.
func (ev *evolver) walk(path []string, table, merged DataType) DataType {
	switch {
	case merged.Kind == KindNull:
		return table // an all-null column takes any type
	case table.Kind == KindStruct && merged.Kind == KindStruct:
		fields := append([]Field(nil), table.Fields...)
		for _, m := range merged.Fields {
			p := appendPath(path, m.Name)
			i := fieldIndex(fields, m.Name, ev.opts.CaseSensitive)
			if i >= 0 {
				fields[i].Type = ev.walk(appendPath(path, fields[i].Name), fields[i].Type, m.Type)
				continue
			}
			if !ev.nested() {
				ev.conflict(p, DataType{}, m.Type, fmt.Sprintf("a %s table gains top-level columns only (ALTER TABLE ADD COLUMNS), not fields inside one", ev.formatName()))
				continue
			}
			f := m
			f.Nullable = true
			fields = append(fields, f)
			ev.e.Added = append(ev.e.Added, FieldChange{Path: p, To: m.Type})
		}
		table.Fields = fields
		return table
	case table.Kind == KindArray && merged.Kind == KindArray:
		elem := ev.walk(appendPath(path, "element"), deref(table.Elem), deref(merged.Elem))
		return ArrayOf(elem, table.ContainsNull)
	case table.Kind == KindMap && merged.Kind == KindMap:
		key := deref(table.Key)
		if !ev.fits(deref(merged.Key), key) {
			ev.conflict(appendPath(path, "key"), key, deref(merged.Key), "a map's keys cannot change type")
		}
		value := ev.walk(appendPath(path, "value"), deref(table.Value), deref(merged.Value))
		return MapOf(key, value, table.ValueContainsNull)
	case table.Kind.IsComplex() || merged.Kind.IsComplex():
		ev.conflict(path, table, merged, "no common type")
		return table
	}
	if ev.fits(merged, table) {
		return table
	}
	wider, err := WiderType(table, merged, ev.opts)
	if err != nil {
		reason := "no common type"
		if ev.opts.Types == TypesStrict {
			reason = "the strict type policy widens no type"
		}
		ev.conflict(path, table, merged, reason)
		return table
	}
	if ok, why := widens(ev.e.Format, ev.deltaPreview, table, wider); !ok {
		ev.conflict(path, table, wider, why)
		return table
	}
	ev.e.Widened = append(ev.e.Widened, FieldChange{Path: path, From: table, To: wider})
	return wider
}

// fits reports whether values of type from are stored in a column of type
// to as they are (the same type, or one that widens into it).
func (ev *evolver) fits(from, to DataType) bool {
	b := builder{opts: ev.opts, unifier: unifier{policy: ev.opts.Types, caseSensitive: ev.opts.CaseSensitive, lossy: ev.opts.LossyWidening}}
	return b.fits(from, to)
}

func (ev *evolver) conflict(path []string, table, merged DataType, reason string) {
	ev.e.Conflicts = append(ev.e.Conflicts, EvolutionConflict{Path: path, Table: table, Merged: merged, Reason: reason})
}

func (ev *evolver) formatName() string {
	if ev.e.Format == "" {
		return "file"
	}
	return ev.e.Format
}

func appendPath(path []string, name string) []string {
	return append(append(make([]string, 0, len(path)+1), path...), name)
}

// widens reports whether a table of format changes a column's type from
// to to in its metadata alone, and if not, why. deltaPreview: the server
// has Delta 3.x (see [Table.DeltaPreviewWidening]).
func widens(format string, deltaPreview bool, from, to DataType) (bool, string) {
	switch format {
	case FormatDelta:
		if deltaPreview {
			if deltaPreviewWidens(from, to) {
				return true, ""
			}
			return false, fmt.Sprintf("the server's Delta 3 (Spark 3.5) does not change %s to %s (its type widening preview widens tinyint to smallint and int, smallint to int; Delta 4.0 on Spark 4 widens more)", from, to)
		}
		if deltaWidens(from, to) {
			return true, ""
		}
		return false, fmt.Sprintf("Delta's type widening does not change %s to %s (it widens tinyint, smallint and int to wider integers, double and decimals, bigint to decimals, float to double, decimals to more digits, date to timestamp_ntz)", from, to)
	case FormatIceberg:
		if icebergWidens(from, to) {
			return true, ""
		}
		return false, fmt.Sprintf("Iceberg does not change %s to %s (it promotes int to bigint, float to double and a decimal to more digits of the same scale)", from, to)
	}
	name := format
	if name == "" {
		name = "file"
	}
	return false, fmt.Sprintf("a %s table changes no column's type without rewriting its files", name)
}

// integerDigits is how many integer digits a type holds at most: a decimal
// its precision less its scale, an integer Spark's decimal for it.
func integerDigits(t DataType) int {
	switch t.Kind {
	case KindByte:
		return 3
	case KindShort:
		return 5
	case KindInt:
		return 10
	case KindLong:
		return 20
	case KindDecimal:
		return t.Precision - t.Scale
	}
	return 0
}

// deltaWidens is Delta 4.0's type widening (TypeWidening.isTypeChangeSupported).
func deltaWidens(from, to DataType) bool {
	switch {
	case from.Kind.IsIntegral() && to.Kind.IsIntegral():
		return to.Kind >= from.Kind
	case (from.Kind == KindByte || from.Kind == KindShort || from.Kind == KindInt) && to.Kind == KindDouble:
		return true
	case from.Kind.IsIntegral() && to.Kind == KindDecimal:
		return to.Precision-to.Scale >= integerDigits(from)
	case from.Kind == KindFloat && to.Kind == KindDouble:
		return true
	case from.Kind == KindDecimal && to.Kind == KindDecimal:
		return to.Scale >= from.Scale && to.Precision-to.Scale >= from.Precision-from.Scale
	case from.Kind == KindDate && to.Kind == KindTimestampNTZ:
		return true
	}
	return false
}

// deltaPreviewWidens is Delta 3.x's type widening preview: what Delta
// 3.3.3 on Spark 3.5.7 changes by ALTER COLUMN TYPE, top-level and
// nested (docs/testing.md, "Table formats").
func deltaPreviewWidens(from, to DataType) bool {
	switch from.Kind {
	case KindByte:
		return to.Kind == KindShort || to.Kind == KindInt
	case KindShort:
		return to.Kind == KindInt
	}
	return false
}

// icebergWidens is Iceberg's type promotion (TypeUtil.isPromotionAllowed).
// Iceberg keeps tinyint and smallint as int.
func icebergWidens(from, to DataType) bool {
	switch {
	case (from.Kind == KindByte || from.Kind == KindShort || from.Kind == KindInt) && to.Kind == KindLong:
		return true
	case from.Kind == KindFloat && to.Kind == KindDouble:
		return true
	case from.Kind == KindDecimal && to.Kind == KindDecimal:
		return to.Scale == from.Scale && to.Precision >= from.Precision
	}
	return false
}

// Statements are the SQL statements that evolve the table, in order:
// properties, widened types, then one ADD COLUMNS for every addition.
// Each is one commit of the table's format.
func (e *Evolution) Statements() []string {
	var out []string
	if len(e.Properties) > 0 {
		keys := make([]string, 0, len(e.Properties))
		for k := range e.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		props := make([]string, len(keys))
		for i, k := range keys {
			props[i] = QuoteString(k) + " = " + QuoteString(e.Properties[k])
		}
		out = append(out, fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES (%s)", e.Table, strings.Join(props, ", ")))
	}
	for _, w := range e.Widened {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", e.Table, quotePath(w.Path), w.To))
	}
	if len(e.Added) > 0 {
		cols := make([]string, len(e.Added))
		for i, a := range e.Added {
			cols[i] = quotePath(a.Path) + " " + a.To.String()
		}
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD COLUMNS (%s)", e.Table, strings.Join(cols, ", ")))
	}
	return out
}

// quotePath renders a field path for ALTER TABLE: every part backquoted.
func quotePath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = quoteBackticks(p)
	}
	return strings.Join(parts, ".")
}

// PathString is a field path for people: its parts joined by dots.
func PathString(path []string) string { return strings.Join(path, ".") }

// Err is an *EvolutionConflictError listing the conflicts, or nil.
func (e *Evolution) Err() error {
	if e == nil || len(e.Conflicts) == 0 {
		return nil
	}
	return &EvolutionConflictError{Table: e.Table, Format: e.Format, Conflicts: e.Conflicts}
}

// EvolutionConflictError says that appending a merge to a table needs
// changes the table's format cannot make without rewriting it. It matches
// [ErrSchemaConflict].
type EvolutionConflictError struct {
	Table, Format string
	Conflicts     []EvolutionConflict
}

func (e *EvolutionConflictError) Error() string {
	var b strings.Builder
	format := e.Format
	if format == "" {
		format = "file"
	}
	fmt.Fprintf(&b, "evolve table %s (%s): %s cannot take the merge: ", e.Table, format, plural(len(e.Conflicts), "column", "columns"))
	for i, c := range e.Conflicts {
		if i > 0 {
			b.WriteString("; ")
		}
		path := PathString(c.Path)
		if c.Table.Equal(DataType{}) {
			fmt.Fprintf(&b, "%q is new (%s): %s", path, c.Merged, c.Reason)
			continue
		}
		fmt.Fprintf(&b, "%q is %s in the table and %s in the sources: %s", path, c.Table, c.Merged, c.Reason)
	}
	b.WriteString("\n  hint: make the sources fit the table (cast the column in a query source, or rename it to add it as a new column (Options.Renames)), " +
		"rewrite the table with the new type yourself, or merge into a new table; nothing was written")
	return b.String()
}

// Unwrap returns ErrSchemaConflict.
func (e *EvolutionConflictError) Unwrap() error { return ErrSchemaConflict }

// MarshalJSON writes the change as {"column": "s.b", "from": "int", "to":
// "bigint"}, types in Spark's SQL syntax; an added field has no "from".
func (c FieldChange) MarshalJSON() ([]byte, error) {
	v := struct {
		Column string `json:"column"`
		From   string `json:"from,omitempty"`
		To     string `json:"to"`
	}{Column: PathString(c.Path), To: c.To.String()}
	if !c.From.Equal(DataType{}) {
		v.From = c.From.String()
	}
	return json.Marshal(v)
}

// MarshalJSON writes the conflict as {"column", "table_type",
// "merged_type", "reason"}, types in Spark's SQL syntax; a field the
// table lacks has no "table_type".
func (c EvolutionConflict) MarshalJSON() ([]byte, error) {
	v := struct {
		Column     string `json:"column"`
		TableType  string `json:"table_type,omitempty"`
		MergedType string `json:"merged_type"`
		Reason     string `json:"reason"`
	}{Column: PathString(c.Path), MergedType: c.Merged.String(), Reason: c.Reason}
	if !c.Table.Equal(DataType{}) {
		v.TableType = c.Table.String()
	}
	return json.Marshal(v)
}
