// Package connect is sparkmerge's small extension of the Spark Connect Go
// client (github.com/apache/spark-connect-go). It builds the Spark Connect
// messages the upstream DataFrame API lacks or gets wrong, and runs them
// through the upstream executor on its own gRPC connection.
//
// # Technique
//
// The upstream generated protos are internal to spark-connect-go and cannot
// be imported; vendoring or regenerating them panics at start-up (protobuf
// registry conflict). They are registered globally, though, so this package
// creates instances of the real generated types with
// protoregistry.GlobalTypes.FindMessageByName("spark.connect.Relation") and
// fills them with protoreflect. The executor from client.NewSparkExecutor
// takes those messages (its methods are called via reflect, because their
// parameter type is internal). Unit tests inspect every message built, so an
// upgrade of the client that changes the protos fails them at once.
//
// # What it adds
//
//   - [ParseRemote]: PySpark's connection string with use_ssl, tokens
//     containing "=", lower-cased header keys and session_id; the token never
//     appears in any output or error.
//   - [Dial] verifies the server answers, retries UNAVAILABLE and reports an
//     unreachable server as [ErrUnreachable].
//   - [Frame]: multi-path reads with user schema and options, tables, SQL,
//     server-parsed expressions (casts, typed nulls), UNION ALL by position
//     or by name as a balanced tree that keeps every row.
//   - [Frame.Schema]: exact types (decimal precision, char/varchar, intervals,
//     nested nullability) as [sparkmerge.Schema].
//   - [Frame.Write]: format, mode, path or table, partitionBy, options.
//   - Server errors as [*SparkError] with error class, SQL state and message
//     parameters, and the messages of their causes, which the server keeps
//     for the FetchErrorDetails call (Spark 4 and later; a failed write's
//     cause says which record of which file Spark could not parse);
//     upstream panics become errors.
//
// A [Session] is safe for concurrent use.
package connect
