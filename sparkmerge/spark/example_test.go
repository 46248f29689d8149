package spark_test

import (
	"context"
	"fmt"
	"log"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/apache/spark-connect-go/spark/sql/functions"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Merging files whose schemas drift into one Parquet dataset, verified.
// (These examples need a Spark Connect server: they compile, and the
// integration tests run the same calls.)
func ExampleClient_Merge() {
	ctx := context.Background()
	c, err := spark.Connect(ctx, "", spark.ConnectOptions{}) // SPARK_REMOTE, else sc://localhost:15002
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Merge(ctx, spark.Job{
		Sources: []spark.SourceSpec{{Paths: []string{"/landing/tides"}}},
		Policy:  sparkmerge.Options{SourceColumn: "_source"},
		Target:  spark.Target{Path: "/lake/tides", Mode: "overwrite"},
		Verify:  true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.RowsWritten, res.Verified)
}

// A SQL query and a DataFrame of the caller's session are sources like
// files; the client joins the session so that its temporary views resolve.
func ExampleSourceSpec_queryAndDataFrame() {
	ctx := context.Background()
	session, err := sql.NewSessionBuilder().Remote("sc://localhost:15002").Build(ctx)
	if err != nil {
		log.Fatal(err)
	}
	today, err := session.Sql(ctx, "SELECT * FROM staged_events") // a temporary view
	if err != nil {
		log.Fatal(err)
	}
	c, err := spark.Connect(ctx, "sc://localhost:15002", spark.ConnectOptions{Session: session})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Merge(ctx, spark.Job{
		Sources: []spark.SourceSpec{
			{Name: "today", DataFrame: today},
			{Query: "SELECT * FROM lake.events WHERE day = date'2024-01-01'"},
		},
		Target: spark.Target{Table: "lake.events_fixed"},
	})
	if err != nil {
		log.Fatal(err)
	}
}

// The merged rows as a lazy DataFrame of the caller's session, aggregated
// there.
func ExampleClient_MergeFrame() {
	ctx := context.Background()
	session, err := sql.NewSessionBuilder().Remote("sc://localhost:15002").Build(ctx)
	if err != nil {
		log.Fatal(err)
	}
	c, err := spark.Connect(ctx, "sc://localhost:15002", spark.ConnectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	merged, planned, err := c.MergeFrame(ctx, spark.Job{
		Sources: []spark.SourceSpec{{Paths: []string{"/landing/orders"}}},
	}, session)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(planned.Plan.Target)
	perChannel, err := merged.GroupBy(functions.Col("channel")).Count(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := perChannel.Show(ctx, 20, false); err != nil {
		log.Fatal(err)
	}
}

// One Spark Connect session for sparkmerge and spark-connect-go: a view
// sparkmerge registers is one the caller's session queries.
func ExampleConnectOptions_session() {
	ctx := context.Background()
	session, err := sql.NewSessionBuilder().Remote("sc://localhost:15002").Build(ctx)
	if err != nil {
		log.Fatal(err)
	}
	c, err := spark.Connect(ctx, "sc://localhost:15002", spark.ConnectOptions{Session: session})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.MergeView(ctx, spark.Job{Sources: []spark.SourceSpec{{Paths: []string{"/landing/orders"}}}}, "orders", false); err != nil {
		log.Fatal(err)
	}
	counts, err := session.Sql(ctx, "SELECT count(*) FROM orders")
	if err != nil {
		log.Fatal(err)
	}
	if err := counts.Show(ctx, 1, false); err != nil {
		log.Fatal(err)
	}
}
