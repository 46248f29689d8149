package spark

import (
	"fmt"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// A CSV file larger than Spark's split is read alone in several
// partitions (how many depends on the server's cores and settings:
// FilePartition.maxSplitBytes), each folded by CSVInferSchema.inferField
// from NullType, and the partitions' types merged by mergeRowTypes
// (compatibleType, NullType where two types have none in common). The
// lanes fold the file too, split elsewhere. Both equal whatever the split
// when each value's type alone (its "own" type, inferField(NullType, v))
// decides the column, which holds for these of the lane's types (proven
// from inferField's parsers, CSVInferSchema of 3.5 to 4.x, under default
// date and timestamp formats):
//
//   - int, bigint, decimal or double when every value is a plain number
//     (witnessPlainNumber): each numeric parser accepts what the one
//     before it does, so folding from any numeric type gives the widest
//     of the values' own types, and compatibleType on numbers is that
//     widest too;
//   - boolean when every value is true or false (any case), date when
//     every value is neither a number, a boolean nor holds a ':' (a date
//     of the strict yyyy-MM-dd prefersDate parses), timestamp when every
//     value is neither and holds a ':' (no date then): one own type, which
//     every partition keeps;
//   - string when some value is one no parser accepts (witnessNoParser:
//     it starts with a letter and is no number, boolean or time-only
//     timestamp): its partition is string, and string absorbs every
//     merge.
//
// Other lanes (a timestamp then numbers, which its parser accepts as
// years, or dates then timestamps) can change with the split, and their
// file is asked of Spark alone. The lanes cannot say which values a lane
// held, so each witnessed column gets two witness lanes, whose values are
// the class of each value (witnessClassExpr) as numbers whose types order
// them: the inferred type of the first is the highest class, of the
// second the lowest (its codes reversed). Numbers fold alike in any split,
// so the witness lanes' types are exact.

// Classes of a CSV value as the witnesses see it, lowest first; 0 is no
// value at all.
const (
	witnessPlainNumber = 1 + iota // a number every numeric parser reads
	witnessMaybeNumber            // maybe a number (NaN, 1d, hex, other digits)
	witnessBoolean                // true or false, in any case
	witnessNoColon                // anything else without a ':' (maybe a date)
	witnessColon                  // anything else with a ':'
	witnessNoParser               // a value no parser accepts
	witnessClasses     = witnessNoParser
)

// witnessCodes are the witness values of the classes (index: class), and
// the types Spark's inference gives them, in the same order: int, bigint,
// decimal(20,0), decimal(21,0), decimal(22,0), double.
var witnessCodes = [witnessClasses + 1]string{"", "1", "3000000000", "10000000000000000000", "100000000000000000000", "1000000000000000000000", "0.5"}

// witnessOf is the class a witness lane's inferred type stands for: 0 for
// none (a lane of empty values is string), -1 for a type no class gives.
func witnessOf(t sparkmerge.DataType) int {
	switch {
	case t.Kind == sparkmerge.KindString:
		return 0
	case t.Kind == sparkmerge.KindInt:
		return 1
	case t.Kind == sparkmerge.KindLong:
		return 2
	case t.Kind == sparkmerge.KindDecimal && t.Scale == 0 && t.Precision >= 20 && t.Precision <= 22:
		return 3 + t.Precision - 20
	case t.Kind == sparkmerge.KindDouble:
		return 6
	}
	return -1
}

// splitInvariant reports whether a lane typed typ, its values' highest
// class high and lowest low (as witnessOf reads the lanes, the lowest's
// codes reversed), has that type whatever the split of its file (see the
// top of this file).
func splitInvariant(typ sparkmerge.DataType, high, lowReversed int) bool {
	if high == 0 && lowReversed == 0 {
		return true // no values: string in every split
	}
	if high <= 0 || lowReversed <= 0 {
		return false
	}
	low := witnessClasses + 1 - lowReversed
	switch typ.Kind {
	case sparkmerge.KindInt, sparkmerge.KindLong, sparkmerge.KindDecimal, sparkmerge.KindDouble:
		return high == witnessPlainNumber
	case sparkmerge.KindBoolean:
		return high == witnessBoolean && low == witnessBoolean
	case sparkmerge.KindDate:
		return high == witnessNoColon && low == witnessNoColon
	case sparkmerge.KindTimestamp, sparkmerge.KindTimestampNTZ:
		return high == witnessColon && low == witnessColon
	case sparkmerge.KindString:
		return high == witnessNoParser
	}
	return false
}

// witnessedOptions are the reader options, lower case, under which the
// witnesses know the parsers: those of the tokenizer (they change the
// values, not how inference reads them), and prefersDate. A date,
// timestamp or number format, locale, time zone or NaN spelling leaves a
// file larger than the split to Spark alone.
var witnessedOptions = map[string]bool{
	"header": true, "inferschema": true, "enforceschema": true, "mode": true,
	"sep": true, "delimiter": true, "quote": true, "escape": true, "chartoescapequoteescaping": true,
	"nullvalue": true, "emptyvalue": true, "ignoreleadingwhitespace": true, "ignoretrailingwhitespace": true,
	"unescapedquotehandling": true, "prefersdate": true,
}

// witnessOptions reports whether a file read with options may be
// witnessed.
func witnessOptions(options map[string]string) bool {
	for k := range options {
		if !witnessedOptions[strings.ToLower(k)] {
			return false
		}
	}
	return true
}

// witnessClassExpr is the SQL of a value's class (1 to witnessClasses),
// NULL for no value (NULL or empty: inference skips it). trimmed is the
// value without the spaces and control characters Java's trim drops.
func witnessClassExpr(x string) string {
	trimmed := fmt.Sprintf(`regexp_replace(%s, '^[\\x00-\\x20]+|[\\x00-\\x20]+$', '')`, x)
	return fmt.Sprintf("CASE WHEN %[1]s IS NULL OR %[1]s = '' THEN NULL"+
		// Integer.parseInt, Long.parseLong, BigDecimal and Double.parseDouble
		// all read it, or all but the integers, which the next ones read.
		` WHEN %[1]s RLIKE '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$' THEN 1`+
		// Anything one of them might read: digits of any script, NaN,
		// infinities, hexadecimal, a d or f suffix, the spaces
		// parseDouble trims.
		` WHEN %[2]s RLIKE '^[+-]?(NaN|Infinity|Inf|0[xX][0-9a-fA-F]*[.]?[0-9a-fA-F]*([pP][+-]?[0-9]+)?[fFdD]?|\\p{Nd}*[.]?\\p{Nd}*([eE][+-]?\\p{Nd}+)?[fFdD]?)$' OR %[1]s IN ('NaN', 'Inf', '-Inf') THEN 2`+
		// String.toBoolean: equalsIgnoreCase.
		` WHEN %[1]s RLIKE '(?iu)^(true|false)$' THEN 3`+
		// No date or timestamp parser (strict yyyy-MM-dd; stringToTimestamp
		// and its fallback start at a digit, a sign or a time-only T), no
		// number, no boolean starts with a letter but T.
		` WHEN %[2]s RLIKE '^\\p{L}' AND NOT %[2]s RLIKE '^[Tt]' AND NOT %[2]s RLIKE '(?iu)^(true|false|nan|infinity|inf)$' THEN 6`+
		` WHEN instr(%[1]s, ':') = 0 THEN 4 ELSE 5 END`, x, trimmed)
}

// witnessLanes is the SQL of the witness lanes of a line of columns
// tokens (s.c0, s.c1, ... of the struct s), each preceded by its comma:
// per column, its value's class code and its reversed code.
func witnessLanes(columns int, s string) string {
	var parts []string
	for i := range columns {
		var b strings.Builder
		fmt.Fprintf(&b, "CASE %s", witnessClassExpr(fmt.Sprintf("%s.c%d", s, i)))
		for class := 1; class <= witnessClasses; class++ {
			fmt.Fprintf(&b, " WHEN %d THEN %s", class, sparkmerge.QuoteString(","+witnessCodes[class]+","+witnessCodes[witnessClasses+1-class]))
		}
		b.WriteString(" ELSE ',,' END")
		parts = append(parts, b.String())
	}
	return strings.Join(parts, ", ")
}

// lanes is the number of lanes f takes: its columns, its marker, and
// when witnessed two witness lanes a column.
func (f csvLaneFile) lanes() int {
	if f.witnessed {
		return 3*f.columns + 1
	}
	return f.columns + 1
}
