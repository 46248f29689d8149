package spark

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
)

// Spark is asked only where the answer can change the merge: of a string
// column (amount, not note) that another source or the target types
// otherwise and that no source is known to hold a string in, once per
// column for all its reads, once per plan; never of a CSV file the client
// typed (it read every value), a read of the user's schema or one without
// inference. A column none of whose reads holds a value is no evidence:
// the target takes the others' type; where one read holds a value, the
// column is a string and nothing is flagged.
func TestMarkNoValuesAsksOnlyWhatChangesTheMerge(t *testing.T) {
	csvOptions := map[string]string{"header": "true", "inferSchema": "true"}
	schema := func(ddl string) sparkmerge.Schema {
		s, err := sparkmerge.ParseSchema(ddl)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	table := schema("id int, amount int, note string")
	reads := func() (sparse, valued, emptyHere, declared, untyped *Read) {
		sparse = &Read{Name: "/s/sparse.csv", Format: "csv", Paths: []string{"/s/sparse.csv"}, Options: csvOptions, Schema: schema("id int, amount string, note string")}
		valued = &Read{Name: "/s/valued.json", Format: "json", Paths: []string{"/s/valued.json"}, Schema: schema("AMOUNT string")}
		emptyHere = &Read{Name: "/l/empty.csv", Format: "csv", Paths: []string{"/l/empty.csv"}, Options: csvOptions, InferredLocally: true, Schema: schema("id int, amount string"), noValues: []string{"amount"}}
		declared = &Read{Name: "/s/declared.csv", Format: "csv", Paths: []string{"/s/declared.csv"}, Options: csvOptions, UserSchema: "amount string", Schema: schema("amount string")}
		untyped = &Read{Name: "/s/untyped.csv", Format: "csv", Paths: []string{"/s/untyped.csv"}, Options: map[string]string{"header": "true"}, Schema: schema("amount string")}
		return
	}

	// Alone with the table: asked, none holds a value, the append fits.
	c, fake := newFakeClient()
	fake.valueless = map[string]bool{"/s/sparse.csv amount": true}
	sparse, _, emptyHere, declared, untyped := reads()
	for range 2 { // asked once
		if err := c.markNoValues(context.Background(), []*Read{sparse, emptyHere, declared, untyped}, sparkmerge.Options{}, table); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"columnsHaveValues /s/sparse.csv amount"}, fake.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !slices.Equal(sparse.noValueColumns(), []int{1}) || !slices.Equal(emptyHere.noValueColumns(), []int{1}) {
		t.Errorf("no-value columns: sparse %v, empty %v; want [1] and [1]", sparse.noValueColumns(), emptyHere.noValueColumns())
	}
	plan, err := sparkmerge.NewPlan(planSources([]*Read{sparse, emptyHere}), sparkmerge.Options{Missing: sparkmerge.MissingReference, Reference: &table})
	if err != nil || plan.Target.String() != "id int, amount int, note string" {
		t.Errorf("appended to the table: %v, %v", plan, err)
	}

	// With a JSON file holding strings there: the column's first read
	// asked, then, without a value, the others; a value, so nothing
	// flagged and amount a string. A value in the first read ends it.
	for _, tc := range []struct {
		jsonFirst bool
		calls     []string
	}{
		{false, []string{"columnsHaveValues /s/sparse.csv amount", "columnsHaveValues /s/valued.json AMOUNT"}},
		{true, []string{"columnsHaveValues /s/valued.json AMOUNT"}},
	} {
		c, fake = newFakeClient()
		fake.valueless = map[string]bool{"/s/sparse.csv amount": true}
		sparse, valued, _, _, _ := reads()
		both := []*Read{sparse, valued}
		if tc.jsonFirst {
			both = []*Read{valued, sparse}
		}
		if err := c.markNoValues(context.Background(), both, sparkmerge.Options{}, table); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.calls, fake.recorded()); diff != "" {
			t.Errorf("JSON first %v: calls (-want +got):\n%s", tc.jsonFirst, diff)
		}
		if sparse.noValueColumns() != nil || valued.noValueColumns() != nil {
			t.Errorf("no-value columns: sparse %v, valued %v; want none", sparse.noValueColumns(), valued.noValueColumns())
		}
	}

	// A CSV file the client typed with strings in amount: nothing asked.
	c, fake = newFakeClient()
	sparse, _, _, _, _ = reads()
	text := &Read{Name: "/l/text.csv", Format: "csv", Paths: []string{"/l/text.csv"}, Options: csvOptions, InferredLocally: true, Schema: schema("amount string")}
	if err := c.markNoValues(context.Background(), []*Read{sparse, text}, sparkmerge.Options{}, table); err != nil {
		t.Fatal(err)
	}
	if calls := fake.recorded(); len(calls) != 0 {
		t.Errorf("calls %q, want none", calls)
	}
}

// A probe Spark cannot read (a malformed line under FAILFAST, which the
// merge then meets too) leaves the columns evidence, as before; a server
// gone ends the plan.
func TestMarkNoValuesWhenSparkCannotRead(t *testing.T) {
	for _, tc := range []struct {
		err     error
		wantErr bool
	}{
		{errors.New("[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records"), false},
		{fmt.Errorf("connect: %w", ErrUnreachable), true},
	} {
		c, fake := newFakeClient()
		fake.fail["columnsHaveValues /s/sparse.csv amount"] = tc.err
		sparse := &Read{Name: "/s/sparse.csv", Format: "csv", Paths: []string{"/s/sparse.csv"}, Options: map[string]string{"header": "true", "inferSchema": "true"},
			Schema: sparkmerge.Schema{Fields: []sparkmerge.Field{{Name: "amount", Type: sparkmerge.Simple(sparkmerge.KindString), Nullable: true}}}}
		table := sparkmerge.Schema{Fields: []sparkmerge.Field{{Name: "amount", Type: sparkmerge.Simple(sparkmerge.KindInt), Nullable: true}}}
		err := c.markNoValues(context.Background(), []*Read{sparse}, sparkmerge.Options{}, table)
		if (err != nil) != tc.wantErr || sparse.noValueColumns() != nil {
			t.Errorf("%v: err %v (want one: %v), no-value columns %v", tc.err, err, tc.wantErr, sparse.noValueColumns())
		}
	}
}
