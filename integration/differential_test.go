//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// The differential suite: generated drifting corpora with nasty values,
// each merged through every read path sparkmerge has, compared cell by
// cell with Spark reading each file alone (union with Spark's inference).
// The merged table must not depend on the path: strategy, inference side,
// positional scans or per-file reads, and files the client reads or only
// Spark sees. Seeded: a failure names its seed and files.
//
// SPARKMERGE_DIFF_CORPORA sets how many corpora per format (default 3 in
// CI; the longer run is a larger number).

// diffColumn is a generated column: a name and a generator of its text.
type diffColumn struct {
	name  string
	value func(r *rand.Rand) string // "" is a missing value
}

// nastyValues are the values a column may hold, by kind. Each kind's
// values are read by Spark's CSV and JSON inference as one type or widened
// across files.
var nastyValues = map[string][]string{
	"int":     {"0", "-0", "7", "007", "-12", "2147483647", "-2147483648"},
	"bigint":  {"9007199254740992", "2147483648", "-9223372036854775808", "1152921504606846976"},
	"double":  {"1.5", "-0.0", "1e3", "2.50", "3.14159", "-1.25E-3"},
	"bool":    {"true", "false", "True", "FALSE"},
	"text":    {"x", "hello world", "a;b", "N/A", "-", "é"},
	"date":    {"2024-12-31", "2020-02-29"},
	"decimal": {"12345678901234567890", "99999999999999999999"},
}

var diffKinds = []string{"int", "bigint", "double", "bool", "text", "date", "decimal"}

// diffCorpus writes n drifting files of format (csv, tsv or json) and
// returns their contents by name.
func diffCorpus(seed uint64, format string, n int) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	// A pool of columns; each file takes a subset in its own order, with
	// the case of a name changing now and then.
	pool := make([]diffColumn, 6)
	for i := range pool {
		kinds := []string{diffKinds[r.IntN(len(diffKinds))]}
		if r.IntN(3) == 0 {
			kinds = append(kinds, diffKinds[r.IntN(len(diffKinds))]) // drifts in type
		}
		pool[i] = diffColumn{name: fmt.Sprintf("col%d", i), value: func(r *rand.Rand) string {
			vs := nastyValues[kinds[r.IntN(len(kinds))]]
			if r.IntN(8) == 0 {
				return ""
			}
			return vs[r.IntN(len(vs))]
		}}
	}
	files := map[string][]byte{}
	for f := range n {
		cols := []diffColumn{{name: "id"}}
		for _, i := range r.Perm(len(pool))[:2+r.IntN(len(pool)-1)] {
			c := pool[i]
			if r.IntN(5) == 0 {
				c.name = strings.ToUpper(c.name)
			}
			cols = append(cols, c)
		}
		r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
		rows := 1 + r.IntN(4)
		var b strings.Builder
		sep := ","
		if format == "tsv" {
			sep = "\t"
		}
		if format != "json" {
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.name
			}
			b.WriteString(strings.Join(names, sep) + "\n")
		}
		for row := range rows {
			id := fmt.Sprint(f*100 + row)
			var cells []string
			for _, c := range cols {
				v := id
				if c.value != nil {
					v = c.value(r)
				}
				if format == "json" {
					if v == "" {
						continue // the key is absent
					}
					cells = append(cells, fmt.Sprintf("%q:%s", c.name, jsonValue(v)))
				} else {
					cells = append(cells, v)
				}
			}
			if format == "json" {
				b.WriteString("{" + strings.Join(cells, ",") + "}\n")
			} else {
				b.WriteString(strings.Join(cells, sep) + "\n")
			}
		}
		ext := format
		files[fmt.Sprintf("f%02d.%s", f, ext)] = []byte(b.String())
	}
	return files
}

// jsonValue writes a generated text as JSON: as itself when it is a JSON
// number or boolean (1e3, -0, true), else as a string (007, 2024-12-31).
func jsonValue(v string) string {
	if json.Valid([]byte(v)) && !strings.HasPrefix(v, `"`) {
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestDifferentialReadPaths(t *testing.T) {
	c := newClient(t)
	corpora := 3
	if s := os.Getenv("SPARKMERGE_DIFF_CORPORA"); s != "" {
		fmt.Sscan(s, &corpora)
	}
	type path struct {
		name           string
		strategy       spark.Strategy
		sparkInference bool
		cluster        bool
	}
	paths := []path{
		{"auto", spark.StrategyAuto, false, false},
		{"union", spark.StrategyUnion, false, false},
		{"auto --spark-inference", spark.StrategyAuto, true, false},
		{"auto, cluster files", spark.StrategyAuto, false, true},
	}
	var total, refused int
	defer func() {
		// Corpora every path refuses alike prove little: most must merge.
		if !t.Failed() && refused*2 > total {
			t.Errorf("%d of %d corpora fail to merge at all: make the generator's values mergeable", refused, total)
		}
		t.Logf("%d corpora, %d merged on every path, %d refused on every path", total, total-refused, refused)
	}()
	for _, format := range []string{"csv", "tsv", "json"} {
		for k := range corpora {
			seed := uint64(1000*k + len(format))
			files := diffCorpus(seed, format, 4+int(seed%4))
			t.Run(fmt.Sprintf("%s seed %d", format, seed), func(t *testing.T) {
				local := localFiles(t, files)
				remote := clusterFiles(t, files)
				policy := sparkmerge.Options{SourceColumn: "_source"}
				skipSource := func(col string) bool { return strings.HasPrefix(col, "_source ") }
				job := spark.Job{Sources: pathSources(local), Strategy: spark.StrategyUnion, SparkInference: true, Policy: policy,
					Target: spark.Target{Path: filepath.Join(workDir(t), "out")}}
				refOut := job.Target.Path
				_, refErr := c.Merge(context.Background(), job)
				if refErr != nil {
					refused++
					t.Logf("Spark reading each file alone fails: %v", refErr)
				}
				total++
				for _, p := range paths {
					t.Run(p.name, func(t *testing.T) {
						root := local
						if p.cluster {
							root = remote
						}
						job := spark.Job{Sources: pathSources(root), Strategy: p.strategy, SparkInference: p.sparkInference, Policy: policy, Verify: true,
							Target: spark.Target{Path: filepath.Join(workDir(t), "out")}}
						_, err := c.Merge(context.Background(), job)
						switch {
						case refErr != nil && err == nil:
							t.Errorf("merged where Spark reading each file alone fails (%v)", refErr)
						case refErr == nil && err != nil:
							t.Errorf("%v (Spark reading each file alone merges)", err)
						case err == nil:
							sameOutput(t, c, refOut, job.Target.Path, "", skipSource)
						}
					})
				}
				if t.Failed() {
					for name, content := range files {
						t.Logf("%s:\n%s", name, content)
					}
				}
			})
		}
	}
}
