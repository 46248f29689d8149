package sparkmerge

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Columns spelled two ways ("amount", " amount"; "OrderId", "order_id")
// stay two columns, as Spark reads them; the plan names them with the
// rewrite of names that makes them one, when it would merge them without
// splitting another column or failing on a source that has both.
func TestNewPlanNearNames(t *testing.T) {
	src := func(name, ddl string) Source { return Source{Name: name, Schema: schema(t, ddl)} }
	for _, tc := range []struct {
		name    string
		sources []Source
		opts    Options
		want    []NearNames
	}{
		{"white space around a name",
			[]Source{src("a.csv", "id int, amount int"), src("b.csv", "id int, ` amount` int"), src("c.csv", "id int, `amount ` int")}, Options{},
			[]NearNames{{Names: []string{"amount", " amount", "amount "}, Normalize: NormalizeTrim}}},
		{"trimmed already",
			[]Source{src("a.csv", "id int, amount int"), src("b.csv", "id int, ` amount` int")}, Options{Normalize: NormalizeTrim}, nil},
		{"words spelled two ways",
			[]Source{src("a.csv", "OrderId int, `Total Amount` double"), src("b.csv", "order_id int, total_amount double")}, Options{},
			[]NearNames{{Names: []string{"OrderId", "order_id"}, Normalize: NormalizeSnakeCase}, {Names: []string{"Total Amount", "total_amount"}, Normalize: NormalizeSnakeCase}}},
		{"in snake_case already",
			[]Source{src("a.csv", "OrderId int"), src("b.csv", "order_id int")}, Options{Normalize: NormalizeSnakeCase}, nil},
		{"a rewrite that would split a column",
			// OrderId and orderid are one column (case-insensitive);
			// snake_case would part them.
			[]Source{src("a.csv", "OrderId int"), src("b.csv", "orderid int"), src("c.csv", "order_id int")}, Options{}, nil},
		{"case alone, matched case-sensitively",
			[]Source{src("a.csv", "Amount int"), src("b.csv", "amount int")}, Options{CaseSensitive: true}, nil},
		{"one source has both",
			[]Source{src("a.csv", "amount int, ` amount` int"), src("b.csv", "amount int")}, Options{}, nil},
		{"the provenance column",
			[]Source{src("a.csv", "id int, `_source ` string")}, Options{SourceColumn: "_source"}, nil},
		{"a weaker rewrite's group is not repeated",
			[]Source{src("a.csv", "amount int"), src("b.csv", "` amount` int")}, Options{},
			[]NearNames{{Names: []string{"amount", " amount"}, Normalize: NormalizeTrim}}},
		{"snake_case takes a trimmed group further",
			[]Source{src("a.csv", "total_amount int"), src("b.csv", "`total_amount ` int"), src("c.csv", "`Total Amount` int")}, Options{},
			[]NearNames{{Names: []string{"total_amount", "total_amount "}, Normalize: NormalizeTrim}, {Names: []string{"total_amount", "total_amount ", "Total Amount"}, Normalize: NormalizeSnakeCase}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(tc.sources, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p.NearNames); diff != "" {
				t.Errorf("NearNames (-want +got):\n%s", diff)
			}
		})
	}

	// The plan's text quotes the names whose white space would not show.
	p, err := NewPlan([]Source{src("a.csv", "id int, amount int"), src("b.csv", "id int, ` amount` int")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n  amount     int\n", "\n  \" amount\"  int\n", "a.csv: 2 columns; added \" amount\"\n", "b.csv: 2 columns; added amount\n"} {
		if !strings.Contains(p.String(), want) {
			t.Errorf("the plan's text does not hold %q:\n%s", want, p)
		}
	}

	hint := NearNames{Names: []string{"amount", " amount"}, Normalize: NormalizeTrim}.Hint()
	if want := `columns "amount" and " amount" differ only by white space around them: to merge them as one column, normalize names with trim (Options.Normalize)`; hint != want {
		t.Errorf("Hint\n got %s\nwant %s", hint, want)
	}
}

// An error about columns that differ names the rewrite that makes one of
// two of them: appended to a reference of "amount", a file's " amount" is
// extra; under MissingFail, a file that spells it otherwise lacks it.
func TestMissingColumnsErrorNamesNearNames(t *testing.T) {
	ref := schema(t, "id int, amount int")
	_, err := NewPlan([]Source{{Name: "b.csv", Schema: schema(t, "id int, ` amount` int")}}, Options{Missing: MissingReference, Reference: &ref})
	var missing *MissingColumnsError
	if !errors.As(err, &missing) {
		t.Fatalf("error %v, want a MissingColumnsError", err)
	}
	if want := []NearNames{{Names: []string{"amount", " amount"}, Normalize: NormalizeTrim}}; !cmp.Equal(missing.Near, want) {
		t.Errorf("Near %+v, want %+v", missing.Near, want)
	}
	if !strings.Contains(err.Error(), `has extra " amount"; columns "amount" and " amount" differ only by white space around them: to merge them as one column, normalize names with trim`) {
		t.Errorf("error: %v", err)
	}

	_, err = NewPlan([]Source{{Name: "a.csv", Schema: schema(t, "id int, OrderId int")}, {Name: "b.csv", Schema: schema(t, "id int, order_id int")}}, Options{Missing: MissingFail})
	if !errors.As(err, &missing) || len(missing.Near) != 1 || missing.Near[0].Normalize != NormalizeSnakeCase {
		t.Errorf("MissingFail: %v (%+v)", err, missing)
	}
	// Columns that differ otherwise name no rewrite.
	_, err = NewPlan([]Source{{Name: "a.csv", Schema: schema(t, "id int, weight int")}, {Name: "b.csv", Schema: schema(t, "id int, height int")}}, Options{Missing: MissingFail})
	if !errors.As(err, &missing) || len(missing.Near) != 0 || strings.Contains(err.Error(), "normalize") {
		t.Errorf("different columns: %v", err)
	}
}
