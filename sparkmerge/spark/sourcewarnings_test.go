package spark

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

func TestSourceWarnings(t *testing.T) {
	str, integer := sparkmerge.Simple(sparkmerge.KindString), sparkmerge.Simple(sparkmerge.KindInt)
	date := sparkmerge.Simple(sparkmerge.KindDate)
	schema := func(fields ...sparkmerge.Field) sparkmerge.Schema { return sparkmerge.Schema{Fields: fields} }
	field := func(name string, t sparkmerge.DataType) sparkmerge.Field {
		return sparkmerge.Field{Name: name, Type: t, Nullable: true}
	}
	csv := func(options map[string]string, s sparkmerge.Schema) *Read {
		if options == nil {
			options = map[string]string{"header": "true", "inferSchema": "true"}
		}
		return &Read{Name: "/in/f.csv", Format: "csv", Options: options, Schema: s}
	}
	for _, tc := range []struct {
		name string
		read *Read
		want []string // what the one warning says; none when empty
	}{
		{"semicolons", csv(nil, schema(field("id;name;amount", str))), []string{`"/in/f.csv"`, `named "id;name;amount"`, "separated by ';', not ','", "sep=';'"}},
		{"tabs", csv(nil, schema(field("id\tname", str))), []string{`separated by '\t'`, `sep='\t'`}},
		{"pipes", csv(nil, schema(field("a|b", str))), []string{"sep='|'"}},
		{"commas where semicolons were asked", csv(map[string]string{"header": "true", "sep": ";"}, schema(field("a,b", str))), []string{"separated by ',', not ';'", "sep=','"}},
		{"Excel's separator line", csv(nil, schema(field("sep=;", str))), []string{`its first line, "sep=;", is the line Excel writes to name the separator`, "remove that line", "sep=';'"}},
		{"Excel's separator line, a tab", csv(nil, schema(field("SEP=\t", str))), []string{`sep='\t'`}},
		{"one column of one name", csv(nil, schema(field("id", str))), nil},
		{"a name with a separator at its end", csv(nil, schema(field("total;", str))), nil},
		{"two columns", csv(nil, schema(field("a;b", str), field("c", str))), nil},
		{"no header line asked", csv(map[string]string{"header": "false"}, schema(field("a;b", str))), nil},
		{"not CSV", &Read{Name: "/in/f.json", Format: "json", Options: map[string]string{"header": "true"}, Schema: schema(field("a;b", str))}, nil},
		{"a row of data for a header", csv(nil, schema(field("7", integer), field("g", str), field("70", integer))), []string{"names columns 7, 70, values of their own types", "is not merged", "header=false"}},
		{"a date for a header", csv(nil, schema(field("2024-01-02", date), field("x", str))), []string{"names a column 2024-01-02, a value of its own type"}},
		{"a typed column named as no value", csv(nil, schema(field("7", integer), field("amount", integer))), nil},
		{"strings only", csv(nil, schema(field("7", str), field("70", str))), nil},
		{"a number over a string column", csv(nil, schema(field("2019", str), field("region", str))), nil},
		{"a decimal name over an int column", csv(nil, schema(field("1.5", integer))), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sourceWarnings([]*Read{tc.read})
			if len(tc.want) == 0 {
				if len(got) != 0 {
					t.Errorf("warnings %q, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("warnings %q, want one", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("the warning does not say %s: %s", w, got[0])
				}
			}
		})
	}

	// A file of a partitioned tree is judged by its own columns.
	tree := csv(nil, schema(field("id;name", str), field("day", date)))
	tree.partition, tree.dataSchema = &partitionFile{}, schema(field("id;name", str))
	if got := sourceWarnings([]*Read{tree}); len(got) != 1 || !strings.Contains(got[0], "sep=';'") {
		t.Errorf("a partition file's warnings %q, want sep=';'", got)
	}
}

func TestJSONDocumentHint(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) *Read { return &Read{Format: "json", Paths: []string{p}} }
	for _, tc := range []struct{ name, path, want string }{
		{"an array", write("a.json", "\ufeff  [{\"id\":1},\n{\"id\":2}]\n"), "its text starts with '['"},
		{"a record over lines", write("p.json", "{\n  \"id\": 1\n}\n"), "its first line is not a whole JSON record"},
		{"JSON lines broken further on", write("l.json", "{\"id\":1}\n{\"id\":\n"), "if the file is one JSON document"},
		{"only the server sees it", "/nowhere/x.json", "if the file is one JSON document"},
	} {
		got := jsonDocumentHint(read(tc.path))
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "multiLine=true") {
			t.Errorf("%s: hint %q, want it to say %q and multiLine=true", tc.name, got, tc.want)
		}
	}
}

// Spark's error for a JSON file its inference found malformed gets the
// multiLine hint; a read with multiLine already, or of another format,
// keeps Spark's error as it is.
func TestSourceErrorHintsMultiLine(t *testing.T) {
	malformed := &connect.SparkError{ErrorClass: "MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION", Message: "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing"}
	for _, tc := range []struct {
		read *Read
		hint bool
	}{
		{&Read{Name: "/srv/a.json", Format: "json", Paths: []string{"/srv/a.json"}}, true},
		{&Read{Name: "/srv/a.json", Format: "json", Paths: []string{"/srv/a.json"}, Options: map[string]string{"multiline": "true"}}, false},
		{&Read{Name: "/srv/a.csv", Format: "csv", Paths: []string{"/srv/a.csv"}}, false},
	} {
		err := sourceError(tc.read, malformed)
		if got := strings.Contains(err.Error(), "hint: Spark reads one JSON record a line") && strings.Contains(err.Error(), "multiLine=true"); got != tc.hint {
			t.Errorf("%s %v: hint %v, want %v: %v", tc.read.Name, tc.read.Options, got, tc.hint, err)
		}
		if !errors.Is(err, malformed) {
			t.Errorf("%s: Spark's error is not kept: %v", tc.read.Name, err)
		}
	}
}

// Spark 3.5 fails the inference of a malformed JSON file with a
// SparkException of no error class, which gets the hint too.
func TestSourceErrorHintsMultiLineOnSpark35(t *testing.T) {
	err := sourceError(&Read{Name: "/srv/a.json", Format: "json", Paths: []string{"/srv/a.json"}},
		&connect.SparkError{Message: "Job aborted due to stage failure: ... org.apache.spark.SparkException: Malformed records are detected in schema inference. Parse Mode: FAILFAST."})
	if !strings.Contains(err.Error(), "hint: Spark reads one JSON record a line") {
		t.Errorf("no multiLine hint: %v", err)
	}
}

// A column spelled two ways is named in the plan's warnings with the
// first source of each spelling and the rewrite that makes them one.
func TestNameWarnings(t *testing.T) {
	source := func(name string, fields ...string) sparkmerge.Source {
		s := sparkmerge.Source{Name: name}
		for _, f := range fields {
			s.Schema.Fields = append(s.Schema.Fields, sparkmerge.Field{Name: f, Type: sparkmerge.Simple(sparkmerge.KindInt), Nullable: true})
		}
		return s
	}
	p, err := sparkmerge.NewPlan([]sparkmerge.Source{source("/in/a.csv", "id", "amount"), source("/in/b.csv", "id", " amount"), source("/in/c.csv", "id", " amount")}, sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`columns "amount" and " amount" differ only by white space around them: each is merged as a column of its own, null in the rows of the sources that spell it otherwise ("amount" in source 1 "/in/a.csv"; " amount" in source 2 "/in/b.csv" and 1 more); to merge them as one column, normalize names with trim (Options.Normalize)`}
	if got := nameWarnings(p); !slices.Equal(got, want) {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
	p, err = sparkmerge.NewPlan([]sparkmerge.Source{source("/in/a.csv", "id", "amount")}, sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := nameWarnings(p); len(got) != 0 {
		t.Errorf("warnings %q, want none", got)
	}
}

// A column some CSV files read as numbers while they write its values
// with leading zeros is named once, with its first file and value and how
// many other files hold such values, whether the merged column is a
// number or a string (another file's text, or a table's string column:
// the number's text is merged, without the zeros); hinted as a string,
// the files read their values as written, and nothing is named.
func TestZeroWarnings(t *testing.T) {
	read := func(name string, zip sparkmerge.Kind, zeroPadded map[string]string) *Read {
		return &Read{Name: name, Format: "csv", Schema: sparkmerge.Schema{Fields: []sparkmerge.Field{
			{Name: "id", Type: sparkmerge.Simple(sparkmerge.KindInt), Nullable: true},
			{Name: "zip", Type: sparkmerge.Simple(zip), Nullable: true},
		}}, zeroPadded: zeroPadded}
	}
	numbers := func() []*Read {
		return []*Read{read("/in/a.csv", sparkmerge.KindInt, nil), read("/in/b.csv", sparkmerge.KindInt, map[string]string{"zip": "02134"}), read("/in/c.csv", sparkmerge.KindInt, map[string]string{"zip": "-007"})}
	}
	stringZip := map[string]sparkmerge.DataType{"zip": sparkmerge.Simple(sparkmerge.KindString)}
	for _, tc := range []struct {
		name  string
		reads []*Read
		hints map[string]sparkmerge.DataType
		want  []string
	}{
		{"merged as a number", numbers(), nil, []string{`column zip is merged as int, and source "/in/b.csv" and another file hold integers written with leading zeros ("02134", merged as 2134): the zeros are lost; to keep the values as written, type the column as a string (Options.Hints, zip=string)`}},
		{"merged as another file's text", append(numbers(), read("/in/d.csv", sparkmerge.KindString, nil)), nil, []string{`column zip is merged as string, and source "/in/b.csv" and another file hold integers written with leading zeros ("02134", merged as "2134"): the zeros are lost; to keep the values as written, type the column as a string (Options.Hints, zip=string)`}},
		{"hinted as a string", numbers(), stringZip, nil},
	} {
		applyHints(tc.reads, sparkmerge.Options{Hints: tc.hints}, true)
		p, err := sparkmerge.NewPlan(planSources(tc.reads), sparkmerge.Options{Hints: tc.hints})
		if err != nil {
			t.Fatal(err)
		}
		if got := zeroWarnings(p, tc.reads); !slices.Equal(got, tc.want) {
			t.Errorf("%s: warnings\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if got := withoutLeadingZeros("-007") + " " + withoutLeadingZeros("000") + " " + withoutLeadingZeros("+0120"); got != "-7 0 120" {
		t.Errorf("withoutLeadingZeros: %s", got)
	}
}

// A column some CSV files read as double while they hold numbers with
// more digits than a double keeps is named once, with its first file and
// value, what it is read as and how many other files hold such values;
// hinted as a decimal, the files read every digit, and nothing is named.
func TestRoundedWarnings(t *testing.T) {
	read := func(name string, kind sparkmerge.Kind, rounded map[string]string) *Read {
		return &Read{Name: name, Format: "csv", Schema: sparkmerge.Schema{Fields: []sparkmerge.Field{
			{Name: "id", Type: sparkmerge.Simple(sparkmerge.KindInt), Nullable: true},
			{Name: "pi", Type: sparkmerge.Simple(kind), Nullable: true},
		}}, rounded: rounded}
	}
	reads := func() []*Read {
		return []*Read{read("/in/a.csv", sparkmerge.KindDouble, nil), read("/in/b.csv", sparkmerge.KindDouble, map[string]string{"pi": "3.14159265358979323846"}),
			read("/in/c.csv", sparkmerge.KindDouble, map[string]string{"pi": "2.71828182845904523536"})}
	}
	decimal := map[string]sparkmerge.DataType{"pi": {Kind: sparkmerge.KindDecimal, Precision: 38, Scale: 20}}
	for _, tc := range []struct {
		name  string
		hints map[string]sparkmerge.DataType
		want  []string
	}{
		{"read as double", nil, []string{`column pi is read as double, and source "/in/b.csv" and another file hold numbers with more digits than a double keeps ("3.14159265358979323846", read as 3.141592653589793): the digits past it are lost; to keep them, type the column as a decimal that holds them or as a string (Options.Hints, pi=decimal(38,20) or pi=string)`}},
		{"hinted as a decimal", decimal, nil},
	} {
		rs := reads()
		applyHints(rs, sparkmerge.Options{Hints: tc.hints}, true)
		p, err := sparkmerge.NewPlan(planSources(rs), sparkmerge.Options{Hints: tc.hints})
		if err != nil {
			t.Fatal(err)
		}
		if got := roundedWarnings(p, rs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: warnings\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// A column some CSV files read as a timestamp while they hold times with
// digits past the microsecond is named once; hinted as a string, nothing
// is named.
func TestPastMicrosWarnings(t *testing.T) {
	read := func(name string, past map[string]string) *Read {
		return &Read{Name: name, Format: "csv", Schema: sparkmerge.Schema{Fields: []sparkmerge.Field{
			{Name: "id", Type: sparkmerge.Simple(sparkmerge.KindInt), Nullable: true},
			{Name: "ts", Type: sparkmerge.Simple(sparkmerge.KindTimestamp), Nullable: true},
		}}, pastMicros: past}
	}
	for _, tc := range []struct {
		name  string
		hints map[string]sparkmerge.DataType
		want  []string
	}{
		{"read as a timestamp", nil, []string{`column ts is read as a timestamp, and source "/in/b.csv" holds times with digits past the microsecond ("2024-01-05T10:00:00.123456789", read as 2024-01-05T10:00:00.123456): Spark keeps microseconds, and the digits past them are lost; to keep them, type the column as a string (Options.Hints, ts=string)`}},
		{"hinted as a string", map[string]sparkmerge.DataType{"ts": sparkmerge.Simple(sparkmerge.KindString)}, nil},
	} {
		rs := []*Read{read("/in/a.csv", nil), read("/in/b.csv", map[string]string{"ts": "2024-01-05T10:00:00.123456789"})}
		applyHints(rs, sparkmerge.Options{Hints: tc.hints}, true)
		p, err := sparkmerge.NewPlan(planSources(rs), sparkmerge.Options{Hints: tc.hints})
		if err != nil {
			t.Fatal(err)
		}
		if got := pastMicrosWarnings(p, rs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: warnings\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// A string column that only texts saying "no value" made a string is
// named with the texts, a file and the type of the other values: with
// one text everywhere, the reader option nullValue; with several, a hint
// and the rescue column. A column with text of its own elsewhere is not
// named. A type conflict with a table says the same.
func TestTokenWarnings(t *testing.T) {
	field := func(name string, k sparkmerge.Kind) sparkmerge.Field {
		return sparkmerge.Field{Name: name, Type: sparkmerge.Simple(k), Nullable: true}
	}
	read := func(name string, amount, day sparkmerge.Kind, tokens map[string]infer.NullTokens) *Read {
		return &Read{Name: name, Format: "csv", InferredLocally: true, nullTokens: tokens,
			Schema: sparkmerge.Schema{Fields: []sparkmerge.Field{field("id", sparkmerge.KindInt), field("amount", amount), field("day", day)}}}
	}
	integer, date, str := sparkmerge.KindInt, sparkmerge.KindDate, sparkmerge.KindString
	na := func(typ sparkmerge.Kind, texts ...string) infer.NullTokens {
		return infer.NullTokens{Tokens: texts, Type: sparkmerge.Simple(typ)}
	}
	a := read("/in/a.csv", integer, date, nil)
	b := read("/in/b.csv", str, str, map[string]infer.NullTokens{"amount": na(integer, "NA"), "day": na(date, "NA")})
	c := read("/in/c.csv", str, date, map[string]infer.NullTokens{"amount": na(integer, "N/A")})
	text := read("/in/text.csv", str, date, nil) // amount holds text of its own
	for _, tc := range []struct {
		name  string
		reads []*Read
		want  []string
	}{
		{"one text", []*Read{a, b}, []string{
			`column amount is merged as string only for the text "NA" in source "/in/b.csv", where its other values are int: if "NA" means no value, read the files with the reader option nullValue=NA (Job.ReaderOptions or SourceSpec.Options), which reads it as null in every column`,
			`column day is merged as string only for the text "NA" in source "/in/b.csv", where its other values are date: if "NA" means no value, read the files with the reader option nullValue=NA (Job.ReaderOptions or SourceSpec.Options), which reads it as null in every column`,
		}},
		{"two texts", []*Read{a, b, c}, []string{
			`column amount is merged as string only for the texts "NA" and "N/A" in source "/in/b.csv" and another file, where its other values are int: if they mean no value, type the column (Options.Hints, amount=int) and keep its values that are no int aside (Options.Rescue)`,
			`column day is merged as string only for the text "NA" in source "/in/b.csv", where its other values are date: if "NA" means no value, type the column (Options.Hints, day=date) and keep its values that are no date aside (Options.Rescue)`,
		}},
		{"text of its own", []*Read{a, text, c}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sparkmerge.NewPlan(planSources(tc.reads), sparkmerge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := tokenWarnings(p, tc.reads); !slices.Equal(got, tc.want) {
				t.Errorf("warnings\n got %q\nwant %q", got, tc.want)
			}
		})
	}

	table := sparkmerge.Schema{Fields: []sparkmerge.Field{field("id", integer), field("amount", integer), field("day", date)}}
	_, err := sparkmerge.NewPlan(planSources([]*Read{b}), sparkmerge.Options{Missing: sparkmerge.MissingReference, Reference: &table})
	err = withTokenAdvice(err, []*Read{b}, sparkmerge.Options{})
	var conflict *sparkmerge.TypeConflictError
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), `; column amount is a string for the text "NA" in source "/in/b.csv", where its other values are int: if "NA" means no value, read the files with the reader option nullValue=NA`) {
		t.Errorf("conflict with a table: %v", err)
	}
	// A column renamed or normalized into the table's gets the advice
	// too: matched by its key, as the plan matched it.
	cost := read("/in/cost.csv", str, date, map[string]infer.NullTokens{"Amount USD": na(integer, "NA")})
	cost.Schema.Fields[1].Name = "Amount USD"
	for _, policy := range []sparkmerge.Options{
		{Renames: map[string]string{"amount usd": "amount"}},
		{Normalize: sparkmerge.NormalizeSnakeCase, Renames: map[string]string{"amount_usd": "amount"}},
	} {
		policy.Missing, policy.Reference = sparkmerge.MissingReference, &table
		_, err := sparkmerge.NewPlan(planSources([]*Read{cost}), policy)
		err = withTokenAdvice(err, []*Read{cost}, policy)
		if !errors.As(err, &conflict) || !strings.Contains(err.Error(), `; column amount is a string for the text "NA" in source "/in/cost.csv"`) {
			t.Errorf("conflict of a renamed column with a table (%+v): %v", policy.Renames, err)
		}
	}
}

// Spark's refusal of a Parquet timestamp in nanoseconds is named with how
// to write or read the file.
func TestSourceErrorHintsNanos(t *testing.T) {
	err := sourceError(&Read{Name: "/in/a.parquet", Format: "parquet"}, errors.New("[PARQUET_TYPE_ILLEGAL] Illegal Parquet type: INT64 (TIMESTAMP(NANOS,false)). SQLSTATE: 42846"))
	if want := `read source "/in/a.parquet": [PARQUET_TYPE_ILLEGAL] Illegal Parquet type: INT64 (TIMESTAMP(NANOS,false)). SQLSTATE: 42846` + "\n  hint: " + nanosHint; err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
}
