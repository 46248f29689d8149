package sparkmerge

import "fmt"

// Type unification.
//
// The widen policy follows Spark 4.0's ANSI union widening,
// AnsiTypeCoercion.findWiderTypeForTwo (apache/spark,
// sql/catalyst/src/main/scala/org/apache/spark/sql/catalyst/analysis/AnsiTypeCoercion.scala):
//
//   - findTightestCommonType: equal types; void with anything; an integral
//     type with a decimal that is wider than it (DecimalType.isWiderThan); two
//     non-decimal numbers by UpCastRule.numericPrecedence (tinyint < smallint <
//     int < bigint < float < double), where integral + float gives double
//     ("to avoid potential precision loss"); two datetimes by
//     findWiderDateTimeType (TypeCoercionHelper.scala: date+timestamp ->
//     timestamp, date+timestamp_ntz -> timestamp_ntz, timestamp+timestamp_ntz
//     -> timestamp); two intervals of one family by min start / max end field.
//   - findWiderTypeForDecimal (TypeCoercionHelper.scala): decimal+decimal and
//     integral+decimal by DecimalPrecision.widerDecimalType (integral as
//     DecimalType.forType: tinyint decimal(3,0), smallint (5,0), int (10,0),
//     bigint (20,0)): scale = max(s1,s2), range = max(p1-s1, p2-s2), bounded
//     by boundedPreferIntegralDigits (Spark 4.0, SPARK-45905: above precision
//     38 the scale shrinks so that the integer digits are kept); decimal +
//     float/double -> double.
//   - findTypeForComplex (TypeCoercionHelper.scala): arrays by element, maps
//     by key and value, structs of the same length with the same names
//     field-wise; containsNull / valueContainsNull / nullable are or-ed with
//     Cast.forceNullable of each side's cast (Cast.scala).
//
// Deliberate differences, all of which turn a Spark error or a cast that can
// fail at run time into a result that always works:
//
//   - string (or char/varchar) with any other atomic type gives string
//     (with variant: variant, as in Spark). Spark's AnsiStringPromotionTypeCoercion gives bigint for
//     string+integral, double for string+fractional and the other type for
//     string+date/timestamp/boolean/binary, a cast that fails on the first
//     value that does not parse.
//   - boolean with a number gives string (Spark: no common type).
//   - structs merge by field name (per CaseSensitive), in first-seen field
//     order, padding missing fields with nulls, also inside arrays and map
//     values (Spark's unionByName pads top-level structs only; findTypeForComplex
//     requires equal names in equal order).
//
// To be independent of the order of the sources, types are unified as a set
// rather than folded pairwise: with the string rule a pairwise fold is not
// associative (boolean, date, string).

// WiderType returns the type a column gets when one source has type a and
// another type b, under opts.Types and opts.CaseSensitive (the other options
// do not matter). It is what NewPlan computes for each column, exported for
// tests that compare the planner with Spark. A conflict is a
// *TypeConflictError naming the sources "a" and "b".
func WiderType(a, b DataType, opts Options) (DataType, error) {
	u := unifier{policy: opts.Types, caseSensitive: opts.CaseSensitive, lossy: opts.LossyWidening}
	t, c := u.unify("", []DataType{a, b})
	if c != nil {
		return DataType{}, &TypeConflictError{Policy: opts.Types, Conflicts: []ColumnConflict{{
			Path: c.path, Sources: []string{"a", "b"}, Types: []DataType{a, b}, Reason: c.reason,
		}}}
	}
	return t, nil
}

// unifier unifies a set of types under one policy.
type unifier struct {
	policy        TypePolicy
	caseSensitive bool
	lossy         bool // Options.LossyWidening
}

// clash is where inside a column types cannot be unified.
type clash struct {
	path   string
	types  []DataType
	reason string // why the types have no common type, when not plain
}

// unify returns the type that all of ts convert to, or where they clash.
// path names the position for clash reports ("" for the column itself).
func (u *unifier) unify(path string, ts []DataType) (DataType, *clash) {
	// Void (an all-null column) carries no type: it widens to anything.
	var first DataType
	n := 0
	allEqual := true
	var kinds kindSet
	for _, t := range ts {
		if t.Kind == KindNull {
			continue
		}
		if n == 0 {
			first = t
		} else if allEqual && !t.Equal(first) {
			allEqual = false
		}
		kinds.add(t.Kind)
		n++
	}
	switch {
	case n == 0:
		return DataType{}, nil
	case allEqual:
		return first, nil
	}
	nonNull := make([]DataType, 0, n)
	for _, t := range ts {
		if t.Kind != KindNull {
			nonNull = append(nonNull, t)
		}
	}
	complexKinds := kinds.count(KindStruct) + kinds.count(KindArray) + kinds.count(KindMap)
	if complexKinds > 0 {
		if kinds.size() == 1 {
			switch first.Kind {
			case KindStruct:
				return u.unifyStructs(path, nonNull)
			case KindArray:
				return u.unifyArrays(path, nonNull)
			case KindMap:
				return u.unifyMaps(path, nonNull)
			}
		}
		if u.policy == TypesString {
			return stringType, nil
		}
		return DataType{}, &clash{path: path, types: nonNull}
	}
	switch u.policy {
	case TypesStrict:
		if sameIgnoringNullability(nonNull) {
			return first, nil
		}
		return DataType{}, &clash{path: path, types: nonNull}
	case TypesString:
		return stringType, nil
	}
	t, ok := widenAtomic(kinds, nonNull)
	if !ok {
		return DataType{}, &clash{path: path, types: nonNull}
	}
	if !u.lossy {
		if why := lossyWidening(t, nonNull, path != ""); why != "" {
			return DataType{}, &clash{path: path, types: nonNull, reason: why}
		}
	}
	return t, nil
}

var stringType = DataType{Kind: KindString}

// sameIgnoringNullability reports whether all of ts are the same atomic type.
func sameIgnoringNullability(ts []DataType) bool {
	for _, t := range ts[1:] {
		if !t.Equal(ts[0]) {
			return false
		}
	}
	return true
}

// widenAtomic unifies a set of atomic, non-void, not all equal types.
func widenAtomic(kinds kindSet, ts []DataType) (DataType, bool) {
	stringish := kinds.any(KindString, KindChar, KindVarchar) ||
		kinds.has(KindBoolean) && kinds.anyNumeric()
	if stringish {
		if kinds.has(KindVariant) {
			// Spark 4.0 unions string with variant as variant (checked on
			// 4.0.1), a cast that cannot fail; with anything else variant
			// has no common type.
			if kinds.onlyIn(KindString, KindChar, KindVarchar, KindVariant) {
				return DataType{Kind: KindVariant}, true
			}
			return DataType{}, false
		}
		// Our rule: every other atomic type casts to string safely.
		return stringType, true
	}
	switch {
	case kinds.onlyNumeric():
		return widenNumeric(kinds, ts), true
	case kinds.onlyIn(KindDate, KindTimestamp, KindTimestampNTZ):
		// findWiderDateTimeType.
		switch {
		case kinds.has(KindTimestamp):
			return DataType{Kind: KindTimestamp}, true
		case kinds.has(KindTimestampNTZ):
			return DataType{Kind: KindTimestampNTZ}, true
		}
		return DataType{Kind: KindDate}, true
	case kinds.onlyIn(KindYearMonthInterval), kinds.onlyIn(KindDayTimeInterval):
		t := ts[0]
		for _, x := range ts[1:] {
			t.StartField = min(t.StartField, x.StartField)
			t.EndField = max(t.EndField, x.EndField)
		}
		return t, true
	}
	// boolean, binary, calendar interval and variant only equal themselves;
	// number vs datetime, binary, interval and the like have no common type.
	return DataType{}, false
}

// widenNumeric unifies a set of numeric types.
func widenNumeric(kinds kindSet, ts []DataType) DataType {
	if kinds.has(KindFloat) || kinds.has(KindDouble) {
		// float+float is float; float with anything else, and double with
		// anything, is double (integral+float -> double in ANSI mode;
		// decimal+float/double -> double in findWiderTypeForDecimal).
		if kinds.onlyIn(KindFloat) {
			return DataType{Kind: KindFloat}
		}
		return DataType{Kind: KindDouble}
	}
	if !kinds.has(KindDecimal) {
		// The widest integral type by numericPrecedence.
		widest := KindByte
		for _, t := range ts {
			widest = max(widest, t.Kind)
		}
		return DataType{Kind: widest}
	}
	// widerDecimalType over all decimals and integrals (as forType). An
	// integral type that a decimal is wider than (findTightestCommonType)
	// gives that decimal, which is the same result. Range and scale are
	// maxima, so the result does not depend on order, also when bounded.
	rng, scale := 0, 0
	for _, t := range ts {
		p, s := decimalOf(t)
		rng = max(rng, p-s)
		scale = max(scale, s)
	}
	return boundedPreferIntegralDigits(rng+scale, scale)
}

// decimalOf returns the precision and scale of a decimal or of the decimal
// Spark uses for an integral type (DecimalType.forType).
func decimalOf(t DataType) (precision, scale int) {
	switch t.Kind {
	case KindByte:
		return 3, 0
	case KindShort:
		return 5, 0
	case KindInt:
		return 10, 0
	case KindLong:
		return 20, 0
	case KindFloat:
		return 14, 7
	case KindDouble:
		return 30, 15
	}
	return t.Precision, t.Scale
}

// boundedPreferIntegralDigits is DecimalType.boundedPreferIntegralDigits
// (Spark 4.0, SPARK-45905): above the maximum precision the scale gives way.
func boundedPreferIntegralDigits(precision, scale int) DataType {
	if precision <= MaxDecimalPrecision {
		return NewDecimal(precision, scale)
	}
	diff := precision - MaxDecimalPrecision
	return NewDecimal(MaxDecimalPrecision, max(0, scale-diff))
}

// unifyStructs merges structs field by field, by name.
func (u *unifier) unifyStructs(path string, ts []DataType) (DataType, *clash) {
	type slot struct {
		name     string
		types    []DataType
		present  int
		nullable bool
	}
	var slots []*slot
	index := map[string]*slot{}
	for _, t := range ts {
		for _, f := range t.Fields {
			k := FoldName(f.Name, u.caseSensitive)
			s := index[k]
			if s == nil {
				s = &slot{name: f.Name}
				index[k] = s
				slots = append(slots, s)
			}
			s.types = append(s.types, f.Type)
			s.present++
			s.nullable = s.nullable || f.Nullable
		}
	}
	out := DataType{Kind: KindStruct}
	if len(slots) > 0 {
		out.Fields = make([]Field, 0, len(slots))
	}
	for _, s := range slots {
		t, c := u.unify(joinPath(path, s.name), s.types)
		if c != nil {
			return DataType{}, c
		}
		nullable := s.nullable || s.present < len(ts) || anyForceNullable(s.types, t)
		out.Fields = append(out.Fields, Field{Name: s.name, Type: t, Nullable: nullable})
	}
	return out, nil
}

func (u *unifier) unifyArrays(path string, ts []DataType) (DataType, *clash) {
	elems := make([]DataType, len(ts))
	containsNull := false
	for i, t := range ts {
		elems[i] = deref(t.Elem)
		containsNull = containsNull || t.ContainsNull
	}
	e, c := u.unify(joinPath(path, "element"), elems)
	if c != nil {
		return DataType{}, c
	}
	return ArrayOf(e, containsNull || anyForceNullable(elems, e)), nil
}

func (u *unifier) unifyMaps(path string, ts []DataType) (DataType, *clash) {
	keys := make([]DataType, len(ts))
	values := make([]DataType, len(ts))
	valueContainsNull := false
	for i, t := range ts {
		keys[i] = deref(t.Key)
		values[i] = deref(t.Value)
		valueContainsNull = valueContainsNull || t.ValueContainsNull
	}
	k, c := u.unify(joinPath(path, "key"), keys)
	if c != nil {
		return DataType{}, c
	}
	// findTypeForComplex rejects a key type that a cast could make null.
	if anyForceNullable(keys, k) {
		return DataType{}, &clash{path: joinPath(path, "key"), types: keys}
	}
	v, c := u.unify(joinPath(path, "value"), values)
	if c != nil {
		return DataType{}, c
	}
	return MapOf(k, v, valueContainsNull || anyForceNullable(values, v)), nil
}

func joinPath(path, name string) string {
	if name == "" {
		return path
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

func anyForceNullable(from []DataType, to DataType) bool {
	for _, f := range from {
		if forceNullable(f, to) {
			return true
		}
	}
	return false
}

// forceNullable is Spark 4.0's Cast.forceNullable (Cast.scala): whether
// casting a non-null value of type from to type to may give null.
func forceNullable(from, to DataType) bool {
	switch {
	case from.Kind == KindNull, from.Equal(to):
		return false
	case from.Kind == KindVariant:
		return true
	case from.Kind.IsStringLike():
		return !(to.Kind == KindBinary || to.Kind.IsStringLike())
	case to.Kind.IsStringLike():
		return false
	case from.Kind == KindTimestamp && (to.Kind == KindByte || to.Kind == KindShort || to.Kind == KindInt):
		return true
	case from.Kind.IsFloatingPoint() && to.Kind == KindTimestamp:
		return true
	case from.Kind == KindTimestamp && to.Kind == KindDate:
		return false
	case to.Kind == KindDate:
		return true
	case from.Kind == KindDate && to.Kind == KindTimestamp:
		return false
	case from.Kind == KindDate:
		return true
	case to.Kind == KindCalendarInterval:
		return true
	case to.Kind == KindDecimal:
		return !canNullSafeCastToDecimal(from, to)
	case from.Kind.IsFloatingPoint() && to.Kind.IsIntegral():
		return true
	}
	return false
}

// canNullSafeCastToDecimal is Cast.canNullSafeCastToDecimal.
func canNullSafeCastToDecimal(from, to DataType) bool {
	switch {
	case from.Kind == KindBoolean:
		return decimalWiderThan(to, 1, 0)
	case from.Kind.IsNumeric() && from.Kind != KindDecimal:
		p, s := decimalOf(from)
		return decimalWiderThan(to, p, s)
	case from.Kind == KindDecimal:
		return decimalWiderThan(to, from.Precision, from.Scale) ||
			to.Precision-to.Scale > from.Precision-from.Scale
	}
	return false
}

// decimalWiderThan is DecimalType.isWiderThan for a decimal(p,s).
func decimalWiderThan(d DataType, p, s int) bool {
	return d.Precision-d.Scale >= p-s && d.Scale >= s
}

// kindSet is a small set of kinds.
type kindSet uint32

func (k *kindSet) add(x Kind)     { *k |= 1 << uint(x) }
func (k kindSet) has(x Kind) bool { return k&(1<<uint(x)) != 0 }
func (k kindSet) count(x Kind) int {
	if k.has(x) {
		return 1
	}
	return 0
}

func (k kindSet) size() int {
	n := 0
	for x := k; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func (k kindSet) any(xs ...Kind) bool {
	for _, x := range xs {
		if k.has(x) {
			return true
		}
	}
	return false
}

func (k kindSet) onlyIn(xs ...Kind) bool {
	var allowed kindSet
	for _, x := range xs {
		allowed.add(x)
	}
	return k&^allowed == 0
}

func (k kindSet) anyNumeric() bool {
	return k.any(KindByte, KindShort, KindInt, KindLong, KindFloat, KindDouble, KindDecimal)
}

func (k kindSet) onlyNumeric() bool {
	return k.onlyIn(KindByte, KindShort, KindInt, KindLong, KindFloat, KindDouble, KindDecimal)
}

// lossyWidening says why widening ts to t would change values in a way no
// per-value check can catch, or "". Decimals whose common type needs more
// than 38 digits lose fraction digits (boundedPreferIntegralDigits) for
// every value. A cast to double that may round (see RoundsValues) is
// checked per value at the top level; inside a struct, array or map
// (nested) it cannot be.
func lossyWidening(t DataType, ts []DataType, nested bool) string {
	if t.Kind == KindDecimal {
		for _, x := range ts {
			p, s := decimalOf(x)
			if s > t.Scale || p-s > t.Precision-t.Scale {
				return fmt.Sprintf("%s would round %s values: no decimal of at most %d digits holds both", t, x, MaxDecimalPrecision)
			}
		}
	}
	if nested {
		for _, x := range ts {
			if RoundsValues(x, t) {
				return fmt.Sprintf("%s would round large %s values inside a nested column, where they cannot be checked one by one", t, x)
			}
		}
	}
	return ""
}

// NarrowsValues reports whether a cast of from to to, a narrower type (a
// hint's, or a table's a merge is appended to), can change a value
// without failing: a decimal to fewer fraction digits, a double or float
// to a decimal, a double to float, a fraction to an integer (truncated),
// a timestamp to a date (its time cut), and a string to a decimal, a
// float or a date, whose cast rounds or cuts the text as those would. The
// planner checks such casts per value, as RoundsValues' (found in the
// field: Parquet's decimal(10,4) 123456.7891 hinted decimal(12,2) came out
// 123456.79, a double past float's range Infinity, a timestamp's time
// gone; a string column's "12.345" hinted decimal(5,2) 12.35).
func NarrowsValues(from, to DataType) bool {
	fraction := from.Kind == KindFloat || from.Kind == KindDouble || from.Kind == KindDecimal && from.Scale > 0
	text := from.Kind == KindString
	switch to.Kind {
	case KindDecimal:
		return from.Kind == KindFloat || from.Kind == KindDouble || from.Kind == KindDecimal && from.Scale > to.Scale || text
	case KindFloat:
		return from.Kind == KindDouble || text
	case KindByte, KindShort, KindInt, KindLong:
		return fraction
	case KindDate:
		return from.Kind == KindTimestamp || from.Kind == KindTimestampNTZ || text
	}
	return false
}

// RoundsValues reports whether a cast of from to to can change a value
// without failing: a bigint (past 2^53) or a decimal of more than 15
// digits to double, an int or a decimal of more than 6 digits to float.
// (Every decimal of at most 15 significant digits survives a round trip
// through a double.) The planner checks such casts per value unless
// Options.LossyWidening.
func RoundsValues(from, to DataType) bool {
	switch to.Kind {
	case KindDouble:
		return from.Kind == KindLong || from.Kind == KindDecimal && from.Precision > 15
	case KindFloat:
		return from.Kind == KindInt || from.Kind == KindLong || from.Kind == KindDecimal && from.Precision > 6
	}
	return false
}
