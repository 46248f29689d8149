package sparkmerge

import "strconv"

// ProjectionKind says how a source produces one target column.
type ProjectionKind int

const (
	// ProjectTake takes the source column as it is (maybe renamed).
	ProjectTake ProjectionKind = iota
	// ProjectCast takes the source column and casts it to the target type.
	ProjectCast
	// ProjectNull gives a null of the target type: the source lacks the
	// column.
	ProjectNull
	// ProjectRebuild rebuilds a nested column whose struct fields differ
	// (missing, reordered or differently cased fields, also inside arrays
	// and map values), field by field.
	ProjectRebuild
	// ProjectLiteral gives a constant: the provenance column.
	ProjectLiteral
	// ProjectRescue gives the rescue column (Options.Rescue): the values
	// of the source's row that did not convert, as a JSON object.
	ProjectRescue
)

var projectionKindNames = []string{"take", "cast", "null", "rebuild", "literal", "rescue"}

// String returns "take", "cast", "null", "rebuild", "literal" or "rescue".
func (k ProjectionKind) String() string {
	return enumName(projectionKindNames, int(k), "ProjectionKind")
}

// Projection is how one source produces one target column.
type Projection struct {
	Kind   ProjectionKind
	Column string // target column name
	// Source is the source column's name (take, cast, rebuild).
	Source string
	// From is the source column's type (take, cast, rebuild).
	From DataType
	// To is the target column's type.
	To DataType
	// Nullable is whether the source column is nullable (take, cast,
	// rebuild); a rebuild keeps a null struct null.
	Nullable bool
	// Value is the literal's value (literal).
	Value string
	// Checked is true for a cast that may round a value (RoundsValues,
	// NarrowsValues): it is rendered to fail, naming the value, where it
	// would.
	Checked bool
	// Input is the source's name, for a checked cast's error.
	Input string
	// MayFail is true for a cast that fails on values that do not
	// convert (a hint's string to int): it is rendered to fail naming
	// the value and its source, or, with Options.Rescue, to give null
	// and rescue the value.
	MayFail bool
	// NoValue marks a null (ProjectNull) that stands for the column
	// Source, whose type, From, was inferred from no value (a source
	// without rows, Source.NoRows, or Source.NoValues) and yields to the
	// target's: there is no value to cast.
	NoValue bool
}

// Projections returns, for source i, one projection per target column, in
// target order. It panics if i is out of range.
func (p *Plan) Projections(i int) []Projection {
	sp := &p.Sources[i]
	out := make([]Projection, len(p.Target.Fields))
	for k := range p.Target.Fields {
		out[k] = p.projection(sp, k)
	}
	return out
}

func (p *Plan) projection(sp *SourcePlan, k int) Projection {
	tf := &p.Target.Fields[k]
	if p.Rescue != "" && k == len(p.Target.Fields)-1 {
		return Projection{Kind: ProjectRescue, Column: tf.Name, To: tf.Type, Input: sp.Name}
	}
	if k >= len(sp.Columns) {
		return Projection{Kind: ProjectLiteral, Column: tf.Name, To: tf.Type, Value: sp.Name}
	}
	j := sp.Columns[k]
	if j < 0 {
		return Projection{Kind: ProjectNull, Column: tf.Name, To: tf.Type}
	}
	f := &sp.Schema.Fields[j]
	pr := Projection{Column: tf.Name, Source: f.Name, From: f.Type, To: tf.Type, Nullable: f.Nullable}
	if sp.fromNoValue(j) && !sameExact(f.Type, tf.Type) {
		// A cast of no value: a typed null says the same, and casts
		// (string to struct) Spark would refuse.
		pr.Kind, pr.NoValue = ProjectNull, true
		return pr
	}
	switch {
	case sameExact(f.Type, tf.Type):
		pr.Kind = ProjectTake
	case needsRebuild(f.Type, tf.Type, p.CaseSensitive):
		pr.Kind = ProjectRebuild
	default:
		pr.Kind = ProjectCast
		pr.Checked = !p.LossyWidening && (RoundsValues(f.Type, tf.Type) || NarrowsValues(f.Type, tf.Type))
		pr.MayFail = castMayFail(f.Type, tf.Type)
		if pr.Checked || pr.MayFail {
			pr.Input = sp.Name
		}
	}
	return pr
}

// needsRebuild reports whether from cannot become to by a plain CAST:
// Spark casts structs by position, so structs whose fields differ in number
// or order (by name) must be rebuilt.
func needsRebuild(from, to DataType, caseSensitive bool) bool {
	switch {
	case from.Kind == KindStruct && to.Kind == KindStruct:
		if len(from.Fields) != len(to.Fields) {
			return true
		}
		for i := range from.Fields {
			ff, tf := &from.Fields[i], &to.Fields[i]
			if FoldName(ff.Name, caseSensitive) != FoldName(tf.Name, caseSensitive) ||
				needsRebuild(ff.Type, tf.Type, caseSensitive) {
				return true
			}
		}
	case from.Kind == KindArray && to.Kind == KindArray:
		return needsRebuild(deref(from.Elem), deref(to.Elem), caseSensitive)
	case from.Kind == KindMap && to.Kind == KindMap:
		return needsRebuild(deref(from.Key), deref(to.Key), caseSensitive) ||
			needsRebuild(deref(from.Value), deref(to.Value), caseSensitive)
	}
	return false
}

// SelectExprs returns, for source i, the Spark SQL select expressions that
// map it onto the target, one per target column in target order:
//
//	`name`                                  taken as is
//	`hight` AS `height`                     renamed
//	CAST(`age` AS bigint) AS `age`          widened
//	CAST(NULL AS decimal(12,4)) AS `amount` missing
//	'a.csv' AS `_source`                    provenance
//
// Nested rebuilds use named_struct (guarded so that a null struct stays
// null), transform for arrays and transform_values / transform_keys for
// maps. Identifiers are always backquoted. It panics if i is out of range.
func (p *Plan) SelectExprs(i int) []string {
	sp := &p.Sources[i]
	out := make([]string, len(p.Target.Fields))
	for k := range p.Target.Fields {
		out[k] = p.selectExpr(i, p.projection(sp, k))
	}
	return out
}

func (p *Plan) selectExpr(i int, pr Projection) string {
	alias := " AS " + ident(pr.Column)
	switch pr.Kind {
	case ProjectTake:
		if pr.Source == pr.Column {
			return ident(pr.Source)
		}
		return ident(pr.Source) + alias
	case ProjectCast:
		return p.CastExpr(pr, ident(pr.Source), QuoteString(pr.Input)) + alias
	case ProjectNull:
		if pr.NoValue {
			return noValueNull(pr, QuoteString(p.Sources[i].Name)) + alias
		}
		return typedNull(pr.To) + alias
	case ProjectRebuild:
		r := rebuilder{caseSensitive: p.CaseSensitive}
		return r.expr(ident(pr.Source), pr.From, pr.To, pr.Nullable, 0) + alias
	case ProjectLiteral:
		return QuoteString(pr.Value) + alias
	case ProjectRescue:
		return RescueObject(p.RescueEntries(i), QuoteString(pr.Input)) + alias
	}
	return "NULL" + alias
}

// CastExpr is the cast of a ProjectCast projection over expr, the
// source's value; where (a SQL string expression) names its source for
// errors. A cast that may round (Checked) fails naming the value, and so
// does one that may fail (MayFail), instead of Spark's error without the
// source; with Rescue either gives null where it would fail, and
// RescueEntries keeps the value.
func (p *Plan) CastExpr(pr Projection, expr, where string) string {
	cast := "CAST(" + expr + " AS " + pr.To.String() + ")"
	switch {
	case p.Rescue != "" && pr.Checked:
		return "CASE WHEN " + roundsCond(expr, pr.From, pr.To) + " THEN NULL ELSE " + cast + " END"
	case p.Rescue != "" && pr.MayFail:
		return "try_cast(" + expr + " AS " + pr.To.String() + ")"
	case pr.Checked:
		return CheckedCast(expr, pr.From, pr.To, pr.Column, where)
	case pr.MayFail:
		return FailingCast(expr, pr.From, pr.To, pr.Column, where)
	}
	return cast
}

// valueError fails the query naming a value: "sparkmerge: column C: the
// value V of W" (value and where SQL string expressions), then rest, SQL
// string expressions saying what became of it and what to do.
func valueError(column, value, where string, rest ...string) string {
	out := "raise_error(concat(" + QuoteString("sparkmerge: column "+column+": the value ") + ", " + value + ", " + QuoteString(" of ") + ", " + where
	for _, r := range rest {
		out += ", " + r
	}
	return out + "))"
}

// notAValueAdvice ends the error of a value that is no value of its type.
const notAValueAdvice = ": fix the value, give the column another type (Options.Hints), or keep such values aside (Options.Rescue)"

// readerRoundsAdvice ends the error of a text file's value that Spark's
// reader would round or cut into hint.
func readerRoundsAdvice(hint DataType) string {
	return " as " + hint.String() + " (its hinted type), which Spark's reader would make of it silently: give the column a type that holds the value (Options.Hints), keep such values aside (Options.Rescue), or accept the rounding (Options.LossyWidening)"
}

// FailingCast is CAST(expr AS to) for a cast that fails on some values
// (castMayFail): such a value fails the query with an error naming the
// column, the value, its source (where, a SQL string expression) and what
// to do, rather than Spark's cast error, which names neither the column
// nor the source.
func FailingCast(expr string, from, to DataType, column, where string) string {
	fail := valueError(column, valueText(expr, from), where, QuoteString(" is not a "+to.String()+" (the column's type)"+notAValueAdvice))
	return "CASE WHEN " + castFailsCond(expr, to) + " THEN " + fail + " ELSE CAST(" + expr + " AS " + to.String() + ") END"
}

// castFailsCond is true where CAST(expr AS to) fails: try_cast gives null
// exactly where the cast would raise an error.
func castFailsCond(expr string, to DataType) string {
	return expr + " IS NOT NULL AND try_cast(" + expr + " AS " + to.String() + ") IS NULL"
}

// roundsCond is true where a cast that may round (RoundsValues) changes
// the value (see unchangedCond).
func roundsCond(expr string, from, to DataType) string {
	return expr + " IS NOT NULL AND NOT " + unchangedCond(expr, from, to)
}

// unchangedCond is true where CAST(expr AS to), a cast that may round
// (RoundsValues), keeps expr's value, and false where it changes it or
// expr is null. An integer is kept when the double (or float) is exactly
// that integer (2^60 and 2^63 are doubles; 2^53+1 and 2^63-1 are not). A
// round trip cannot tell: Spark casts the double 2^63 back to bigint as
// 2^63-1 (it saturates), and to a decimal through the double's shortest
// text (2^63 as 9223372036854776000); see sameInteger. A decimal with a
// fraction is kept when the double reads back as that decimal, as Spark
// casts it (0.1, which no double is exactly, is kept).
func unchangedCond(expr string, from, to DataType) string {
	cast := "CAST(" + expr + " AS " + to.String() + ")"
	if !RoundsValues(from, to) {
		return narrowedUnchangedCond(expr, from, to)
	}
	d := cast
	if to.Kind != KindDouble {
		d = "CAST(" + cast + " AS DOUBLE)"
	}
	whole := from
	if from.Kind != KindDecimal {
		whole = DataType{Kind: KindDecimal, Precision: 20}
	}
	exact := sameInteger("CAST("+expr+" AS "+whole.String()+")", d)
	if from.Kind != KindDecimal || from.Scale == 0 {
		return "coalesce(" + exact + ", false)"
	}
	text := "try_cast(" + cast + " AS " + from.String() + ") = " + expr
	return "coalesce(CASE WHEN " + expr + " % 1 = 0 THEN " + exact + " ELSE " + text + " END, false)"
}

// narrowedUnchangedCond is unchangedCond of a narrowing cast
// (NarrowsValues): the value is kept where it reads back unchanged, cast
// back to its own type, whose values hold the narrower type's (a value
// the round trip cannot take, 999999.9999 rounded past decimal(10,4),
// changed). A double to float: see floatKeepsCond.
func narrowedUnchangedCond(expr string, from, to DataType) string {
	cast := "try_cast(" + expr + " AS " + to.String() + ")" // null past the type's range
	switch {
	case from.Kind == KindString:
		return textUnchangedCond(expr, cast, to)
	case from.Kind == KindDouble && to.Kind == KindFloat:
		return floatKeepsCond(expr, cast)
	}
	return "coalesce(try_cast(" + cast + " AS " + from.String() + ") = " + expr + ", false)"
}

// textUnchangedCond is narrowedUnchangedCond of text cast to a decimal, a
// float or a date (cast, a try_cast of expr): a round trip through the
// text cannot tell (4.5 is 4.50), so the text is cast again into a type
// that holds it exactly and compared: a decimal's into decimal(38,
// 38-p+s) (see ExactTextType), a float's into a double (then as
// floatKeepsCond), a date's into a timestamp, which must be the date's
// midnight ("2024-01-05T10:00:00" is cut; a text no timestamp reads,
// "2024-01-05 garbage", too). Text the cast fails on is not kept either:
// the cast fails or rescues it.
func textUnchangedCond(expr, cast string, to DataType) string {
	switch to.Kind {
	case KindFloat:
		return floatKeepsCond("try_cast("+expr+" AS DOUBLE)", cast)
	case KindDate:
		return "coalesce(CAST(" + cast + " AS TIMESTAMP) = try_cast(" + expr + " AS TIMESTAMP), false)"
	}
	exact, ok := ExactTextType(to)
	if !ok { // decimal(38,s): no wider decimal; the text's own digits tell
		return "coalesce(" + cast + " IS NOT NULL AND " + decimalTextKeepsCond("trim("+expr+")", to.Scale) + ", false)"
	}
	return "coalesce(try_cast(" + expr + " AS " + exact.String() + ") = " + cast + ", false)"
}

// decimalNumber is the text of a number as Java's BigDecimal reads it,
// with ASCII digits: a sign, the integer digits, the fraction's, the
// exponent's (groups 1 to 3).
const decimalNumber = `'^[+-]?([0-9]*)(?:[.]([0-9]*))?(?:[eE]([+-]?[0-9]+))?$'`

// decimalTextKeepsCond is true where text, a number as written (see
// decimalNumber), has no digit but 0 past scale digits after its decimal
// point, its exponent applied: a decimal of that scale holds it exactly
// (12.340 and 1.2345e2 in scale 2; not 12.345). Worked out from the text
// (the last digit that is not 0, where the exponent puts it), so that it
// holds for a decimal(38,s), which has no wider decimal to compare with,
// and for digits past a decimal's 38th. Text of another form (digits of
// another script, white space) is false: not shown to be kept.
func decimalTextKeepsCond(text string, scale int) string {
	part := func(k int) string {
		return "regexp_extract(" + text + ", " + decimalNumber + ", " + strconv.Itoa(k) + ")"
	}
	digits := "concat(" + part(1) + ", " + part(2) + ")"
	trailingZeros := "(length(" + digits + ") - length(regexp_replace(" + digits + ", '0+$', '')))"
	exponent := "coalesce(try_cast(nullif(" + part(3) + ", '') AS INT), 0)"
	// How many digits after the point the value needs: the fraction's,
	// less the exponent, less the zeros that end the digits.
	needed := "(length(" + part(2) + ") - " + exponent + " - " + trailingZeros + ")"
	return "(" + text + " RLIKE " + decimalNumber + " AND (" + digits + " RLIKE '^0*$' OR " + needed + " <= " + strconv.Itoa(scale) + "))"
}

// floatKeepsCond is true where f, the double d cast to a float, keeps d's
// value: the float rounded to as many significant digits as d's text has
// is d (0.1, which neither is exactly, is kept, and so is 7.3E10, which
// Java 17 prints as a float 7.3000002E10), and NaN, zeros and infinities
// stay themselves. Infinity from a finite double, 0 from 1e-50, or
// 0.123456789 as 0.12345679 is not kept. (Comparing the two texts would
// refuse 7.3E10: Java before 19 does not print every float shortest.)
func floatKeepsCond(d, f string) string {
	// d's last significant digit's unit: the float rounds to d there when
	// it is within half of it (round itself takes only a constant scale).
	digits := "length(regexp_replace(regexp_replace(regexp_extract(CAST(" + d + " AS STRING), '^-?([0-9.]*)', 1), '[.]', ''), '^0+|0+$', ''))"
	unit := "power(10, CAST(floor(log10(abs(" + d + "))) AS INT) - " + digits + " + 1)"
	infinite := "CAST('Infinity' AS DOUBLE)"
	return "coalesce(CASE WHEN isnan(" + d + ") OR " + d + " = 0 OR abs(" + d + ") = " + infinite + " THEN " + f + " = " + d +
		" WHEN abs(" + f + ") = " + infinite + " OR " + f + " = 0 THEN false" +
		" ELSE abs(CAST(" + f + " AS DOUBLE) - " + d + ") < 0.5D * " + unit + " END, false)"
}

// sameInteger is true where x, a decimal integer, is exactly a, a
// double. Both are split into 2^64 * hi + 2^32 * mid + lo, each part a
// bigint truncated toward zero, and compared part by part: Spark casts a
// double to a decimal through its shortest text and to a bigint
// saturating, and negates or multiplies decimals to 34 digits, while
// these steps are exact (dividing a double by a power of two, truncating
// it and subtracting an integer it holds; a decimal's integral division
// and remainder). No decimal(38,0) needs a hi past a bigint.
func sameInteger(x, a string) string {
	const two32, two64 = "4294967296D", "18446744073709551616D"
	hi := "CAST(" + a + " / " + two64 + " AS BIGINT)"
	rest := "(" + a + " - CAST(" + hi + " AS DOUBLE) * " + two64 + ")"
	mid := "CAST(" + rest + " / " + two32 + " AS BIGINT)"
	lo := "CAST(" + rest + " - CAST(" + mid + " AS DOUBLE) * " + two32 + " AS BIGINT)"
	return "(" + x + " div 18446744073709551616BD = " + hi +
		" AND " + x + " % 18446744073709551616BD div 4294967296BD = " + mid +
		" AND " + x + " % 4294967296BD = " + lo + ")"
}

// valueText is the text of a value of type t: itself for a string, JSON
// for a nested value, Spark's string cast otherwise.
func valueText(expr string, t DataType) string {
	switch {
	case t.Kind == KindString:
		return expr
	case t.Kind.IsComplex():
		return "to_json(" + expr + ")"
	}
	return "CAST(" + expr + " AS STRING)"
}

// castMayFail reports whether casting a value of type from to type to can
// fail: to anything but a string, where the wider type of the two (the
// way sources are unified) is not to itself, as from a string to a
// number, from bigint to int, from double to decimal.
func castMayFail(from, to DataType) bool {
	if from.Kind == KindNull || to.Kind == KindString || sameExact(from, to) {
		return false
	}
	u := unifier{policy: TypesWiden}
	w, cl := u.unify("", []DataType{from, to})
	return cl != nil || !sameShape(w, to)
}

func typedNull(t DataType) string { return "CAST(NULL AS " + t.String() + ")" }

// noValueNull is the typed null of a NoValue projection, guarded: a
// value in the column means its source changed since it was planned
// without one there, and the query fails naming the value and its source
// (where, a SQL string expression) rather than merge it as null.
func noValueNull(pr Projection, where string) string {
	fail := "raise_error(concat(" + QuoteString("sparkmerge: column "+pr.Column+": ") + ", " + where + ", " +
		QuoteString(" had no value there when the merge was planned and now has the value ") + ", " + valueText(ident(pr.Source), pr.From) + ", " +
		QuoteString(": plan the merge again") + "))"
	return "CASE WHEN " + ident(pr.Source) + " IS NULL THEN " + typedNull(pr.To) + " ELSE " + fail + " END"
}

// ident backquotes a name. Names reaching it were checked by NewPlan, so the
// empty name (which QuoteIdent rejects) only comes from a hand-made Plan;
// it renders as an empty quoted name and Spark reports it.
func ident(name string) string {
	q, err := QuoteIdent(name)
	if err != nil {
		return "``"
	}
	return q
}

// rebuilder renders the expression converting a nested value.
type rebuilder struct {
	caseSensitive bool
}

// expr returns the expression converting e of type from into type to.
// nullable says whether e can be null; depth numbers lambda variables so
// that nested lambdas never shadow each other.
func (r rebuilder) expr(e string, from, to DataType, nullable bool, depth int) string {
	if sameExact(from, to) {
		return e
	}
	if from.Kind == KindNull {
		return typedNull(to)
	}
	if !needsRebuild(from, to, r.caseSensitive) {
		return "CAST(" + e + " AS " + to.String() + ")"
	}
	switch to.Kind {
	case KindStruct:
		b := make([]byte, 0, 64)
		b = append(b, "named_struct("...)
		for i, tf := range to.Fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, QuoteString(tf.Name)...)
			b = append(b, ", "...)
			if ff, ok := findField(from.Fields, tf.Name, r.caseSensitive); ok {
				b = append(b, r.expr(e+"."+ident(ff.Name), ff.Type, tf.Type, ff.Nullable, depth)...)
			} else {
				b = append(b, typedNull(tf.Type)...)
			}
		}
		b = append(b, ')')
		if !nullable {
			return string(b)
		}
		return "CASE WHEN " + e + " IS NULL THEN NULL ELSE " + string(b) + " END"
	case KindArray:
		x := "x" + strconv.Itoa(depth)
		return "transform(" + e + ", " + x + " -> " +
			r.expr(x, deref(from.Elem), deref(to.Elem), from.ContainsNull, depth+1) + ")"
	case KindMap:
		k, v := "k"+strconv.Itoa(depth), "v"+strconv.Itoa(depth)
		out := e
		if !sameExact(deref(from.Value), deref(to.Value)) {
			out = "transform_values(" + out + ", (" + k + ", " + v + ") -> " +
				r.expr(v, deref(from.Value), deref(to.Value), from.ValueContainsNull, depth+1) + ")"
		}
		if !sameExact(deref(from.Key), deref(to.Key)) {
			out = "transform_keys(" + out + ", (" + k + ", " + v + ") -> " +
				r.expr(k, deref(from.Key), deref(to.Key), false, depth+1) + ")"
		}
		return out
	}
	return "CAST(" + e + " AS " + to.String() + ")"
}

// CheckedCast is CAST(expr AS to) for a cast that may round a value
// (RoundsValues): a value the cast would change fails the query with an
// error naming the column, the value, its source (where, a SQL string
// expression) and what to do, instead of being rounded silently. Which
// values are kept is unchangedCond's: an integer the double is exactly
// (2^60 and 2^63 are; 2^53+1 and 2^63-1 are not), a decimal fraction the
// double reads back as.
func CheckedCast(expr string, from, to DataType, column, where string) string {
	cast := "CAST(" + expr + " AS " + to.String() + ")"
	advice := " as " + to.String() + " (the sources' common type): merge such columns as strings (Options.Types = TypesString), or accept the rounding (Options.LossyWidening)"
	becomes := "CAST(" + cast + " AS STRING)"
	if !RoundsValues(from, to) {
		narrower := "narrower than the source's " + from.String()
		if from.Kind == KindString {
			narrower = "whose cast of the text rounds or cuts it"
		}
		advice = " as " + to.String() + " (the column's type, " + narrower + "): give the column a type that holds the value (Options.Hints), keep such values aside (Options.Rescue), or accept the rounding (Options.LossyWidening)"
		// (A value past the type's range fails the plain cast.)
		becomes = "coalesce(CAST(try_cast(" + expr + " AS " + to.String() + ") AS STRING), 'nothing: it is out of range')"
	}
	fail := valueError(column, "CAST("+expr+" AS STRING)", where, QuoteString(" would become "), becomes, QuoteString(advice))
	if from.Kind == KindString {
		// Text that is no value of the type at all is named so, as
		// FailingCast names it, not as a rounding.
		notA := "CASE WHEN " + castFailsCond(expr, to) + " THEN " + FailingCast(expr, from, to, column, where) + " ELSE " + fail + " END"
		fail = notA
	}
	return "CASE WHEN " + expr + " IS NULL OR " + unchangedCond(expr, from, to) + " THEN " + cast + " ELSE " + fail + " END"
}

// ExactTextCast narrows expr, a CSV or JSON value that Spark's reader
// parsed into readAs (a type that holds the text as written: see
// ExactTextType), to hint, the column's hinted type, whose own parse would
// have rounded or cut it silently: 4.999 read as decimal(10,2) is 5.00, a
// float past its range infinity. A value the narrowing changes fails the
// query naming the value, the column and its file (where, a SQL string
// expression), as CheckedCast does for a typed source's value; with
// rescue it is null instead (see ExactTextChanged).
func ExactTextCast(expr string, readAs, hint DataType, column, where string, rescue bool) string {
	if readAs.Kind == KindString {
		return csvDecimalTextCast(expr, hint, column, where, rescue)
	}
	cast := "CAST(" + expr + " AS " + hint.String() + ")"
	if rescue {
		return "CASE WHEN " + ExactTextChanged(expr, readAs, hint) + " THEN NULL ELSE " + cast + " END"
	}
	becomes := "coalesce(CAST(try_cast(" + expr + " AS " + hint.String() + ") AS STRING), 'nothing: it is out of range')"
	fail := valueError(column, ExactText(expr, readAs), where, QuoteString(" would become "), becomes, QuoteString(readerRoundsAdvice(hint)))
	return "CASE WHEN " + expr + " IS NULL OR " + narrowedUnchangedCond(expr, readAs, hint) + " THEN " + cast + " ELSE " + fail + " END"
}

// ExactTextChanged is true where ExactTextCast changes expr's value (or,
// read as text, does not parse it).
func ExactTextChanged(expr string, readAs, hint DataType) string {
	if readAs.Kind == KindString {
		return expr + " IS NOT NULL AND NOT (" + csvDecimalParses(expr, hint) + " AND " + decimalTextKeepsCond(csvDecimalText(expr), hint.Scale) + ")"
	}
	return expr + " IS NOT NULL AND NOT " + narrowedUnchangedCond(expr, readAs, hint)
}

// csvDecimalText is expr, a CSV value's text, as Spark's CSV reader parses
// it into a decimal (its default locale): without grouping commas, "1,000"
// is 1000, as Java's BigDecimal reads what is left.
func csvDecimalText(expr string) string { return "replace(" + expr + ", ',', '')" }

// edgeSpace matches text that starts or ends with white space or a control
// character (up to U+0020, which Java's trim removes), as a SQL string
// literal whose escapes give the regular expression its \x escapes.
const edgeSpace = `'^[\\x00-\\x20]|[\\x00-\\x20]$'`

// csvDecimalParses is true where Spark's CSV reader parses expr, a value's
// text, into hint, a decimal: where a cast of csvDecimalText does, but for
// text with white space or control characters around it, which a cast
// trims and BigDecimal refuses (" 42"). Compared with the reader text by
// text on Spark 3.5.7 and 4.0.1 (signs, exponents, grouping, other
// scripts' digits, hex, NaN, values too large).
func csvDecimalParses(expr string, hint DataType) string {
	return "(NOT " + expr + " RLIKE " + edgeSpace + " AND try_cast(" + csvDecimalText(expr) + " AS " + hint.String() + ") IS NOT NULL)"
}

// csvDecimalTextCast is ExactTextCast of a CSV value read as text for a
// hinted decimal(38,s), which has no wider decimal to read it into
// (ExactTextType): the reader's value of the text, where its digits fit
// the hint's scale (decimalTextKeepsCond); text that does not parse fails
// naming it, as the reader's own parse would have failed the read.
func csvDecimalTextCast(expr string, hint DataType, column, where string, rescue bool) string {
	text := csvDecimalText(expr)
	cast := "CAST(" + text + " AS " + hint.String() + ")"
	if rescue {
		return "CASE WHEN " + ExactTextChanged(expr, Simple(KindString), hint) + " THEN NULL ELSE " + cast + " END"
	}
	notA := valueError(column, expr, where, QuoteString(" is not a "+hint.String()+" (its hinted type)"+notAValueAdvice))
	rounds := valueError(column, expr, where, QuoteString(" would become "), "CAST("+cast+" AS STRING)", QuoteString(readerRoundsAdvice(hint)))
	return "CASE WHEN " + expr + " IS NULL THEN NULL WHEN NOT " + csvDecimalParses(expr, hint) + " THEN " + notA +
		" WHEN " + decimalTextKeepsCond(text, hint.Scale) + " THEN " + cast + " ELSE " + rounds + " END"
}

// ExactText is the text of expr, a value of ExactTextType: a decimal
// without the zeros its wide scale adds (4.999, not
// 4.99900000000000000000000000000000000), a double as Spark prints it.
func ExactText(expr string, t DataType) string {
	text := "CAST(" + expr + " AS STRING)"
	if t.Kind != KindDecimal || t.Scale == 0 {
		return text
	}
	return "regexp_replace(regexp_replace(" + text + ", '([.][0-9]*[1-9])0+$', '$1'), '[.]0+$', '')"
}

// ExactTextType is the type a CSV or JSON reader parses a value of
// hinted type hint into without rounding it, where the hint's own parse
// may round: a decimal of precision p and scale s into decimal(38,
// 38-p+s), which has the same integer digits (a value too large for the
// hint fails to parse either way) and every decimal digit a wider value
// is rounded at; a float into a double, whose text Java parses with the
// same syntax. Both readers parse decimals with BigDecimal and round half
// up to the type's scale, and floats and doubles from the same tokens
// (CSV: nanValue, positiveInf, negativeInf, else Java's parser; JSON:
// numbers, and the same NaN and infinity strings). A decimal(38, s) hint
// has no wider decimal (a CSV file's is read as text: see
// csvDecimalTextCast) and a date's or timestamp's parse none that reads
// the same texts (see the executor's exactReading), so those are false.
func ExactTextType(hint DataType) (DataType, bool) {
	switch {
	case hint.Kind == KindDecimal && hint.Precision < 38:
		return DataType{Kind: KindDecimal, Precision: 38, Scale: 38 - hint.Precision + hint.Scale}, true
	case hint.Kind == KindFloat:
		return Simple(KindDouble), true
	}
	return DataType{}, false
}
