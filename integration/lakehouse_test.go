//go:build integration

package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Delta Lake and Iceberg targets, on the harness's Spark: the images of
// the Spark lines scripts/lib.sh SPARKMERGE_TABLE_FORMAT_PINS names (3.5,
// 4.0 and 4.1) carry both, Delta's catalog as spark_catalog, and an
// Iceberg catalog named iceberg. Spark 3.5 has Delta 3, whose type
// widening changes fewer types (deltaPreview).

// lakehouseFormats are the formats tested, with the catalog their tables
// are made in.
var lakehouseFormats = []struct {
	format  string
	catalog string // the table name's first parts
}{
	{"delta", "spark_catalog"},
	{"iceberg", "iceberg"},
}

// requireTableFormat skips the test, with the reason, when the server
// has no catalog for format (a Spark line without table formats).
func requireTableFormat(t *testing.T, format string) {
	t.Helper()
	key, want := "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
	if format == "iceberg" {
		key, want = "spark.sql.catalog.iceberg", "org.apache.iceberg.spark.SparkCatalog"
	}
	rows := queryRows(t, "SET "+key)
	if len(rows) != 1 || rows[0][1] != want {
		version := sparkVersion(t)
		pinned, err := pinnedTableFormats(version)
		if os.Getenv("CI") == "true" {
			if err != nil {
				t.Fatalf("the server has no %s catalog (%s = %v), and which formats Spark %s should carry is unknown: %v", format, key, rows, version, err)
			}
			if _, ok := pinned[format]; ok {
				t.Fatalf("the server of Spark %s has no %s catalog (%s = %v): the image lacks the table formats scripts/lib.sh pins for its line (%v)", version, format, key, rows, pinned)
			}
		}
		t.Skipf("the server has no %s catalog (%s = %v): Spark %s's image carries no %s (scripts/lib.sh pins %v for its line; %v)", format, key, rows, version, format, pinned, err)
	}
}

var (
	pinnedFormatsOnce sync.Map // Spark version -> func() (map[string]string, error)
)

// pinnedTableFormats are the table formats scripts/lib.sh pins for the
// line of Spark version (SPARKMERGE_TABLE_FORMATS: "delta=3.3.3,..."),
// none for a line without pins; an error for a version lib.sh does not
// pin.
func pinnedTableFormats(version string) (map[string]string, error) {
	f, _ := pinnedFormatsOnce.LoadOrStore(version, sync.OnceValues(func() (map[string]string, error) {
		cmd := osexec.Command("bash", "-c", `. ../scripts/lib.sh && printf '%s' "$SPARKMERGE_TABLE_FORMATS"`)
		cmd.Env = append(os.Environ(), "SPARK_VERSION="+version, "SPARKMERGE_SPARK_IMAGE=")
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("scripts/lib.sh for Spark %s: %w", version, err)
		}
		if len(out) == 0 {
			return map[string]string{}, nil
		}
		return localspark.ParseTableFormats(string(out)), nil
	}))
	return f.(func() (map[string]string, error))()
}

// deltaPreview reports whether format is Delta and the server's Delta is
// 3.x (Spark 3.5's), whose type widening changes only tinyint to
// smallint or int and smallint to int.
func deltaPreview(t *testing.T, format string) bool {
	t.Helper()
	return format == "delta" && strings.HasPrefix(sparkVersion(t), "3.")
}

// sparkVersion is the harness's Spark version.
func sparkVersion(t *testing.T) string {
	t.Helper()
	rows := queryRows(t, "SELECT version()")
	v, _ := rows[0][0].(string)
	version, _, _ := strings.Cut(v, " ")
	return version
}

// lakehouseTable is a fresh table name of a test in the format's catalog:
// three parts, catalog.schema.table.
func lakehouseTable(t *testing.T, catalog, schema string) string {
	t.Helper()
	exec(t, fmt.Sprintf("CREATE SCHEMA IF NOT EXISTS %s.%s", catalog, schema))
	name := fmt.Sprintf("%s.%s.t%d_%d", catalog, schema, os.Getpid(), rand.Uint32())
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+name) })
	return name
}

// commits are a table's commits, oldest first: Delta's history
// ("version operation numOutputRows") or Iceberg's snapshots
// ("operation added-records").
func commits(t *testing.T, format, table string) []string {
	t.Helper()
	var out []string
	if format == "delta" {
		rows := queryRows(t, "DESCRIBE HISTORY "+table)
		for i := len(rows) - 1; i >= 0; i-- {
			out = append(out, fmt.Sprintf("%v %v", rows[i][4], outputRows(rows[i][12])))
		}
		return out
	}
	rows := queryRows(t, "SELECT operation, summary['added-records'] FROM "+table+".snapshots ORDER BY committed_at")
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v %v", r[0], r[1]))
	}
	return out
}

// outputRows is Delta's numOutputRows of a history row's operationMetrics
// as the upstream client collects a map, or "-".
func outputRows(metrics any) string {
	if m, ok := metrics.(map[any]any); ok {
		if v, ok := m["numOutputRows"]; ok {
			return fmt.Sprint(v)
		}
	}
	return "-"
}

// The done-when of issue 36: `merge landing/ --table T --table-format F
// --mode append --evolve --verify` creates the table, then evolves it (a
// column added, an int widened to bigint, a nested field added) and
// verifies each append by the table's own history; the rows read back
// value by value.
func TestLakehouseAppendEvolveVerify(t *testing.T) {
	t.Parallel()
	for _, f := range lakehouseFormats {
		t.Run(f.format, func(t *testing.T) {
			t.Parallel()
			requireTableFormat(t, f.format)
			table := lakehouseTable(t, f.catalog, "lake")
			dir := workDir(t)
			day := func(name, file, content string) string {
				d := filepath.Join(dir, name)
				writeFiles(t, d, map[string]string{file: content}, file)
				return d
			}
			// Delta 3 (Spark 3.5) does not widen int to bigint
			// (TestLakehouseWidening): there day 1's ids are bigint
			// already (JSON's integers), and nothing widens.
			preview := deltaPreview(t, f.format)
			day1, firstID := day("day1", "a.csv", "id,name\n1,x\n2,y\n"), "int"
			widen := []map[string]string{{"column": "id", "from": "int", "to": "bigint"}}
			if preview {
				day1, firstID, widen = day("day1-json", "a.json", `{"id": 1, "name": "x"}`+"\n"+`{"id": 2, "name": "y"}`+"\n"), "bigint", nil
			}
			day2 := day("day2", "b.json", `{"id": 5000000000, "name": "z", "attrs": {"a": 7}}`+"\n")
			day3 := day("day3", "c.json", `{"id": 3, "attrs": {"a": 8, "b": "deep"}, "score": 1.5}`+"\n")
			run := func(landing string, want ...string) {
				t.Helper()
				code, stdout, stderr := cliRun(t, "merge", landing, "--table", table, "--table-format", f.format,
					"--mode", "append", "--evolve", "--verify", "-o", "text")
				if code != 0 {
					t.Fatalf("merge %s: exit code %d; stderr:\n%s", landing, code, stderr)
				}
				for _, w := range want {
					if !strings.Contains(stdout, w) {
						t.Errorf("merge %s: stdout does not say %q:\n%s", landing, w, stdout)
					}
				}
			}
			run(day1, "table "+table+": created by the merge ("+f.format+")", "wrote 2 rows to table", "("+f.format+", mode append)", "verified: 2 rows written = 2 rows read")

			// plan --table shows the table beside the sources and what the
			// append would do, in text and JSON, and changes nothing.
			code, stdout, stderr := cliRun(t, "plan", day2, "--table", table, "-o", "text")
			wantPlan := []string{"table " + table + " (" + f.format + "): id " + firstID + ", name string", "evolve: add attrs struct<a:bigint>"}
			if !preview {
				wantPlan = append(wantPlan, "evolve: widen id int -> bigint")
			}
			for _, w := range wantPlan {
				if code != 0 || !strings.Contains(stdout, w) {
					t.Errorf("plan --table: exit %d, stdout does not say %q:\n%s%s", code, w, stdout, stderr)
				}
			}
			code, stdout, stderr = cliRun(t, "plan", day2, "--table", table, "-o", "json")
			var planned struct {
				Table struct {
					Format    string `json:"format"`
					Exists    bool   `json:"exists"`
					Evolution struct {
						Widen []map[string]string `json:"widen_columns"`
						Add   []map[string]string `json:"add_columns"`
					} `json:"evolution"`
				} `json:"table"`
			}
			if err := json.Unmarshal([]byte(stdout), &planned); code != 0 || err != nil {
				t.Fatalf("plan --table -o json: exit %d, %v:\n%s%s", code, err, stdout, stderr)
			}
			validateJSON(t, "plan", stdout)
			diff(t, "plan --table -o json", []any{f.format, true, widen, []map[string]string{{"column": "attrs", "to": "struct<a:bigint>"}}},
				[]any{planned.Table.Format, planned.Table.Exists, planned.Table.Evolution.Widen, planned.Table.Evolution.Add})
			// A column the format cannot change: a conflict, exit code 3.
			clash := day("clash", "d.json", `{"id": 1, "name": [1]}`+"\n")
			code, stdout, stderr = cliRun(t, "plan", clash, "--table", table, "-o", "text")
			if code != 3 || !strings.Contains(stdout, "conflict: name: string in the table, array<bigint> in the sources: no common type") ||
				!strings.Contains(stderr, `"name" is string in the table and array<bigint> in the sources: no common type`) {
				t.Errorf("plan --table with a conflict: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			code, stdout, _ = cliRun(t, "plan", clash, "--table", table, "-o", "json")
			var conflicted struct {
				Table struct {
					Evolution struct {
						Conflicts []map[string]string `json:"conflicts"`
					} `json:"evolution"`
				} `json:"table"`
			}
			if err := json.Unmarshal([]byte(stdout), &conflicted); code != 3 || err != nil {
				t.Fatalf("plan --table -o json with a conflict: exit %d, %v (one document):\n%s", code, err, stdout)
			}
			validateJSON(t, "plan", stdout)
			diff(t, "conflicts in JSON", []map[string]string{{"column": "name", "table_type": "string", "merged_type": "array<bigint>", "reason": "no common type"}}, conflicted.Table.Evolution.Conflicts)
			if preview {
				run(day2, "evolve: add attrs struct<a:bigint>", "verified: 1 rows written = 1 rows read")
			} else {
				run(day2, "evolve: widen id int -> bigint", "evolve: add attrs struct<a:bigint>", "verified: 1 rows written = 1 rows read")
			}
			run(day3, "evolve: add attrs.b string, score double", "verified: 1 rows written = 1 rows read")

			schema := queryRows(t, "DESCRIBE TABLE "+table)
			var cols []string
			for _, r := range schema {
				if name, _ := r[0].(string); name != "" && !strings.HasPrefix(name, "#") {
					cols = append(cols, fmt.Sprintf("%v %v", r[0], r[1]))
				}
			}
			diff(t, "schema", []string{"id bigint", "name string", "attrs struct<a:bigint,b:string>", "score double"}, cols[:4])
			rows := queryRows(t, "SELECT id, name, attrs.a, attrs.b, score FROM "+table+" ORDER BY id")
			diff(t, "rows", [][]any{
				row(int64(1), "x", nil, nil, nil),
				row(int64(2), "y", nil, nil, nil),
				row(int64(3), nil, int64(8), "deep", 1.5),
				row(int64(5000000000), "z", int64(7), nil, nil),
			}, rows)
			want := map[string][]string{
				"delta": {"CREATE TABLE AS SELECT 2", "SET TBLPROPERTIES -", "CHANGE COLUMN -", "ADD COLUMNS -", "WRITE 1", "ADD COLUMNS -", "WRITE 1"},
				// Iceberg's schema changes make no snapshot.
				"iceberg": {"append 2", "append 1", "append 1"},
			}[f.format]
			if preview {
				want = []string{"CREATE TABLE AS SELECT 2", "ADD COLUMNS -", "WRITE 1", "ADD COLUMNS -", "WRITE 1"}
			}
			diff(t, "commits", want, commits(t, f.format, table))
		})
	}
}

// A widening the format cannot do is a conflict naming the column and
// why; nothing is written or changed. Each format's own widening passes
// (decimal precision for Iceberg, int to double for Delta).
func TestLakehouseWidening(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		table, source, schema, widened, refused string
	}{
		// Delta widens int to double, but not bigint to double.
		"delta": {"ok int, bad bigint", "ok,bad\n1.5,2.5\n", "ok double, bad double", "ok double",
			`"bad" is bigint in the table and double in the sources: Delta's type widening does not change bigint to double`},
		// Delta 3 (Spark 3.5) widens smallint to int, but not int to bigint.
		"delta 3": {"ok smallint, bad int", "ok,bad\n7,5000000000\n", "ok int, bad bigint", "ok int",
			`"bad" is int in the table and bigint in the sources: the server's Delta 3 (Spark 3.5) does not change int to bigint`},
		"iceberg": {"ok decimal(5,2), bad int", "ok,bad\n1234.56,2.5\n", "ok decimal(6,2), bad double", "ok decimal(6,2)",
			`"bad" is int in the table and double in the sources: Iceberg does not change int to double`},
	}
	for _, f := range lakehouseFormats {
		t.Run(f.format, func(t *testing.T) {
			t.Parallel()
			requireTableFormat(t, f.format)
			name := f.format
			if deltaPreview(t, f.format) {
				name = "delta 3"
			}
			tc := cases[name]
			c := newClient(t)
			table := lakehouseTable(t, f.catalog, "lake")
			exec(t, fmt.Sprintf("CREATE TABLE %s (%s) USING %s", table, tc.table, f.format), "INSERT INTO "+table+" VALUES (1, 1)")
			before := commits(t, f.format, table)
			paths := writeFiles(t, workDir(t), map[string]string{"a.csv": tc.source}, "a.csv")
			job := spark.Job{Sources: []spark.SourceSpec{{Paths: paths, Schema: tc.schema}}, Target: spark.Target{Table: table, Mode: "append", Evolve: true}, Verify: true}
			_, err := c.Merge(testContext(t), job)
			var conflict *sparkmerge.EvolutionConflictError
			if !errors.As(err, &conflict) || !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("err = %v, want a conflict saying %q", err, tc.refused)
			}
			diff(t, "commits after the refused merge", before, commits(t, f.format, table))

			// Without the column the format cannot widen, the other widens.
			ok, _, _ := strings.Cut(tc.schema, ", bad")
			value := strings.Split(strings.Split(tc.source, "\n")[1], ",")[0]
			paths = writeFiles(t, workDir(t), map[string]string{"b.csv": "ok\n" + value + "\n"}, "b.csv")
			job.Sources = []spark.SourceSpec{{Paths: paths, Schema: ok}}
			res, err := c.Merge(testContext(t), job)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified || res.RowsWritten != 1 {
				t.Errorf("verified %v, rows written %d, want 1 verified", res.Verified, res.RowsWritten)
			}
			schema := queryRows(t, "DESCRIBE TABLE "+table)
			diff(t, "widened column", tc.widened, fmt.Sprintf("%v %v", schema[0][0], schema[0][1]))
			rows := queryRows(t, "SELECT CAST(ok AS string) FROM "+table+" ORDER BY ok")
			wantOK := map[string][][]any{"delta": {row("1.0"), row("1.5")}, "delta 3": {row("1"), row("7")}, "iceberg": {row("1.00"), row("1234.56")}}[name]
			diff(t, "values of the widened column", wantOK, rows)
		})
	}
}

// Overwrite and a failed merge: a value that fails mid-write leaves the
// table at its previous version (no commit, the same rows); an overwrite
// is one commit that keeps the table's properties, comment and
// partitioning and replaces every row, verified by its history; a
// partitioned table created by the merge has the partitioning and
// properties asked.
func TestLakehouseOverwriteAndFailure(t *testing.T) {
	t.Parallel()
	for _, f := range lakehouseFormats {
		t.Run(f.format, func(t *testing.T) {
			t.Parallel()
			requireTableFormat(t, f.format)
			c := newClient(t)
			table := lakehouseTable(t, f.catalog, "lake")
			dir := workDir(t)
			good := writeFiles(t, dir, map[string]string{"good.csv": "id,day\n1,a\n2,b\n3,a\n"}, "good.csv")
			job := spark.Job{
				Sources: pathSources(good...),
				Target: spark.Target{Table: table, Format: f.format, Mode: "append", PartitionBy: []string{"day"},
					Properties: map[string]string{"team": "data"}},
				Verify: true,
			}
			if _, err := c.Merge(testContext(t), job); err != nil {
				t.Fatal(err)
			}
			props := queryRows(t, "SHOW TBLPROPERTIES "+table+" ('team')")
			diff(t, "property", "data", props[0][1])
			exec(t, "COMMENT ON TABLE "+table+" IS 'events'")
			before := commits(t, f.format, table)

			// The second file's id is no int: under FAILFAST the write job
			// fails on it, after the first file's rows were read.
			bad := writeFiles(t, dir, map[string]string{"bad.csv": "id,day\n4,c\nfour,c\n"}, "bad.csv")
			failing := job
			failing.Target.Mode = "overwrite"
			failing.Sources = []spark.SourceSpec{{Paths: good, Schema: "id int, day string"}, {Paths: bad, Schema: "id int, day string"}}
			if _, err := c.Merge(testContext(t), failing); err == nil {
				t.Fatal("the overwrite with a value that is no int succeeded")
			}
			diff(t, "commits after the failed overwrite", before, commits(t, f.format, table))
			rows := queryRows(t, "SELECT id, day FROM "+table+" ORDER BY id")
			diff(t, "rows after the failed overwrite", [][]any{row(int32(1), "a"), row(int32(2), "b"), row(int32(3), "a")}, rows)

			over := writeFiles(t, dir, map[string]string{"over.csv": "id,day\n7,z\n8,z\n"}, "over.csv")
			job.Sources, job.Target.Mode = pathSources(over...), "overwrite"
			res, err := c.Merge(testContext(t), job)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified || res.RowsWritten != 2 {
				t.Errorf("verified %v, rows written %d, want 2 verified", res.Verified, res.RowsWritten)
			}
			// The properties asked for again apply to a table the merge
			// creates: said, not silently dropped (found in the field).
			if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "keeps its own properties: team not set") }) {
				t.Errorf("warnings %q, want the table's properties kept said", res.Warnings)
			}
			rows = queryRows(t, "SELECT id, day FROM "+table+" ORDER BY id")
			diff(t, "rows after the overwrite", [][]any{row(int32(7), "z"), row(int32(8), "z")}, rows)
			after := commits(t, f.format, table)
			if len(after) != len(before)+1 || !strings.HasSuffix(after[len(after)-1], " 2") {
				t.Errorf("commits %q after %q, want one more that added 2 rows", after, before)
			}
			desc := queryRows(t, "DESCRIBE TABLE EXTENDED "+table)
			info := map[string]string{}
			for i, r := range desc {
				name := strings.TrimSpace(fmt.Sprint(r[0]))
				info[name] = strings.TrimSpace(fmt.Sprint(r[1]))
				if name == "# Partition Information" && i+2 < len(desc) {
					info["partitioned by"] = fmt.Sprint(desc[i+2][0])
				}
			}
			diff(t, "comment, partitioning and properties kept", []string{"events", "day", "true"},
				[]string{info["Comment"], info["partitioned by"], fmt.Sprint(strings.Contains(info["Table Properties"], "team=data"))})

			// Under a session's dynamic partition overwrite (many clusters
			// set it for everyone) an overwrite still replaces every row:
			// the z rows go, though the merge wrote day y alone (found in
			// the field: Delta kept them, and verify passed).
			dynamic, err := connectPatiently(t, testContext(t), requireSpark(t), spark.ConnectOptions{UserAgent: "sparkmerge-integration",
				Conf: map[string]string{"spark.sql.sources.partitionOverwriteMode": "dynamic"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { dynamic.Close() })
			job.Sources = pathSources(writeFiles(t, dir, map[string]string{"again.csv": "id,day\n9,y\n"}, "again.csv")...)
			if res, err = dynamic.Merge(testContext(t), job); err != nil || !res.Verified {
				t.Fatalf("overwrite under dynamic partition overwrite: %v", err)
			}
			exec(t, "REFRESH TABLE "+table) // (the test's session caches Iceberg's tables)
			diff(t, "rows after an overwrite under dynamic partition overwrite", [][]any{row(int32(9), "y")}, queryRows(t, "SELECT id, day FROM "+table+" ORDER BY id"))

			// A file of its header alone overwrites with no rows, verified
			// (Iceberg's snapshot summary has no added-records when 0:
			// found in the field, where verify failed the committed write).
			job.Sources = pathSources(writeFiles(t, dir, map[string]string{"header.csv": "id,day\n"}, "header.csv")...)
			if res, err = c.Merge(testContext(t), job); err != nil || !res.Verified || res.RowsWritten != 0 {
				t.Fatalf("overwrite by a file of its header alone: %v", err)
			}
			diff(t, "rows after an overwrite by a file of its header alone", [][]any{}, queryRows(t, "SELECT id, day FROM "+table+" ORDER BY id"))
		})
	}
}

// A Delta table at a path (--out P --out-format delta) is written and
// evolved by Delta itself, never staged by moving its files, and verified
// by its history.
func TestLakehouseDeltaPath(t *testing.T) {
	t.Parallel()
	requireTableFormat(t, "delta")
	c := newClient(t)
	dir := workDir(t)
	out := filepath.Join(dir, "events")
	first := writeFiles(t, dir, map[string]string{"a.csv": "id,name\n1,x\n"}, "a.csv")
	job := spark.Job{Sources: pathSources(first...), Target: spark.Target{Path: out, Format: "delta", Mode: "append", Evolve: true}, Verify: true}
	if _, err := c.Merge(testContext(t), job); err != nil {
		t.Fatal(err)
	}
	second := writeFiles(t, dir, map[string]string{"b.csv": "id,note\n5000000000,new\n"}, "b.csv")
	job.Sources = pathSources(second...)
	wantID := int64(5000000000)
	if deltaPreview(t, "delta") {
		// Delta 3 (Spark 3.5) does not widen int to bigint: refused, and
		// an id that fits an int is appended instead.
		_, err := c.Merge(testContext(t), job)
		var conflict *sparkmerge.EvolutionConflictError
		if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "the server's Delta 3 (Spark 3.5) does not change int to bigint") {
			t.Fatalf("err = %v, want Delta 3's conflict over int to bigint", err)
		}
		wantID = 2
		job.Sources = pathSources(writeFiles(t, dir, map[string]string{"c.csv": "id,note\n2,new\n"}, "c.csv")...)
	}
	res, err := c.Merge(testContext(t), job)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.RowsWritten != 1 {
		t.Errorf("verified %v, rows written %d, want 1 verified", res.Verified, res.RowsWritten)
	}
	rows := queryRows(t, "SELECT CAST(id AS bigint), name, note FROM delta.`"+out+"` ORDER BY id")
	diff(t, "rows", [][]any{row(int64(1), "x", nil), row(wantID, nil, "new")}, rows)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "sparkmerge") {
			t.Errorf("staging left beside the Delta path: %s", e.Name())
		}
	}
}

// A table's column with a DEFAULT, which the table fills where a write
// leaves it out, is never merged as NULL from sources that lack it (found
// in the field: "new" came out NULL, verify passing): the plan is
// refused, naming the column, its default and the source; sources that
// have the column merge.
func TestTableDefaultsAreNotNulled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ format, catalog, properties string }{
		{"parquet", "spark_catalog", ""},
		{"delta", "spark_catalog", " TBLPROPERTIES ('delta.feature.allowColumnDefaults' = 'supported')"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			if tc.format != "parquet" {
				requireTableFormat(t, tc.format)
			}
			c := newClient(t)
			table := lakehouseTable(t, tc.catalog, "dflt")
			exec(t, "CREATE TABLE "+table+" (id int, note string DEFAULT 'new') USING "+tc.format+tc.properties)
			dir := workDir(t)
			lacking := writeFiles(t, dir, map[string]string{"lacking.csv": "id\n1\n"}, "lacking.csv")
			job := spark.Job{Sources: pathSources(lacking...), Target: spark.Target{Table: table, Mode: "append"}, Verify: true}
			_, err := c.Merge(testContext(t), job)
			if err == nil || !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "column `note` is a column with a default value (DEFAULT 'new')") {
				t.Fatalf("a source without the column of a default: %v", err)
			}
			if tc.format == "delta" {
				// A NOT NULL column a source lacks is refused alike, before
				// a row is read (Delta refused it at the write).
				required := lakehouseTable(t, tc.catalog, "required")
				exec(t, "CREATE TABLE "+required+" (id int, note string NOT NULL) USING delta")
				before := commits(t, "delta", required)
				_, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(writeFiles(t, dir, map[string]string{"ids.csv": "id\n1\n"}, "ids.csv")...), Target: spark.Target{Table: required, Mode: "append"}})
				if err == nil || !errors.Is(err, sparkmerge.ErrSchemaConflict) || !strings.Contains(err.Error(), "column `note` is NOT NULL in the table") {
					t.Errorf("a source without a NOT NULL column: %v", err)
				}
				diff(t, "commits", before, commits(t, "delta", required))
			}
			having := writeFiles(t, dir, map[string]string{"having.csv": "id,note\n2,x\n"}, "having.csv")
			job.Sources = pathSources(having...)
			if res, err := c.Merge(testContext(t), job); err != nil || !res.Verified {
				t.Fatalf("a source with the column: %v", err)
			}
			diff(t, "rows", [][]any{row(int32(2), "x")}, queryRows(t, "SELECT id, note FROM "+table))
		})
	}
}

// An append to a table of Spark's own catalog that another writer made
// partitioned, or in CSV or ORC, is written in the table's format and by
// its partition columns (found in the field: Spark's writer refused the
// partitioned Parquet table as "Specified partitioning does not match"
// and the CSV and ORC ones as not of the default Parquet format), with
// and without verify's staging; the rows land in their columns.
func TestAppendToPlainTablesOfOtherWriters(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	files := writeFiles(t, dir, map[string]string{"a.csv": "id,dt,v\n1,2024-01-01,a\n2,2024-01-02,b\n"}, "a.csv")
	for _, tc := range []struct{ name, ddl string }{
		{"partitioned parquet", "(id int, v string, dt string) USING parquet PARTITIONED BY (dt)"},
		{"csv", "(id int, dt string, v string) USING csv"},
		{"orc partitioned", "(v string, id int, dt string) USING orc PARTITIONED BY (dt)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := lakehouseTable(t, "spark_catalog", "plain")
			exec(t, "CREATE TABLE "+table+" "+tc.ddl, "INSERT INTO "+table+" (id, v, dt) VALUES (0, 'z', '2023-12-31')")
			for _, verify := range []bool{false, true} {
				if _, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(files...), Target: spark.Target{Table: table, Mode: "append"}, Verify: verify}); err != nil {
					t.Fatalf("verify %v: %v", verify, err)
				}
			}
			exec(t, "REFRESH TABLE "+table)
			diff(t, "rows", [][]any{row(int32(0), "z", "2023-12-31"), row(int32(1), "a", "2024-01-01"), row(int32(1), "a", "2024-01-01"), row(int32(2), "b", "2024-01-02"), row(int32(2), "b", "2024-01-02")},
				queryRows(t, "SELECT id, v, dt FROM "+table+" ORDER BY id, v"))
		})
	}
}

// --evolve refuses, before it changes the Delta table, a widening its
// owner turned off (delta.enableTypeWidening=false) or that a CHECK
// constraint blocks (found in the field: it turned widening on against
// the owner, and set the table's properties before an ALTER the
// constraint failed): the table's properties and history stay as they
// were.
func TestDeltaEvolveRefusesWhatTheTableForbids(t *testing.T) {
	t.Parallel()
	requireTableFormat(t, "delta")
	c := newClient(t)
	dir := workDir(t)
	// smallint to int: a widening Delta 3's preview makes too (Spark 3.5).
	big := writeFiles(t, dir, map[string]string{"big.csv": "id,amount\n1,40000\n"}, "big.csv")
	for _, tc := range []struct{ name, setup, want string }{
		{"widening off", "ALTER TABLE %s SET TBLPROPERTIES ('delta.enableTypeWidening' = 'false')", "delta.enableTypeWidening=false"},
		{"a CHECK constraint", "ALTER TABLE %s ADD CONSTRAINT positive CHECK (amount > 0)", "CHECK constraint positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := lakehouseTable(t, "spark_catalog", "forbid")
			exec(t, "CREATE TABLE "+table+" (id int, amount smallint) USING delta", fmt.Sprintf(tc.setup, table))
			before := commits(t, "delta", table)
			props := queryRows(t, "SHOW TBLPROPERTIES "+table)
			_, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(big...), Target: spark.Target{Table: table, Mode: "append", Evolve: true}})
			var conflict *sparkmerge.EvolutionConflictError
			if !errors.As(err, &conflict) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal naming %s", err, tc.want)
			}
			diff(t, "commits", before, commits(t, "delta", table))
			diff(t, "properties", props, queryRows(t, "SHOW TBLPROPERTIES "+table))
		})
	}
}

// A merge into a view, or into a table of Spark's catalog by other
// partition columns than the table's, is refused while planning, naming
// the view or both partitionings, before any row is staged (found in the
// field: an overwrite of a view failed after staging and left its staging
// table; an append by other columns failed after staging, an overwrite
// ignored them).
func TestMergeIntoViewsAndOtherPartitioningsRefused(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	files := writeFiles(t, dir, map[string]string{"a.csv": "id,dt\n1,2024-01-01\n"}, "a.csv")
	table := lakehouseTable(t, "spark_catalog", "refuse")
	exec(t, "CREATE TABLE "+table+" (id int, dt string) USING parquet PARTITIONED BY (dt)")
	view := table + "_v"
	exec(t, "CREATE VIEW "+view+" AS SELECT * FROM "+table)
	t.Cleanup(func() { exec(t, "DROP VIEW IF EXISTS "+view) })
	for _, tc := range []struct {
		target spark.Target
		want   string
	}{
		{spark.Target{Table: view, Mode: "overwrite"}, "is a view"},
		{spark.Target{Table: table, Mode: "append", PartitionBy: []string{"id"}}, "is partitioned by (dt), and the merge asks for (id)"},
		{spark.Target{Table: table, Mode: "overwrite", PartitionBy: []string{"id"}}, "is partitioned by (dt), and the merge asks for (id)"},
	} {
		_, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(files...), Target: tc.target, Verify: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s by %v: %v, want %q", tc.target.Mode, tc.target.Table, tc.target.PartitionBy, err, tc.want)
		}
	}
	schema := strings.SplitN(table, ".", 3)
	if left := queryRows(t, fmt.Sprintf("SHOW TABLES IN %s.%s LIKE '*sparkmerge*'", schema[0], schema[1])); len(left) != 0 {
		t.Errorf("staging tables left: %v", left)
	}
	if _, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(files...), Target: spark.Target{Table: table, Mode: "append", PartitionBy: []string{"DT"}}, Verify: true}); err != nil {
		t.Errorf("append by the table's own partitioning: %v", err)
	}
}

// An overwrite of an existing Delta table, or of a Delta path, keeps its
// liquid clustering, with its comments and constraints: Delta 4.0's own
// overwrites (DataFrameWriterV2.overwrite, INSERT OVERWRITE, a path's
// overwrite) dropped the clustering columns (found in the field); the
// merge replaces every row by Delta's replaceWhere.
func TestDeltaOverwriteKeepsClustering(t *testing.T) {
	t.Parallel()
	requireTableFormat(t, "delta")
	for _, target := range []spark.Target{
		{Table: lakehouseTable(t, "spark_catalog", "lake"), Mode: "overwrite"},
		{Path: filepath.Join(workDir(t), "events"), Format: "delta", Mode: "overwrite"},
	} {
		name := target.Table
		if name == "" {
			name = "delta.`" + target.Path + "`"
		}
		t.Run(strings.Fields(name)[0], func(t *testing.T) {
			t.Parallel()
			c := newClient(t) // (a session marks one Delta commit at a time)
			dir := workDir(t)
			exec(t, "CREATE TABLE "+name+" (id BIGINT COMMENT 'the id', name STRING) USING delta CLUSTER BY (id) COMMENT 'events'")
			exec(t, "ALTER TABLE "+name+" ADD CONSTRAINT positive CHECK (id > 0)")
			exec(t, "INSERT INTO "+name+" VALUES (1, 'a'), (2, 'b')")
			over := writeFiles(t, dir, map[string]string{"over.csv": "id,name\n7,x\n8,y\n"}, "over.csv")
			res, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(over...), Target: target, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified || res.RowsWritten != 2 {
				t.Errorf("verified %v, rows written %d, want 2 verified", res.Verified, res.RowsWritten)
			}
			diff(t, "rows after the overwrite", [][]any{row(int64(7), "x"), row(int64(8), "y")}, queryRows(t, "SELECT id, name FROM "+name+" ORDER BY id"))
			detail, err := frame(t, testSessionOf(t), "DESCRIBE DETAIL "+name).Collect(testContext(t))
			if err != nil || len(detail) != 1 {
				t.Fatalf("DESCRIBE DETAIL %s: %d rows, %v", name, len(detail), err)
			}
			diff(t, "clustering and comment kept", "[id] events", fmt.Sprint(detail[0].Value("clusteringColumns"), " ", detail[0].Value("description")))
			diff(t, "constraint kept", "id > 0", queryRows(t, "SHOW TBLPROPERTIES "+name+" ('delta.constraints.positive')")[0][1])
			var comment any
			for _, r := range queryRows(t, "DESCRIBE "+name) {
				if r[0] == "id" {
					comment = r[2]
				}
			}
			diff(t, "column comment kept", "the id", comment)
		})
	}
}

// A JSON struct appends to a table whose struct orders its fields
// otherwise, matched by name (found in the field: Spark's JSON inference
// sorts a struct's fields, so a table of struct<name, age> refused every
// append, and so did a table --evolve gave a field whose name sorts
// first). The rows read back in the table's order, field by field.
func TestLakehouseStructFieldsInAnotherOrder(t *testing.T) {
	t.Parallel()
	for _, f := range lakehouseFormats {
		t.Run(f.format, func(t *testing.T) {
			t.Parallel()
			requireTableFormat(t, f.format)
			c := newClient(t)
			dir := workDir(t)
			files := writeFiles(t, dir, map[string]string{
				"n1.json": `{"id":1,"user":{"name":"a","age":3}}` + "\n",
				"n2.json": `{"id":2,"user":{"name":"b","age":7,"city":"x"}}` + "\n",
			}, "n1.json", "n2.json")
			table := lakehouseTable(t, f.catalog, "lake")
			exec(t, "CREATE TABLE "+table+" (id bigint, user struct<name:string, age:bigint>) USING "+f.format)
			if _, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(files[0]), Target: spark.Target{Table: table, Mode: "append"}, Verify: true}); err != nil {
				t.Fatalf("append of struct<age,name> to struct<name,age>: %v", err)
			}
			// A field the table lacks, whose name sorts first: added.
			if _, err := c.Merge(testContext(t), spark.Job{Sources: pathSources(files[1]), Target: spark.Target{Table: table, Mode: "append", Evolve: true}, Verify: true}); err != nil {
				t.Fatalf("append with --evolve of struct<age,city,name>: %v", err)
			}
			diff(t, "the table's struct", [][]any{row("struct<name:string,age:bigint,city:string>")},
				queryRows(t, "SELECT typeof(user) FROM "+table+" LIMIT 1"))
			diff(t, "rows", [][]any{row(int64(1), "a", int64(3), nil), row(int64(2), "b", int64(7), "x")},
				queryRows(t, "SELECT id, user.name, user.age, user.city FROM "+table+" ORDER BY id"))
		})
	}
}
