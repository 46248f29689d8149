package sparkmerge

import (
	"fmt"
	"slices"
	"sort"
)

// Source is one input of a merge: a name (a path or a table, shown in
// diagnostics and carried by the provenance column) and its schema.
type Source struct {
	Name   string
	Schema Schema
	// NoRows says that the source has no rows and that its schema's types
	// were inferred from no value (a CSV file of its header alone, whose
	// columns Spark's inference makes strings): they are no evidence. Each
	// of its columns takes the type the other sources give it, and its
	// own type only where no other source has the column; its projection
	// gives that column a typed null (there is no value to cast).
	NoRows bool
	// NoValues are the indexes (into Schema.Fields) of the columns whose
	// types were inferred from no value, the others holding values: a CSV
	// column of empty values, a JSON key whose every value is null, which
	// Spark's inference makes strings. As a source's under NoRows, their
	// types are no evidence: a daily file whose column happens to be empty
	// does not make a column of numbers a string (or fail an append to a
	// table of numbers). The caller says what it knows so (the spark
	// package: of the CSV files the client typed, and what Spark found
	// asked); a column left out is evidence, as before.
	NoValues []int
}

// fromNoValue reports whether the type of the source's column j was
// inferred from no value (NoRows, NoValues).
func (s *Source) fromNoValue(j int) bool { return s.NoRows || slices.Contains(s.NoValues, j) }

// Plan is the result of NewPlan: the target schema and, for every source,
// how its columns map onto it. It is a plain value: compare plans with
// cmp.Diff, render them with String, MarshalJSON, SelectExprs and SQL.
//
// A Plan shares the sources' schemas with the caller; do not modify them
// afterwards.
type Plan struct {
	// Target is the merged schema, in output order. If SourceColumn is set,
	// its last column is the provenance column (string, not nullable).
	Target Schema
	// SourceColumn is Options.SourceColumn.
	SourceColumn string
	// CaseSensitive is Options.CaseSensitive; nested struct fields are
	// matched by it when a projection is rendered.
	CaseSensitive bool
	// Sources are the per-source plans, in input order.
	Sources []SourcePlan
	// LossyWidening is Options.LossyWidening: casts that may round are
	// not checked.
	LossyWidening bool
	// Distinct is Options.Distinct: the sources' rows are combined with
	// UNION DISTINCT, dropping duplicate rows.
	Distinct bool
	// Rescue is Options.Rescue: the name of the last target column,
	// which keeps the values that did not convert.
	Rescue string
	// RescueDropped: with Rescue and Options.DropExtra under
	// MissingReference, the values of the columns dropped are rescued.
	RescueDropped bool
	// Hinted are the target columns whose type a hint set
	// (Options.Hints), in target order.
	Hinted []string
	// NearNames are the groups of target columns that a rewrite of names
	// not in Options.Normalize would make one column, of which no source
	// has two: likely one column spelled two ways, merged as two.
	NearNames []NearNames
}

// SourcePlan maps one source onto the target.
type SourcePlan struct {
	Name   string
	Schema Schema
	// Columns has one entry per target column (without the provenance
	// column): the index of the source column it is taken from, or -1 when
	// the source lacks it. Projections and Diagnostics expand it.
	Columns []int
	// Excluded are the indexes of the source's columns that the
	// selection (Options.Columns, Exclude) dropped, if any.
	Excluded []int
	// NoRows is Source.NoRows.
	NoRows bool
	// NoValues is Source.NoValues.
	NoValues []int
}

// fromNoValue reports whether the type of the source's column j was
// inferred from no value (NoRows, NoValues).
func (sp *SourcePlan) fromNoValue(j int) bool { return sp.NoRows || slices.Contains(sp.NoValues, j) }

// Diagnostics says what merging does to one source.
type Diagnostics struct {
	// Added are the target columns the source lacks (typed nulls), then the
	// nested struct fields it lacks as dotted paths ("addr.zip",
	// "items.element.sku").
	Added []string
	// Widened are the columns cast to a wider type.
	Widened []TypeChange
	// Narrowed are the columns cast to a narrower type (a hint's, or a
	// table's), one that may change a value (NarrowsValues): checked
	// value by value unless Options.LossyWidening.
	Narrowed []TypeChange
	// Conflicts are the columns whose types conflicted and that are cast to
	// string (wholly or at some nested position) to resolve it.
	Conflicts []TypeChange
	// Dropped are the source's columns (source spelling) not in the target,
	// then nested fields a reference drops, as dotted paths.
	Dropped []string
	// Renamed are the columns whose source spelling differs from the
	// target's (case, normalizing or Options.Renames).
	Renamed []Rename
	// Untyped are the columns whose type, inferred from no value (a
	// source without rows, Source.NoRows, or Source.NoValues), yields to
	// the target's.
	Untyped []TypeChange
}

// TypeChange is a column whose type changes from the source to the target.
type TypeChange struct {
	Column   string // target name
	From, To DataType
}

// Rename is a column whose name changes from the source to the target.
type Rename struct {
	From, To string
}

// column is a target column candidate while planning.
type column struct {
	name    string // output spelling: first seen
	key     string
	present int        // sources that have it
	types   []DataType // distinct types in first-seen order
	// guesses are the distinct types of the sources that have it
	// inferred from no value (Source.NoRows, Source.NoValues), which
	// count only when no other source has it.
	guesses  []DataType
	nullable bool
	refPos   int // position in the reference, -1 if not there
	refType  *DataType
	pos      int // target position, -1 if not in the target
}

// NewPlan computes the target schema of merging sources under opts and, for
// each source, the projection onto it. It is deterministic and does no I/O.
//
// Errors: ErrNoSources; *OptionError for contradictory options;
// *InvalidNameError and *DuplicateColumnError for unusable names;
// *TypeConflictError and *MissingColumnsError (both match ErrSchemaConflict)
// when the schemas cannot be merged under the policies.
func NewPlan(sources []Source, opts Options) (*Plan, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("merge schemas: %w: give at least one source", ErrNoSources)
	}
	refSource, err := checkOptions(sources, opts)
	if err != nil {
		return nil, err
	}
	b := &builder{
		opts:       opts,
		sources:    sources,
		namer:      newNamer(opts),
		index:      make(map[string]int32, 64),
		bySpelling: make(map[string]int32, 64),
		unifier:    unifier{policy: opts.Types, caseSensitive: opts.CaseSensitive, lossy: opts.LossyWidening},
		sel:        newSelection(opts),
	}
	if opts.Reference != nil {
		if err := b.addReference(*opts.Reference); err != nil {
			return nil, err
		}
	}
	if err := b.scan(); err != nil {
		return nil, err
	}
	if err := b.sel.unmatched(); err != nil {
		return nil, err
	}
	if refSource >= 0 {
		// The reference source's spelling wins over the first seen.
		for pos, id := range b.fieldCols[refSource] {
			if id < 0 {
				continue // not selected
			}
			b.cols[id].refPos = pos
			b.cols[id].name, _ = b.namer.name(sources[refSource].Schema.Fields[pos].Name)
		}
	}
	if err := b.choose(); err != nil {
		return nil, err
	}
	b.order()
	p := &Plan{SourceColumn: opts.SourceColumn, CaseSensitive: opts.CaseSensitive, LossyWidening: opts.LossyWidening, Distinct: opts.Distinct,
		Rescue: opts.Rescue, RescueDropped: opts.Rescue != "" && opts.DropExtra && opts.Missing == MissingReference}
	if err := b.types(p); err != nil {
		return nil, err
	}
	b.project(p)
	p.NearNames = b.nearTarget(p)
	return p, nil
}

// checkOptions validates opts and returns the index of the reference source
// (or -1).
func checkOptions(sources []Source, opts Options) (int, error) {
	switch {
	case opts.Types < TypesWiden || opts.Types > TypesString:
		return -1, &OptionError{Option: "types", Value: opts.Types.String(), Reason: "unknown type policy"}
	case opts.Missing < MissingFill || opts.Missing > MissingReference:
		return -1, &OptionError{Option: "missing", Value: opts.Missing.String(), Reason: "unknown missing-column policy"}
	case opts.Order < OrderFirstSeen || opts.Order > OrderReference:
		return -1, &OptionError{Option: "order", Value: opts.Order.String(), Reason: "unknown order policy"}
	case opts.Reference != nil && opts.ReferenceSource != "":
		return -1, &OptionError{Option: "reference", Value: opts.ReferenceSource, Reason: "give either an external reference schema or a reference source, not both"}
	}
	hasRef := opts.Reference != nil || opts.ReferenceSource != ""
	usesRef := opts.Missing == MissingReference || opts.Order == OrderReference
	switch {
	case usesRef && !hasRef:
		return -1, &OptionError{Option: "reference", Value: "", Reason: "the reference missing-column or order policy needs a reference: a schema (Reference) or a source name (ReferenceSource)"}
	case hasRef && !usesRef:
		return -1, &OptionError{Option: "reference", Value: opts.ReferenceSource, Reason: "a reference is set but unused; also set the missing-column policy or the order policy to reference"}
	case opts.DropExtra && opts.Missing != MissingReference:
		return -1, &OptionError{Option: "drop-extra", Value: "true", Reason: "dropping extra columns needs the reference missing-column policy"}
	}
	ref := -1
	if opts.ReferenceSource != "" {
		for i, s := range sources {
			if s.Name == opts.ReferenceSource {
				ref = i
				break
			}
		}
		if ref < 0 {
			return -1, &OptionError{Option: "reference-source", Value: opts.ReferenceSource, Reason: "no source has this name"}
		}
	}
	return ref, nil
}

type builder struct {
	opts    Options
	sources []Source
	namer   *namer
	unifier unifier
	sel     *selection

	cols       []column
	index      map[string]int32 // by matching key
	bySpelling map[string]int32 // by source spelling
	// fieldCols[s][j] is the column id of field j of source s, -1 for a
	// column the selection drops.
	fieldCols [][]int32
	hasRef    bool
	target    []int32 // column ids in target order
}

func (b *builder) newColumn(name, key string) int32 {
	id := int32(len(b.cols))
	b.cols = append(b.cols, column{name: name, key: key, refPos: -1, pos: -1})
	b.index[key] = id
	return id
}

// addReference records the external reference's columns: they are seen
// first, with their own spelling (not normalized or renamed).
func (b *builder) addReference(ref Schema) error {
	b.hasRef = true
	for j, f := range ref.Fields {
		if f.Name == "" {
			return &InvalidNameError{Index: -1, Position: j + 1, Reason: "has an empty name"}
		}
		if err := checkNestedNames("", -1, f.Name, f.Type, b.opts.CaseSensitive); err != nil {
			return err
		}
		b.sel.seen(f.Name)
		key := FoldName(f.Name, b.opts.CaseSensitive)
		if id, dup := b.index[key]; dup {
			return &DuplicateColumnError{Index: -1, Columns: []string{b.cols[id].name, f.Name}, Name: f.Name}
		}
		id := b.newColumn(f.Name, key)
		c := &b.cols[id]
		c.refPos = j
		c.refType = &ref.Fields[j].Type
		c.nullable = f.Nullable
	}
	return nil
}

// scan matches every source column to a column id.
func (b *builder) scan() error {
	b.fieldCols = make([][]int32, len(b.sources))
	total := 0
	for _, src := range b.sources {
		total += len(src.Schema.Fields)
	}
	all := make([]int32, total)
	seen := make([]int32, 0, 256) // seen[id] = source index + 1 that last had it
	var prev []Field              // the previous source's fields
	var prevIDs []int32
	for s, src := range b.sources {
		n := len(src.Schema.Fields)
		ids := all[:n:n]
		all = all[n:]
		for j := range src.Schema.Fields {
			f := &src.Schema.Fields[j]
			if f.Name == "" {
				return &InvalidNameError{Source: src.Name, Index: s, Position: j + 1, Reason: "has an empty name"}
			}
			// Normalizing, renaming and folding depend on the spelling
			// only: remember each spelling's column, and try the
			// previous source's column at this position first (files
			// of one dataset mostly share their layout).
			var id int32
			ok := false
			if j < len(prev) && prev[j].Name == f.Name {
				id, ok = prevIDs[j], true
			} else {
				id, ok = b.bySpelling[f.Name]
			}
			if !ok {
				spelling, key := b.namer.name(f.Name)
				if spelling == "" {
					return &InvalidNameError{Source: src.Name, Index: s, Position: j + 1, Path: f.Name, Reason: "has an empty name after normalizing"}
				}
				if !b.sel.keeps(spelling) {
					id = -1
				} else if id, ok = b.index[key]; !ok {
					id = b.newColumn(spelling, key)
				}
				b.bySpelling[f.Name] = id
			}
			if id < 0 {
				ids[j] = -1 // dropped by the selection
				continue
			}
			for int(id) >= len(seen) {
				seen = append(seen, 0)
			}
			if seen[id] == int32(s+1) {
				for k := 0; k < j; k++ {
					if ids[k] == id {
						spelling, _ := b.namer.name(f.Name)
						return &DuplicateColumnError{Source: src.Name, Index: s,
							Columns: []string{src.Schema.Fields[k].Name, f.Name}, Name: spelling}
					}
				}
			}
			seen[id] = int32(s + 1)
			ids[j] = id
			c := &b.cols[id]
			c.present++
			c.nullable = c.nullable || f.Nullable
			types := &c.types
			if src.fromNoValue(j) {
				types = &c.guesses
			}
			if !containsType(*types, &f.Type) {
				if err := checkNestedNames(src.Name, s, f.Name, f.Type, b.opts.CaseSensitive); err != nil {
					return err
				}
				*types = append(*types, f.Type)
			}
		}
		b.fieldCols[s] = ids
		prev, prevIDs = src.Schema.Fields, ids
	}
	return nil
}

func containsType(ts []DataType, t *DataType) bool {
	for i := range ts {
		u := &ts[i]
		if u.Kind != t.Kind {
			continue
		}
		if !t.Kind.IsComplex() {
			// Inline Equal for atomic types: this runs for every column
			// of every source.
			if u.Precision == t.Precision && u.Scale == t.Scale && u.Length == t.Length &&
				u.StartField == t.StartField && u.EndField == t.EndField {
				return true
			}
			continue
		}
		if u.Equal(*t) {
			return true
		}
	}
	return false
}

// checkNestedNames rejects empty and colliding struct field names inside t.
func checkNestedNames(source string, index int, path string, t DataType, caseSensitive bool) error {
	switch t.Kind {
	case KindStruct:
		var keys map[string]string
		if len(t.Fields) > 1 {
			keys = make(map[string]string, len(t.Fields))
		}
		for i, f := range t.Fields {
			p := path + "." + f.Name
			if f.Name == "" {
				return &InvalidNameError{Source: source, Index: index, Position: i + 1, Path: path, Reason: "has a struct field with an empty name"}
			}
			if keys != nil {
				k := FoldName(f.Name, caseSensitive)
				if other, dup := keys[k]; dup {
					return &DuplicateColumnError{Source: source, Index: index, Columns: []string{path + "." + other, p}, Name: p}
				}
				keys[k] = f.Name
			}
			if err := checkNestedNames(source, index, p, f.Type, caseSensitive); err != nil {
				return err
			}
		}
	case KindArray:
		return checkNestedNames(source, index, path+".element", deref(t.Elem), caseSensitive)
	case KindMap:
		if err := checkNestedNames(source, index, path+".key", deref(t.Key), caseSensitive); err != nil {
			return err
		}
		return checkNestedNames(source, index, path+".value", deref(t.Value), caseSensitive)
	}
	return nil
}

// choose decides which columns are in the target (under the missing-column
// policy) and reports sources that differ where that is an error.
func (b *builder) choose() error {
	n := len(b.sources)
	in := func(c *column) bool { return c.present > 0 }
	switch b.opts.Missing {
	case MissingFail:
		for i := range b.cols {
			if b.cols[i].present < n {
				return b.missingError(func(c *column) bool { return true }, false)
			}
		}
	case MissingIntersect:
		in = func(c *column) bool { return c.present == n }
	case MissingReference:
		in = func(c *column) bool { return c.refPos >= 0 }
		if !b.opts.DropExtra {
			for i := range b.cols {
				if b.cols[i].refPos < 0 {
					return b.missingError(func(c *column) bool { return c.refPos >= 0 }, true)
				}
			}
		}
	}
	for i := range b.cols {
		if in(&b.cols[i]) {
			b.target = append(b.target, int32(i))
		}
	}
	return nil
}

// missingError lists, per source, the columns it lacks (of those for which
// want is true) or, with extra, the columns it has for which want is false.
func (b *builder) missingError(want func(*column) bool, extra bool) error {
	e := &MissingColumnsError{Policy: b.opts.Missing}
	has := make([]bool, len(b.cols))
	listed := make([]bool, len(b.cols))
	for s, src := range b.sources {
		clear(has)
		sc := SourceColumns{Source: src.Name, Index: s}
		for j, id := range b.fieldCols[s] {
			if id < 0 {
				continue
			}
			has[id] = true
			if extra && !want(&b.cols[id]) {
				sc.Extra = append(sc.Extra, src.Schema.Fields[j].Name)
				listed[id] = true
			}
		}
		if !extra {
			for id := range b.cols {
				if !has[id] && want(&b.cols[id]) {
					sc.Missing = append(sc.Missing, b.cols[id].name)
					listed[id] = true
				}
			}
		}
		if len(sc.Missing) > 0 || len(sc.Extra) > 0 {
			e.Sources = append(e.Sources, sc)
		}
	}
	e.Near = b.nearListed(listed)
	return e
}

// nearListed are the groups of columns a rewrite of names would make one
// (nearNames) with a listed column in it.
func (b *builder) nearListed(listed []bool) []NearNames {
	names := make([]string, len(b.cols))
	isListed := map[string]bool{}
	for id := range b.cols {
		names[id] = b.cols[id].name
		isListed[names[id]] = listed[id]
	}
	spelled := b.spellings()
	var out []NearNames
	for _, g := range nearNames(names, func(id int) []string { return spelled[id] }, b.opts) {
		if slices.ContainsFunc(g.Names, func(n string) bool { return isListed[n] }) {
			out = append(out, g)
		}
	}
	return out
}

// order sorts b.target by the order policy. Column ids are in first-seen
// order already (reference columns first).
func (b *builder) order() {
	byRef := b.opts.Order == OrderReference ||
		b.opts.Order == OrderFirstSeen && b.opts.Missing == MissingReference
	switch {
	case b.opts.Order == OrderSorted:
		sort.SliceStable(b.target, func(i, j int) bool {
			ci, cj := &b.cols[b.target[i]], &b.cols[b.target[j]]
			if ci.name != cj.name {
				return ci.name < cj.name
			}
			return ci.key < cj.key
		})
	case byRef:
		sort.SliceStable(b.target, func(i, j int) bool {
			ri, rj := b.cols[b.target[i]].refPos, b.cols[b.target[j]].refPos
			switch {
			case ri >= 0 && rj >= 0:
				return ri < rj
			case ri >= 0:
				return true
			}
			return false
		})
	}
	for pos, id := range b.target {
		b.cols[id].pos = pos
	}
}

// types computes the target types and fills p.Target.
func (b *builder) types(p *Plan) error {
	n := len(b.sources)
	fields := make([]Field, 0, len(b.target)+1)
	var conflicts []ColumnConflict
	external := b.opts.Missing == MissingReference && b.opts.Reference != nil
	hints := b.hintsByKey()
	for _, id := range b.target {
		c := &b.cols[id]
		var t DataType
		nullable := c.nullable || c.present < n
		hint, hinted := hints[c.key]
		switch {
		case hinted && !external:
			t = hint
			p.Hinted = append(p.Hinted, c.name)
			for _, st := range c.types {
				if !castable(st, t) {
					cc := b.conflict(id, c.name, false)
					cc.Reason = "the hint " + t.String() + " is not a type Spark casts these to"
					conflicts = append(conflicts, cc)
					break
				}
			}
		case external:
			t = *c.refType
			for _, st := range c.types {
				if !b.fits(st, t) {
					conflicts = append(conflicts, b.conflict(id, c.name, true))
					break
				}
			}
		default:
			var cl *clash
			t, cl = b.unifier.unify("", c.evidence())
			if cl != nil {
				cc := b.conflict(id, c.name, false)
				cc.Path = joinPath(c.name, cl.path)
				cc.Reason = cl.reason
				conflicts = append(conflicts, cc)
				continue
			}
		}
		nullable = nullable || anyForceNullable(c.evidence(), t)
		fields = append(fields, Field{Name: c.name, Type: t, Nullable: nullable})
	}
	if len(conflicts) > 0 {
		target := ""
		if external {
			target = b.opts.ReferenceTarget
		}
		return &TypeConflictError{Policy: b.opts.Types, Reference: external, Target: target, Evolves: external && b.opts.ReferenceEvolves, Conflicts: conflicts}
	}
	if b.opts.SourceColumn != "" {
		key := FoldName(b.opts.SourceColumn, b.opts.CaseSensitive)
		for _, f := range fields {
			if FoldName(f.Name, b.opts.CaseSensitive) == key {
				return &OptionError{Option: "source-column", Value: b.opts.SourceColumn,
					Reason: fmt.Sprintf("collides with the merged column %q; choose another provenance column name", f.Name)}
			}
		}
		fields = append(fields, Field{Name: b.opts.SourceColumn, Type: stringType, Nullable: false})
	}
	if b.opts.Rescue != "" {
		key := FoldName(b.opts.Rescue, b.opts.CaseSensitive)
		for _, f := range fields {
			if FoldName(f.Name, b.opts.CaseSensitive) == key {
				return &OptionError{Option: "rescue", Value: b.opts.Rescue,
					Reason: fmt.Sprintf("collides with the column %q; choose another name for the rescue column", f.Name)}
			}
		}
		fields = append(fields, Field{Name: b.opts.Rescue, Type: stringType, Nullable: true})
	}
	if len(fields) > 0 {
		p.Target.Fields = fields
	}
	return nil
}

// evidence are the types the column's values have: those of the sources
// with rows, or, when none has it, the types inferred from no value.
func (c *column) evidence() []DataType {
	if len(c.types) > 0 {
		return c.types
	}
	return c.guesses
}

// hintsByKey are Options.Hints by the key of the column they name.
func (b *builder) hintsByKey() map[string]DataType {
	if len(b.opts.Hints) == 0 {
		return nil
	}
	out := make(map[string]DataType, len(b.opts.Hints))
	for _, k := range sortedHintKeys(b.opts.Hints) {
		_, key := b.namer.name(k)
		out[key] = b.opts.Hints[k]
	}
	return out
}

// castable reports whether Spark casts a value of type from to type to
// (an analysis error otherwise): atomic types into each other, except
// between dates or timestamps and booleans or binary, and nested types
// only into the same shape.
func castable(from, to DataType) bool {
	switch {
	case from.Kind == KindNull || from.Equal(to) || to.Kind == KindString:
		return true
	case from.Kind.IsComplex() || to.Kind.IsComplex():
		return sameShape(from, to)
	case to.Kind == KindBinary:
		return from.Kind.IsStringLike() || from.Kind == KindByte || from.Kind == KindShort || from.Kind == KindInt || from.Kind == KindLong
	case from.Kind == KindBinary:
		return false
	}
	datetime := func(k Kind) bool { return k == KindDate || k == KindTimestamp || k == KindTimestampNTZ }
	if datetime(from.Kind) && to.Kind == KindBoolean || from.Kind == KindBoolean && datetime(to.Kind) {
		return false
	}
	return true
}

// fits reports whether a source type can be stored in the reference type
// without a cast that can fail: under strict only the same type, otherwise
// a type that widens to the reference type. Struct fields match by name,
// in any order (the projection rebuilds a struct in the reference's
// order). With DropExtra, struct fields the reference lacks do not count.
func (b *builder) fits(src, ref DataType) bool {
	if b.opts.DropExtra {
		src = restrictTo(src, ref, b.opts.CaseSensitive)
	}
	u := b.unifier
	if u.policy == TypesString {
		u.policy = TypesWiden
	}
	// The reference first: struct fields unify in first-seen order, so
	// that a source's fields in another order (Spark's JSON inference
	// sorts them by name) give the reference's own order, not a struct
	// that differs from it by position alone.
	t, cl := u.unify("", []DataType{ref, src})
	return cl == nil && sameShape(t, ref)
}

// restrictTo drops the struct fields of t that ref lacks, recursively.
func restrictTo(t, ref DataType, caseSensitive bool) DataType {
	switch {
	case t.Kind == KindStruct && ref.Kind == KindStruct:
		keep := make([]Field, 0, len(t.Fields))
		for _, f := range t.Fields {
			if rf, ok := findField(ref.Fields, f.Name, caseSensitive); ok {
				f.Type = restrictTo(f.Type, rf.Type, caseSensitive)
				keep = append(keep, f)
			}
		}
		t.Fields = keep
	case t.Kind == KindArray && ref.Kind == KindArray:
		t = ArrayOf(restrictTo(deref(t.Elem), deref(ref.Elem), caseSensitive), t.ContainsNull)
	case t.Kind == KindMap && ref.Kind == KindMap:
		t = MapOf(restrictTo(deref(t.Key), deref(ref.Key), caseSensitive),
			restrictTo(deref(t.Value), deref(ref.Value), caseSensitive), t.ValueContainsNull)
	}
	return t
}

func findField(fields []Field, name string, caseSensitive bool) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	if !caseSensitive {
		for _, f := range fields {
			if equalFold(f.Name, name) {
				return f, true
			}
		}
	}
	return Field{}, false
}

func equalFold(a, b string) bool { return FoldName(a, false) == FoldName(b, false) }

// sameShape reports whether t and u are the same type ignoring nullability
// and the case of field names.
func sameShape(t, u DataType) bool { return sameType(t, u, true) }

// sameExact reports whether a source type needs no conversion at all to
// become the target type: equal up to nullability, with the same field
// spelling.
func sameExact(from, to DataType) bool { return sameType(from, to, false) }

// sameType reports whether t and u are the same type ignoring nullability,
// and with foldCase the case of field names.
func sameType(t, u DataType, foldCase bool) bool {
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case KindStruct:
		if len(t.Fields) != len(u.Fields) {
			return false
		}
		for i := range t.Fields {
			a, b := t.Fields[i].Name, u.Fields[i].Name
			if (a != b && !(foldCase && equalFold(a, b))) || !sameType(t.Fields[i].Type, u.Fields[i].Type, foldCase) {
				return false
			}
		}
		return true
	case KindArray:
		return sameType(deref(t.Elem), deref(u.Elem), foldCase)
	case KindMap:
		return sameType(deref(t.Key), deref(u.Key), foldCase) && sameType(deref(t.Value), deref(u.Value), foldCase)
	}
	return t.Equal(u)
}

// conflict lists each source that has column id with its type there.
func (b *builder) conflict(id int32, name string, withRef bool) ColumnConflict {
	cc := ColumnConflict{Column: name, Path: name}
	if withRef {
		ref := "(reference)"
		if b.opts.ReferenceTarget != "" {
			ref = "(" + b.opts.ReferenceTarget + ")"
		}
		cc.Sources = append(cc.Sources, ref)
		cc.Types = append(cc.Types, *b.cols[id].refType)
	}
	for s, src := range b.sources {
		for j, fid := range b.fieldCols[s] {
			if fid == id {
				if src.fromNoValue(j) && len(b.cols[id].types) > 0 {
					break // its type yields to the others'
				}
				cc.Sources = append(cc.Sources, src.Name)
				cc.Types = append(cc.Types, src.Schema.Fields[j].Type)
				break
			}
		}
	}
	return cc
}

// project fills the per-source plans.
func (b *builder) project(p *Plan) {
	nt := len(b.target)
	p.Sources = make([]SourcePlan, len(b.sources))
	all := make([]int, nt*len(b.sources))
	for s, src := range b.sources {
		cols := all[s*nt : (s+1)*nt : (s+1)*nt]
		for k := range cols {
			cols[k] = -1
		}
		var excluded []int
		for j, id := range b.fieldCols[s] {
			if id < 0 {
				excluded = append(excluded, j)
				continue
			}
			if pos := b.cols[id].pos; pos >= 0 {
				cols[pos] = j
			}
		}
		p.Sources[s] = SourcePlan{Name: src.Name, Schema: src.Schema, Columns: cols, Excluded: excluded, NoRows: src.NoRows, NoValues: src.NoValues}
	}
}

// Diagnostics returns what merging does to source i: the columns it lacks,
// the casts, the conflicts resolved as string, the dropped and the renamed
// columns. It panics if i is out of range.
func (p *Plan) Diagnostics(i int) Diagnostics {
	sp := &p.Sources[i]
	var d Diagnostics
	var nestedAdded, nestedDropped []string
	used := make([]bool, len(sp.Schema.Fields))
	for k, j := range sp.Columns {
		tf := &p.Target.Fields[k]
		if j < 0 {
			d.Added = append(d.Added, tf.Name)
			continue
		}
		used[j] = true
		f := &sp.Schema.Fields[j]
		if f.Name != tf.Name {
			d.Renamed = append(d.Renamed, Rename{From: f.Name, To: tf.Name})
		}
		if sameExact(f.Type, tf.Type) {
			continue
		}
		if sp.fromNoValue(j) {
			d.Untyped = append(d.Untyped, TypeChange{Column: tf.Name, From: f.Type, To: tf.Type})
			continue
		}
		td := diffTypes(tf.Name, f.Type, tf.Type, p.CaseSensitive)
		nestedAdded = append(nestedAdded, td.added...)
		nestedDropped = append(nestedDropped, td.dropped...)
		ch := TypeChange{Column: tf.Name, From: f.Type, To: tf.Type}
		switch {
		case td.toString:
			d.Conflicts = append(d.Conflicts, ch)
		case td.cast && NarrowsValues(f.Type, tf.Type):
			d.Narrowed = append(d.Narrowed, ch)
		case td.cast:
			d.Widened = append(d.Widened, ch)
		}
	}
	for j, u := range used {
		if !u {
			d.Dropped = append(d.Dropped, sp.Schema.Fields[j].Name)
		}
	}
	d.Added = append(d.Added, nestedAdded...)
	d.Dropped = append(d.Dropped, nestedDropped...)
	return d
}

// typeDiff is what converting one type into another involves.
type typeDiff struct {
	added, dropped []string // nested field paths
	cast           bool     // some leaf changes type
	toString       bool     // some non-string leaf becomes string
}

func diffTypes(path string, from, to DataType, caseSensitive bool) typeDiff {
	var d typeDiff
	d.walk(path, from, to, caseSensitive)
	return d
}

func (d *typeDiff) walk(path string, from, to DataType, caseSensitive bool) {
	if from.Kind == KindNull {
		if to.Kind != KindNull {
			d.cast = true
		}
		return
	}
	switch {
	case from.Kind == KindStruct && to.Kind == KindStruct:
		for _, tf := range to.Fields {
			ff, ok := findField(from.Fields, tf.Name, caseSensitive)
			if !ok {
				d.added = append(d.added, path+"."+tf.Name)
				continue
			}
			d.walk(path+"."+tf.Name, ff.Type, tf.Type, caseSensitive)
		}
		for _, ff := range from.Fields {
			if _, ok := findField(to.Fields, ff.Name, caseSensitive); !ok {
				d.dropped = append(d.dropped, path+"."+ff.Name)
			}
		}
	case from.Kind == KindArray && to.Kind == KindArray:
		d.walk(path+".element", deref(from.Elem), deref(to.Elem), caseSensitive)
	case from.Kind == KindMap && to.Kind == KindMap:
		d.walk(path+".key", deref(from.Key), deref(to.Key), caseSensitive)
		d.walk(path+".value", deref(from.Value), deref(to.Value), caseSensitive)
	case from.Equal(to):
	case to.Kind == KindString && !from.Kind.IsStringLike():
		d.cast = true
		d.toString = true
	default:
		d.cast = true
	}
}
