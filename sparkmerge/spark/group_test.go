package spark

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
)

// schemaRead is a single-file read of path with a known schema (DDL).
func schemaRead(t *testing.T, format, path, ddl string, order int) *Read {
	t.Helper()
	schema, err := sparkmerge.ParseSchema(ddl)
	if err != nil {
		t.Fatalf("%s: %v", ddl, err)
	}
	r := &Read{Name: path, Sources: []string{path}, Format: format, Paths: []string{path}, Schema: schema, order: order}
	if format == "json" {
		// Typed on the client, every key kept.
		r.InferredLocally, r.raw = true, sparkmerge.StructOf(schema.Fields...)
	}
	return r
}

// describe is each read as "file+file: schema".
func describeGroups(reads []*Read) []string {
	var out []string
	for _, r := range reads {
		var base []string
		for _, p := range r.Paths {
			base = append(base, p[strings.LastIndex(p, "/")+1:])
		}
		out = append(out, strings.Join(base, "+")+": "+r.Schema.String())
	}
	return out
}

// auto groups only files whose one load gives each file's rows exactly:
// no type widened, no name respelled, no header read by position, and
// never a first-seen column order other than each file read alone gives.
func TestGroupExact(t *testing.T) {
	type file struct{ format, path, ddl string }
	tests := []struct {
		name  string
		files []file
		want  []string
	}{
		{
			name: "csv: only the same columns in the same order",
			files: []file{
				{"csv", "/d/a.csv", "id int, v string"},
				{"csv", "/d/b.csv", "v string, id int"},
				{"csv", "/d/c.csv", "id int, v string"},
				{"csv", "/d/d.csv", "id int, v string, w int"},
			},
			want: []string{"a.csv+c.csv: id int, v string", "b.csv: v string, id int", "d.csv: id int, v string, w int"},
		},
		{
			name: "json: shared keys spelled alike and typed the same",
			files: []file{
				{"json", "/d/a.json", "id bigint, v bigint"},
				{"json", "/d/b.json", "id bigint, w string"},
				{"json", "/d/c.json", "id bigint, v double"}, // v widens: alone
				{"json", "/d/d.json", "ID bigint, w string"}, // ID respelled: alone
			},
			want: []string{"a.json+b.json: id bigint, v bigint, w string", "c.json: id bigint, v double", "d.json: ID bigint, w string"},
		},
		{
			name: "parquet: a group that would reorder the target falls back to identical schemas",
			files: []file{
				{"parquet", "/d/p1.parquet", "id int, amount decimal(10,2)"},
				{"parquet", "/d/p2.parquet", "id bigint, ts timestamp"},
				{"parquet", "/d/p3.parquet", "id int, note string"},
				{"parquet", "/d/p4.parquet", "id int, amount decimal(10,2)"},
			},
			// p1+p3 would put note before ts.
			want: []string{"p1.parquet+p4.parquet: id int, amount decimal(10,2)", "p2.parquet: id bigint, ts timestamp", "p3.parquet: id int, note string"},
		},
		{
			// Its column would hide Spark's _metadata, the file of each
			// row in a load of many files (found in the field).
			name: "a file with a _metadata column, in any case, is read alone",
			files: []file{
				{"parquet", "/d/a.parquet", "id bigint, _metadata struct<file_path: string>"},
				{"parquet", "/d/b.parquet", "id bigint"},
				{"parquet", "/d/c.parquet", "id bigint, _METADATA struct<file_path: string, n: int>"},
				{"parquet", "/d/d.parquet", "id bigint"},
			},
			want: []string{"a.parquet: id bigint, _metadata struct<file_path:string>", "b.parquet+d.parquet: id bigint", "c.parquet: id bigint, _METADATA struct<file_path:string,n:int>"},
		},
		{
			name: "formats never mix",
			files: []file{
				{"parquet", "/d/a.parquet", "id int"},
				{"orc", "/d/a.orc", "id int"},
				{"parquet", "/d/b.parquet", "id int"},
			},
			want: []string{"a.parquet+b.parquet: id int", "a.orc: id int"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads []*Read
			for i, f := range tt.files {
				reads = append(reads, schemaRead(t, f.format, f.path, f.ddl, i))
			}
			got := groupExact(reads, sparkmerge.Options{})
			if d := cmp.Diff(tt.want, describeGroups(got)); d != "" {
				t.Errorf("groups (-want +got):\n%s", d)
			}
			alone, err := sparkmerge.NewPlan(planSources(reads), sparkmerge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			together, err := sparkmerge.NewPlan(planSources(got), sparkmerge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(alone.Target.String(), together.Target.String()); d != "" {
				t.Errorf("target changed by grouping (-alone +grouped):\n%s", d)
			}
		})
	}
}

// JSON files the client did not type, or whose records hold a key Spark
// drops from the file's schema (an empty object), group only with
// identical schemas: under a group's schema the dropped key would be
// parsed as another file's type.
func TestGroupExactJSONNeedsEveryKey(t *testing.T) {
	a := schemaRead(t, "json", "/d/a.json", "id bigint, c boolean", 0)
	dropped := schemaRead(t, "json", "/d/dropped.json", "id bigint", 1)
	dropped.raw = sparkmerge.StructOf(sparkmerge.NewField("c", sparkmerge.StructOf()), sparkmerge.NewField("id", sparkmerge.Simple(sparkmerge.KindLong)))
	spark := schemaRead(t, "json", "/d/spark.json", "id bigint", 2)
	spark.InferredLocally, spark.raw = false, sparkmerge.DataType{}
	same := schemaRead(t, "json", "/d/same.json", "id bigint", 3)
	got := describeGroups(groupExact([]*Read{a, dropped, spark, same}, sparkmerge.Options{}))
	// same.json keeps every key: it may join a.json.
	want := []string{"a.json+same.json: id bigint, c boolean", "dropped.json+spark.json: id bigint"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
}

// Tables, the user's own path lists and reads with other options or a user
// schema are never grouped with each other.
func TestGroupExactKeepsApart(t *testing.T) {
	a := schemaRead(t, "json", "/d/a.json", "id bigint", 0)
	b := schemaRead(t, "json", "/d/b.json", "id bigint", 1)
	b.Options = map[string]string{"mode": "PERMISSIVE"}
	c := schemaRead(t, "json", "/d/c.json", "id bigint", 2)
	c.UserSchema = "id bigint"
	d := schemaRead(t, "json", "/d/d.json", "id bigint", 3)
	d.Table, d.Paths = "db.t", nil
	e := schemaRead(t, "json", "/d/e.json", "id bigint", 4)
	e.patterns = true
	if got := groupExact([]*Read{a, b, c, d, e}, sparkmerge.Options{}); len(got) != 5 {
		t.Errorf("grouped %v, want every read alone", describeGroups(got))
	}
}

// A file whose columns differ only by case (dup and DUP, kept apart by a
// case-sensitive merge) is read alone: grouped, its load left DUP out
// (found in the field, Parquet and ORC, verify passing).
func TestGroupExactReadsNamesAlikeButForCaseAlone(t *testing.T) {
	for _, format := range []string{"parquet", "orc", "json"} {
		a := schemaRead(t, format, "/d/a", "dup bigint, DUP bigint, id bigint", 0)
		b := schemaRead(t, format, "/d/b", "dup bigint, id bigint", 1)
		c := schemaRead(t, format, "/d/c", "dup bigint, id bigint", 2)
		got := describeGroups(groupExact([]*Read{a, b, c}, sparkmerge.Options{CaseSensitive: true}))
		want := []string{"a: dup bigint, DUP bigint, id bigint", "b+c: dup bigint, id bigint"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s groups (-want +got):\n%s", format, d)
		}
	}
}

// Files whose columns are spelled near each other's (" amount" and
// "amount", "Order Id" and order_id) are not read together: in one read
// both spellings were one source's, and the plan's warning of them went
// missing (found in the field, Parquet).
func TestGroupExactKeepsNearNamesApart(t *testing.T) {
	for _, near := range [][2]string{{"amount", "`amount `"}, {"`Order Id`", "order_id"}} {
		a := schemaRead(t, "parquet", "/d/a", "id bigint, "+near[0]+" bigint", 0)
		b := schemaRead(t, "parquet", "/d/b", "id bigint, "+near[1]+" bigint", 1)
		c := schemaRead(t, "parquet", "/d/c", "id bigint, "+near[0]+" bigint", 2)
		got := describeGroups(groupExact([]*Read{a, b, c}, sparkmerge.Options{}))
		want := []string{"a+c: id bigint, " + near[0] + " bigint", "b: id bigint, " + near[1] + " bigint"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("groups (-want +got):\n%s", d)
		}
	}
}
