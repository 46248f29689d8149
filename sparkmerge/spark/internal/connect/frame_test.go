package connect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

// fromText parses protobuf text into a new spark.connect.<name> message.
func fromText(t *testing.T, name, text string) proto.Message {
	t.Helper()
	m := newMsg(name).Interface()
	if err := prototext.Unmarshal([]byte(text), m); err != nil {
		t.Fatalf("parse %s text: %v", name, err)
	}
	return m
}

// checkProto compares got with the message in text.
func checkProto(t *testing.T, name string, got proto.Message, text string) {
	t.Helper()
	if got == nil {
		t.Fatalf("got no %s message", name)
	}
	if got.ProtoReflect().Descriptor().FullName() != protoreflect.FullName("spark.connect."+name) {
		t.Fatalf("got a %s, want spark.connect.%s", got.ProtoReflect().Descriptor().FullName(), name)
	}
	want := fromText(t, name, text)
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// testSession is a session that is never dialed: frames can be built and
// inspected, execution fails.
var testSession = &Session{}

func TestReadDataSource(t *testing.T) {
	opts := map[string]string{"header": "true", "inferSchema": "false", "sep": ";"}
	paths := []string{"/data/a.csv", "file:/data/b.csv", "s3a://bucket/c/*.csv"}
	f := testSession.Read(ReadSpec{Format: "csv", Paths: paths, Schema: "id INT, `a b` STRING", Options: opts})
	// The frame owns copies: changing the inputs later does not change it.
	opts["header"] = "false"
	opts["mode"] = "PERMISSIVE"
	paths[0] = "/changed"
	checkProto(t, "Relation", f.Proto(), `
		read { data_source {
			format: "csv"
			schema: "id INT, `+"`a b`"+` STRING"
			options { key: "header" value: "true" }
			options { key: "inferSchema" value: "false" }
			options { key: "sep" value: ";" }
			paths: "/data/a.csv" paths: "file:/data/b.csv" paths: "s3a://bucket/c/*.csv"
		} }`)
}

func TestReadWithoutFormatOrSchema(t *testing.T) {
	// format and schema are optional fields: they must be absent, not "".
	f := testSession.Read(ReadSpec{Paths: []string{"/p"}})
	checkProto(t, "Relation", f.Proto(), `read { data_source { paths: "/p" } }`)
	ds := f.Proto().ProtoReflect().Get(fd(newMsg("Relation"), "read")).Message()
	ds = ds.Get(fd(ds, "data_source")).Message()
	for _, name := range []string{"format", "schema"} {
		if ds.Has(fd(ds, name)) {
			t.Errorf("data_source.%s is set, want it absent", name)
		}
	}
}

func TestReadNoPaths(t *testing.T) {
	f := testSession.Read(ReadSpec{Format: "csv"})
	if f.Err() == nil || f.Proto() != nil {
		t.Fatalf("Read without paths: Err() = %v, want an error", f.Err())
	}
	if _, err := f.Schema(context.Background()); !errors.Is(err, f.Err()) {
		t.Errorf("Schema of a failed frame = %v, want the frame's error", err)
	}
}

func TestTable(t *testing.T) {
	opts := map[string]string{"versionAsOf": "3"}
	f := testSession.Table("db.`my table`", opts)
	opts["versionAsOf"] = "4"
	checkProto(t, "Relation", f.Proto(), `
		read { named_table {
			unparsed_identifier: "db.`+"`my table`"+`"
			options { key: "versionAsOf" value: "3" }
		} }`)
}

func TestSelectFilterLimitAggregate(t *testing.T) {
	base := testSession.SQL("SELECT 1 AS a")
	f := base.SelectExpr("`a`", "CAST(NULL AS decimal(12,4)) AS `amount`").Filter("a > 0").Limit(5)
	checkProto(t, "Relation", f.Proto(), `
		limit {
			limit: 5
			input { filter {
				condition { expression_string { expression: "a > 0" } }
				input { project {
					expressions { expression_string { expression: "`+"`a`"+`" } }
					expressions { expression_string { expression: "CAST(NULL AS decimal(12,4)) AS `+"`amount`"+`" } }
					input { sql { query: "SELECT 1 AS a" } }
				} }
			} }
		}`)
	// Deriving does not change the base frame.
	checkProto(t, "Relation", base.Proto(), `sql { query: "SELECT 1 AS a" }`)

	g := base.Aggregate([]string{"_source"}, "count(1) AS n")
	checkProto(t, "Relation", g.Proto(), `
		aggregate {
			input { sql { query: "SELECT 1 AS a" } }
			group_type: GROUP_TYPE_GROUPBY
			grouping_expressions { expression_string { expression: "_source" } }
			aggregate_expressions { expression_string { expression: "count(1) AS n" } }
		}`)

	checkProto(t, "Relation", base.Coalesce(3).Proto(), `
		repartition {
			input { sql { query: "SELECT 1 AS a" } }
			num_partitions: 3
			shuffle: false
		}`)

	for name, bad := range map[string]Frame{
		"zero partitions": base.Coalesce(0),
		"select nothing":  base.SelectExpr(),
		"negative limit":  base.Limit(-1),
		"huge limit":      base.Limit(math.MaxInt32 + 1),
		"no aggregates":   base.Aggregate(nil),
	} {
		if bad.Err() == nil {
			t.Errorf("%s: Err() = nil, want an error", name)
		}
	}
	// An error propagates through derived frames.
	if err := base.Limit(-1).SelectExpr("a").Err(); err == nil {
		t.Errorf("frame derived from a failed frame has no error")
	}
}

// unionShape walks a union tree: its leaves (the sql queries, in order),
// its depth in set operations, and checks each SetOperation's flags.
func unionShape(t *testing.T, rel protoreflect.Message) (leaves []string, depth int) {
	t.Helper()
	if so := getMsg(rel, "set_op"); so != nil {
		want := fromText(t, "SetOperation", "set_op_type: SET_OP_TYPE_UNION is_all: true by_name: false")
		flags := proto.Clone(so.Interface())
		flags.ProtoReflect().Clear(fd(so, "left_input"))
		flags.ProtoReflect().Clear(fd(so, "right_input"))
		if diff := cmp.Diff(want, flags, protocmp.Transform()); diff != "" {
			t.Fatalf("SetOperation flags (-want +got):\n%s", diff)
		}
		l, dl := unionShape(t, getMsg(so, "left_input"))
		r, dr := unionShape(t, getMsg(so, "right_input"))
		return append(l, r...), 1 + max(dl, dr)
	}
	sql := getMsg(rel, "sql")
	if sql == nil {
		t.Fatalf("leaf is not a sql relation: %v", rel)
	}
	return []string{sql.Get(fd(sql, "query")).String()}, 0
}

func TestUnionBalancedTree(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 600, 2000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			var frames []Frame
			var want []string
			for i := 0; i < n; i++ {
				q := fmt.Sprintf("SELECT %d AS i", i)
				frames = append(frames, testSession.SQL(q))
				want = append(want, q)
			}
			u := UnionAll(frames)
			if u.Err() != nil {
				t.Fatal(u.Err())
			}
			leaves, depth := unionShape(t, u.Proto().ProtoReflect())
			if diff := cmp.Diff(want, leaves); diff != "" {
				t.Errorf("leaves (-want +got):\n%s", diff)
			}
			maxDepth := int(math.Ceil(math.Log2(float64(n))))
			if depth > maxDepth {
				t.Errorf("depth %d, want <= %d", depth, maxDepth)
			}
		})
	}
}

func TestUnionErrors(t *testing.T) {
	other := &Session{}
	good := testSession.SQL("SELECT 1")
	for name, frames := range map[string][]Frame{
		"none":          nil,
		"zero frame":    {good, {}},
		"failed input":  {good, good.Limit(-1)},
		"other session": {good, other.SQL("SELECT 1")},
	} {
		if err := UnionAll(frames).Err(); err == nil {
			t.Errorf("%s: UnionAll error = nil", name)
		}
	}
}

func TestWriteV2Command(t *testing.T) {
	src := testSession.SQL("SELECT 1 AS a, 'x' AS p")
	plan, err := src.writeV2Command(WriteV2Spec{
		Table: "iceberg.db.t", Mode: "create", Provider: "iceberg", PartitionBy: []string{"p`q"},
		Properties: map[string]string{"format-version": "2"}, Options: map[string]string{"snapshot-property.k": "v"},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkProto(t, "Plan", plan, `command { write_operation_v2 {
		input { sql { query: "SELECT 1 AS a, 'x' AS p" } }
		table_name: "iceberg.db.t"
		provider: "iceberg"
		partitioning_columns { unresolved_attribute { unparsed_identifier: "`+"`p``q`"+`" } }
		options { key: "snapshot-property.k" value: "v" }
		table_properties { key: "format-version" value: "2" }
		mode: MODE_CREATE
	} }`)
	plan, err = src.writeV2Command(WriteV2Spec{Table: "db.t", Mode: "Append"})
	if err != nil {
		t.Fatal(err)
	}
	checkProto(t, "Plan", plan, `command { write_operation_v2 {
		input { sql { query: "SELECT 1 AS a, 'x' AS p" } }
		table_name: "db.t"
		mode: MODE_APPEND
	} }`)
	plan, err = src.writeV2Command(WriteV2Spec{Table: "db.t", Mode: "overwrite"})
	if err != nil {
		t.Fatal(err)
	}
	checkProto(t, "Plan", plan, `command { write_operation_v2 {
		input { sql { query: "SELECT 1 AS a, 'x' AS p" } }
		table_name: "db.t"
		mode: MODE_OVERWRITE
		overwrite_condition { expression_string { expression: "true" } }
	} }`)
	for name, bad := range map[string]WriteV2Spec{"bad mode": {Table: "t", Mode: "replace"}, "no table": {Mode: "create"}} {
		if _, err := src.writeV2Command(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWriteCommand(t *testing.T) {
	src := testSession.SQL("SELECT 1 AS a, 'x' AS p")
	opts := map[string]string{"compression": "zstd"}
	spec := WriteSpec{Format: "parquet", Mode: "Overwrite", Path: "/out/x", PartitionBy: []string{"p", "a"}, Options: opts}
	plan, err := src.writeCommand(spec)
	if err != nil {
		t.Fatal(err)
	}
	opts["compression"] = "none"
	checkProto(t, "Plan", plan, `command { write_operation {
		input { sql { query: "SELECT 1 AS a, 'x' AS p" } }
		source: "parquet"
		path: "/out/x"
		mode: SAVE_MODE_OVERWRITE
		partitioning_columns: "p" partitioning_columns: "a"
		options { key: "compression" value: "zstd" }
	} }`)

	plan, err = src.writeCommand(WriteSpec{Table: "db.t", Mode: "append"})
	if err != nil {
		t.Fatal(err)
	}
	checkProto(t, "Plan", plan, `command { write_operation {
		input { sql { query: "SELECT 1 AS a, 'x' AS p" } }
		table { table_name: "db.t" save_method: TABLE_SAVE_METHOD_SAVE_AS_TABLE }
		mode: SAVE_MODE_APPEND
	} }`)

	plan, err = src.writeCommand(WriteSpec{Table: "db.t", InsertInto: true})
	if err != nil {
		t.Fatal(err)
	}
	checkProto(t, "Plan", plan, `command { write_operation {
		input { sql { query: "SELECT 1 AS a, 'x' AS p" } }
		table { table_name: "db.t" save_method: TABLE_SAVE_METHOD_INSERT_INTO }
		mode: SAVE_MODE_ERROR_IF_EXISTS
	} }`)

	for _, m := range []struct{ in, want string }{{"", "SAVE_MODE_ERROR_IF_EXISTS"}, {"error", "SAVE_MODE_ERROR_IF_EXISTS"}, {"ErrorIfExists", "SAVE_MODE_ERROR_IF_EXISTS"}, {"IGNORE", "SAVE_MODE_IGNORE"}, {"append", "SAVE_MODE_APPEND"}} {
		plan, err := src.writeCommand(WriteSpec{Path: "/o", Mode: m.in})
		if err != nil {
			t.Fatalf("mode %q: %v", m.in, err)
		}
		w := getMsg(getMsg(plan.ProtoReflect(), "command"), "write_operation")
		if got := string(fd(w, "mode").Enum().Values().ByNumber(w.Get(fd(w, "mode")).Enum()).Name()); got != m.want {
			t.Errorf("mode %q = %s, want %s", m.in, got, m.want)
		}
	}

	for name, bad := range map[string]WriteSpec{
		"bad mode":         {Path: "/o", Mode: "upsert"},
		"no target":        {Format: "parquet"},
		"path and table":   {Path: "/o", Table: "t"},
		"insert into path": {Path: "/o", InsertInto: true},
	} {
		if _, err := src.writeCommand(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The statement goes as input (Spark 4.0) and as the deprecated sql field
// that Spark 3.5 servers read; the integration suite runs every statement
// on 4.0.1, which takes input.
func TestSQLCommand(t *testing.T) {
	checkProto(t, "Plan", sqlCommand("ALTER TABLE t ADD COLUMNS (c int)"), `command { sql_command {
		sql: "ALTER TABLE t ADD COLUMNS (c int)"
		input { sql { query: "ALTER TABLE t ADD COLUMNS (c int)" } }
	} }`)
}

func TestFrameString(t *testing.T) {
	s := testSession.Read(ReadSpec{Format: "json", Paths: []string{"/in"}}).String()
	for _, want := range []string{"data_source", `format:`, `"json"`, `"/in"`} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, want it to contain %q", s, want)
		}
	}
}

func TestExecutionWithoutConnectionIsAnError(t *testing.T) {
	// A session that was never dialed must fail cleanly, not panic.
	ctx := context.Background()
	f := testSession.SQL("SELECT 1")
	if _, err := f.Schema(ctx); err == nil {
		t.Error("Schema: no error")
	}
	if _, err := f.Collect(ctx); err == nil {
		t.Error("Collect: no error")
	}
	if _, err := f.Count(ctx); err == nil {
		t.Error("Count: no error")
	}
	if err := f.Write(ctx, WriteSpec{Path: "/o"}); err == nil {
		t.Error("Write: no error")
	}
	if err := testSession.ExecSQL(ctx, "SELECT 1"); err == nil {
		t.Error("ExecSQL: no error")
	}
}
