package sparkmerge

import (
	"errors"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// randomTypes are the leaves random schemas draw from: enough to hit every
// widening rule, the string rule and conflicts.
var randomTypes = []DataType{
	{}, Simple(KindBoolean), Simple(KindByte), Simple(KindShort), Simple(KindInt), Simple(KindLong),
	Simple(KindFloat), Simple(KindDouble), NewDecimal(10, 2), NewDecimal(12, 4), NewDecimal(38, 0),
	NewDecimal(38, 10), Simple(KindString), Simple(KindBinary), Simple(KindDate), Simple(KindTimestamp),
	Simple(KindTimestampNTZ), NewDayTimeInterval(IntervalDay, IntervalHour),
	NewDayTimeInterval(IntervalMinute, IntervalSecond),
}

var randomNames = []string{"id", "ID", "name", "Name", "amount", "ts", "tags", "attrs", "addr", "flag", "a b", "x.y"}

func randomType(r *rand.Rand, depth int) DataType {
	if depth < 2 {
		switch r.Intn(8) {
		case 0:
			var fields []Field
			seen := map[string]bool{}
			for range 1 + r.Intn(3) {
				n := []string{"f", "g", "h", "F"}[r.Intn(4)]
				if seen[strings.ToLower(n)] {
					continue
				}
				seen[strings.ToLower(n)] = true
				fields = append(fields, Field{Name: n, Type: randomType(r, depth+1), Nullable: r.Intn(2) == 0})
			}
			return StructOf(fields...)
		case 1:
			return ArrayOf(randomType(r, depth+1), r.Intn(2) == 0)
		case 2:
			return MapOf(Simple(KindString), randomType(r, depth+1), r.Intn(2) == 0)
		}
	}
	return randomTypes[r.Intn(len(randomTypes))]
}

func randomSchema(r *rand.Rand) Schema {
	var s Schema
	seen := map[string]bool{}
	for _, i := range r.Perm(len(randomNames))[:r.Intn(len(randomNames))] {
		n := randomNames[i]
		if seen[strings.ToLower(n)] {
			continue
		}
		seen[strings.ToLower(n)] = true
		s.Fields = append(s.Fields, Field{Name: n, Type: randomType(r, 0), Nullable: r.Intn(2) == 0})
	}
	return s
}

// canonical is a plan's outcome with everything that may depend on the
// order of the sources removed: column order, name spelling and struct
// field order.
func canonical(p *Plan, err error, caseSensitive bool) any {
	fold := func(s string) string { return FoldName(s, caseSensitive) }
	if err != nil {
		var tce *TypeConflictError
		if errors.As(err, &tce) {
			var cols []string
			for _, c := range tce.Conflicts {
				cols = append(cols, fold(c.Column))
			}
			sort.Strings(cols)
			return "type conflict in " + strings.Join(cols, ",")
		}
		return "error"
	}
	type col struct {
		Name     string
		Type     DataType
		Nullable bool
	}
	var cols []col
	for _, f := range p.Target.Fields {
		cols = append(cols, col{fold(f.Name), sortFields(f.Type, false), f.Nullable})
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].Name < cols[j].Name })
	return cols
}

// TestPermutationInvariance checks that the target (types, nullability,
// the set of columns) and the outcome (which columns conflict) do not
// depend on the order of the sources.
func TestPermutationInvariance(t *testing.T) {
	policies := []Options{
		{},
		{Types: TypesStrict},
		{Types: TypesString},
		{Missing: MissingIntersect},
		{CaseSensitive: true},
	}
	r := rand.New(rand.NewSource(20240601))
	conflicts, successes := 0, 0
	for trial := range 400 {
		sources := make([]Source, 2+r.Intn(4))
		for i := range sources {
			sources[i] = Source{Name: "s" + string(rune('a'+i)), Schema: randomSchema(r)}
		}
		opts := policies[trial%len(policies)]
		p, err := NewPlan(sources, opts)
		want := canonical(p, err, opts.CaseSensitive)
		if err != nil {
			conflicts++
		} else {
			successes++
		}
		for range 4 {
			perm := make([]Source, len(sources))
			for i, j := range r.Perm(len(sources)) {
				perm[i] = sources[j]
			}
			p2, err2 := NewPlan(perm, opts)
			if diff := cmp.Diff(want, canonical(p2, err2, opts.CaseSensitive)); diff != "" {
				t.Fatalf("trial %d, options %+v: result depends on source order (-original +permuted):\n%s\nsources: %v", trial, opts, diff, sources)
			}
		}
	}
	// The generator must exercise both outcomes, or the test proves little.
	if conflicts < 40 || successes < 40 {
		t.Errorf("weak generator: %d conflicts, %d successes", conflicts, successes)
	}
}
