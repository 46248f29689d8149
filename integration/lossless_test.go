//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// bigint + double widens to double, which holds every integer only up to
// 2^53. A value that would change fails the merge naming it and its file,
// on every read path (a positional scan of files the client typed, or each
// file read by Spark); values a double holds exactly (2^53, 2^60) merge as
// they are; LossyWidening accepts Spark's rounding.
func TestBigintToDoubleIsChecked(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{
		"big.json":  "{\"id\":1,\"v\":9007199254740993}\n",
		"ok.json":   "{\"id\":2,\"v\":9007199254740992}\n{\"id\":3,\"v\":1152921504606846976}\n{\"id\":4,\"v\":null}\n",
		"frac.json": "{\"id\":5,\"v\":1.5}\n",
	}, "big.json", "ok.json", "frac.json")
	// Every path's outputs, read at the end in one query: a row per
	// output and id, tagged with its path and which merge wrote it.
	var reads []string
	for _, sparkInference := range []bool{false, true} {
		for _, strategy := range []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion} {
			job := spark.Job{Sources: pathSources(paths...), Strategy: strategy, SparkInference: sparkInference, Verify: true,
				Target: spark.Target{Path: filepath.Join(workDir(t), "out")}}
			_, err := c.Merge(context.Background(), job)
			if err == nil {
				t.Fatalf("%v, Spark inference %v: 9007199254740993 became a double silently", strategy, sparkInference)
			}
			for _, want := range []string{"9007199254740993", paths[0], "9.007199254740992E15", "Options.LossyWidening"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v, Spark inference %v: error does not name %q: %v", strategy, sparkInference, want, err)
				}
			}
			path := fmt.Sprintf("%v, Spark inference %v", strategy, sparkInference)

			job.Sources, job.Target = pathSources(paths[1:]...), spark.Target{}
			_, out := merge(t, c, job)
			reads = append(reads, fmt.Sprintf("SELECT '%s: exact values', CAST(id AS string), CAST(v AS string) FROM parquet.`%s`", path, out))

			job.Sources, job.Target = pathSources(paths...), spark.Target{}
			job.Policy.LossyWidening = true
			_, out = merge(t, c, job)
			reads = append(reads, fmt.Sprintf("SELECT '%s: lossy by choice', CAST(id AS string), CAST(v AS string) FROM parquet.`%s` WHERE id = 1", path, out))
		}
	}
	var want [][]any
	for _, sparkInference := range []bool{false, true} {
		for _, strategy := range []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion} {
			path := fmt.Sprintf("%v, Spark inference %v", strategy, sparkInference)
			want = append(want, row(path+": exact values", "2", "9.007199254740992E15"), row(path+": exact values", "3", "1.15292150460684698E18"),
				row(path+": exact values", "4", nil), row(path+": exact values", "5", "1.5"), row(path+": lossy by choice", "1", "9.007199254740992E15"))
		}
	}
	got := queryRows(t, strings.Join(reads, " UNION ALL "))
	sortCells(want)
	sortCells(got)
	diff(t, "each path's exact values, and 2^53 + 1 rounded by choice (path: merge, id, v)", want, got)
}

// Decimals whose common type needs more than 38 digits would lose
// fraction digits in every value: a conflict at plan time naming the
// column and sources, unless LossyWidening.
func TestWideDecimalsConflict(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	a := filepath.Join(dir, "a.parquet")
	b := filepath.Join(dir, "b.parquet")
	putFiles(t, dir, map[string][]byte{
		"a.parquet": parquetFile(t, "SELECT 1 AS id, CAST('123.456789012345678901' AS DECIMAL(38,18)) AS amount"),
		"b.parquet": parquetFile(t, "SELECT 2 AS id, CAST('7.25' AS DECIMAL(38,2)) AS amount"),
	})
	for _, sparkInference := range []bool{false, true} {
		_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(a, b), SparkInference: sparkInference})
		var conflict *sparkmerge.TypeConflictError
		if !errors.As(err, &conflict) || conflict.Conflicts[0].Column != "amount" || conflict.Conflicts[0].Reason == "" {
			t.Fatalf("Spark inference %v: err = %v, want a conflict on amount with its reason", sparkInference, err)
		}
	}
	_, out := merge(t, c, spark.Job{Sources: pathSources(a, b), Policy: sparkmerge.Options{LossyWidening: true}})
	diff(t, "Spark's rounding, by choice", [][]any{row("1", "123.46"), row("2", "7.25")}, parquetRows(t, out, []string{"id", "amount"}, "id"))
}

// The integers at the edge of bigint and past it, widened to double with
// a 1.5 beside them, on each format, from files the client reads and from
// files only the cluster sees, with either inference. 2^63 - 1 becomes
// the double 2^63, which Spark casts back to 2^63 - 1 without an error
// (it saturates), so a check by the round trip passes it: it must fail
// the merge naming the value and its file. 2^63 itself, a decimal, is
// exactly a double and merges; 2^60 + 4, a decimal too, is not (the
// double is 2^60, though it prints as 1.15292150460684698E18) and fails.
func TestIntegersAtTheEdgeOfDouble(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	values := []edgeValue{
		{"9223372036854775807", "9223372036854775807L", true},
		{"9223372036854775808", "CAST('9223372036854775808' AS DECIMAL(19,0))", false},
		{"1152921504606846980", "CAST('1152921504606846980' AS DECIMAL(19,0))", true},
		{"-9223372036854775808", "-9223372036854775808L", false},
	}
	// Each subtest's exact merge, read after all of them in one query.
	var mu sync.Mutex
	var reads []string
	var want [][]any
	t.Run("merges", func(t *testing.T) { // returns when its parallel subtests have
		mergesAtTheEdgeOfDouble(t, c, values, func(name, out string) {
			// The text parses to the double nearest it, which is the
			// value itself.
			var cases []string
			mu.Lock()
			defer mu.Unlock()
			for i, v := range values {
				if !v.lossy {
					cases = append(cases, fmt.Sprintf("WHEN %d THEN a = CAST('%s' AS DOUBLE)", i, v.text))
					want = append(want, row(name, fmt.Sprint(i), true, "double"))
				}
			}
			reads = append(reads, fmt.Sprintf("SELECT '%s', CAST(id AS string), CASE id %s END, typeof(a) FROM parquet.`%s` WHERE id != 9", name, strings.Join(cases, " "), out))
		})
	})
	if t.Failed() || len(reads) == 0 {
		return
	}
	got := queryRows(t, strings.Join(reads, " UNION ALL "))
	sortCells(want)
	sortCells(got)
	diff(t, "the exact values merged as themselves (subtest, id, equal to the text as a double, type)", want, got)
}

// edgeValue is a value of TestIntegersAtTheEdgeOfDouble.
type edgeValue struct {
	text  string // as written in CSV and JSON
	sql   string // as a Parquet file's column (its type is Spark's inference of text)
	lossy bool
}

// mergesAtTheEdgeOfDouble runs TestIntegersAtTheEdgeOfDouble's merges, a
// parallel subtest per format, place and inference, and hands each
// subtest's merge of the exact values (and the 1.5, id 9) to merged.
func mergesAtTheEdgeOfDouble(t *testing.T, c *spark.Client, values []edgeValue, merged func(name, out string)) {
	for _, format := range []string{"csv", "json", "parquet"} {
		files := map[string][]byte{}
		var names []string
		for i, v := range values {
			name := fmt.Sprintf("v%d.%s", i, format)
			names = append(names, name)
			switch format {
			case "csv":
				files[name] = []byte(fmt.Sprintf("id,a\n%d,%s\n", i, v.text))
			case "json":
				files[name] = []byte(fmt.Sprintf("{\"id\":%d,\"a\":%s}\n", i, v.text))
			case "parquet":
				files[name] = parquetFile(t, fmt.Sprintf("SELECT %d AS id, %s AS a", i, v.sql))
			}
		}
		frac := "frac." + format
		switch format {
		case "csv":
			files[frac] = []byte("id,a\n9,1.5\n")
		case "json":
			files[frac] = []byte("{\"id\":9,\"a\":1.5}\n")
		case "parquet":
			files[frac] = parquetFile(t, "SELECT 9 AS id, 1.5D AS a")
		}
		for _, where := range []string{"local", "cluster"} {
			dir := ""
			if where == "local" {
				dir = localFiles(t, files)
			} else {
				dir = clusterFiles(t, files)
			}
			for _, sparkInference := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/sparkInference=%v", format, where, sparkInference)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					job := spark.Job{SparkInference: sparkInference, Verify: true}
					// The exact ones together, the others one merge each.
					exact := []string{dir + "/" + frac}
					for i, v := range values {
						if !v.lossy {
							exact = append(exact, dir+"/"+names[i])
							continue
						}
						job.Sources, job.Target = pathSources(dir+"/"+names[i], dir+"/"+frac), spark.Target{Path: filepath.Join(workDir(t), "out")}
						_, err := c.Merge(context.Background(), job)
						if err == nil {
							t.Errorf("%s became a double silently", v.text)
							continue
						}
						for _, want := range []string{v.text, names[i], "Options.LossyWidening"} {
							if !strings.Contains(err.Error(), want) {
								t.Errorf("%s: error does not name %q: %v", v.text, want, err)
							}
						}
					}
					job.Sources, job.Target = pathSources(exact...), spark.Target{Path: filepath.Join(workDir(t), "out")}
					if _, err := c.Merge(context.Background(), job); err != nil {
						t.Fatalf("values a double holds exactly: %v", err)
					}
					merged(name, job.Target.Path)
				})
			}
		}
	}
}
