//go:build integration

package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// A JSON key spelled in another case in another file ({"o":{"k":1}} and
// {"o":{"K":2}}, nested or at the top) is one column under the default
// case-insensitive matching, and every path keeps each file's value in
// it: none is nulled (issue 33's follow-up on --spark-inference), on
// files the client reads and files only the cluster sees.
func TestJSONKeysDifferingByCaseAcrossFilesKeepTheirValues(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	cases := []struct {
		name  string
		files map[string][]byte
		want  [][]any
	}{
		{"nested", map[string][]byte{"good.json": []byte("{\"a\":1,\"o\":{\"k\":1}}\n"), "odd.json": []byte("{\"a\":2,\"o\":{\"K\":2}}\n")},
			[][]any{row(`{"a":1,"o":{"k":1}}`), row(`{"a":2,"o":{"k":2}}`)}},
		{"top level", map[string][]byte{"good.json": []byte("{\"a\":1,\"k\":1}\n"), "odd.json": []byte("{\"a\":2,\"K\":2}\n")},
			[][]any{row(`{"a":1,"k":1}`), row(`{"a":2,"k":2}`)}},
	}
	paths := []struct {
		name           string
		cluster        bool
		strategy       spark.Strategy
		sparkInference bool
	}{
		{"auto", false, spark.StrategyAuto, false},
		{"union", false, spark.StrategyUnion, false},
		{"auto --spark-inference", false, spark.StrategyAuto, true},
		{"union --spark-inference", false, spark.StrategyUnion, true},
		{"auto, cluster files", true, spark.StrategyAuto, false},
		{"auto --spark-inference, cluster files", true, spark.StrategyAuto, true},
	}
	// Every output, read at the end in one query: its rows tagged with
	// its case and path.
	var reads []string
	var want [][]any
	for _, tc := range cases {
		local := localFiles(t, tc.files)
		remote := clusterFiles(t, tc.files)
		for _, p := range paths {
			root := local
			if p.cluster {
				root = remote
			}
			out := filepath.Join(workDir(t), "out")
			if _, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(root), Strategy: p.strategy, SparkInference: p.sparkInference, Verify: true,
				Target: spark.Target{Path: out}}); err != nil {
				t.Errorf("%s, %s: %v", tc.name, p.name, err)
				continue
			}
			what := tc.name + ", " + p.name
			reads = append(reads, "SELECT '"+what+"', to_json(struct(*)) FROM parquet.`"+out+"`")
			for _, r := range tc.want {
				want = append(want, row(what, r[0]))
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	got := queryRows(t, strings.Join(reads, " UNION ALL "))
	sortCells(want)
	sortCells(got)
	diff(t, "each case's and path's rows (case, path; row)", want, got)
}
