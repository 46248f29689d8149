//go:build integration

package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
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

			job.Sources, job.Target = pathSources(paths[1:]...), spark.Target{}
			_, out := merge(t, c, job)
			diff(t, "exact values", [][]any{row("2", "9.007199254740992E15"), row("3", "1.15292150460684698E18"), row("4", nil), row("5", "1.5")},
				parquetRows(t, out, []string{"id", "v"}, "id"))

			job.Sources, job.Target = pathSources(paths...), spark.Target{}
			job.Policy.LossyWidening = true
			_, out = merge(t, c, job)
			diff(t, "lossy by choice", [][]any{row("1", "9.007199254740992E15")}, parquetRows(t, out+"` WHERE `id` = 1 --", []string{"id", "v"}, "id"))
		}
	}
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
