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

// Spark is asked only of the string columns of reads it typed that
// another source or the target types otherwise (here amount, not note),
// once each; a CSV file the client typed is never asked (it read every
// value), and neither is a read of the user's schema or without
// inference. A column found without a value is no evidence: the target
// takes the others' type.
func TestMarkNoValuesAsksOnlyWhatChangesTheMerge(t *testing.T) {
	c, fake := newFakeClient()
	fake.valueless = map[string]bool{"/s/sparse.csv amount": true}
	csvOptions := map[string]string{"header": "true", "inferSchema": "true"}
	schema := func(ddl string) sparkmerge.Schema {
		s, err := sparkmerge.ParseSchema(ddl)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sparse := &Read{Name: "/s/sparse.csv", Format: "csv", Paths: []string{"/s/sparse.csv"}, Options: csvOptions, Schema: schema("id int, amount string, note string")}
	valued := &Read{Name: "/s/valued.json", Format: "json", Paths: []string{"/s/valued.json"}, Schema: schema("AMOUNT string")}
	client := &Read{Name: "/l/full.csv", Format: "csv", Paths: []string{"/l/full.csv"}, Options: csvOptions, InferredLocally: true, Schema: schema("id int, amount string, note string")}
	declared := &Read{Name: "/s/declared.csv", Format: "csv", Paths: []string{"/s/declared.csv"}, Options: csvOptions, UserSchema: "amount string", Schema: schema("amount string")}
	untyped := &Read{Name: "/s/untyped.csv", Format: "csv", Paths: []string{"/s/untyped.csv"}, Options: map[string]string{"header": "true"}, Schema: schema("amount string")}
	reads := []*Read{sparse, valued, client, declared, untyped}
	table := schema("id int, amount int, note string")
	for range 2 { // asked once
		if err := c.markNoValues(context.Background(), reads, sparkmerge.Options{}, table); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"columnsHaveValues /s/sparse.csv amount", "columnsHaveValues /s/valued.json AMOUNT"}
	if diff := cmp.Diff(want, fake.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !slices.Equal(sparse.noValueColumns(), []int{1}) || valued.noValueColumns() != nil || client.noValueColumns() != nil {
		t.Errorf("no-value columns: sparse %v, valued %v, client %v; want [1], none, none", sparse.noValueColumns(), valued.noValueColumns(), client.noValueColumns())
	}
	plan, err := sparkmerge.NewPlan(planSources([]*Read{sparse, valued}), sparkmerge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Target.String(); got != "id int, amount string, note string" {
		t.Errorf("target %s: valued.json's strings still make amount a string", got)
	}
	plan, err = sparkmerge.NewPlan(planSources([]*Read{sparse}), sparkmerge.Options{Missing: sparkmerge.MissingReference, Reference: &table})
	if err != nil || plan.Target.String() != "id int, amount int, note string" {
		t.Errorf("appended to the table: %v, %v", plan, err)
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
