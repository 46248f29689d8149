//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/spark"
)

// The harness's server interprets every query (sparktest: code
// generation off, to save the CPU it costs), so a merge finds nothing to
// switch there. On a session that compiles, as Spark does by default, a
// merge still switches code generation the way its benchmarks chose
// (settings.go: interpreted projections for a merge of many scans, code
// per operator for one whose every scan is positional), the server
// accepts those session settings, the rows are right under them, and the
// session has its own values back afterwards.
func TestMergeSwitchesCodeGenerationAndRestoresIt(t *testing.T) {
	t.Parallel()
	s := upstreamSession(t)
	const factoryMode, wholeStage = "spark.sql.codegen.factoryMode", "spark.sql.codegen.wholeStage"
	compiled := map[string]string{factoryMode: "FALLBACK", wholeStage: "true"}
	c, err := connectPatiently(t, testContext(t), requireSpark(t), spark.ConnectOptions{Session: s, Conf: compiled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	setting := func(ctx context.Context, key string) (string, error) {
		df, err := s.Sql(ctx, "SET "+key)
		if err != nil {
			return "", err
		}
		rows, err := df.Collect(ctx)
		if err != nil || len(rows) != 1 {
			return "", fmt.Errorf("SET %s: %d rows, %v", key, len(rows), err)
		}
		return fmt.Sprint(rows[0].Values()[1]), nil
	}
	// seen merges job while reading the session's code-generation
	// settings from another client of the session, and returns every
	// value each took during the merge.
	seen := func(job spark.Job) map[string]map[string]bool {
		t.Helper()
		values := map[string]map[string]bool{factoryMode: {}, wholeStage: {}}
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var pollErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				for key := range values {
					v, err := setting(ctx, key)
					if err != nil {
						if ctx.Err() == nil {
							pollErr = err
						}
						return
					}
					values[key][strings.ToUpper(v)] = true
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		_, out := merge(t, c, job)
		stop()
		wg.Wait()
		if pollErr != nil {
			t.Fatal(pollErr)
		}
		if n := len(parquetRows(t, out, []string{"id"}, "id")); n != 40 {
			t.Errorf("%d rows written, want 40", n)
		}
		for key, want := range compiled {
			got, err := setting(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(got, want) {
				t.Errorf("after the merge %s = %s, want the session's %s back", key, got, want)
			}
		}
		return values
	}

	// Forty Parquet files, a row each, read one by one (union): forty
	// scans, at least manyScans (32).
	parquetDir := workDir(t) + "/parquet"
	exec(t, fmt.Sprintf("INSERT OVERWRITE DIRECTORY '%s' USING parquet OPTIONS ('maxRecordsPerFile' '1') SELECT id, concat('v', id) AS v FROM range(40)", parquetDir))
	job := spark.Job{Sources: pathSources(parquetDir), Strategy: spark.StrategyUnion, Verify: true}
	job.Target.Path = workDir(t) + "/many-scans"
	if got := seen(job); !got[factoryMode]["NO_CODEGEN"] {
		t.Errorf("a merge of forty scans left %s at %v throughout, want NO_CODEGEN while it ran", factoryMode, got[factoryMode])
	}

	// Forty CSV files, a column of their own each, in one positional
	// scan (auto): code per operator.
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("f%02d.csv", i)] = fmt.Sprintf("id,c%d\n%d,v%d\n", i, i, i)
	}
	job = spark.Job{Sources: pathSources(localFiles(t, textFiles(files))), Strategy: spark.StrategyAuto, Verify: true}
	job.Target.Path = workDir(t) + "/positional"
	if got := seen(job); !got[wholeStage]["FALSE"] {
		t.Errorf("a merge of one positional scan left %s at %v throughout, want false while it ran", wholeStage, got[wholeStage])
	}
}
