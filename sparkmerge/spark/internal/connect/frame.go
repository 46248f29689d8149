package connect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Frame is a lazy relation: an immutable value wrapping a Spark Connect
// Relation message. Methods that derive a frame build a new Relation whose
// input is the old one; nothing runs until Schema, Count, Collect, Write or
// CreateTempView. A frame that could not be built carries the
// error, which every execution method returns.
type Frame struct {
	s   *Session
	rel protoreflect.Message
	err error
}

// build runs f to create a frame's relation, turning a panic of the message
// builders into the frame's error.
func (s *Session) build(op string, f func() protoreflect.Message) (fr Frame) {
	fr.s = s
	defer guard(op, &fr.err)
	fr.rel = f()
	return fr
}

// derive builds a frame from f's relation, keeping f's error if it has one.
func (f Frame) derive(op string, b func() protoreflect.Message) Frame {
	if f.err != nil {
		return f
	}
	return f.s.build(op, b)
}

// unary derives a frame whose relation is a new relation of kind (e.g.
// "filter") over f's: set fills in its fields other than the input.
func (f Frame) unary(op, kind string, set func(body protoreflect.Message)) Frame {
	return f.derive(op, func() protoreflect.Message {
		rel, body := relation(kind)
		setMsg(body, "input", f.rel)
		set(body)
		return rel
	})
}

// Err returns the error of a frame that could not be built (nil otherwise).
func (f Frame) Err() error { return f.err }

// Proto returns a copy of the frame's Relation message (an instance of the
// generated spark.connect.Relation), or nil for a frame with an error.
func (f Frame) Proto() proto.Message {
	if f.err != nil || f.rel == nil {
		return nil
	}
	return proto.Clone(f.rel.Interface())
}

// String renders the Relation message as protobuf text, for debugging and
// dry runs. It contains no credentials.
func (f Frame) String() string {
	if f.err != nil {
		return "error: " + f.err.Error()
	}
	if f.rel == nil {
		return "<nil frame>"
	}
	return prototext.MarshalOptions{Multiline: true}.Format(f.rel.Interface())
}

// ReadSpec describes a DataFrameReader load.
type ReadSpec struct {
	// Format is the data source name: csv, json, parquet, orc, text, avro,
	// delta... Empty lets the server use spark.sql.sources.default (parquet).
	Format string
	// Paths are files, directories or globs, read as one relation.
	Paths []string
	// Schema is an optional user schema in DDL ("a INT, b STRING").
	Schema string
	// Options are reader options (header, inferSchema, multiLine, mode...).
	Options map[string]string
}

// Read returns a frame reading spec (Read.DataSource with every path). The
// options are copied: changing spec.Options afterwards does not change the frame.
func (s *Session) Read(spec ReadSpec) Frame {
	return s.build("read", func() protoreflect.Message {
		if len(spec.Paths) == 0 {
			panic(buildError{"read: no paths"})
		}
		rel, read := relation("read")
		ds := mut(read, "data_source")
		if spec.Format != "" {
			setString(ds, "format", spec.Format)
		}
		if spec.Schema != "" {
			setString(ds, "schema", spec.Schema)
		}
		setStringMap(ds, "options", spec.Options)
		appendStrings(ds, "paths", spec.Paths...)
		return rel
	})
}

// Table returns a frame reading the table or view name (a multi-part
// identifier as Spark parses it, e.g. "db.events" or "`my db`.`t`"), with
// optional read options (copied).
func (s *Session) Table(name string, options map[string]string) Frame {
	s.NamesTables()
	return s.build("read table", func() protoreflect.Message {
		rel, read := relation("read")
		nt := mut(read, "named_table")
		setString(nt, "unparsed_identifier", name)
		setStringMap(nt, "options", options)
		return rel
	})
}

// FromRelation returns a frame over a relation built elsewhere (a
// spark-connect-go DataFrame's plan, see [RelationOf]); the relation is
// copied.
func (s *Session) FromRelation(rel proto.Message) Frame {
	return s.build("relation", func() protoreflect.Message {
		if rel == nil || rel.ProtoReflect().Descriptor().FullName() != "spark.connect.Relation" {
			panic(buildError{"not a spark.connect.Relation"})
		}
		return proto.Clone(rel).ProtoReflect()
	})
}

// SQL returns a frame for a SQL query (Relation.sql), run lazily. Use
// [Session.ExecSQL] for statements run for their effect (DDL).
func (s *Session) SQL(query string) Frame {
	return s.build("sql", func() protoreflect.Message {
		rel, sql := relation("sql")
		setString(sql, "query", query)
		return rel
	})
}

// SelectExpr returns a projection of SQL expressions parsed by the server
// (Project with expression_string), e.g. "`a b`", "CAST(x AS bigint) AS `x`",
// "CAST(NULL AS decimal(12,4)) AS `amount`".
func (f Frame) SelectExpr(exprs ...string) Frame {
	return f.unary("select", "project", func(p protoreflect.Message) {
		if len(exprs) == 0 {
			panic(buildError{"select: no expressions"})
		}
		for _, e := range exprs {
			appendMsg(p, "expressions", exprString(e))
		}
	})
}

// Filter keeps the rows for which the SQL condition is true.
func (f Frame) Filter(condition string) Frame {
	return f.unary("filter", "filter", func(fl protoreflect.Message) {
		setMsg(fl, "condition", exprString(condition))
	})
}

// ParseCSV returns the frame Spark's CSV reader makes of f's one string
// column, each row one CSV record, with the reader options (copied) and
// no schema given: Spark infers it over every row, as
// DataFrameReader.csv(Dataset[String]) does (Relation.parse).
func (f Frame) ParseCSV(options map[string]string) Frame {
	return f.unary("parse csv", "parse", func(p protoreflect.Message) {
		setEnum(p, "format", "PARSE_FORMAT_CSV")
		setStringMap(p, "options", options)
	})
}

// ParseJSON parses the frame's single string column as JSON records with
// the reader's options (the Parse relation: DataFrameReader.json of a
// Dataset[String]); without a schema in options, Spark infers one, as
// reading JSON files does.
func (f Frame) ParseJSON(options map[string]string) Frame {
	return f.unary("parse json", "parse", func(p protoreflect.Message) {
		setEnum(p, "format", "PARSE_FORMAT_JSON")
		setStringMap(p, "options", options)
	})
}

// Distinct keeps one of each set of rows equal in every column
// (Deduplicate with all columns as keys), as UNION DISTINCT does.
func (f Frame) Distinct() Frame {
	return f.unary("distinct", "deduplicate", func(d protoreflect.Message) {
		setBool(d, "all_columns_as_keys", true)
	})
}

// Limit keeps at most n rows.
func (f Frame) Limit(n int) Frame {
	return f.unary("limit", "limit", func(l protoreflect.Message) {
		if n < 0 || n > 1<<31-1 {
			panic(buildError{fmt.Sprintf("limit: %d out of range", n)})
		}
		setInt32(l, "limit", int32(n))
	})
}

// Coalesce returns the frame in at most n partitions without a shuffle
// (Repartition with shuffle=false), so that a write makes at most n files.
func (f Frame) Coalesce(n int) Frame {
	return f.unary("coalesce", "repartition", func(r protoreflect.Message) {
		if n < 1 || n > 1<<31-1 {
			panic(buildError{fmt.Sprintf("coalesce: %d partitions out of range", n)})
		}
		setInt32(r, "num_partitions", int32(n))
		setBool(r, "shuffle", false)
	})
}

// Aggregate groups by the SQL expressions groupBy (none: one global group)
// and computes the SQL aggregate expressions aggs, e.g.
// Aggregate([]string{"_source"}, "count(1) AS n").
func (f Frame) Aggregate(groupBy []string, aggs ...string) Frame {
	return f.unary("aggregate", "aggregate", func(a protoreflect.Message) {
		if len(aggs) == 0 {
			panic(buildError{"aggregate: no aggregate expressions"})
		}
		setEnum(a, "group_type", "GROUP_TYPE_GROUPBY")
		for _, g := range groupBy {
			appendMsg(a, "grouping_expressions", exprString(g))
		}
		for _, e := range aggs {
			appendMsg(a, "aggregate_expressions", exprString(e))
		}
	})
}

// UnionAll returns the positional UNION ALL of frames (every row kept,
// columns matched by position; the caller aligns them first). It is built
// as a balanced binary tree of SetOperation{UNION, is_all, by_name=false},
// about log2(N) deep, so thousands of inputs stay under the server's
// protobuf nesting limit. One frame is returned as is.
func UnionAll(frames []Frame) Frame {
	const op = "union all"
	if len(frames) == 0 {
		return Frame{err: fmt.Errorf("%s: no frames", op)}
	}
	s := frames[0].s
	for i, f := range frames {
		if f.err != nil {
			return Frame{s: s, err: fmt.Errorf("%s: input %d: %w", op, i, f.err)}
		}
		if f.s != s {
			return Frame{s: s, err: fmt.Errorf("%s: input %d belongs to another session", op, i)}
		}
		if f.rel == nil {
			return Frame{s: s, err: fmt.Errorf("%s: input %d is the zero Frame", op, i)}
		}
	}
	var tree func(fs []Frame) protoreflect.Message
	tree = func(fs []Frame) protoreflect.Message {
		if len(fs) == 1 {
			return fs[0].rel
		}
		mid := len(fs) / 2
		rel, so := relation("set_op")
		setMsg(so, "left_input", tree(fs[:mid]))
		setMsg(so, "right_input", tree(fs[mid:]))
		setEnum(so, "set_op_type", "SET_OP_TYPE_UNION")
		setBool(so, "is_all", true)
		setBool(so, "by_name", false)
		return rel
	}
	return s.build(op, func() protoreflect.Message { return tree(frames) })
}

// Schema returns the frame's exact schema (AnalyzePlan), with decimal
// precision and scale, char/varchar lengths, interval fields, nested types
// and nullability as the server reports them.
func (f Frame) Schema(ctx context.Context) (schema sparkmerge.Schema, err error) {
	if f.err != nil {
		return schema, f.err
	}
	defer guard("schema", &err)
	dt, err := f.s.analyzeSchema(ctx, rootPlan(f.rel))
	if err != nil {
		return schema, fmt.Errorf("schema: %w", err)
	}
	schema, err = SchemaFromProto(dt.Interface())
	if err != nil {
		return schema, fmt.Errorf("schema: %w", err)
	}
	return schema, nil
}

// SchemaAndFieldMetadata is the frame's exact schema (as Schema gives
// it) and the metadata of its top-level columns that have some (see
// FieldMetadataFromProto), by name, from one analysis.
func (f Frame) SchemaAndFieldMetadata(ctx context.Context) (schema sparkmerge.Schema, metadata map[string]string, err error) {
	if f.err != nil {
		return schema, nil, f.err
	}
	defer guard("schema", &err)
	dt, err := f.s.analyzeSchema(ctx, rootPlan(f.rel))
	if err != nil {
		return schema, nil, fmt.Errorf("schema: %w", err)
	}
	if schema, err = SchemaFromProto(dt.Interface()); err != nil {
		return schema, nil, fmt.Errorf("schema: %w", err)
	}
	if metadata, err = FieldMetadataFromProto(dt.Interface()); err != nil {
		return schema, nil, fmt.Errorf("schema: %w", err)
	}
	return schema, metadata, nil
}

// InputFiles returns the files the frame reads as Spark's file index
// lists them (AnalyzePlan's input_files, Dataset.inputFiles), as URIs.
// Unlike a scan of the files, the listing keeps files of 0 bytes, which
// Spark's scans skip. It runs no job.
func (f Frame) InputFiles(ctx context.Context) (files []string, err error) {
	if f.err != nil {
		return nil, f.err
	}
	defer guard("input files", &err)
	files, err = f.s.analyzeInputFiles(ctx, rootPlan(f.rel))
	if err != nil {
		return nil, fmt.Errorf("input files: %w", err)
	}
	return files, nil
}

// Explain returns the text of the frame's physical plan (an analysis: it
// runs nothing).
func (f Frame) Explain(ctx context.Context) (text string, err error) {
	if f.err != nil {
		return "", f.err
	}
	defer guard("explain", &err)
	text, err = f.s.analyzeExplain(ctx, rootPlan(f.rel))
	if err != nil {
		return "", fmt.Errorf("explain: %w", err)
	}
	return text, nil
}

// Count returns the number of rows (an aggregate run on the server).
func (f Frame) Count(ctx context.Context) (int64, error) {
	rows, err := f.Aggregate(nil, "count(1) AS `count`").Collect(ctx)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
		return 0, fmt.Errorf("count: the server returned %d rows", len(rows.Values))
	}
	n, ok := rows.Values[0][0].(int64)
	if !ok {
		return 0, fmt.Errorf("count: the server returned a %T", rows.Values[0][0])
	}
	return n, nil
}

// Collect runs the frame and returns all its rows. See [Rows] for the Go
// types of the values.
func (f Frame) Collect(ctx context.Context) (rows Rows, err error) {
	if f.err != nil {
		return rows, f.err
	}
	defer guard("collect", &err)
	tbl, schema, err := f.s.executeQuery(ctx, rootPlan(f.rel))
	if err != nil {
		return rows, fmt.Errorf("collect: %w", err)
	}
	if tbl == nil {
		if schema != nil {
			sch, err := SchemaFromProto(schema.Interface())
			if err != nil {
				return rows, fmt.Errorf("collect: %w", err)
			}
			for _, fl := range sch.Fields {
				rows.Columns = append(rows.Columns, fl.Name)
			}
		}
		return rows, nil
	}
	defer tbl.Release()
	rows, err = rowsFromTable(tbl)
	if err != nil {
		return rows, fmt.Errorf("collect: %w", err)
	}
	return rows, nil
}

// WriteSpec describes a DataFrameWriter save.
type WriteSpec struct {
	// Format is the data source name (parquet, csv, json, orc, delta...).
	// Empty lets the server use spark.sql.sources.default (parquet).
	Format string
	// Mode is errorifexists (also "error" or ""), overwrite, append or
	// ignore, case-insensitive.
	Mode string
	// Path is the output path; exactly one of Path and Table is set.
	Path string
	// Table is the target table. By default it is written like
	// DataFrameWriter.saveAsTable: created when missing; with mode append,
	// columns are matched by name to the existing table.
	Table string
	// InsertInto writes Table like DataFrameWriter.insertInto instead:
	// the table must exist, columns are matched by position, mode overwrite
	// replaces its data (partitions per spark.sql.sources.partitionOverwriteMode).
	InsertInto bool
	// PartitionBy are the partition columns.
	PartitionBy []string
	// Options are writer options (compression, header...), copied.
	Options map[string]string
}

// saveModes maps WriteSpec.Mode to WriteOperation.SaveMode value names.
var saveModes = map[string]string{
	"":              "SAVE_MODE_ERROR_IF_EXISTS",
	"error":         "SAVE_MODE_ERROR_IF_EXISTS",
	"errorifexists": "SAVE_MODE_ERROR_IF_EXISTS",
	"overwrite":     "SAVE_MODE_OVERWRITE",
	"append":        "SAVE_MODE_APPEND",
	"ignore":        "SAVE_MODE_IGNORE",
}

// writeCommand builds the WriteOperation command for spec.
func (f Frame) writeCommand(spec WriteSpec) (plan proto.Message, err error) {
	if f.err != nil {
		return nil, f.err
	}
	defer guard("write", &err)
	mode, ok := saveModes[strings.ToLower(spec.Mode)]
	if !ok {
		return nil, fmt.Errorf("write: unknown mode %q (want errorifexists, overwrite, append or ignore)", spec.Mode)
	}
	// Spark's noop source alone writes nowhere.
	noop := strings.EqualFold(spec.Format, "noop") && spec.Path == "" && spec.Table == ""
	if !noop && (spec.Path == "") == (spec.Table == "") {
		return nil, errors.New("write: set exactly one of Path and Table")
	}
	if spec.InsertInto && spec.Table == "" {
		return nil, errors.New("write: InsertInto needs a Table")
	}
	w := newMsg("WriteOperation")
	setMsg(w, "input", f.rel)
	if spec.Format != "" {
		setString(w, "source", spec.Format)
	}
	switch {
	case noop:
	case spec.Path != "":
		setString(w, "path", spec.Path)
	default:
		t := mut(w, "table")
		setString(t, "table_name", spec.Table)
		method := "TABLE_SAVE_METHOD_SAVE_AS_TABLE"
		if spec.InsertInto {
			method = "TABLE_SAVE_METHOD_INSERT_INTO"
		}
		setEnum(t, "save_method", method)
	}
	setEnum(w, "mode", mode)
	appendStrings(w, "partitioning_columns", spec.PartitionBy...)
	setStringMap(w, "options", spec.Options)
	return commandPlan("write_operation", w), nil
}

// Write runs the frame and writes its rows per spec (a WriteOperation command).
func (f Frame) Write(ctx context.Context, spec WriteSpec) error {
	plan, err := f.writeCommand(spec)
	if err != nil {
		return err
	}
	if err := f.s.executeCommand(ctx, plan); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// CreateTempView registers the frame as the temporary view name (global:
// in global_temp, seen by every session of the server), replacing an
// existing one.
func (f Frame) CreateTempView(ctx context.Context, name string, global bool) (err error) {
	if f.err != nil {
		return f.err
	}
	plan, err := func() (p proto.Message, err error) {
		defer guard("create temp view", &err)
		v := newMsg("CreateDataFrameViewCommand")
		setMsg(v, "input", f.rel)
		setString(v, "name", name)
		setBool(v, "is_global", global)
		setBool(v, "replace", true)
		return commandPlan("create_dataframe_view", v), nil
	}()
	if err != nil {
		return err
	}
	if err := f.s.executeCommand(ctx, plan); err != nil {
		return fmt.Errorf("create temp view %q: %w", name, err)
	}
	return nil
}

// ExecSQL runs a SQL statement for its effect (a SqlCommand), e.g.
// "ALTER TABLE t ADD COLUMNS (c int)" or "CREATE TABLE ...".
func (s *Session) ExecSQL(ctx context.Context, stmt string) (err error) {
	s.NamesTables() // a statement names its tables (DDL, INSERT)
	plan, err := func() (p proto.Message, err error) {
		defer guard("exec sql", &err)
		return sqlCommand(stmt), nil
	}()
	if err != nil {
		return err
	}
	if err := s.executeCommand(ctx, plan); err != nil {
		return fmt.Errorf("exec sql: %w", err)
	}
	return nil
}

// sqlCommand builds Plan{command{sql_command{input: Relation{sql{query}}}}}
// the way Spark 4 clients send statements.
func sqlCommand(stmt string) proto.Message {
	c := newMsg("SqlCommand")
	rel, sql := relation("sql")
	setString(sql, "query", stmt)
	setMsg(c, "input", rel)
	// Spark 3.5 servers (Databricks Runtime 14.3-16.4) read only the
	// deprecated sql field; 4.0 reads input when it is set.
	setString(c, "sql", stmt)
	return commandPlan("sql_command", c)
}

// ShowString renders the frame's first n rows as Spark's own show() does
// (the ShowString relation: Spark formats every value, nested ones, maps
// and doubles as PySpark prints them), cutting values longer than
// truncate characters (0: never), and returns the text.
func (f Frame) ShowString(ctx context.Context, n, truncate int) (string, error) {
	shown := f.unary("show", "show_string", func(s protoreflect.Message) {
		if n < 0 || n > 1<<31-1 || truncate < 0 || truncate > 1<<31-1 {
			panic(buildError{fmt.Sprintf("show: %d rows, truncate %d out of range", n, truncate)})
		}
		setInt32(s, "num_rows", int32(n))
		setInt32(s, "truncate", int32(truncate))
	})
	rows, err := shown.Collect(ctx)
	if err != nil {
		return "", fmt.Errorf("show: %w", err)
	}
	if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
		return "", fmt.Errorf("show: Spark answered %d rows of %d columns, want one value", len(rows.Values), len(rows.Columns))
	}
	text, ok := rows.Values[0][0].(string)
	if !ok {
		return "", fmt.Errorf("show: Spark answered a %T, want a string", rows.Values[0][0])
	}
	return text, nil
}

// WriteV2Spec describes a DataFrameWriterV2 write (df.writeTo(table)),
// which goes through the table's catalog: a create is one statement of
// the catalog (CREATE TABLE AS SELECT, atomic where the catalog stages
// it, as Delta's and Iceberg's do), with the table's properties and
// partitioning.
type WriteV2Spec struct {
	// Table is the table's name, as in SQL.
	Table string
	// Mode is "create", "append" or "overwrite" (every row of the table
	// replaced, in one commit of its format: OverwriteByExpression with
	// the condition true).
	Mode string
	// Provider is the table's format for a create (USING); empty: the
	// catalog's default.
	Provider string
	// PartitionBy are the partition columns of a created table.
	PartitionBy []string
	// Properties are the created table's properties (TBLPROPERTIES).
	Properties map[string]string
	// Options are write options, copied.
	Options map[string]string
}

// v2Modes maps WriteV2Spec.Mode to WriteOperationV2.Mode value names.
var v2Modes = map[string]string{
	"create":    "MODE_CREATE",
	"append":    "MODE_APPEND",
	"overwrite": "MODE_OVERWRITE",
}

// writeV2Command builds the WriteOperationV2 command for spec.
func (f Frame) writeV2Command(spec WriteV2Spec) (plan proto.Message, err error) {
	if f.err != nil {
		return nil, f.err
	}
	defer guard("write", &err)
	mode, ok := v2Modes[strings.ToLower(spec.Mode)]
	if !ok {
		return nil, fmt.Errorf("write: unknown table write mode %q (want create, append or overwrite)", spec.Mode)
	}
	if spec.Table == "" {
		return nil, errors.New("write: a table write needs a Table")
	}
	w := newMsg("WriteOperationV2")
	setMsg(w, "input", f.rel)
	setString(w, "table_name", spec.Table)
	if spec.Provider != "" {
		setString(w, "provider", spec.Provider)
	}
	for _, col := range spec.PartitionBy {
		e := newMsg("Expression")
		setString(mut(e, "unresolved_attribute"), "unparsed_identifier", "`"+strings.ReplaceAll(col, "`", "``")+"`")
		appendMsg(w, "partitioning_columns", e)
	}
	setStringMap(w, "options", spec.Options)
	setStringMap(w, "table_properties", spec.Properties)
	setEnum(w, "mode", mode)
	if mode == "MODE_OVERWRITE" {
		setMsg(w, "overwrite_condition", exprString("true"))
	}
	return commandPlan("write_operation_v2", w), nil
}

// WriteV2 runs the frame and writes its rows per spec (a WriteOperationV2
// command).
func (f Frame) WriteV2(ctx context.Context, spec WriteV2Spec) error {
	plan, err := f.writeV2Command(spec)
	if err != nil {
		return err
	}
	if err := f.s.executeCommand(ctx, plan); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
