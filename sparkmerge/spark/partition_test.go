package spark

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
)

func TestParseFilePartition(t *testing.T) {
	tests := []struct {
		rel     string
		want    filePartition
		wantErr string
	}{
		{rel: "a.csv", want: filePartition{}},
		{rel: "day=1/a.csv", want: filePartition{columns: []partitionColumn{{"day", "1"}}}},
		{rel: "year=2024/month=01/a.csv", want: filePartition{columns: []partitionColumn{{"year", "2024"}, {"month", "01"}}}},
		// Directories below the partitions are no columns; the walk goes on.
		{rel: "day=1/sub/a.csv", want: filePartition{columns: []partitionColumn{{"day", "1"}}}},
		// A plain directory above a partition directory is where Spark's
		// walk stops: the tree's base.
		{rel: "x/day=1/a.csv", want: filePartition{columns: []partitionColumn{{"day", "1"}}, base: "x"}},
		{rel: "x/y/day=1/a.csv", want: filePartition{columns: []partitionColumn{{"day", "1"}}, base: "x/y"}},
		// No partition directory: its own directory is its base.
		{rel: "sub/a.csv", want: filePartition{base: "sub"}},
		// The value is everything after the first '=', as written; the
		// name is unescaped.
		{rel: "k=a=b/a.csv", want: filePartition{columns: []partitionColumn{{"k", "a=b"}}}},
		{rel: "my%20col=x%3Ay/a.csv", want: filePartition{columns: []partitionColumn{{"my col", "x%3Ay"}}}},
		{rel: "day=/a.csv", wantErr: `directory "day=" has no partition value`},
		{rel: "=1/a.csv", wantErr: `directory "=1" names no partition column`},
	}
	for _, tt := range tests {
		got, err := parseFilePartition(tt.rel)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.rel, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.rel, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(filePartition{}, partitionColumn{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.rel, diff)
		}
	}
}

func TestUnescapePathName(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"a%20b":         "a b",
		"10%3A00%3A00":  "10:00:00",
		"100%":          "100%",
		"%zz":           "%zz",
		"%4":            "%4",
		"%41":           "A",
		"x%41":          "xA",
		"%C3%A9":        "Ã©", // each code is one character, as Spark decodes it
		"%-1x":          "%-1x",
		"%2F%25":        "/%",
		"date=%2F%2Fx%": "date=//x%",
	} {
		if got := unescapePathName(in); got != want {
			t.Errorf("unescapePathName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitPartitions(t *testing.T) {
	tests := []struct {
		name        string
		files       []string
		wantColumns []string
		wantValues  map[string][]string
		wantOutside []string
		wantLayouts int
	}{
		{
			name:  "no partition directories: no tree",
			files: []string{"/r/a.csv", "/r/sub/b.csv"},
		},
		{
			name:        "one column",
			files:       []string{"/r/day=1/a.csv", "/r/day=2/b.csv", "/r/day=2/c.csv"},
			wantColumns: []string{"day"},
			wantValues:  map[string][]string{"/r/day=1/a.csv": {"1"}, "/r/day=2/b.csv": {"2"}, "/r/day=2/c.csv": {"2"}},
		},
		{
			name:        "nested columns, named in either case",
			files:       []string{"/r/year=2024/month=01/a.csv", "/r/Year=2025/MONTH=__HIVE_DEFAULT_PARTITION__/b.csv"},
			wantColumns: []string{"year", "month"},
			wantValues:  map[string][]string{"/r/year=2024/month=01/a.csv": {"2024", "01"}, "/r/Year=2025/MONTH=__HIVE_DEFAULT_PARTITION__/b.csv": {"2025", "__HIVE_DEFAULT_PARTITION__"}},
		},
		{
			name:        "a file beside the partition directories",
			files:       []string{"/r/day=1/a.csv", "/r/stray.csv"},
			wantOutside: []string{"/r/stray.csv"},
		},
		{
			name:        "a file in a plain directory beside them",
			files:       []string{"/r/day=1/a.csv", "/r/old/b.csv"},
			wantOutside: []string{"/r/old/b.csv"},
		},
		{
			name:        "partition directories below two plain directories",
			files:       []string{"/r/x/day=1/a.csv", "/r/y/day=2/b.csv"},
			wantOutside: []string{"/r/y/day=2/b.csv"},
		},
		{
			name:        "files at two depths",
			files:       []string{"/r/day=1/a.csv", "/r/day=2/hour=3/b.csv"},
			wantLayouts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, tree, err := splitPartitions("/r", "/r", tt.files)
			var layout *PartitionLayoutError
			if tt.wantOutside != nil || tt.wantLayouts > 0 {
				if !errors.As(err, &layout) {
					t.Fatalf("err = %v, want a *PartitionLayoutError", err)
				}
				if diff := cmp.Diff(tt.wantOutside, layout.Outside); diff != "" {
					t.Errorf("outside (-want +got):\n%s", diff)
				}
				if len(layout.Layouts) != tt.wantLayouts {
					t.Errorf("layouts %q, want %d", layout.Layouts, tt.wantLayouts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantColumns == nil {
				if tree != nil || parts != nil {
					t.Errorf("a tree %+v, want none", tree)
				}
				return
			}
			if diff := cmp.Diff(tt.wantColumns, tree.columns); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			got := map[string][]string{}
			for f, p := range parts {
				if p.tree != tree {
					t.Errorf("%s: another tree", f)
				}
				got[f] = p.values
			}
			if diff := cmp.Diff(tt.wantValues, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPartitionLayoutErrorSaysWhatToDo(t *testing.T) {
	_, _, err := splitPartitions("/r", "/r", []string{"/r/day=1/a.csv", "/r/stray.csv"})
	for _, want := range []string{"partitioned tree /r", "1 data files lie outside its key=value directories (/r/stray.csv)", "their rows would be lost", "move them into a partition directory", "one it merged already, moved, is merged again"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
}

func TestWithPartitionColumns(t *testing.T) {
	part := mustSchema(t, "day date, n int")
	tests := []struct {
		data, want  string
		wantOverlap []string
	}{
		{data: "id int, v string", want: "id int, v string, day date, n int"},
		// A column of the file named as a partition column: the partition
		// column (its type) in its place, as Spark's mergeDataAndPartitionSchema.
		{data: "N string, id int", want: "n int, id int, day date", wantOverlap: []string{"N"}},
	}
	for _, tt := range tests {
		got, overlap := withPartitionColumns(mustSchema(t, tt.data), part)
		if got.String() != mustSchema(t, tt.want).String() {
			t.Errorf("%s: %s, want %s", tt.data, got, tt.want)
		}
		if diff := cmp.Diff(tt.wantOverlap, overlap); diff != "" {
			t.Errorf("%s: overlap (-want +got):\n%s", tt.data, diff)
		}
	}
}

func TestPartitionValueSQL(t *testing.T) {
	ty := func(s string) sparkmerge.DataType {
		t, err := sparkmerge.ParseType(s)
		if err != nil {
			panic(err)
		}
		return t
	}
	tests := []struct {
		raw, typ, want string
	}{
		{"__HIVE_DEFAULT_PARTITION__", "int", "CAST(NULL AS int)"},
		{"x", "void", "CAST(NULL AS void)"},
		{"a%20b", "string", "'a b'"},
		{"it's", "string", `'it\'s'`},
		{"01", "int", "CAST('01' AS int)"},
		{"2024-01-02", "date", "CAST('2024-01-02' AS date)"},
		{"2024-01-02 10%3A00%3A00", "timestamp", "coalesce(try_cast('2024-01-02 10:00:00' AS timestamp), CAST(CAST('2024-01-02 10%3A00%3A00' AS DATE) AS timestamp))"},
	}
	for _, tt := range tests {
		if got := partitionValueSQL(tt.raw, ty(tt.typ)); got != tt.want {
			t.Errorf("partitionValueSQL(%q, %s) = %s, want %s", tt.raw, tt.typ, got, tt.want)
		}
	}
}

func TestExpandLocalPartitionedTree(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"t/part=a/test.csv":                "id,value,a\n1,value1,aaa\n",
		"t/part=b/test.csv":                "id,value\n2,value2\n",
		"t/part=b/_SUCCESS":                "",
		"t/part=b/.test.csv.crc":           "x",
		"t/_temporary/0/x.csv":             "id\n3\n",
		"t/README.txt":                     "about",
		"nested/year=2024/month=01/a.json": "{}\n",
		"nested/year=2024/month=02/b.json": "{}\n",
		"stray/day=1/a.csv":                "id\n1\n",
		"stray/b.csv":                      "id\n2\n",
		"flat/a.csv":                       "id\n1\n",
		"flat/old/b.csv":                   "id\n2\n",
	})
	j := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	parts := map[string]*partitionFile{}
	got, skipped, err := expandLocal([]SourceSpec{{Paths: []string{j("t")}}, {Paths: []string{j("nested")}}}, "", nil, parts)
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceSpec{
		{Paths: []string{j("t", "part=a", "test.csv")}, Format: "csv"},
		{Paths: []string{j("t", "part=b", "test.csv")}, Format: "csv"},
		{Paths: []string{j("nested", "year=2024", "month=01", "a.json")}, Format: "json"},
		{Paths: []string{j("nested", "year=2024", "month=02", "b.json")}, Format: "json"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("partitioned trees (-want +got):\n%s", diff)
	}
	tree := &partitionTree{given: j("t"), root: j("t"), options: map[string]string{}, columns: []string{"part"}}
	nested := &partitionTree{given: j("nested"), root: j("nested"), options: map[string]string{}, columns: []string{"year", "month"}}
	wantParts := map[string]*partitionFile{
		j("t", "part=a", "test.csv"):                   {tree: tree, values: []string{"a"}},
		j("t", "part=b", "test.csv"):                   {tree: tree, values: []string{"b"}},
		j("nested", "year=2024", "month=01", "a.json"): {tree: nested, values: []string{"2024", "01"}},
		j("nested", "year=2024", "month=02", "b.json"): {tree: nested, values: []string{"2024", "02"}},
	}
	if diff := cmp.Diff(wantParts, parts, cmp.AllowUnexported(partitionFile{}, partitionTree{})); diff != "" {
		t.Errorf("partition values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{j("t", "README.txt")}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}

	// A file beside the partition directories would be lost.
	_, _, err = expandLocal([]SourceSpec{{Paths: []string{j("stray")}}}, "", nil, map[string]*partitionFile{})
	var layout *PartitionLayoutError
	if !errors.As(err, &layout) || len(layout.Outside) != 1 || layout.Outside[0] != j("stray", "b.csv") {
		t.Errorf("err = %v, want the stray file refused", err)
	}
	// Without partition directories a directory's subdirectories are not
	// read, as before.
	parts = map[string]*partitionFile{}
	got, _, err = expandLocal([]SourceSpec{{Paths: []string{j("flat")}}}, "", nil, parts)
	if err != nil || len(got) != 1 || got[0].Paths[0] != j("flat", "a.csv") || len(parts) != 0 {
		t.Errorf("flat directory: %+v, %v; want its one file", got, err)
	}
	// recursiveFileLookup: every file, no partition values.
	got, _, err = expandLocal([]SourceSpec{{Paths: []string{j("stray")}, Options: map[string]string{"recursiveFileLookup": "true"}}}, "", nil, parts)
	if err != nil || len(got) != 2 || len(parts) != 0 {
		t.Errorf("recursiveFileLookup: %+v, %v; want two files without partition values", got, err)
	}
	// basePath: a partition directory's files have the columns of the
	// directories below it, typed over what the source names.
	got, _, err = expandLocal([]SourceSpec{{Paths: []string{j("t", "part=a")}}}, "", map[string]string{"basePath": j("t")}, parts)
	if part := parts[j("t", "part=a", "test.csv")]; err != nil || len(got) != 1 || part == nil || part.tree.root != j("t") ||
		part.tree.given != j("t", "part=a") || !cmp.Equal(part.values, []string{"a"}) {
		t.Errorf("basePath: %+v, %v; want the file with part=a, its tree given as the directory", got, err)
	}
}

func TestExpandLocalPartitionedTreeFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"elsewhere/a.csv": "id\n1\n", "t/day=1/b.csv": "id\n2\n"})
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "t", "day=2")); err != nil {
		t.Skip(err)
	}
	parts := map[string]*partitionFile{}
	got, _, err := expandLocal([]SourceSpec{{Paths: []string{filepath.Join(dir, "t")}}}, "", nil, parts)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, s := range got {
		values = append(values, parts[s.Paths[0]].values...)
	}
	if diff := cmp.Diff([]string{"1", "2"}, values); diff != "" {
		t.Errorf("a linked partition directory is listed as Spark lists it (-want +got):\n%s", diff)
	}
}

// binaryFileSchema is Spark's schema of a tree read as binaryFile, with
// its partition columns.
const binaryFileSchema = "path string, modificationTime timestamp, length bigint, content binary, "

func TestPlanPartitionedTrees(t *testing.T) {
	// DuckDB's test of union_by_name over a partitioned CSV tree
	// (data/csv/union-by-name/part=a, part=b): the headers drift.
	duck := map[string]string{"t/part=a/test.csv": "id,value,a\n1,value1,aaa\n", "t/part=b/test.csv": "id,value\n2,value2\n"}
	duckSchema := map[string]string{"partitionSchema $D/t": binaryFileSchema + "part string"}
	tests := []planCase{
		{
			name:    "each file of a local tree is read alone, with its partition columns from its path",
			files:   duck,
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}}},
			schemas: duckSchema,
			wantReads: []string{
				"$D/t/part=a/test.csv [$D/t/part=a/test.csv]: id int, value string, a string, part string; client, pinned, enforceSchema=false, basePath=$D/t",
				"$D/t/part=b/test.csv [$D/t/part=b/test.csv]: id int, value string, part string; client, pinned, enforceSchema=false, basePath=$D/t",
			},
			wantTarget: "id int, value string, a string, part string",
			wantCalls:  []string{"partitionSchema $D/t"},
			check: func(t *testing.T, p *Planned, fake *fakeServer) {
				if got := fake.options[p.Reads[0].partition.tree.given]; len(got) != 0 {
					t.Errorf("the tree is typed with options %v, want none", got)
				}
				if s := p.scanPlan(); len(s.batches) != 0 {
					t.Errorf("%d positional scans, want every file read with its path's values", len(s.batches))
				}
				// SQL reads files with no schema: the values are literals,
				// not typed again over each file alone.
				sql, err := p.SQL()
				if err != nil || strings.Contains(sql, "basePath") || !strings.Contains(sql, "SELECT *, 'a' AS `part` FROM") || !strings.Contains(sql, "SELECT *, 'b' AS `part` FROM") {
					t.Errorf("SQL %v:\n%s\nwant each file's partition value as a literal, no basePath", err, sql)
				}
			},
		},
		{
			name:    "Spark types the files alone: without the tree's root",
			files:   duck,
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}}, SparkInference: true, Strategy: StrategyUnion, ReaderOptions: map[string]string{"basePath": "$D/t"}},
			schemas: map[string]string{"partitionSchema $D/t": binaryFileSchema + "part string", "readSchema $D/t/part=a/test.csv": "id int, value string, a string", "readSchema $D/t/part=b/test.csv": "id int, value string"},
			wantReads: []string{
				"$D/t/part=a/test.csv [$D/t/part=a/test.csv]: id int, value string, a string, part string; pinned, enforceSchema=false, basePath=$D/t",
				"$D/t/part=b/test.csv [$D/t/part=b/test.csv]: id int, value string, part string; pinned, enforceSchema=false, basePath=$D/t",
			},
			wantCalls: []string{"partitionSchema $D/t", "readSchema $D/t/part=a/test.csv", "readSchema $D/t/part=b/test.csv"},
			check: func(t *testing.T, _ *Planned, fake *fakeServer) {
				for call, options := range fake.options {
					if _, set := options["basePath"]; set && strings.HasPrefix(call, "readSchema") {
						t.Errorf("%s with basePath: Spark would add partition columns typed by that file alone", call)
					}
				}
			},
		},
		{
			name:  "files of one tree and one header are read together, with the tree's root",
			files: map[string]string{"t/day=1/a.csv": csvA, "t/day=2/b.csv": csvB, "flat/c.csv": csvA},
			job:   Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}, {Paths: []string{"$D/flat"}}}},
			schemas: map[string]string{
				"partitionSchema $D/t": binaryFileSchema + "day int",
			},
			wantReads: []string{
				"$D/t/ (2 csv files) [$D/t/day=1/a.csv $D/t/day=2/b.csv]: id int, name string, day int; client, pinned, enforceSchema=false, basePath=$D/t",
				"$D/flat/c.csv [$D/flat/c.csv]: id int, name string; client, pinned, enforceSchema=false",
			},
			wantTarget: "id int, name string, day int",
			wantCalls:  []string{"partitionSchema $D/t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				sql, err := p.SQL()
				if err != nil || !strings.Contains(sql, "CASE url_decode(") || !strings.Contains(sql, "day=1/a.csv' THEN CAST('1' AS int) WHEN '") || !strings.Contains(sql, "day=2/b.csv' THEN CAST('2' AS int) END AS `day`") {
					t.Errorf("SQL %v:\n%s\nwant the group's values by each row's file", err, sql)
				}
			},
		},
		{
			name: "a remote tree is listed whole and read file by file",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/t"}}}, Strategy: StrategyUnion},
			remote: map[string]string{
				"s3a://b/t/day=1/a.json": jsonC, "s3a://b/t/day=2/b.json": `{"id":6,"other":true}` + "\n",
			},
			schemas: map[string]string{"partitionSchema s3a://b/t": binaryFileSchema + "day int"},
			wantReads: []string{
				"s3a://b/t/day=1/a.json [s3a://b/t/day=1/a.json]: id bigint, note string, day int; client, pinned, basePath=s3a://b/t",
				"s3a://b/t/day=2/b.json [s3a://b/t/day=2/b.json]: id bigint, other boolean, day int; client, pinned, basePath=s3a://b/t",
			},
			wantTarget: "id bigint, note string, day int, other boolean",
			wantCalls:  []string{"inputFiles s3a://b/t", "listFiles s3a://b/t", "partitionSchema s3a://b/t"},
		},
		{
			name: "a remote file beside the partition directories is refused",
			job:  Job{Sources: []SourceSpec{{Paths: []string{"s3a://b/t"}}}},
			remote: map[string]string{
				"s3a://b/t/day=1/a.json": jsonC, "s3a://b/t/stray.json": jsonC,
			},
			wantErr:   "partitioned tree s3a://b/t: 1 data files lie outside its key=value directories (s3a://b/t/stray.json)",
			wantErrAs: new(*PartitionLayoutError),
			wantCalls: []string{"inputFiles s3a://b/t", "listFiles s3a://b/t"},
		},
		{
			name:      "a local file beside the partition directories is refused",
			files:     map[string]string{"t/day=1/a.csv": csvA, "t/stray.csv": csvB},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}}},
			wantErr:   "partitioned tree $D/t: 1 data files lie outside its key=value directories ($D/t/stray.csv)",
			wantErrAs: new(*PartitionLayoutError),
		},
		{
			name:    "a file's own column named as a partition column takes the directory's value, checked",
			files:   map[string]string{"t/a=1/f.csv": "id,a\n1,1\n", "t/a=2/f.csv": "id,A\n2,2\n"},
			job:     Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}}},
			schemas: map[string]string{"partitionSchema $D/t": binaryFileSchema + "a int"},
			wantReads: []string{
				"$D/t/a=1/f.csv [$D/t/a=1/f.csv]: id int, a int; client, pinned, enforceSchema=false",
				"$D/t/a=2/f.csv [$D/t/a=2/f.csv]: id int, a int; client, pinned id int, A int, enforceSchema=false",
			},
			wantTarget: "id int, a int",
			wantCalls:  []string{"partitionSchema $D/t"},
			check: func(t *testing.T, p *Planned, _ *fakeServer) {
				exprs := p.Reads[1].overlapExprs
				if len(exprs) != 2 || exprs[0] != "`id`" ||
					!strings.HasPrefix(exprs[1], "CASE WHEN `A` IS NULL OR try_cast(`A` AS int) <=> CAST('2' AS int) OR try_cast(CAST('2' AS int) AS int) <=> `A` THEN CAST('2' AS int) ELSE raise_error(") ||
					!strings.HasSuffix(exprs[1], " END AS `a`") || !strings.Contains(exprs[1], "where its directory says a=2") {
					t.Errorf("projection %q, want the directory's value in A's place, checked against A", exprs)
				}
				if _, set := p.Reads[1].Options["basePath"]; set {
					t.Error("read with basePath: Spark would drop the file's own column unchecked")
				}
				if groupKey(p.Reads[0]) != "" || groupKey(p.Reads[1]) != "" {
					t.Error("files whose values are literals of their own must not share a load")
				}
			},
		},
		{
			name:      "multipath refuses files with columns named as partition columns",
			files:     map[string]string{"t/a=1/f.csv": "id,a\n1,1\n", "t/a=2/f.csv": "id,a\n2,2\n"},
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}}, Strategy: StrategyMultipath},
			schemas:   map[string]string{"partitionSchema $D/t": binaryFileSchema + "a int", "readSchema $D/t/a=1/f.csv,$D/t/a=2/f.csv": "id int, a int"},
			wantErr:   "named as the tree's partition columns (a), whose values a multi-path read would replace by their directories' without a check: use the auto or union strategy",
			wantCalls: []string{"partitionSchema $D/t", "readSchema $D/t/a=1/f.csv,$D/t/a=2/f.csv"},
		},
		{
			name:      "a tree Spark does not read as partitioned",
			files:     duck,
			job:       Job{Sources: []SourceSpec{{Paths: []string{"$D/t"}}}},
			schemas:   map[string]string{"partitionSchema $D/t": binaryFileSchema[:len(binaryFileSchema)-2]},
			wantErr:   `spark reads the partitioned tree $D/t without its partition column "part"`,
			wantCalls: []string{"partitionSchema $D/t"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t)
		})
	}
}

// treeFile is a file of a partitioned tree in TestPartitionedFilesTypedTogether:
// its content, and the schema (DDL) Spark infers for it read alone.
type treeFile struct {
	content, alone string
}

// The files of partitioned trees Spark types are typed together, each as
// alone (issue 34): CSV files in lanes, JSON files nested, local or only
// on the server, never asked of Spark alone one by one. Each read ends
// with the very fields a plan that asks every file alone gives it: its
// own columns, then the tree's partition columns; read with the tree's
// root as basePath, or, for a file with a column of its own named as a
// partition column, without it and with that column replaced by its
// directory's value, checked (overlapExprs); a file of its header alone
// known as one (noRows).
func TestPartitionedFilesTypedTogether(t *testing.T) {
	csvTree := map[string]treeFile{
		"day=1/a.csv": {"id,at\n1,2024-01-01 00:00:00\n", "id int, at timestamp"},
		"day=2/b.csv": {"id,at,note\n2,2024-01-02 00:00:00,\"x,y\"\n", "id int, at timestamp, note string"},
		// A column of its own named as the partition column.
		"day=3/c.csv":                          {"id,day\n3,3\n", "id int, day int"},
		"day=4/header.csv":                     {"id,at\n", "id string, at string"},
		"day=__HIVE_DEFAULT_PARTITION__/d.csv": {"id,at\n4,2024-01-04\n", "id int, at date"},
	}
	jsonTree := map[string]treeFile{
		"day=1/a.json": {`{"id":1,"at":"2024-01-01"}` + "\n", "id bigint, at string"},
		"day=2/b.json": {`{"id":2,"o":{"k":true}}` + "\n", "id bigint, o struct<k: boolean>"},
		"day=3/c.json": {`{"id":3,"day":3}` + "\n", "day bigint, id bigint"},
	}
	for _, tc := range []struct {
		name   string
		tree   map[string]treeFile
		remote bool
		// together: typeCSVTogether's requests (a text read of files only
		// the server sees, a parse per header, one inference), or
		// typeJSONTogether's (one inference).
		together int
	}{
		{"CSV local", csvTree, false, 4},
		{"CSV only on the server", csvTree, true, 5},
		{"JSON only on the server", jsonTree, true, 1},
		{"JSON local", jsonTree, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "t")
			if tc.remote {
				root = "/sparkmerge-server-only/t"
			}
			together, alone := planTree(t, root, tc.tree, tc.remote, false), planTree(t, root, tc.tree, tc.remote, true)
			if together.planned.TypedTogether != len(tc.tree) || together.planned.TogetherRequests != tc.together {
				t.Errorf("%d files typed together in %d requests, want %d in %d", together.planned.TypedTogether, together.planned.TogetherRequests, len(tc.tree), tc.together)
			}
			if asked := together.fake.askedAlone(); len(asked) != 0 {
				t.Errorf("files asked of Spark alone: %v", asked)
			}
			if n := len(alone.fake.askedAlone()); n != len(tc.tree) {
				t.Fatalf("each file alone: %d files asked, want %d", n, len(tc.tree))
			}
			if diff := cmp.Diff(treeReads(alone.planned), treeReads(together.planned)); diff != "" {
				t.Errorf("reads (-alone +together):\n%s", diff)
			}
			overlapping := 0
			for _, r := range together.planned.Reads {
				if r.overlapExprs != nil {
					overlapping++
				}
			}
			if overlapping != 1 {
				t.Errorf("%d files read with their directory's value in their own column's place, want 1", overlapping)
			}
		})
	}
}

// plannedTree is a plan of a tree on a fake server.
type plannedTree struct {
	planned *Planned
	fake    *fakeServer
}

// planTree plans the tree of files (by path below root) with Spark's
// inference, on a fake server that types each file as files say:
// together, or each alone (Job.InferEachFileAlone).
func planTree(t *testing.T, root string, files map[string]treeFile, remote, eachAlone bool) plannedTree {
	t.Helper()
	client, fake := newFakeClient()
	fake.nowMillis = 10_000
	fake.settings = map[string]string{"spark.sql.files.maxPartitionBytes": "128MB", "spark.sql.files.openCostInBytes": "4MB", "spark.sql.legacy.timeParserPolicy": "CORRECTED"}
	fake.rows, fake.csvHeaders = map[string]bool{}, map[string]string{}
	alone := map[string]string{} // Spark's schema of each file alone, by sparkPathKey
	lineFiles := t.TempDir()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f, p := files[name], root+"/"+name
		if remote {
			fake.files["file:"+p] = fakeFile{content: f.content, mtimeMillis: 1000}
		} else {
			writeFiles(t, root, map[string]string{name: f.content})
		}
		fake.schemas["readSchema "+p], alone[p] = f.alone, f.alone
		fake.rows[p] = strings.Count(f.content, "\n") > 1
		if strings.HasSuffix(name, ".csv") {
			// Its lines as Spark's text read finds them; its header's
			// names.
			writeFiles(t, lineFiles, map[string]string{"f.csv": f.content})
			lines, _ := localCSVFileLines(filepath.Join(lineFiles, "f.csv"))
			lines.path = "file:" + p
			fake.csvLines = append(fake.csvLines, lines)
			var names []string
			for _, n := range strings.Split(lines.first, ",") {
				names = append(names, n+" STRING")
			}
			fake.csvHeaders[lines.first] = strings.Join(names, ", ")
		}
	}
	fake.schemas["partitionSchema "+root] = binaryFileSchema + "day int"
	typesOf := func(path string) ([]sparkmerge.Field, error) {
		s, err := sparkmerge.ParseSchema(alone[path])
		if err != nil {
			return nil, fmt.Errorf("fake server: no file %s among the lanes", path)
		}
		return s.Fields, nil
	}
	fake.laneTypes = func(l csvLanes) (sparkmerge.Schema, error) {
		lanes := []sparkmerge.Field{{Name: "_c0", Type: sparkmerge.DataType{Kind: sparkmerge.KindString}}}
		for _, f := range l.files {
			fields, err := typesOf(f.path)
			if err != nil {
				return sparkmerge.Schema{}, err
			}
			marker := sparkmerge.KindString
			if f.data {
				marker = sparkmerge.KindInt
			}
			for _, field := range append(fields, sparkmerge.Field{Type: sparkmerge.DataType{Kind: marker}}) {
				lanes = append(lanes, sparkmerge.Field{Name: fmt.Sprintf("_c%d", len(lanes)), Type: field.Type, Nullable: true})
			}
		}
		return sparkmerge.Schema{Fields: lanes}, nil
	}
	fake.jsonTypes = func(l jsonLanes) (sparkmerge.Schema, error) {
		var lanes []sparkmerge.Field
		for i, key := range l.keys {
			fields, err := typesOf(key)
			if err != nil {
				return sparkmerge.Schema{}, err
			}
			lanes = append(lanes, sparkmerge.Field{Name: l.lane(i), Type: sparkmerge.DataType{Kind: sparkmerge.KindStruct, Fields: fields}, Nullable: true},
				sparkmerge.Field{Name: l.marker(i), Type: sparkmerge.DataType{Kind: sparkmerge.KindLong}, Nullable: true})
		}
		return sparkmerge.Schema{Fields: lanes}, nil
	}
	planned, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Paths: []string{root}}}, Strategy: StrategyUnion, SparkInference: true, InferEachFileAlone: eachAlone, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	return plannedTree{planned, fake}
}

// treeRead is what a plan says of a file of a partitioned tree.
type treeRead struct {
	Schema, Data, Pinned, Values string
	Options                      map[string]string
	Overlap                      []string
	NoRows                       bool
}

// treeReads are the plan's reads of files of a tree, by name.
func treeReads(p *Planned) map[string]treeRead {
	out := map[string]treeRead{}
	for _, r := range p.Reads {
		var values string
		if r.partition != nil {
			values = strings.Join(r.partition.values, "/")
		}
		out[r.Name] = treeRead{Schema: r.Schema.String(), Data: r.dataSchema.String(), Pinned: r.pinned, Values: values,
			Options: r.Options, Overlap: r.overlapExprs, NoRows: r.noRows}
	}
	return out
}
