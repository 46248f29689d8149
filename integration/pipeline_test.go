//go:build integration

package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/apache/spark-connect-go/spark/sql/functions"
	"github.com/apache/spark-connect-go/spark/sql/types"
	"github.com/apache/spark-connect-go/spark/sql/utils"
	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge/spark"
)

// docs/library.md's Go program, as a test: DataFrames built with
// spark-connect-go (a filtered table, CreateDataFrame, a SQL query with a
// decimal(12,4) column), merged with a directory of CSV files whose headers
// drift, then aggregated and joined in the caller's own session. Every row
// and type is checked; a row that appears twice stays twice (UNION ALL).
func TestGoPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	session := upstreamSession(t)
	table := "pipeline_orders_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	exec(t, "CREATE TABLE "+table+" USING parquet AS SELECT * FROM VALUES (1, 'web'), (2, 'web'), (9, 'archived') AS t(id, channel)")
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	landing := workDir(t)
	writeFiles(t, landing, map[string]string{
		"mon.csv": "id,channel,amount\n4,shop,12.5\n5,shop,7\n",
		"tue.csv": "amount,ID,channel,coupon\n3.25,6,phone,SPRING\n3.25,6,phone,SPRING\n", // drifted, and a duplicate row
	}, "mon.csv", "tue.csv")

	must := func(df sql.DataFrame, err error) sql.DataFrame {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return df
	}
	tableDF := must(session.Table(table))
	recent := must(tableDF.FilterByString(ctx, "id < 5")) // a filtered table
	refunds := must(session.CreateDataFrame(ctx, [][]any{{7, "web", -20.0}},
		types.StructOf(types.NewStructField("id", types.LONG), types.NewStructField("channel", types.STRING), types.NewStructField("amount", types.DOUBLE))))
	priced := must(session.Sql(ctx, "SELECT 1 AS id, CAST(9.5 AS DECIMAL(12,4)) AS amount UNION ALL SELECT 2, 20")) // decimal(12,4)

	c := clientOnSession(t, session)
	merged, planned, err := c.MergeFrame(ctx, spark.Job{Sources: []spark.SourceSpec{
		{Name: "recent", DataFrame: recent},
		{Name: "refunds", DataFrame: refunds},
		{Name: "priced", DataFrame: priced},
		{Paths: []string{landing}},
	}}, session)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "merged schema", "id bigint, channel string, amount double, coupon string", planned.Plan.Target.String())

	// Aggregate in the caller's session.
	perChannel := must(must(merged.GroupBy(functions.Col("channel")).Count(ctx)).Sort(ctx, functions.Col("channel").Asc()))
	diff(t, "rows per channel", [][]any{
		row(nil, int64(2)), row("phone", int64(2)), row("shop", int64(2)), row("web", int64(3)),
	}, collectValues(t, perChannel))
	// Join it with the caller's table.
	orderIDs := must(session.Sql(ctx, "SELECT id AS order_id FROM "+table))
	joined := must(merged.Join(ctx, orderIDs, functions.Col("id").Eq(functions.Col("order_id")), utils.JoinTypeInner))
	n, err := joined.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 { // ids 1 and 2: from the filtered table, and priced
		t.Errorf("joined rows = %d, want 4", n)
	}
	all := must(merged.Sort(ctx, functions.Col("id").Asc(), functions.Col("amount").Asc()))
	diff(t, "merged rows", [][]any{
		row(int64(1), "web", nil, nil), row(int64(1), nil, 9.5, nil),
		row(int64(2), "web", nil, nil), row(int64(2), nil, 20.0, nil),
		row(int64(4), "shop", 12.5, nil), row(int64(5), "shop", 7.0, nil),
		row(int64(6), "phone", 3.25, "SPRING"), row(int64(6), "phone", 3.25, "SPRING"),
		row(int64(7), "web", -20.0, nil),
	}, collectValues(t, all))
}
