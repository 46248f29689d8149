//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Files read with the wrong reader options, as they come from the field:
// an Excel export separated by ';', a CSV file without a header line, a
// JSON file that is one array, a JSON record printed over several lines.
// The CSV files plan and merge as Spark reads them alone (one column of
// whole lines; the first row taken for names), so the plan warns, naming
// the file and the option; the JSON files fail Spark's inference, and the
// error says to read them with multiLine, not (as Spark's message does)
// with mode=PERMISSIVE, which would make every line a corrupt record.
// Each advice, followed, merges every row. Local files and files only the
// server sees.
func TestMisreadFilesAreNamedWithTheirOption(t *testing.T) {
	t.Parallel()
	files := textFiles(map[string]string{
		"comma.csv":   "id,name,amount\n1,a,10\n2,b,20\n",
		"semi.csv":    "id;name;amount;pincode\n3;c;30;560001\n4;d;40;560002\n",
		"nohdr.csv":   "5,e,50\n6,f,60\n",
		"array.json":  "[{\"id\":7,\"name\":\"g\"},\n{\"id\":8,\"name\":\"h\"}]\n",
		"pretty.json": "{\n  \"id\": 9,\n  \"name\": \"i\"\n}\n",
	})
	dirs := map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)}
	for _, where := range []string{"local", "cluster"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			dir := dirs[where]
			path := func(name string) string { return dir + "/" + name }

			planned, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(path("comma.csv"), path("semi.csv"), path("nohdr.csv"))})
			if err != nil {
				t.Fatal(err)
			}
			if len(planned.Warnings) != 2 {
				t.Fatalf("warnings %q, want one for semi.csv and one for nohdr.csv", planned.Warnings)
			}
			for i, want := range [][]string{
				{fmt.Sprintf("%q", path("semi.csv")), `named "id;name;amount;pincode"`, "separated by ';'", "sep=';'"},
				{fmt.Sprintf("%q", path("nohdr.csv")), "names columns 5, 50", "is not merged", "header=false"},
			} {
				for _, w := range want {
					if !strings.Contains(planned.Warnings[i], w) {
						t.Errorf("warning %d does not say %s: %s", i, w, planned.Warnings[i])
					}
				}
			}
			if text := planned.String(); strings.Count(text, "  warning: source ") != 2 {
				t.Errorf("the plan's text does not show both warnings:\n%s", text)
			}

			// The advice followed: no warning, every row merged.
			advised := spark.Job{Sources: []spark.SourceSpec{
				{Paths: []string{path("comma.csv")}},
				{Paths: []string{path("semi.csv")}, Options: map[string]string{"sep": ";"}},
				{Paths: []string{path("nohdr.csv")}, Options: map[string]string{"header": "false"}, Schema: "id int, name string, amount int"},
			}}
			res, out := merge(t, c, advised)
			if len(res.Warnings) != 0 {
				t.Errorf("warnings after the advice: %q", res.Warnings)
			}
			rows := queryRows(t, fmt.Sprintf("SELECT id, name, amount, pincode FROM parquet.`%s` ORDER BY id", out))
			want := "[[1 a 10 <nil>] [2 b 20 <nil>] [3 c 30 560001] [4 d 40 560002] [5 e 50 <nil>] [6 f 60 <nil>]]"
			if got := fmt.Sprint(rows); got != want {
				t.Errorf("merged %s, want %s", got, want)
			}

			for _, tc := range []struct{ file, local, ids string }{
				{"array.json", "its text starts with '['", "[[7 g] [8 h]]"},
				{"pretty.json", "its first line is not a whole JSON record", "[[9 i]]"},
			} {
				_, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(path(tc.file))})
				if err == nil {
					t.Fatalf("%s planned as JSON lines", tc.file)
				}
				wants := []string{fmt.Sprintf("%q", path(tc.file)), "multiLine=true", "would read its lines as corrupt records"}
				if where == "local" {
					wants = append(wants, tc.local) // the client reads the file's head
				} else {
					wants = append(wants, "if the file is one JSON document")
				}
				for _, w := range wants {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: the error does not say %s: %v", tc.file, w, err)
					}
				}
				_, out := merge(t, c, spark.Job{Sources: pathSources(path(tc.file)), ReaderOptions: map[string]string{"multiLine": "true"},
					Target: spark.Target{Path: filepath.Join(workDir(t), tc.file)}})
				if got := fmt.Sprint(queryRows(t, fmt.Sprintf("SELECT id, name FROM parquet.`%s` ORDER BY id", out))); got != tc.ids {
					t.Errorf("%s with multiLine merged %s, want %s", tc.file, got, tc.ids)
				}
			}
		})
	}
}

// The CLI says the warnings with its flags, in its text and in -o json.
func TestCLIWarnsOfMisreadCSVWithItsFlags(t *testing.T) {
	t.Parallel()
	dir := localFiles(t, textFiles(map[string]string{
		"comma.csv": "id,name\n1,a\n",
		"tabs.csv":  "id\tname\n2\tb\n",
	}))
	warnings := cliPlanWarnings(t, dir+"/comma.csv", dir+"/tabs.csv")
	want := fmt.Sprintf(`source %q: one column, named "id\tname": its values look separated by '\t', not ','; if so, each row is merged as one string: read it with the reader option sep='\t' (--option, or options per source in a job file)`, dir+"/tabs.csv")
	if !slices.Equal(warnings, []string{want}) {
		t.Errorf("warnings %q, want [%q]", warnings, want)
	}
	code, stdout, stderr := cliRun(t, "plan", dir+"/comma.csv", dir+"/tabs.csv")
	if code != 0 || !strings.Contains(stdout, "  warning: "+want+"\n") {
		t.Errorf("plan text (exit code %d) does not show %q:\n%s\n%s", code, want, stdout, stderr)
	}
	code, stdout, stderr = cliRun(t, "merge", dir+"/comma.csv", dir+"/tabs.csv", "--out", filepath.Join(workDir(t), "out"), "-o", "json")
	if code != 0 {
		t.Fatalf("merge: exit code %d; stderr:\n%s", code, stderr)
	}
	validateJSON(t, "merge", stdout)
	if !strings.Contains(stdout, `"warnings":`) || !strings.Contains(stdout, "(--option, or options per source in a job file)") {
		t.Errorf("merge -o json does not hold the warning in the CLI's terms:\n%s", stdout)
	}
}

// A column spelled two ways, as headers edited by hand or written by
// other tools spell it (" amount", "amount "; "Order Id", "order_id"), is
// two columns to Spark, and so to the merge: each null in the rows of the
// files that spell it otherwise. The plan warns, naming the files and the
// rewrite of names that makes them one; an append to a table whose column
// a file spells otherwise fails naming it. Each advice, followed, merges
// every value into one column.
func TestCLINamesColumnsSpelledTwoWays(t *testing.T) {
	t.Parallel()
	dir := localFiles(t, textFiles(map[string]string{
		"a.csv": "id,amount,Order Id\n1,10,o1\n",
		"b.csv": "id, amount,order_id\n2,20,o2\n",
		"c.csv": "id,amount ,order_id\n3,30,o3\n",
	}))
	files := []string{dir + "/a.csv", dir + "/b.csv", dir + "/c.csv"}
	warnings := cliPlanWarnings(t, files...)
	want := []string{
		fmt.Sprintf(`columns "amount", " amount" and "amount " differ only by white space around them: each is merged as a column of its own, null in the rows of the sources that spell it otherwise ("amount" in source 1 %q; " amount" in source 2 %q; "amount " in source 3 %q); to merge them as one column, normalize names with --normalize trim`, files[0], files[1], files[2]),
		fmt.Sprintf(`columns "Order Id" and "order_id" are one name in snake_case: each is merged as a column of its own, null in the rows of the sources that spell it otherwise ("Order Id" in source 1 %q; "order_id" in source 2 %q and 1 more); to merge them as one column, normalize names with --normalize snake_case`, files[0], files[1]),
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings\n got %q\nwant %q", warnings, want)
	}

	// The advice followed: one column of each, every value in it.
	out := filepath.Join(workDir(t), "out")
	code, _, stderr := cliRun(t, append([]string{"merge", "--normalize", "snake_case", "--out", out, "--verify", "-o", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("merge --normalize snake_case: exit code %d; stderr:\n%s", code, stderr)
	}
	if got := fmt.Sprint(queryRows(t, fmt.Sprintf("SELECT * FROM parquet.`%s` ORDER BY id", out))); got != "[[1 10 o1] [2 20 o2] [3 30 o3]]" {
		t.Errorf("merged %s", got)
	}

	// Appended to a table of a.csv's columns, b.csv's " amount" is a
	// column the table lacks; trimmed, it is the table's.
	table := "spark_catalog.default.sm_spelled_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	if code, _, stderr := cliRun(t, "merge", files[0], "--table", table); code != 0 {
		t.Fatalf("create %s: exit code %d; stderr:\n%s", table, code, stderr)
	}
	code, _, stderr = cliRun(t, "merge", files[1], "--table", table, "--mode", "append", "--rename", "order_id=Order Id")
	if wantErr := fmt.Sprintf(`source 1 %q has " amount"; columns "amount" and " amount" differ only by white space around them: to merge them as one column, normalize names with --normalize trim; add them to it first (--evolve)`, files[1]); code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("append of b.csv: exit code %d, stderr:\n%s\nwant it to say %s", code, stderr, wantErr)
	}
	code, _, stderr = cliRun(t, "merge", files[1], "--table", table, "--mode", "append", "--rename", "order_id=Order Id", "--normalize", "trim", "--verify")
	if code != 0 {
		t.Fatalf("append of b.csv with --normalize trim: exit code %d; stderr:\n%s", code, stderr)
	}
	if got := fmt.Sprint(queryRows(t, "SELECT * FROM "+table+" ORDER BY id")); got != "[[1 10 o1] [2 20 o2]]" {
		t.Errorf("table %s", got)
	}
}

// Integers written with leading zeros (ZIP codes, account numbers) in a
// column Spark types as a number lose their zeros, as when Spark reads
// the file alone: the plan warns, naming the column, a file and a value;
// typed as a string, as it advises, every value is merged as written,
// value for value as Spark reads the files' text. Local files and files
// only the server sees.
func TestZeroPaddedNumbersAreNamed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"a.csv": "id,zip,amount\n1,94105,10\n2,02134,12\n",
		"b.csv": "zip,id,amount\n00501,3,5\n10001,4,7\n",
		"c.csv": "id,zip,amount,note\n5,60601,8,x\n",
	})
	for where, dir := range map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)} {
		t.Run(where, func(t *testing.T) {
			paths := []string{dir + "/a.csv", dir + "/b.csv", dir + "/c.csv"}
			planned, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(paths...)})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{fmt.Sprintf(`column zip is merged as int, and source %q and another file hold integers written with leading zeros ("02134", merged as 2134): the zeros are lost; to keep the values as written, type the column as a string (Options.Hints, zip=string)`, paths[0])}
			if !slices.Equal(planned.Warnings, want) {
				t.Errorf("warnings\n got %q\nwant %q", planned.Warnings, want)
			}
			// Appended to a table whose zip is a string, the files' numbers
			// are cast to text, without the zeros: named too (found in the
			// field, where no warning said so).
			table := "spark_catalog.default.sm_zip_" + where + "_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
			exec(t, "CREATE TABLE "+table+" (id int, zip string, amount int, note string) USING parquet")
			t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
			appended, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(paths...), Target: spark.Target{Table: table, Mode: "append"}})
			if err != nil {
				t.Fatal(err)
			}
			want = []string{fmt.Sprintf(`column zip is merged as string, and source %q and another file hold integers written with leading zeros ("02134", merged as "2134"): the zeros are lost; to keep the values as written, type the column as a string (Options.Hints, zip=string)`, paths[0])}
			if !slices.Equal(appended.Warnings, want) {
				t.Errorf("appended to a table's string column: warnings\n got %q\nwant %q", appended.Warnings, want)
			}
			res, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Verify: true,
				Policy: sparkmerge.Options{Hints: map[string]sparkmerge.DataType{"zip": sparkmerge.Simple(sparkmerge.KindString)}}})
			if len(res.Warnings) != 0 {
				t.Errorf("warnings with the hint: %q", res.Warnings)
			}
			var text [][]any
			for i, p := range paths {
				idAt, zipAt := "_c0", "_c1"
				if i == 1 {
					idAt, zipAt = "_c1", "_c0"
				}
				text = append(text, queryRows(t, fmt.Sprintf("SELECT %s, %s FROM csv.`%s` WHERE %s <> 'id'", idAt, zipAt, p, idAt))...)
			}
			sortCells(text)
			got := queryRows(t, fmt.Sprintf("SELECT CAST(id AS string), zip FROM parquet.`%s`", out))
			sortCells(got)
			if len(text) != 5 || fmt.Sprint(got) != fmt.Sprint(text) {
				t.Errorf("merged %v, Spark reads the text %v", got, text)
			}
		})
	}
}

// TestRoundedNumbersAreNamed: a CSV or JSON column Spark types as double that
// holds numbers with more significant digits than a double keeps is
// named by the plan, with the double Spark reads alone (checked: the
// file read alone with inferSchema gives that double); hinted as a
// decimal, every digit is merged and nothing is named. Local files and
// files only the server sees.
func TestRoundedNumbersAreNamed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"a.csv":  "id,pi\n1,1.5\n2,3.14159265358979323846\n",
		"b.csv":  "pi,id\n2.71828182845904523536,3\n",
		"c.csv":  "id,pi\n4,0.25\n",
		"d.json": `{"id":5,"pi":1.41421356237309504880}` + "\n",
	})
	for where, dir := range map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)} {
		t.Run(where, func(t *testing.T) {
			paths := []string{dir + "/a.csv", dir + "/b.csv", dir + "/c.csv", dir + "/d.json"}
			checkLossNamed(t, c, paths, lossNamed{
				column: "pi", alone: "[[double 3.141592653589793]]",
				warning: fmt.Sprintf(`column pi is read as double, and source %q and 2 other files hold numbers with more digits than a double keeps ("3.14159265358979323846", read as 3.141592653589793): the digits past it are lost; to keep them, type the column as a decimal that holds them or as a string (Options.Hints, pi=decimal(38,20) or pi=string)`, paths[0]), // b.csv, d.json
				hint:    sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 38, Scale: 20},
				merged:  "[[1 1.50000000000000000000] [2 3.14159265358979323846] [3 2.71828182845904523536] [4 0.25000000000000000000] [5 1.41421356237309504880]]",
			})
		})
	}
}

// lossNamed is what a plan names that Spark's reading of a file loses
// (see checkLossNamed): column's value of id 2 in the first file as Spark
// reads that file alone (its type and text), the one warning, the hint
// that keeps the values, and the merged rows (id and the column as text,
// by id) with it.
type lossNamed struct {
	column, alone, warning string
	hint                   sparkmerge.DataType
	merged                 string
}

// checkLossNamed plans paths, whose first file holds id 2 with a value
// Spark's reading loses, and checks that Spark reads that file alone as
// want.alone, that the plan warns want.warning and nothing else, and that
// merged with want.hint nothing is named and every value is kept.
func checkLossNamed(t *testing.T, c *spark.Client, paths []string, want lossNamed) {
	t.Helper()
	planned, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(paths...)})
	if err != nil {
		t.Fatal(err)
	}
	view := "loss_alone_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	exec(t, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s USING csv OPTIONS (path %s, header 'true', inferSchema 'true')", view, sparkmerge.QuoteString(paths[0])))
	col := backquote(want.column)
	if alone := queryRows(t, "SELECT typeof("+col+"), CAST("+col+" AS STRING) FROM "+view+" WHERE id = 2"); fmt.Sprint(alone) != want.alone {
		t.Fatalf("Spark reads %s alone as %v, want %s", paths[0], alone, want.alone)
	}
	if !slices.Equal(planned.Warnings, []string{want.warning}) {
		t.Errorf("warnings\n got %q\nwant %q", planned.Warnings, want.warning)
	}
	res, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Verify: true,
		Policy: sparkmerge.Options{Hints: map[string]sparkmerge.DataType{want.column: want.hint}}})
	if len(res.Warnings) != 0 {
		t.Errorf("warnings with the hint: %q", res.Warnings)
	}
	if got := queryRows(t, fmt.Sprintf("SELECT id, CAST(%s AS STRING) FROM parquet.`%s` ORDER BY id", col, out)); fmt.Sprint(got) != want.merged {
		t.Errorf("merged with the hint: %v, want %s", got, want.merged)
	}
}

// A CSV column of times with digits past the microsecond
// (2024-01-05T10:00:00.123456789, as many systems write them) is a
// timestamp to Spark's inference, which keeps microseconds and drops the
// rest without a word. The plan names the column, a file, the value and
// what it is read as (Spark's reading of the file alone), and how many
// other files hold such times; hinted as a string, every time is merged
// as written. Local files and files only the server sees.
func TestTimesPastTheMicrosecondAreNamed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"a.csv": "id,ts\n1,2024-01-05T10:00:00.5\n2,2024-01-05T10:00:00.123456789\n",
		"b.csv": "ts,id\n2024-01-06 11:30:00.0000001,3\n",
		"c.csv": "id,ts\n4,2024-01-07T00:00:00.250000000\n", // zeros past the microsecond: nothing lost
	})
	for where, dir := range map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)} {
		t.Run(where, func(t *testing.T) {
			paths := []string{dir + "/a.csv", dir + "/b.csv", dir + "/c.csv"}
			checkLossNamed(t, c, paths, lossNamed{
				column: "ts", alone: "[[timestamp 2024-01-05 10:00:00.123456]]",
				warning: fmt.Sprintf(`column ts is read as a timestamp, and source %q and another file hold times with digits past the microsecond ("2024-01-05T10:00:00.123456789", read as 2024-01-05T10:00:00.123456): Spark keeps microseconds, and the digits past them are lost; to keep them, type the column as a string (Options.Hints, ts=string)`, paths[0]),
				hint:    sparkmerge.Simple(sparkmerge.KindString),
				merged:  "[[1 2024-01-05T10:00:00.5] [2 2024-01-05T10:00:00.123456789] [3 2024-01-06 11:30:00.0000001] [4 2024-01-07T00:00:00.250000000]]",
			})
		})
	}
}

// A CSV column of numbers or dates that says "no value" with a text
// ("NA") is a string to Spark's inference of its file, and so is the
// merged column; appended to a table of ints, it fails. The plan warns
// and the failure advises, naming the column, the text, a file and the
// type of the other values, which is Spark's with the text read as null;
// followed, the advice (the reader option nullValue) merges every value
// as Spark reads each file alone with it. Local files and files only the
// server sees.
func TestNullTokensAreNamed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"a.csv": "id,amount,day\n1,10,2024-01-01\n2,12,2024-01-02\n",
		"b.csv": "id,amount,day\n3,NA,2024-01-03\n4,25,NA\n5,7,2024-01-05\n",
	})
	table := "spark_catalog.default.sm_tokens_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	exec(t, "CREATE TABLE "+table+" (id int, amount int, day date) USING parquet")
	for where, dir := range map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)} {
		t.Run(where, func(t *testing.T) {
			paths := []string{dir + "/a.csv", dir + "/b.csv"}
			planned, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(paths...)})
			if err != nil {
				t.Fatal(err)
			}
			advice := `if "NA" means no value, read the files with the reader option nullValue=NA (Job.ReaderOptions or SourceSpec.Options), which reads it as null in every column`
			want := []string{
				fmt.Sprintf(`column amount is merged as string only for the text "NA" in source %q, where its other values are int: %s`, paths[1], advice),
				fmt.Sprintf(`column day is merged as string only for the text "NA" in source %q, where its other values are date: %s`, paths[1], advice),
			}
			if !slices.Equal(planned.Warnings, want) {
				t.Errorf("warnings\n got %q\nwant %q", planned.Warnings, want)
			}
			// Spark's types of b.csv with "NA" read as null are the
			// warnings' types of its other values.
			view := "tokens_" + where
			exec(t, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s USING csv OPTIONS (path '%s', header 'true', inferSchema 'true', nullValue 'NA')", view, paths[1]))
			if got := fmt.Sprint(queryRows(t, "SELECT typeof(amount), typeof(day) FROM "+view+" LIMIT 1")); got != "[[int date]]" {
				t.Errorf("Spark types b.csv with nullValue=NA as %s", got)
			}

			_, err = c.Merge(testContext(t), spark.Job{Sources: pathSources(paths[1]), Target: spark.Target{Table: table, Mode: "append"}})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`column amount is a string for the text "NA" in source %q, where its other values are int: %s`, paths[1], advice)) {
				t.Errorf("append of b.csv to a table of ints: %v", err)
			}

			advised := spark.Job{Sources: pathSources(paths...), ReaderOptions: map[string]string{"nullValue": "NA"}, Verify: true}
			res, out := merge(t, c, advised)
			if len(res.Warnings) != 0 {
				t.Errorf("warnings after the advice: %q", res.Warnings)
			}
			mergedAsEachAlone(t, out, paths, "nullValue 'NA'", "CAST(id AS string), CAST(amount AS string), CAST(day AS string)", 5)
			if typ := fmt.Sprint(queryRows(t, fmt.Sprintf("SELECT typeof(amount), typeof(day) FROM parquet.`%s` LIMIT 1", out))); typ != "[[int date]]" {
				t.Errorf("merged as %s", typ)
			}
		})
	}
}

// A Parquet file as pandas writes it by default has its timestamps in
// nanoseconds, which Spark refuses to read ("Illegal Parquet type: INT64
// (TIMESTAMP(NANOS,false))"): the error names the file and says how to
// write it so that Spark reads it, or how to read the column as a number.
// Local files and files only the server sees.
func TestPandasNanosecondTimestampsAreNamed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	data, err := os.ReadFile("testdata/pandas/nanos.parquet")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"nanos.parquet": data}
	for where, dir := range map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)} {
		_, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(dir + "/nanos.parquet")})
		for _, want := range []string{fmt.Sprintf("read source %q", dir+"/nanos.parquet"), "TIMESTAMP(NANOS", `coerce_timestamps="us"`, "spark.sql.legacy.parquet.nanosAsLong=true"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error does not say %s: %v", where, want, err)
			}
		}
	}
}

// cliPlanWarnings are the warnings of sparkmerge plan -o json of args,
// its output checked against the JSON schema.
func cliPlanWarnings(t *testing.T, args ...string) []string {
	t.Helper()
	code, stdout, stderr := cliRun(t, append([]string{"plan", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("plan: exit code %d; stderr:\n%s", code, stderr)
	}
	validateJSON(t, "plan", stdout)
	var plan struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("plan -o json is not JSON: %v\n%s", err, stdout)
	}
	return plan.Warnings
}

// A CSV value in quotes that runs over several lines fails the merge where
// Spark reads the file line by line (no multiLine): the error now holds
// Spark's causes (the record it could not parse; Spark 4 and later) and
// says to read with multiLine=true; followed, the advice merges every
// value as Spark reads each file alone with it. Local files and files
// only the server sees.
func TestCSVValueOverLinesIsNamedWithMultiLine(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"a.csv": "id,note,amount\n1,\"hello\nworld\",10\n2,plain,20\n",
		"b.csv": "id,note,amount\n3,x,30\n",
	})
	for where, dir := range map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)} {
		t.Run(where, func(t *testing.T) {
			paths := []string{dir + "/a.csv", dir + "/b.csv"}
			_, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(paths...), Target: spark.Target{Path: filepath.Join(workDir(t), "failed")}})
			wants := []string{"a.csv", "Caused by: ", `Malformed CSV record: 1,"hello`, "multiLine=true"}
			if strings.HasPrefix(sparkVersion(t), "3.") {
				// Spark 3.5 keeps no causes for FetchErrorDetails (PySpark
				// shows none either): its message names the file alone.
				wants = []string{"a.csv", "Caused by: ", "Encountered error while reading file"}
			}
			for _, want := range wants {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %s: %v", want, err)
				}
			}
			res, out := merge(t, c, spark.Job{Sources: pathSources(paths...), ReaderOptions: map[string]string{"multiLine": "true"}, Verify: true})
			if !res.Verified {
				t.Error("not verified")
			}
			mergedAsEachAlone(t, out, paths, "multiLine 'true'", "CAST(id AS string), note, CAST(amount AS string)", 3)
		})
	}
}

// mergedAsEachAlone checks the Parquet output out, its rows of the
// selected columns (cast to text), against Spark's read of each CSV file
// of paths alone (header, inferSchema and the reader option, in SQL's
// OPTIONS syntax): the same rows, want of them.
func mergedAsEachAlone(t *testing.T, out string, paths []string, option, columns string, want int) {
	t.Helper()
	var alone [][]any
	for i, p := range paths {
		view := fmt.Sprintf("alone_%s_%d", strings.ReplaceAll(uuid.NewString()[:8], "-", ""), i)
		exec(t, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s USING csv OPTIONS (path '%s', header 'true', inferSchema 'true', %s)", view, p, option))
		alone = append(alone, queryRows(t, fmt.Sprintf("SELECT %s FROM %s", columns, view))...)
	}
	got := queryRows(t, fmt.Sprintf("SELECT %s FROM parquet.`%s`", columns, out))
	sortCells(alone)
	sortCells(got)
	if len(got) != want || fmt.Sprint(got) != fmt.Sprint(alone) {
		t.Errorf("merged %q, Spark reads each file alone %q", got, alone)
	}
}
