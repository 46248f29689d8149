//go:build integration

package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The cases of "one result, whatever the path": each set of files merged
// by auto, union and auto with Spark's inference gives what Spark reading
// each file alone gives (union with Spark's inference), or every path
// fails alike.
func TestOneResultWhateverThePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		files   map[string]string
		options map[string]string
	}{
		{"json number text in a string column", map[string]string{
			"a.json": "{\"id\":1,\"v\":1}\n{\"id\":2,\"v\":2}\n", "b.json": "{\"id\":3,\"v\":1.5}\n", "c.json": "{\"ID\":4,\"v\":\"high\"}\n"}, nil},
		{"json column order", map[string]string{
			"a.json": "{\"id\":1,\"u\":{\"a\":1}}\n", "b.json": "{\"id\":2,\"u\":{\"a\":2},\"tags\":[\"x\"]}\n", "c.json": "{\"id\":3,\"tags\":[\"y\"]}\n"}, nil},
		{"json big integer in a string column", map[string]string{
			"a.json": "{\"id\":1,\"a\":9223372036854775807}\n", "b.json": "{\"id\":2,\"a\":1.5}\n", "c.json": "{\"id\":3,\"A\":\"x\"}\n"}, nil},
		{"csv big integer in a string column", map[string]string{
			"a.csv": "id,a\n1,9223372036854775807\n", "b.csv": "id,a\n2,1.5\n", "c.csv": "id,a\n3,x\n"}, nil},
		{"json empty string beside a number", map[string]string{
			"a.json": "{\"id\":1,\"a\":5}\n", "b.json": "{\"id\":2,\"a\":\"\"}\n"}, nil},
		{"json overflowing number", map[string]string{
			"a.json": "{\"id\":1,\"b\":1e400}\n", "b.json": "{\"id\":2,\"b\":1.5}\n"}, nil},
		{"csv negative zero widened to double", map[string]string{
			"a.csv": "id,x\n1,-0\n2,5\n", "b.csv": "id,x\n3,1.5\n"}, nil},
		{"csv repeated header line, permissive", map[string]string{
			"a.csv": "id,v\n1,2\nid,v\n3,4\n", "b.csv": "v,id\n5,6\n"}, map[string]string{"mode": "PERMISSIVE"}},
		{"csv blank first line, swapped columns", map[string]string{
			"a.csv": "\nid,v\n1,a\n", "b.csv": "\nv,id\nb,2\n"}, nil},
		{"csv booleans and infinities as text", map[string]string{
			"a.csv": "id,f,g\n1,True,Inf\n", "b.csv": "id,f,g\n2,x,y\n"}, nil},
		{"json objects and arrays in a string column keep their text", map[string]string{
			"a.json": "{\"id\":1,\"v\":\"x\"}\n{\"id\":2,\"v\":{\"k\": 1.50, \"z\" : [1, 2.0e0]}}\n", "b.json": "{\"id\":3,\"v\":\"y\"}\n{\"id\":4,\"v\":[ {\"q\":  -0} ]}\n"}, nil},
		// Spark names empty header cells _c<i>, and " id" is not id: both
		// read as Spark alone reads them.
		{"csv empty header names", map[string]string{
			"a.csv": "a,b,,\n1,2,3,4\n", "b.csv": "a,b,c,d\n5,6,7,8\n"}, nil},
		{"csv padded name beside the same name", map[string]string{
			"a.csv": "id, id\n1,2\n", "b.csv": "id,v\n3,x\n"}, nil},
		{"json nested empty objects", map[string]string{
			"a.json": "{\"id\":1,\"o\":[{}]}\n", "b.json": "{\"id\":2,\"o\":[{\"k\":1}]}\n"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Cases in parallel, each on a session of its own.
			t.Parallel()
			c := newClient(t)
			var names []string
			for n := range tc.files {
				names = append(names, n)
			}
			dir := workDir(t)
			slices.Sort(names)
			paths := writeFiles(t, dir, tc.files, names...)
			policy := sparkmerge.Options{SourceColumn: "_source"}
			run := func(strategy spark.Strategy, sparkInference bool) (string, error) {
				out := filepath.Join(workDir(t), "out")
				_, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(paths...), Strategy: strategy, SparkInference: sparkInference,
					ReaderOptions: tc.options, Policy: policy, Verify: true, Target: spark.Target{Path: out}})
				return out, err
			}
			ref, refErr := run(spark.StrategyUnion, true)
			if refErr != nil {
				t.Logf("Spark reading each file alone: %v", refErr)
			}
			reference := newOracle(ref)
			var outs []compared // compared with the reference in one query once all have merged
			for _, p := range []struct {
				name           string
				strategy       spark.Strategy
				sparkInference bool
			}{{"auto", spark.StrategyAuto, false}, {"union", spark.StrategyUnion, false}, {"auto --spark-inference", spark.StrategyAuto, true}} {
				runOnParentSession(t, p.name, func(t *testing.T) {
					out, err := run(p.strategy, p.sparkInference)
					switch {
					case refErr != nil && err == nil:
						t.Errorf("merged where Spark reading each file alone fails")
					case refErr == nil && err != nil:
						t.Errorf("%v", err)
					case err == nil:
						outs = append(outs, compared{p.name, out, ""})
					}
				})
			}
			reference.sameAsEach(t, c, outs, func(col string) bool { return strings.HasPrefix(col, "_source ") }, "", false)
		})
	}
}

// The meaning of a value in a column that becomes string (docs/cli.md's
// table): each file's value as Spark reads that file alone, then cast to
// string. The same on every path.
func TestStringTargetValues(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{
		"a.csv":  "id,x\n1,-0\n2,007\n",                           // int
		"b.csv":  "id,x\n3,1.50\n4,NaN\n5,Inf\n",                  // double
		"c.csv":  "id,x\n6,True\n",                                // boolean
		"d.csv":  "id,x\n7,hello\n8,1.50\n",                       // string: kept as written
		"e.json": "{\"id\":9,\"x\":1.50}\n{\"id\":10,\"x\":-0}\n", // double; -0 is the integer 0
	}, "a.csv", "b.csv", "c.csv", "d.csv", "e.json")
	want := [][]any{row("1", "0"), row("2", "7"), row("3", "1.5"), row("4", "NaN"), row("5", "Infinity"), row("6", "true"),
		row("7", "hello"), row("8", "1.50"), row("9", "1.5"), row("10", "0.0")}
	for _, p := range []struct {
		strategy       spark.Strategy
		sparkInference bool
	}{{spark.StrategyAuto, false}, {spark.StrategyUnion, false}, {spark.StrategyUnion, true}} {
		_, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Strategy: p.strategy, SparkInference: p.sparkInference, Verify: true})
		diff(t, fmt.Sprintf("%v, Spark inference %v", p.strategy, p.sparkInference), want, parquetRows(t, out, []string{"id", "x"}, "CAST(id AS INT)"))
	}
}
