package spark

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Two CSV files read with the wrong options still give a schema, and the
// merge runs: a file separated by ';' (Excel's export in much of Europe)
// is one column named after its whole header line, each row one string;
// a file with no header line has its first row taken for names, and that
// row is not merged. Spark does the same reading either alone, so nothing
// here fails; the plan says what it sees, by name, with the option that
// would read the file as meant.

// separatorCandidates are the separators a CSV file read as one column is
// checked for, besides the one it was read with.
var separatorCandidates = []string{";", "\t", "|", ","}

// sourceWarnings are the plan's warnings about reads whose schema suggests
// a reader option the read lacks, in the reads' order.
func sourceWarnings(reads []*Read) []string {
	var out []string
	for _, r := range reads {
		if r.Format != "csv" || !strings.EqualFold(optionValue(r.Options, "header"), "true") {
			continue
		}
		schema := r.Schema
		if r.partition != nil {
			schema = r.dataSchema // the file's own columns, not the tree's
		}
		if w := separatorWarning(r, schema); w != "" {
			out = append(out, w)
			continue
		}
		if w := headerAsDataWarning(r, schema); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// separatorWarning is the warning for a CSV read of one column whose name
// splits at another separator into several names, "" for any other read.
func separatorWarning(r *Read, schema sparkmerge.Schema) string {
	if len(schema.Fields) != 1 {
		return ""
	}
	name := schema.Fields[0].Name
	if len(name) == 5 && strings.EqualFold(name[:4], "sep=") {
		shown := name[4:]
		if shown == "\t" {
			shown = `\t` // as Spark's sep option takes a tab too
		}
		return fmt.Sprintf("source %s: its first line, %q, is the line Excel writes to name the separator, not a header: the file's header and rows are merged as text of one column named %q: remove that line from the file, then read it with the reader option sep='%s' (Job.ReaderOptions or SourceSpec.Options)",
			quoteName(r.Name), name, name, shown)
	}
	sep := optionValue(r.Options, "sep")
	if sep == "" {
		sep = optionValue(r.Options, "delimiter")
	}
	if sep == "" {
		sep = ","
	}
	for _, candidate := range separatorCandidates {
		if candidate == sep {
			continue
		}
		parts := strings.Split(name, candidate)
		if len(parts) < 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
			continue
		}
		shown := candidate
		if candidate == "\t" {
			shown = `\t` // as Spark's sep option takes a tab too
		}
		return fmt.Sprintf("source %s: one column, named %q: its values look separated by '%s', not '%s'; if so, each row is merged as one string: read it with the reader option sep='%s' (Job.ReaderOptions or SourceSpec.Options)",
			quoteName(r.Name), name, shown, sep, shown)
	}
	return ""
}

// headerAsDataWarning is the warning for a CSV read whose typed columns
// are all named by values of their own types (a header line "7,g,70" over
// columns of int, string, int): the file's first row of data taken for its
// header, "" for any other read. A column of strings says nothing either
// way; at least one typed column must.
func headerAsDataWarning(r *Read, schema sparkmerge.Schema) string {
	var valued []string
	for _, f := range schema.Fields {
		if f.Type.Kind == sparkmerge.KindString {
			continue
		}
		if !infer.CSVValueOfType(f.Name, f.Type) {
			return ""
		}
		valued = append(valued, f.Name)
	}
	if len(valued) == 0 {
		return ""
	}
	return fmt.Sprintf("source %s: its header line names %s %s, %s of %s own %s: if the file has no header line, its first row was taken for names and is not merged: read it with the reader option header=false and its columns' names in its schema (SourceSpec.Options, SourceSpec.Schema)",
		quoteName(r.Name), plural(len(valued), "a column", "columns"), strings.Join(valued, ", "),
		plural(len(valued), "a value", "values"), plural(len(valued), "its", "their"), plural(len(valued), "type", "types"))
}

// nameWarnings are the plan's warnings of columns likely spelled two ways
// (sparkmerge.Plan.NearNames), each spelling with the first source that
// has it.
func nameWarnings(p *sparkmerge.Plan) []string {
	var out []string
	for _, near := range p.NearNames {
		var from []string
		for _, name := range near.Names {
			j := slices.IndexFunc(p.Target.Fields, func(f sparkmerge.Field) bool { return f.Name == name })
			first, more := -1, 0
			for i, sp := range p.Sources {
				if j < 0 || j >= len(sp.Columns) || sp.Columns[j] < 0 {
					continue
				}
				if first < 0 {
					first = i
				} else {
					more++
				}
			}
			if first < 0 {
				continue // the reference's or table's alone
			}
			s := fmt.Sprintf("%q in source %d %s", name, first+1, quoteName(p.Sources[first].Name))
			if more > 0 {
				s += fmt.Sprintf(" and %d more", more)
			}
			from = append(from, s)
		}
		out = append(out, fmt.Sprintf("%s: each is merged as a column of its own, null in the rows of the sources that spell it otherwise (%s); %s",
			near.What(), strings.Join(from, "; "), near.Remedy()))
	}
	return out
}

// zeroWarnings are the plan's warnings of columns that CSV files the
// client typed read as numbers and that hold integers written with
// leading zeros ("02134", a ZIP code): Spark reads the number, 2134, and
// the zeros are lost, as when Spark reads the file alone. So they are
// where the merged column is a string too (another source's text, or an
// existing table's string column: found in the field, 2026-12-06, where
// "02134" appended to a table's string column came out "2134" with no
// warning): the file's number is cast to text. A file whose column is
// read as a string (a hint) keeps its values as written. One warning a
// column, naming its first such file and value and how many other files
// hold such values. The files Spark types are not checked (it would take
// a scan of their text).
func zeroWarnings(p *sparkmerge.Plan, reads []*Read) []string {
	byColumn := firstValues(p, reads, func(t sparkmerge.DataType) bool { return t.Kind != sparkmerge.KindString }, // a string is read as written
		func(r *Read) map[string]string { return r.zeroPadded })
	var out []string
	for j, f := range p.Target.Fields {
		z := byColumn[j]
		if z == nil {
			continue
		}
		holders := z.holders()
		merged := withoutLeadingZeros(z.value)
		if f.Type.Kind == sparkmerge.KindString {
			merged = strconv.Quote(merged) // the number's text
		}
		out = append(out, fmt.Sprintf("column %s is merged as %s, and %s integers written with leading zeros (%q, merged as %s): the zeros are lost; to keep the values as written, type the column as a string (Options.Hints, %s=string)",
			f.Name, f.Type, holders, z.value, merged, f.Name))
	}
	return out
}

// roundedWarnings name the columns a CSV file the client typed reads as
// double while it holds numbers with more significant digits than a
// double keeps (3.14159265358979323846 is read as 3.141592653589793, an
// 18-digit id with a fraction as its nearest double): Spark reads the
// file so alone too, and the digits are lost without a word. A column
// read otherwise (a hint: a decimal or a string) keeps them. One warning
// a column, naming its first such file and value and how many other
// files hold such values; the files Spark types are not checked.
func roundedWarnings(p *sparkmerge.Plan, reads []*Read) []string {
	byColumn := firstValues(p, reads, func(t sparkmerge.DataType) bool { return t.Kind == sparkmerge.KindDouble }, // another type keeps the digits
		func(r *Read) map[string]string { return r.rounded })
	var out []string
	for j, f := range p.Target.Fields {
		r := byColumn[j]
		if r == nil {
			continue
		}
		d, _ := strconv.ParseFloat(r.value, 64)
		out = append(out, fmt.Sprintf("column %s is read as double, and %s numbers with more digits than a double keeps (%q, read as %s): the digits past it are lost; to keep them, type the column as a decimal that holds them or as a string (Options.Hints, %s=decimal(38,%d) or %s=string)",
			f.Name, r.holders(), r.value, strconv.FormatFloat(d, 'g', -1, 64), f.Name, fractionDigits(r.value), f.Name))
	}
	return out
}

// pastMicrosWarnings name the columns read as timestamps from CSV files
// the client typed that hold times with digits past the microsecond
// (2024-01-05T10:00:00.123456789): Spark keeps microseconds, and the
// digits past them are lost silently; a string keeps them as written.
// One warning a column, as roundedWarnings; the files Spark types are not
// checked.
func pastMicrosWarnings(p *sparkmerge.Plan, reads []*Read) []string {
	byColumn := firstValues(p, reads, func(t sparkmerge.DataType) bool {
		return t.Kind == sparkmerge.KindTimestamp || t.Kind == sparkmerge.KindTimestampNTZ
	}, func(r *Read) map[string]string { return r.pastMicros })
	var out []string
	for j, f := range p.Target.Fields {
		r := byColumn[j]
		if r == nil {
			continue
		}
		kept, _ := infer.PastMicros([]byte(r.value))
		out = append(out, fmt.Sprintf("column %s is read as a timestamp, and %s times with digits past the microsecond (%q, read as %s): Spark keeps microseconds, and the digits past them are lost; to keep them, type the column as a string (Options.Hints, %s=string)",
			f.Name, r.holders(), r.value, kept, f.Name))
	}
	return out
}

// firstValue is a value a warning names: the first file that holds
// one, its value, and how many other files hold such values.
type firstValue struct {
	file, value string
	others      int
}

// holders says who holds such values: "source "a.csv" holds", or
// "source "a.csv" and 3 other files hold".
func (v *firstValue) holders() string {
	if v.others == 0 {
		return "source " + quoteName(v.file) + " holds"
	}
	return fmt.Sprintf("source %s and %s hold", quoteName(v.file), plural(v.others, "another file", strconv.Itoa(v.others)+" other files"))
}

// firstValues are, by target column, the first file and value that
// noted (a read's values by its column, e.g. Read.zeroPadded) holds,
// among the merged columns that reads read in a type named (a type that
// loses what noted says).
func firstValues(p *sparkmerge.Plan, reads []*Read, named func(sparkmerge.DataType) bool, noted func(*Read) map[string]string) map[int]*firstValue {
	byColumn := map[int]*firstValue{}
	for i, r := range reads {
		for k, f := range r.Schema.Fields {
			j := slices.Index(p.Sources[i].Columns, k)
			if j < 0 || !named(f.Type) {
				continue // not merged, or read as a type that keeps it
			}
			for _, part := range r.parts() {
				v, ok := noted(part)[f.Name]
				switch {
				case !ok:
				case byColumn[j] == nil:
					byColumn[j] = &firstValue{file: part.Name, value: v}
				default:
					byColumn[j].others++
				}
			}
		}
	}
	return byColumn
}

// fractionDigits is how many digits v, a number's text, has after its
// decimal point (before an exponent), at most 37.
func fractionDigits(v string) int {
	_, frac, ok := strings.Cut(v, ".")
	if !ok {
		return 0
	}
	if e := strings.IndexAny(frac, "eE"); e >= 0 {
		frac = frac[:e]
	}
	return min(len(frac), 37)
}

// withoutLeadingZeros is an integer's text as the number it is read as:
// "-012" is -12, "000" is 0.
func withoutLeadingZeros(v string) string {
	sign := ""
	if v[0] == '-' {
		sign = "-"
	}
	digits := strings.TrimLeft(strings.TrimLeft(v, "+-"), "0")
	if digits == "" {
		return "0"
	}
	return sign + digits
}

// A CSV column of numbers or dates that says "no value" with a text
// ("NA", "N/A", "null") is a string to Spark's inference, and so is the
// merged column, or an append of it to a table of numbers fails. The
// client knows it of the CSV files it types (infer.CSVFile.NullTokens):
// the plan warns, and an append's type conflict says so, with the option
// that reads the text as null. The files Spark types are not checked.

// columnTokens are the texts saying "no value" that make a target column
// a string in the reads the client typed: the texts (distinct, in order),
// the first file and how many other files hold them, and the type of the
// first file's other values.
type columnTokens struct {
	tokens []string
	file   string
	others int
	typ    sparkmerge.DataType
}

// add notes file's texts of a column in c, a new columnTokens if c is
// nil.
func (c *columnTokens) add(file string, t infer.NullTokens) *columnTokens {
	if c == nil {
		return &columnTokens{tokens: slices.Clone(t.Tokens), file: file, typ: t.Type}
	}
	c.others++
	for _, text := range t.Tokens {
		if !slices.Contains(c.tokens, text) {
			c.tokens = append(c.tokens, text)
		}
	}
	return c
}

// tokensOf are the texts saying "no value" that alone make target column
// j a string (columnTokens): nil if no read holds any, or if a read types
// the column as a string for other values (or Spark typed it: the client
// does not know why).
func tokensOf(p *sparkmerge.Plan, reads []*Read, j int) *columnTokens {
	var out *columnTokens
	for i, r := range reads {
		k := p.Sources[i].Columns[j]
		if k < 0 {
			continue
		}
		f := r.Schema.Fields[k]
		valueless := p.Sources[i].NoRows || slices.Contains(p.Sources[i].NoValues, k)
		for _, part := range r.parts() {
			tokens, ok := part.nullTokens[f.Name]
			switch {
			case ok:
				out = out.add(part.Name, tokens)
			case f.Type.Kind == sparkmerge.KindString && !valueless:
				return nil
			}
		}
	}
	return out
}

// advice is what to do if the texts mean "no value": where one text says
// it in every column advised (sole), the reader option nullValue reads it
// as null; else typing the column and rescuing the values that do not
// convert.
func (c *columnTokens) advice(column string, sole bool) string {
	if sole {
		return fmt.Sprintf("if %q means no value, read the files with the reader option nullValue=%s (Job.ReaderOptions or SourceSpec.Options), which reads it as null in every column", c.tokens[0], c.tokens[0])
	}
	texts := "they mean"
	if len(c.tokens) == 1 {
		texts = strconv.Quote(c.tokens[0]) + " means"
	}
	return fmt.Sprintf("if %s no value, type the column (Options.Hints, %s=%s) and keep its values that are no %s aside (Options.Rescue)", texts, column, c.typ, c.typ)
}

// soleToken reports whether the columns' texts are one text.
func soleToken(cs []*columnTokens) bool {
	for _, c := range cs {
		if len(c.tokens) != 1 || c.tokens[0] != cs[0].tokens[0] {
			return false
		}
	}
	return len(cs) > 0
}

// what names the texts and where they are.
func (c *columnTokens) what() string {
	quoted := make([]string, len(c.tokens))
	for i, t := range c.tokens {
		quoted[i] = strconv.Quote(t)
	}
	texts := "the text " + quoted[0]
	if len(quoted) > 1 {
		texts = "the texts " + joinAnd(quoted)
	}
	where := "source " + quoteName(c.file)
	if c.others > 0 {
		where += " and " + plural(c.others, "another file", strconv.Itoa(c.others)+" other files")
	}
	return fmt.Sprintf("%s in %s, where its other values are %s", texts, where, c.typ)
}

// tokenWarnings are the plan's warnings of string target columns that
// are strings only for texts saying "no value" in CSV files the client
// typed.
func tokenWarnings(p *sparkmerge.Plan, reads []*Read) []string {
	var names []string
	var found []*columnTokens
	for j, f := range p.Target.Fields {
		if f.Type.Kind != sparkmerge.KindString || f.Name == p.SourceColumn || f.Name == p.Rescue {
			continue
		}
		if c := tokensOf(p, reads, j); c != nil {
			names, found = append(names, f.Name), append(found, c)
		}
	}
	var out []string
	sole := soleToken(found)
	for i, c := range found {
		out = append(out, fmt.Sprintf("column %s is merged as string only for %s: %s", names[i], c.what(), c.advice(names[i], sole)))
	}
	return out
}

// tokenConflictError is a type conflict of columns that texts saying "no
// value" made strings, with the advice (errors.As finds the conflict).
type tokenConflictError struct {
	err    *sparkmerge.TypeConflictError
	advice []string
}

func (e *tokenConflictError) Error() string {
	return e.err.Error() + "; " + strings.Join(e.advice, "; ")
}

func (e *tokenConflictError) Unwrap() error { return e.err }

// withTokenAdvice is err, a type conflict of reads planned as sources
// under policy, with the advice for its columns that texts saying "no
// value" made strings in CSV files the client typed; err itself
// otherwise.
func withTokenAdvice(err error, reads []*Read, policy sparkmerge.Options) error {
	var conflict *sparkmerge.TypeConflictError
	if !errors.As(err, &conflict) {
		return err
	}
	var names []string
	var found []*columnTokens
	for _, col := range conflict.Conflicts {
		if col.Path != col.Column {
			continue // nested
		}
		if c := readTokens(reads, col.Column, policy); c != nil {
			names, found = append(names, col.Column), append(found, c)
		}
	}
	if len(found) == 0 {
		return err
	}
	var advice []string
	sole := soleToken(found)
	for i, c := range found {
		advice = append(advice, fmt.Sprintf("column %s is a string for %s: %s", names[i], c.what(), c.advice(names[i], sole)))
	}
	return &tokenConflictError{err: conflict, advice: advice}
}

// readTokens are the texts saying "no value" of the reads' columns that
// are the target column name under policy (a conflict names a column by
// its target spelling: a source column matches by its key, normalized,
// renamed and case-folded as the plan matched it); nil if none.
func readTokens(reads []*Read, name string, policy sparkmerge.Options) *columnTokens {
	key, target := sparkmerge.ColumnKey(policy), sparkmerge.FoldName(name, policy.CaseSensitive)
	var out *columnTokens
	for _, r := range reads {
		for _, part := range r.parts() {
			for col, tokens := range part.nullTokens {
				if key(col) == target {
					out = out.add(part.Name, tokens)
				}
			}
		}
	}
	return out
}
