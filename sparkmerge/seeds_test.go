package sparkmerge

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// schema parses a DDL column list or fails the test.
func schema(t testing.TB, ddl string) Schema {
	t.Helper()
	s, err := ParseSchema(ddl)
	if err != nil {
		t.Fatalf("ParseSchema(%q): %v", ddl, err)
	}
	return s
}

// typ parses a SQL type or fails the test.
func typ(t testing.TB, s string) DataType {
	t.Helper()
	d, err := ParseType(s)
	if err != nil {
		t.Fatalf("ParseType(%q): %v", s, err)
	}
	return d
}

type seedCase struct {
	name      string
	sources   []Source
	opts      Options
	relations []string
	// wantTarget is the target schema the article prints, as DDL.
	wantTarget string
}

// seedCases are the five scenarios of ../shared/seeds (see README.md there).
func seedCases(t testing.TB) []seedCase {
	return []seedCase{{
		// 000: two JSON files; the second adds pincode. Spark's JSON
		// inference reads every value here as a string and sorts the
		// columns by name, which OrderSorted reproduces.
		name: "000_json_pincode",
		sources: []Source{
			{Name: "one.json", Schema: schema(t, "age string, area string, city string, gender string, name string, profession string")},
			{Name: "two.json", Schema: schema(t, "age string, area string, city string, gender string, name string, pincode string, profession string")},
		},
		opts:       Options{Order: OrderSorted},
		relations:  []string{"json.`s3a://bucket/prefix/one.json`", "json.`s3a://bucket/prefix/two.json`"},
		wantTarget: "age string, area string, city string, gender string, name string, pincode string, profession string",
	}, {
		// 001: three employee CSVs. The article does not show their
		// contents; these schemas are invented, drifting the way such
		// files do: an id that grows to bigint, a salary that is int,
		// double and decimal, a header spelled Dept, a column added in
		// each file. The provenance column records the file.
		name: "001_employees",
		sources: []Source{
			{Name: "emp_data1.csv", Schema: schema(t, "emp_id int, name string, dept string, salary int")},
			{Name: "emp_data2.csv", Schema: schema(t, "emp_id int, name string, dept string, salary double, joining_date date")},
			{Name: "emp_data3.csv", Schema: schema(t, "emp_id bigint, name string, Dept string, salary decimal(10,2), email string")},
		},
		opts:       Options{SourceColumn: "_source"},
		relations:  []string{"emp_data1", "emp_data2", "emp_data3"},
		wantTarget: "emp_id bigint, name string, dept string, salary double, joining_date date, email string, _source string NOT NULL",
	}, {
		// 002: tide CSVs read with inferSchema; the second drops Region
		// and adds ReadingId and TideNumber. The article's result has 8
		// columns in first-seen order.
		name: "002_tides",
		sources: []Source{
			{Name: "TestFile1.csv", Schema: schema(t, "Date date, Region string, Location string, Tide string, TimeUTC int, Height double")},
			{Name: "TestFile2.csv", Schema: schema(t, "Date date, ReadingId string, Location string, Tide string, TimeUTC int, Height double, TideNumber int")},
		},
		relations:  []string{"tides_1", "tides_2"},
		wantTarget: "Date date, Region string, Location string, Tide string, TimeUTC int, Height double, ReadingId string, TideNumber int",
	}, {
		// 003: superunionall(newdf, olddf): the new frame is the
		// reference; old rows get weight null.
		name: "003_superunionall",
		sources: []Source{
			{Name: "newdf", Schema: schema(t, "name string, age int, hight double, weight double")},
			{Name: "olddf", Schema: schema(t, "name string, age int, hight double")},
		},
		opts:       Options{Missing: MissingReference, ReferenceSource: "newdf"},
		relations:  []string{"newdf", "olddf"},
		wantTarget: "name string, age int, hight double, weight double",
	}, {
		// 004: unionByName on identical (id, name) frames built from a
		// Java bean (primitive int id: not nullable): schema unchanged.
		name: "004_identical",
		sources: []Source{
			{Name: "df1", Schema: schema(t, "id int NOT NULL, name string")},
			{Name: "df2", Schema: schema(t, "id int NOT NULL, name string")},
		},
		relations:  []string{"df1", "df2"},
		wantTarget: "id int NOT NULL, name string",
	}}
}

func TestSeeds(t *testing.T) {
	for _, c := range seedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.sources, c.opts)
			if err != nil {
				t.Fatalf("NewPlan: %v", err)
			}
			if diff := cmp.Diff(schema(t, c.wantTarget), p.Target); diff != "" {
				t.Errorf("target schema (-want +got):\n%s", diff)
			}
			js, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("MarshalJSON: %v", err)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, js, "", "  "); err != nil {
				t.Fatalf("indent JSON: %v", err)
			}
			indented.WriteByte('\n')
			sql, err := p.SQL(c.relations)
			if err != nil {
				t.Fatalf("SQL: %v", err)
			}
			dir := filepath.Join("testdata", "golden", c.name)
			golden(t, filepath.Join(dir, "plan.txt"), p.String())
			golden(t, filepath.Join(dir, "plan.json"), indented.String())
			golden(t, filepath.Join(dir, "union.sql"), sql+"\n")
		})
	}
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sparkmerge -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}
