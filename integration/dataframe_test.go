//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// sparkmerge inside a Go pipeline: a spark-connect-go session's temporary
// view, DataFrame and SQL query are sources; the merged result is a
// DataFrame of that session, or a view it sees, because the client joins
// the caller's session.
func TestDataFramesInAndOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := upstreamSession(t)
	exec(t, "CREATE OR REPLACE TEMPORARY VIEW pipeline_events AS SELECT * FROM VALUES (1, CAST('x' AS VARCHAR(5)), CAST(1.25 AS DECIMAL(10,4))), (2, 'yy', 2.5) AS t(id, tag, amount)")
	c := clientOnSession(t, s)
	dir := workDir(t)
	files := writeFiles(t, dir, map[string]string{"c.csv": "amount,id,note\n3.5,3,from a file\n"}, "c.csv")
	job := spark.Job{
		Sources: []spark.SourceSpec{
			// A DataFrame over the session's temporary view.
			{Name: "events", DataFrame: frame(t, s, "SELECT id, tag, amount FROM pipeline_events WHERE id = 1")},
			{Query: "SELECT id, amount FROM pipeline_events WHERE id = 2"},
			{Paths: files},
		},
		Policy: sparkmerge.Options{SourceColumn: "_source"},
	}
	out, planned, err := c.MergeFrame(ctx, job, s)
	if err != nil {
		t.Fatal(err)
	}
	// Exact types from the DataFrame (decimal(10,4); varchar read as
	// string), widened with the file's double.
	diff(t, "merged schema", "id int, tag string, amount double, note string, _source string NOT NULL", planned.Plan.Target.String())
	// The caller keeps working on it in its session.
	if err := out.CreateTempView(ctx, "merged_df", true, false); err != nil {
		t.Fatal(err)
	}
	rows := queryRows(t, "SELECT * FROM merged_df ORDER BY id")
	diff(t, "merged rows", [][]any{
		row(int32(1), "x", 1.25, nil, "events"),
		row(int32(2), nil, 2.5, nil, "query: SELECT id, amount FROM pipeline_events WHERE id = 2"),
		row(int32(3), nil, 3.5, "from a file", files[0]),
	}, rows)

	// A view the caller's session queries.
	if _, err := c.MergeView(ctx, job, "merged_events", false); err != nil {
		t.Fatal(err)
	}
	rows = queryRows(t, "SELECT count(*), sum(amount) FROM merged_events")
	diff(t, "the view in the caller's session", [][]any{row(int64(3), 7.25)}, rows)

	// Nothing is written, so a target or Verify is a mistake.
	job.Verify = true
	if _, _, err := c.MergeFrame(ctx, job, s); err == nil || !strings.Contains(err.Error(), "Verify") {
		t.Errorf("MergeFrame with Verify: err = %v", err)
	}
}

// clientOnSession opens a client on the Spark Connect session of the
// spark-connect-go session s, closed when the test ends.
func clientOnSession(t *testing.T, s sql.SparkSession) *spark.Client {
	t.Helper()
	id, err := spark.SessionIDOf(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := spark.Connect(context.Background(), requireSpark(t), spark.ConnectOptions{Session: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.SessionID() != id {
		t.Fatalf("client session %s, want the caller's %s", c.SessionID(), id)
	}
	return c
}
