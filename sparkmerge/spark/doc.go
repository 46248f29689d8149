// Package spark runs merges on a real Apache Spark over Spark Connect: it
// reads every source's exact schema, asks the planner
// ([github.com/sparkmerge/sparkmerge]) for the unified schema and each
// source's projection, and sends Spark one plan that projects every source
// and combines all rows with UNION ALL, then writes them.
//
// It is the only package, with its internal client extension, that talks
// to Spark; the planner decides, this package translates.
//
// # Use
//
//	c, err := spark.Connect(ctx, "sc://localhost:15002", spark.ConnectOptions{})
//	...
//	res, err := c.Merge(ctx, spark.Job{
//		Sources: []spark.SourceSpec{{Paths: []string{"/landing/tides"}}},
//		Target:  spark.Target{Path: "/lake/tides", Mode: "overwrite"},
//		Verify:  true,
//	})
//
// [Client.Plan] does everything but read rows and write; [Client.Schemas]
// returns each source's schema.
//
// # Sources
//
// A [SourceSpec] is paths (files, directories, globs, on the cluster's
// filesystem), a table, a SQL query or a spark-connect-go DataFrame. A flat
// local directory or a quoted glob becomes
// one source per file ([ExpandLocal]), so that each file's schema counts and
// CSV files with different headers are never read by position; so does a
// partitioned tree (key=value directories) when planned, each file with the
// partition columns of its path, typed as Spark's read of the tree types
// them ([PartitionLayoutError] refuses files outside them). Formats come
// from file extensions unless set. CSV is read with a header, inferred
// types and FAILFAST (a malformed row fails the merge instead of becoming
// nulls); JSON with FAILFAST; Parquet and ORC with mergeSchema.
//
// # Schemas
//
// Every read's schema comes from Spark, except for small local CSV and
// JSON-lines files whose values Spark's inference rules type without
// ambiguity, and local Parquet and ORC files, whose footers say their
// schema: the client infers those itself, with Spark's rules (those of
// Spark 4.0's CSV and JSON schema inference and of its Parquet and ORC
// schema conversions), instead of a Spark job per file or group. Files
// only the server sees are typed so too, from their contents (CSV, JSON)
// or footers (Parquet, ORC) fetched in a few binaryFile jobs.
// [Read.InferredLocally] says which; [Job.SparkInference] turns it off.
//
// # Strategies
//
// [StrategyUnion] reads each source on its own. [StrategyMultipath] reads
// each format group in one load and refuses CSV files whose headers differ
// ([HeaderDriftError]). [StrategyAuto] learns every file's schema, then
// reads together only files whose one read gives exactly what each read
// alone gives (CSV files with one header; Parquet, ORC and JSON files whose
// shared columns agree in spelling and type), so that the result never
// depends on the strategy. Small locally typed CSV and JSON-lines files run
// as positional scans, one per format and options (counted in
// [Result].Scans), whichever strategy planned them. Unions are
// balanced trees, so thousands of inputs stay within Spark Connect's plan
// nesting limit, and always UNION ALL: duplicate rows are kept.
//
// # In a Go pipeline
//
// A merge need not end in a write. [Client.MergeFrame] returns the merged
// rows as a lazy spark-connect-go DataFrame of the caller's session, and
// [Client.MergeView] registers them as a temporary (or global) view.
// Sources may be the caller's DataFrames and SQL queries; to share
// temporary views, open the client on the caller's session:
//
//	// session is a spark-connect-go sql.SparkSession
//	c, err := spark.Connect(ctx, remote, spark.ConnectOptions{Session: session})
//	df, planned, err := c.MergeFrame(ctx, spark.Job{Sources: []spark.SourceSpec{
//		{Name: "today", DataFrame: todays},
//		{Query: "SELECT * FROM events WHERE day < current_date()"},
//	}}, session)
//
// # Errors
//
// Spark's own errors come back as [*SparkError] with their error class and
// SQL state; errors.Is(err, [ErrUnreachable]) tells that the server could
// not be reached. Errors name the source or target and say what to do, in
// this package's terms (options and fields; the CLI rewrites them to its
// flags).
package spark
