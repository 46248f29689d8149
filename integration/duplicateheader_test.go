//go:build integration

package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// A CSV header that repeats a name (a,id,a) is refused at plan time,
// naming the file, on every path: Spark alone reads the file as a0, id,
// a2, whose values would not meet the other files' a. On files only the
// cluster sees it planned under those names and failed at the write (CSV
// header does not conform to the schema), where the same file read by the
// client got this refusal.
func TestRepeatedHeaderNameIsRefusedOnEveryPath(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"dup.csv":   "a,id,a\nx,1,y\n",
		"other.csv": "id,a\n2,z\n",
	})
	for _, p := range places(t) {
		putFiles(t, p.host, files)
		for _, sparkInference := range []bool{false, true} {
			dup := p.spark + "/dup.csv"
			job := spark.Job{
				Sources:        pathSources(dup, p.spark+"/other.csv"),
				SparkInference: sparkInference,
				Target:         spark.Target{Path: filepath.Join(p.spark, "out"), Mode: "overwrite"},
			}
			_, err := c.Plan(context.Background(), job)
			var header *spark.DuplicateHeaderError
			if !errorsAs(err, &header) || header.File != dup || header.Columns != [2]string{"a", "a"} {
				t.Errorf("%s, Spark's inference %v: plan err = %v, want a *spark.DuplicateHeaderError naming %s and a", p.name, sparkInference, err, dup)
			}
		}
	}
}
