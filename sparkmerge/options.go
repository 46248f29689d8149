package sparkmerge

import (
	"sort"
	"strconv"
	"strings"
)

// Options declares how NewPlan unifies the sources' schemas. The zero value
// is the default: widen types, fill missing columns with typed nulls, match
// names case-insensitively, order columns by first appearance, and add no
// provenance column.
//
// Its yaml keys are the policy section of the CLI's job file, except
// Normalize and the reference, which the job file spells as a list and as
// "source:NAME", "table:NAME" or a DDL schema.
type Options struct {
	// Types decides what happens when sources disagree on a column's type.
	Types TypePolicy `yaml:"types"`
	// Missing decides what happens to columns that some sources lack.
	Missing MissingPolicy `yaml:"missing"`

	// Reference is an external target schema, e.g. that of an existing table.
	// It is used by MissingReference and OrderReference. At most one of
	// Reference and ReferenceSource may be set.
	Reference *Schema `yaml:"-"`
	// ReferenceSource names the source whose schema is the reference (the
	// first source with that Name).
	ReferenceSource string `yaml:"-"`
	// ReferenceTarget names the target whose schema Reference is, where
	// it is one (an existing table or dataset the merge is appended to or
	// overwrites: "table lake.events"), for errors: a type that does not
	// fit it is then read as its type, or the target evolved, not "the
	// reference" changed.
	ReferenceTarget string `yaml:"-"`
	// ReferenceEvolves says that the target ReferenceTarget names evolves
	// where its format can (Target.Evolve): a type that still does not fit
	// is one its format cannot widen, which its error says.
	ReferenceEvolves bool `yaml:"-"`
	// DropExtra, with MissingReference, drops source columns (and nested
	// struct fields) that the reference lacks. Without it they are an error
	// (*MissingColumnsError).
	DropExtra bool `yaml:"drop_extra"`

	// CaseSensitive matches column and struct field names exactly. By default
	// names match case-insensitively, like Spark's spark.sql.caseSensitive=false,
	// and the output spelling is the first one seen.
	CaseSensitive bool `yaml:"case_sensitive"`
	// Normalize rewrites top-level column names before matching.
	Normalize NameNormalizer `yaml:"-"`
	// Renames maps a source column name to the name to use instead, applied
	// after Normalize and before matching, e.g. {"hight": "height"}. Keys are
	// matched like column names (normalized, and case-insensitively unless
	// CaseSensitive); values are used as given.
	Renames map[string]string `yaml:"renames"`

	// Order decides the order of the target columns.
	Order OrderPolicy `yaml:"order"`

	// LossyWidening accepts Spark's widening where it changes values: two
	// decimals whose common type would need more than 38 digits lose
	// fraction digits, and bigint (or a decimal of more than 15 digits)
	// becomes double, rounded past 2^53. By default the first is a
	// *TypeConflictError and the second a cast checked per value, which
	// fails the merge naming the value instead of rounding it; so is a
	// nested such cast, which cannot be checked, at plan time. It also
	// accepts a typed value's rounding into a narrower type a hint (or a
	// table) gives (NarrowsValues), otherwise checked the same way.
	LossyWidening bool `yaml:"lossy_widening"`

	// SourceColumn, if not empty, adds a last, non-nullable string column of
	// that name holding each row's source Name (provenance).
	SourceColumn string `yaml:"source_column"`

	// Columns, if not empty, keeps only the source columns whose name
	// after Normalize and Renames matches one of these names or patterns
	// (see [MatchColumn]: '*' any run of characters, '?' one, '\'
	// escapes), matched as CaseSensitive says; every other source column
	// is dropped (Diagnostics.Dropped). A reference's columns are the
	// target whatever the selection. An entry that matches no column of
	// any source or of the reference is an *OptionError, so that a typo
	// never selects less than meant.
	Columns []string `yaml:"columns"`
	// Exclude drops the source columns whose name after Normalize and
	// Renames matches one of these names or patterns, after Columns. An
	// entry matching nothing is no error: a column may come and go.
	Exclude []string `yaml:"exclude"`

	// Hints give columns a type, e.g. {"zip": string, "amount":
	// decimal(12,2)}: the target column takes the hinted type and every
	// source's column is cast to it, whatever its own type; the other
	// columns are typed as usual. Keys are matched like column names
	// (after Normalize and Renames; see [HintFor]). A value that does not
	// convert fails the merge naming the value and its source, or, with
	// Rescue, is rescued. The executor also reads text files (CSV, JSON)
	// with the hinted types, so that Spark's reader parses the values
	// straight into them: a zip code 0042 hinted string stays "0042".
	// Where the reader would round into the hint (a decimal's digits past
	// its scale, a float, a CSV date's time), it reads a type that holds
	// the text exactly and narrows it with a check instead: a value that
	// would change fails, or is rescued, unless LossyWidening.
	// With an external Reference (an append's target) the reference's
	// type wins and the hint only sets how text files are read.
	Hints map[string]DataType `yaml:"-"`

	// Rescue, if not empty, adds a last string column of that name that
	// keeps, as a JSON object per row, the values that did not convert
	// to their column's type (under Hints, or a cast that would round;
	// each column then null in that row), the values of source columns
	// the target drops (MissingReference with DropExtra), and the row's
	// source under "_file_path": {"amount": "12x", "_file_path":
	// "/in/a.csv"}. A row with nothing to rescue has null there. Without
	// it such a value fails the merge. See [Plan.RescueEntries].
	Rescue string `yaml:"rescue"`

	// Distinct combines the sources with UNION DISTINCT instead of UNION
	// ALL: rows equal in every target column (the provenance column
	// included) are kept once. It drops rows by design; a verified merge
	// then checks the rows written against the distinct rows read.
	Distinct bool `yaml:"distinct"`
}

// TypePolicy decides how differing types of one column are unified.
type TypePolicy int

const (
	// TypesWiden unifies types like Spark 4.0's ANSI union widening, except
	// that string with any other atomic type, and boolean with a number,
	// become string (see the package documentation). Incompatible types
	// (array vs int) are a *TypeConflictError.
	TypesWiden TypePolicy = iota
	// TypesStrict accepts no type difference: every column whose types
	// differ is listed in one *TypeConflictError. Nullability differences,
	// void (all-null) columns and drift in nested struct fields are allowed.
	TypesStrict
	// TypesString turns every position whose types differ into string.
	TypesString
)

// MissingPolicy decides what happens to columns some sources lack.
type MissingPolicy int

const (
	// MissingFill keeps every column of every source; sources that lack one
	// give a typed null.
	MissingFill MissingPolicy = iota
	// MissingFail requires all sources to have the same columns; otherwise
	// NewPlan returns a *MissingColumnsError saying what each source lacks.
	MissingFail
	// MissingIntersect keeps only the columns every source has.
	MissingIntersect
	// MissingReference makes the reference (Options.Reference or
	// Options.ReferenceSource) the target: its columns, and with an external
	// Reference also its types. Sources lacking a column give a typed null;
	// extra columns are dropped with DropExtra, else an error.
	MissingReference
)

// OrderPolicy decides the order of the target columns. The provenance
// column, if any, is always last.
type OrderPolicy int

const (
	// OrderFirstSeen orders columns by first appearance across the sources
	// in order (DuckDB's and unionByName's order). With MissingReference the
	// reference is seen first, so its order is kept.
	OrderFirstSeen OrderPolicy = iota
	// OrderSorted orders columns by name, as Spark's JSON schema inference
	// does.
	OrderSorted
	// OrderReference puts the reference's columns first, in its order, and
	// the others after them in first-seen order.
	OrderReference
)

// The policies' names, indexed by value: String writes them and the
// Parse functions read them (case-insensitively).
var (
	typePolicies    = enum[TypePolicy]{"TypePolicy", "types", []string{"widen", "strict", "string"}}
	missingPolicies = enum[MissingPolicy]{"MissingPolicy", "missing", []string{"fill", "fail", "intersect", "reference"}}
	orderPolicies   = enum[OrderPolicy]{"OrderPolicy", "order", []string{"first-seen", "sorted", "reference"}}
)

// ParseTypePolicy parses "widen", "strict" or "string" (case-insensitive).
func ParseTypePolicy(s string) (TypePolicy, error) { return typePolicies.parse(s) }

// ParseMissingPolicy parses "fill", "fail", "intersect" or "reference".
func ParseMissingPolicy(s string) (MissingPolicy, error) { return missingPolicies.parse(s) }

// ParseOrderPolicy parses "first-seen", "sorted" or "reference".
func ParseOrderPolicy(s string) (OrderPolicy, error) { return orderPolicies.parse(s) }

// String returns the policy's name as ParseTypePolicy reads it.
func (p TypePolicy) String() string { return typePolicies.name(p) }

// String returns the policy's name as ParseMissingPolicy reads it.
func (p MissingPolicy) String() string { return missingPolicies.name(p) }

// String returns the policy's name as ParseOrderPolicy reads it.
func (p OrderPolicy) String() string { return orderPolicies.name(p) }

// MarshalText implements encoding.TextMarshaler.
func (p TypePolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// MarshalText implements encoding.TextMarshaler.
func (p MissingPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// MarshalText implements encoding.TextMarshaler.
func (p OrderPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseTypePolicy.
func (p *TypePolicy) UnmarshalText(b []byte) error { return typePolicies.unmarshal(p, b) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseMissingPolicy.
func (p *MissingPolicy) UnmarshalText(b []byte) error { return missingPolicies.unmarshal(p, b) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseOrderPolicy.
func (p *OrderPolicy) UnmarshalText(b []byte) error { return orderPolicies.unmarshal(p, b) }

// NameNormalizer is a set of rewrites applied to top-level column names
// before matching. They combine; whatever the set, they run in the order
// trim, snake_case, lower. Nested struct field names are not rewritten.
type NameNormalizer uint8

const (
	// NormalizeTrim removes leading and trailing white space.
	NormalizeTrim NameNormalizer = 1 << iota
	// NormalizeSnakeCase rewrites names to lower snake_case:
	// "TideNumber" -> "tide_number", "Time UTC" -> "time_utc",
	// "HTTPServer" -> "http_server". It implies trimming.
	NormalizeSnakeCase
	// NormalizeLower lower-cases names.
	NormalizeLower
)

// NormalizeNone rewrites nothing.
const NormalizeNone NameNormalizer = 0

var normalizerNames = []struct {
	n    NameNormalizer
	name string
}{{NormalizeTrim, "trim"}, {NormalizeSnakeCase, "snake_case"}, {NormalizeLower, "lower"}}

// String returns the rewrites as a comma-separated list in the order they
// run, e.g. "trim,lower", or "none".
func (n NameNormalizer) String() string {
	if n == 0 {
		return "none"
	}
	var parts []string
	for _, x := range normalizerNames {
		if n&x.n != 0 {
			parts = append(parts, x.name)
			n &^= x.n
		}
	}
	if n != 0 {
		parts = append(parts, "NameNormalizer("+strconv.Itoa(int(n))+")")
	}
	return strings.Join(parts, ",")
}

// MarshalText implements encoding.TextMarshaler.
func (n NameNormalizer) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseNameNormalizer.
func (n *NameNormalizer) UnmarshalText(b []byte) error {
	v, err := ParseNameNormalizer(string(b))
	if err == nil {
		*n = v
	}
	return err
}

// ParseNameNormalizer parses a comma-separated list of "trim", "snake_case"
// (or "snake") and "lower"; "" and "none" mean NormalizeNone.
func ParseNameNormalizer(s string) (NameNormalizer, error) {
	var n NameNormalizer
	for _, part := range strings.Split(s, ",") {
		p := strings.ToLower(strings.TrimSpace(part))
		switch p {
		case "", "none":
		case "trim":
			n |= NormalizeTrim
		case "snake_case", "snake", "snake-case":
			n |= NormalizeSnakeCase
		case "lower":
			n |= NormalizeLower
		default:
			return 0, &OptionError{Option: "normalize", Value: s,
				Reason: "unknown rewrite " + strconv.Quote(part) + "; want a comma-separated list of trim, snake_case, lower, or none"}
		}
	}
	return n, nil
}

// ParseRenames parses "old=new" pairs, e.g. from repeated --rename flags,
// into a map for Options.Renames. An entry without "=" or with an empty side
// is an error, and so is one old name given twice.
func ParseRenames(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		old, new, ok := strings.Cut(p, "=")
		if !ok || old == "" || new == "" {
			return nil, &OptionError{Option: "rename", Value: p, Reason: "want old=new with both names non-empty"}
		}
		if prev, dup := m[old]; dup && prev != new {
			return nil, &OptionError{Option: "rename", Value: p, Reason: "column " + strconv.Quote(old) + " is already renamed to " + strconv.Quote(prev)}
		}
		m[old] = new
	}
	return m, nil
}

// ParseHints parses "column=type" pairs, e.g. from repeated --hint flags,
// into a map for Options.Hints; the type in Spark's SQL syntax
// ("decimal(12,2)", "string"). An entry without "=", with an empty side or
// an unknown type is an error, and so is one column given two types.
func ParseHints(pairs []string) (map[string]DataType, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := make(map[string]DataType, len(pairs))
	for _, p := range pairs {
		col, typ, ok := strings.Cut(p, "=")
		col, typ = strings.TrimSpace(col), strings.TrimSpace(typ)
		if !ok || col == "" || typ == "" {
			return nil, &OptionError{Option: "hint", Value: p, Reason: "want column=type, e.g. zip=string or amount=decimal(12,2)"}
		}
		t, err := ParseType(typ)
		if err != nil {
			return nil, &OptionError{Option: "hint", Value: p, Reason: "unknown type: " + err.Error()}
		}
		if prev, dup := m[col]; dup && !prev.Equal(t) {
			return nil, &OptionError{Option: "hint", Value: p, Reason: "column " + strconv.Quote(col) + " is already hinted " + prev.String()}
		}
		m[col] = t
	}
	return m, nil
}

// HintFor returns the hinted type (Options.Hints) of a source column
// named name, matched as NewPlan matches it: normalized, renamed, and
// case-insensitively unless CaseSensitive. The executor uses it to read
// text files with the hinted types.
func HintFor(opts Options, name string) (DataType, bool) {
	if len(opts.Hints) == 0 {
		return DataType{}, false
	}
	n := newNamer(opts)
	_, key := n.name(name)
	for _, k := range sortedHintKeys(opts.Hints) {
		if _, hk := n.name(k); hk == key {
			return opts.Hints[k], true
		}
	}
	return DataType{}, false
}

func sortedHintKeys(h map[string]DataType) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func enumName(names []string, i int, typ string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(i) + ")"
}

// enum is an int enumeration of the options: its Go type's name, the
// option it sets (for errors) and its values' names, indexed by value.
type enum[T ~int] struct {
	typ, option string
	names       []string
}

func (e enum[T]) name(v T) string { return enumName(e.names, int(v), e.typ) }

// parse reads a name, case-insensitively and ignoring surrounding space.
func (e enum[T]) parse(s string) (T, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for i, n := range e.names {
		if t == n {
			return T(i), nil
		}
	}
	if e.option == "order" && (t == "first_seen" || t == "firstseen") {
		return 0, nil
	}
	return 0, &OptionError{Option: e.option, Value: s, Reason: "want one of " + strings.Join(e.names, ", ")}
}

// unmarshal parses b into *v, leaving *v as it was on an error.
func (e enum[T]) unmarshal(v *T, b []byte) error {
	x, err := e.parse(string(b))
	if err == nil {
		*v = x
	}
	return err
}
