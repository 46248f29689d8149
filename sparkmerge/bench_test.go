package sparkmerge

import (
	"fmt"
	"math/rand"
	"testing"
)

// driftingSources returns n sources of 200 columns each, drawn from a pool
// of 250 names in random order; about one column in twenty has a drifted
// type (int vs bigint vs decimal, string vs date), and one name in ten is
// spelled in upper case.
func driftingSources(n int) []Source {
	r := rand.New(rand.NewSource(int64(n)))
	const pool, width = 250, 200
	base := []DataType{Simple(KindInt), Simple(KindString), Simple(KindDouble), Simple(KindDate), NewDecimal(10, 2)}
	drift := []DataType{Simple(KindLong), Simple(KindString), Simple(KindFloat), Simple(KindTimestamp), NewDecimal(12, 4)}
	names := make([]string, pool)
	upper := make([]string, pool)
	for i := range names {
		names[i] = fmt.Sprintf("column_%03d", i)
		upper[i] = fmt.Sprintf("COLUMN_%03d", i)
	}
	sources := make([]Source, n)
	for s := range sources {
		fields := make([]Field, width)
		for j, c := range r.Perm(pool)[:width] {
			t := base[c%len(base)]
			if r.Intn(20) == 0 {
				t = drift[c%len(drift)]
			}
			name := names[c]
			if r.Intn(10) == 0 {
				name = upper[c]
			}
			fields[j] = Field{Name: name, Type: t, Nullable: true}
		}
		sources[s] = Source{Name: fmt.Sprintf("s3a://bucket/part-%05d.parquet", s), Schema: Schema{Fields: fields}}
	}
	return sources
}

func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		sources := driftingSources(n)
		b.Run(fmt.Sprintf("sources=%d/columns=200", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewPlan(sources, Options{SourceColumn: "_source"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSelectExprs renders the projections of one source of a 10,000
// source plan: rendering is lazy, per source.
func BenchmarkSelectExprs(b *testing.B) {
	p, err := NewPlan(driftingSources(10000), Options{SourceColumn: "_source"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = p.SelectExprs(i % len(p.Sources))
		i++
	}
}
