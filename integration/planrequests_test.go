//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// datedDrop is a landing area as it arrives: n CSV files of four header
// versions, each with a date, a timestamp and a quoted text holding the
// separator and quotes escaped by doubling (which the client leaves to
// Spark's inference), rows lines each.
func datedDrop(n, rows int) map[string][]byte {
	headers := []string{"id,day,at,note", "id,at,day,note,amount", "note,id,day", "id,day,at,note,weight"}
	files := map[string][]byte{}
	for i := range n {
		h := headers[i%len(headers)]
		var b strings.Builder
		b.WriteString(h + "\n")
		for r := range rows {
			for j, col := range strings.Split(h, ",") {
				if j > 0 {
					b.WriteByte(',')
				}
				switch col {
				case "id":
					fmt.Fprintf(&b, "%d", i*rows+r)
				case "day":
					fmt.Fprintf(&b, "2024-%02d-%02d", 1+r%12, 1+r%28)
				case "at":
					fmt.Fprintf(&b, "2024-01-02 03:%02d:%02d", r%60, i%60)
				case "note":
					fmt.Fprintf(&b, "\"file %d, \"\"row\"\" %d\"", i, r)
				default:
					fmt.Fprintf(&b, "%d.%d", r, i%10)
				}
			}
			b.WriteByte('\n')
		}
		files[fmt.Sprintf("drop-%03d.csv", i)] = []byte(b.String())
	}
	return files
}

// The plan counts the requests it sent Spark: a drop of many dated files
// of four headers costs a few requests, not one per file, wherever the
// files are; typed each alone, one or more per file. The counts are the
// server's work that --spark-inference and the fallback multiply
// (issue: no discovery cliff).
func TestPlanCountsItsSparkRequests(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	const files = 40
	drop := datedDrop(files, 50)
	var corpus int64
	for _, b := range drop {
		corpus += int64(len(b))
	}
	for _, where := range []struct {
		name, root string
	}{{"local files", localFiles(t, drop)}, {"files only the server sees", clusterFiles(t, drop)}} {
		t.Run(where.name, func(t *testing.T) {
			job := spark.Job{Sources: pathSources(where.root), DryRun: true}
			together, err := c.Plan(testContext(t), job)
			if err != nil {
				t.Fatal(err)
			}
			alone := job
			alone.InferEachFileAlone = true
			each, err := c.Plan(testContext(t), alone)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("typed together: %+v; each alone: %+v; corpus %d bytes", together.Requests, each.Requests, corpus)
			if together.TypedTogether != files {
				t.Errorf("%d of %d files typed together", together.TypedTogether, files)
			}
			// Four headers: their lines in one job, a parse per header,
			// the lanes' inference, and a few more (listing, settings'
			// checks, header-only files).
			if n := together.Requests.SparkRequests(); n > 4+12 {
				t.Errorf("typing %d files of 4 headers together took %d Spark requests: %+v", files, n, together.Requests)
			}
			// Each alone: an inference per file at least, so the count
			// counts what the fallback costs.
			if n := each.Requests.SparkRequests(); n < files {
				t.Errorf("typing %d files each alone took %d Spark requests: %+v", files, n, each.Requests)
			}
			if together.Requests.Settings == 0 {
				t.Errorf("no settings request counted: %+v", together.Requests)
			}
		})
	}
}
