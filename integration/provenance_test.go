//go:build integration

package integration

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// A target an earlier merge made with a provenance column (_source),
// appended to with Evolve and the same SourceColumn: the target's column
// is the provenance column, filled with each new row's source, while
// Evolve adds the column the new source brings; a Parquet path and a
// table, from files the client reads and files only the cluster sees.
// An append without SourceColumn is planned with the target's _source in
// no source, which the plan says, naming it and the way to fill it; its
// rows get null there, as the plan said.
func TestEvolveKeepsTheProvenanceColumn(t *testing.T) {
	t.Parallel()
	files := textFiles(map[string]string{
		"a.csv": "id,x\n1,p\n",
		"b.csv": "id,x,y\n2,q,r\n",
		"c.csv": "id,x\n3,s\n",
	})
	dirs := map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)}
	for _, where := range []string{"local", "cluster"} {
		for _, kind := range []string{"path", "table"} {
			t.Run(where+"/"+kind, func(t *testing.T) {
				t.Parallel()
				c := newClient(t)
				target := spark.Target{Path: filepath.Join(workDir(t), "out")}
				from := "parquet.`" + target.Path + "`"
				if kind == "table" {
					table := "sm_prov_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
					t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
					target, from = spark.Target{Table: table}, table
				}
				dir := dirs[where]
				run := func(file, sourceColumn string, evolve bool) *spark.Result {
					t.Helper()
					job := spark.Job{
						Sources: pathSources(dir + "/" + file),
						Policy:  sparkmerge.Options{SourceColumn: sourceColumn},
						Target:  target,
						Verify:  true,
					}
					job.Target.Evolve = evolve
					if file != "a.csv" {
						job.Target.Mode = "append"
					}
					res, err := c.Merge(context.Background(), job)
					if err != nil {
						t.Fatalf("merge %s (source column %q, evolve %v): %v", file, sourceColumn, evolve, err)
					}
					return res
				}
				run("a.csv", "_source", false)
				res := run("b.csv", "_source", true)
				if cols := res.Planned.NullColumns; len(cols) != 0 {
					t.Errorf("with the provenance column named, the plan says %v are in no source", cols)
				}
				res = run("c.csv", "", false)
				var inNoSource []string
				for _, f := range res.Planned.NullColumns {
					inNoSource = append(inNoSource, f.Name)
				}
				sort.Strings(inNoSource)
				diff(t, "appended without the provenance column: the plan's columns in no source", []string{"_source", "y"}, inNoSource)
				for _, want := range []string{"_source", "no source has", "SourceColumn"} {
					if !strings.Contains(res.Planned.String(), want) {
						t.Errorf("the plan does not say %q:\n%s", want, res.Planned.String())
					}
				}
				var rows [][]any
				if kind == "table" {
					exec(t, "REFRESH TABLE "+from)
					rows = queryRows(t, "SELECT id, x, y, _source FROM "+from+" ORDER BY id")
				} else {
					// Its files differ by the column the second merge
					// added: read as sparkmerge reads such a dataset.
					df, err := testSessionOf(t).Read().Format("parquet").Option("mergeSchema", "true").Load(target.Path)
					if err != nil {
						t.Fatal(err)
					}
					if df, err = df.SelectExpr(context.Background(), "id", "x", "y", "_source"); err != nil {
						t.Fatal(err)
					}
					rows = collectValues(t, df)
					sort.Slice(rows, func(i, j int) bool { return rows[i][0].(int32) < rows[j][0].(int32) })
				}
				diff(t, "rows", [][]any{
					{int32(1), "p", nil, dir + "/a.csv"},
					{int32(2), "q", "r", dir + "/b.csv"},
					{int32(3), "s", nil, nil},
				}, normalizeSources(rows))
			})
		}
	}
}

// normalizeSources takes file: off the last column of rows (the
// provenance as Spark names a file, file:/path).
func normalizeSources(rows [][]any) [][]any {
	for _, r := range rows {
		if s, ok := r[len(r)-1].(string); ok {
			r[len(r)-1] = strings.TrimPrefix(s, "file:")
		}
	}
	return rows
}
