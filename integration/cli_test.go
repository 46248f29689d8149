//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/apache/spark-connect-go/spark/sql/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// The tests in this file run the sparkmerge binary as a user would, against
// the harness's Spark.

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cliBinary builds cmd/sparkmerge once per test run.
func cliBinary(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		// Lives as long as the test binary: the first test's directory
		// is removed with the whole work root after the run.
		dir := workDir(t)
		cliPath = filepath.Join(dir, "sparkmerge")
		out, err := osexec.Command("go", "build", "-o", cliPath, "../cmd/sparkmerge").CombinedOutput()
		if err != nil {
			cliErr = errors.New("go build ../cmd/sparkmerge: " + err.Error() + "\n" + string(out))
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

// cliRun runs sparkmerge with args plus --remote set to the harness's Spark,
// and returns its exit code, stdout and stderr.
func cliRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cliRunIn(t, "", args...)
}

// cliRunIn is cliRun in the working directory dir ("": the test's).
func cliRunIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return cliRunWith(t, dir, nil, args...)
}

// cliRunWith is cliRunIn with env added to the environment.
func cliRunWith(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	r := requireSpark(t)
	bin := cliBinary(t)
	cmd := osexec.CommandContext(testContext(t), bin, append(args, "--remote", r)...)
	cmd.Env = append(append(os.Environ(), "SPARK_REMOTE="), env...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var exit *osexec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("run sparkmerge %s: %v", strings.Join(args, " "), err)
		}
		code = exit.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// tidesRows is what merging testdata/tides must give: one row per input
// line, cells as the CLI's table prints them, in the target's column order,
// with the _source provenance column last.
func tidesRows(t *testing.T, columns []string) [][]string {
	t.Helper()
	var out [][]string
	for _, name := range []string{"TestFile1.csv", "TestFile2.csv"} {
		path := filepath.Join(testdataRoot, "tides", name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		records, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		header := records[0]
		for _, rec := range records[1:] {
			byName := map[string]string{"_source": path}
			for i, h := range header {
				v := rec[i]
				if h == "TimeUTC" || h == "TideNumber" {
					// Inferred as int: "0036" prints as 36.
					n, err := strconv.Atoi(v)
					if err != nil {
						t.Fatal(err)
					}
					v = strconv.Itoa(n)
				}
				byName[h] = v
			}
			row := make([]string, len(columns))
			for i, c := range columns {
				v, ok := byName[c]
				if !ok {
					v = "NULL"
				}
				row[i] = v
			}
			out = append(out, row)
		}
	}
	sortRows(out)
	return out
}

func sortRows(rows [][]string) {
	sort.Slice(rows, func(i, j int) bool { return strings.Join(rows[i], "\x00") < strings.Join(rows[j], "\x00") })
}

// parseShow reads the table the CLI prints for --show (Spark's show): the header's cells
// and each row's cells.
func parseShow(t *testing.T, out string) (columns []string, rows [][]string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "|") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no table in the output:\n%s", out)
	}
	cells := func(l string) []string {
		parts := strings.Split(strings.Trim(l, "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	columns = cells(lines[0])
	for _, l := range lines[1:] {
		rows = append(rows, cells(l))
	}
	sortRows(rows)
	return columns, rows
}

var tidesColumns = []string{"Date", "Region", "Location", "Tide", "TimeUTC", "Height", "ReadingId", "TideNumber", "_source"}

func TestCLIMergeTides(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	out := filepath.Join(dir, "tides")
	code, stdout, stderr := cliRun(t, "merge", filepath.Join(testdataRoot, "tides"), "--out", out,
		"--verify", "--source-column", "_source", "--show", "20", "-o", "text")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"wrote 12 rows", "verified: 12 rows written = 12 rows read from 2 sources", "added ReadingId, TideNumber", "added Region"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout does not say %q:\n%s", want, stdout)
		}
	}
	columns, rows := parseShow(t, stdout)
	if diff := cmp.Diff(tidesColumns, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tidesRows(t, tidesColumns), rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(strings.TrimSpace(stdout), "-+") {
		t.Errorf("stdout does not end with the table Spark's show() draws:\n%s", stdout)
	}
}

// cliPlanJSON is the part of `plan -o json` / `merge -o json` the tests read.
type cliPlanJSON struct {
	Strategy string `json:"strategy"`
	Plan     struct {
		Target []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"target"`
		SourceColumn string `json:"source_column"`
	} `json:"plan"`
	RowsWritten *int64 `json:"rows_written"`
	Verified    bool   `json:"verified"`
}

func (p cliPlanJSON) columns() []string {
	var out []string
	for _, f := range p.Plan.Target {
		out = append(out, f.Name)
	}
	return out
}

// TestCLIPlanEmitSQL runs the statement `plan --emit sql` prints on Spark
// and checks it gives the merge's rows and columns.
func TestCLIPlanEmitSQL(t *testing.T) {
	t.Parallel()
	tides := filepath.Join(testdataRoot, "tides")
	code, stdout, stderr := cliRun(t, "plan", tides, "--source-column", "_source", "--emit", "sql")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	df := runEmittedSQL(t, stdout, 2)
	ctx := context.Background()
	schema, err := df.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, f := range schema.Fields {
		columns = append(columns, f.Name)
	}
	if diff := cmp.Diff(tidesColumns, columns); diff != "" {
		t.Errorf("the SQL's columns differ from the merge's (-merge +sql):\n%s", diff)
	}
	values := collectValues(t, df)
	if len(values) != 12 {
		t.Errorf("the SQL gives %d rows, want 12", len(values))
	}
	sources := map[string]int{}
	for _, v := range values {
		src, _ := v[len(v)-1].(string)
		sources[filepath.Base(src)]++
	}
	if diff := cmp.Diff(map[string]int{"TestFile1.csv": 8, "TestFile2.csv": 4}, sources); diff != "" {
		t.Errorf("rows per source (-want +got):\n%s", diff)
	}
}

// runEmittedSQL runs what `plan --emit sql` printed as one statement,
// with a single Sql call, as spark.sql(...) in a notebook, and returns its
// frame. reads is how many file reads its WITH clause must hold (files
// read together are one).
func runEmittedSQL(t *testing.T, stdout string, reads int) sql.DataFrame {
	t.Helper()
	stmt := strings.TrimSpace(stdout)
	if got := strings.Count(stmt, " AS (\n  SELECT "); !strings.HasPrefix(stmt, "WITH\n") || got != reads || strings.Contains(stmt, ";") {
		t.Fatalf("want one statement, WITH %d file reads, got %d:\n%s", reads, got, stmt)
	}
	df, err := upstreamSession(t).Sql(context.Background(), stmt)
	if err != nil {
		t.Fatalf("%s\n: %v", stmt, err)
	}
	return df
}

// TestCLIPlanEmitSQLMatchesMerge runs the statement `plan --emit sql`
// prints on Spark and compares its rows, row for row, with what `merge`
// wrote, on generated drifting corpora with nasty values (CSV, JSON,
// Parquet): the SQL is the merge.
func TestCLIPlanEmitSQLMatchesMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, format := range []string{"csv", "json", "parquet"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			// Before columnarCorpus's exec: the test's own session.
			session := upstreamSession(t)
			merged := 0
			for seed := uint64(1); seed <= 8 && merged < 2; seed++ {
				shape := corpusShape{format: format}
				files := diffCorpus(seed, shape, 5)
				if shape.columnar() {
					files = columnarCorpus(t, format, files)
				}
				dir := localFiles(t, files)
				out := filepath.Join(workDir(t), "merged")
				code, stdout, stderr := cliRun(t, "plan", dir, "--source-column", "_source", "--emit", "sql")
				mcode, _, mstderr := cliRun(t, "merge", dir, "--source-column", "_source", "--out", out)
				if code == 3 && mcode == 3 {
					continue // refused by both: a conflict, said alike
				}
				if code != 0 && mcode == code && errorLine(stderr) != "" && errorLine(stderr) == errorLine(mstderr) {
					// Refused by both, alike, before any row was read:
					// bad input (a header naming a column twice in two
					// cases, which the generator's case drift can make).
					t.Logf("seed %d: plan and merge refuse it alike (exit %d): %s", seed, code, errorLine(stderr))
					continue
				}
				if code != 0 {
					t.Fatalf("seed %d: plan exit %d:\n%s", seed, code, stderr)
				}
				if mcode != 0 {
					// Refused when reading rows (a value the inferred
					// type does not hold, under FAILFAST): no rows to
					// compare.
					t.Logf("seed %d: merge refused (exit %d): %s", seed, mcode, firstLine(mstderr))
					continue
				}
				merged++
				stmt := strings.TrimSpace(stdout)
				fromSQL, err := session.Sql(ctx, stmt)
				if err != nil {
					t.Fatalf("seed %d: spark.sql of the emitted statement: %v\n%s", seed, err, stmt)
				}
				written, err := session.Sql(ctx, fmt.Sprintf("SELECT * FROM parquet.`%s`", out))
				if err != nil {
					t.Fatal(err)
				}
				sqlSchema, err := fromSQL.Schema(ctx)
				if err != nil {
					t.Fatal(err)
				}
				mergeSchema, err := written.Schema(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(fieldTypes(mergeSchema.Fields), fieldTypes(sqlSchema.Fields)); diff != "" {
					t.Errorf("seed %d: columns and types (-merge +sql):\n%s", seed, diff)
				}
				want, got := rowStrings(collectValues(t, written)), rowStrings(collectValues(t, fromSQL))
				if len(want) == 0 {
					t.Fatalf("seed %d: the merge wrote no rows", seed)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("seed %d: rows (-merge +sql):\n%s", seed, diff)
				}
			}
			if merged == 0 {
				t.Fatalf("no %s corpus merged: nothing compared", format)
			}
		})
	}
}

// fieldTypes are "name type" per field.
func fieldTypes(fields []types.StructField) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name + " " + f.DataType.TypeName()
	}
	return out
}

// rowStrings renders rows, sorted, to compare as multisets.
func rowStrings(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%#v", r)
	}
	sort.Strings(out)
	return out
}

// TestCLIPlanEmitSQLGroupedRead runs the SQL of a merge whose files are
// read together (auto groups JSON files that spell their keys alike): each
// row's source is its own file, named by a view per file, without
// input_file_name() (gone from Unity Catalog and DBR 17.3).
func TestCLIPlanEmitSQLGroupedRead(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	want := map[string]int{}
	for i, n := range []int{3, 1, 2} {
		name := fmt.Sprintf("part-%d.json", i)
		var lines strings.Builder
		for k := range n {
			fmt.Fprintf(&lines, "{\"id\": %d, \"v\": \"x%d\"}\n", 10*i+k, k)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(lines.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		want[name] = n
	}
	code, stdout, stderr := cliRun(t, "plan", dir, "--source-column", "_source", "--emit", "sql")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	if strings.Contains(stdout, "input_file_name") {
		t.Errorf("the SQL calls input_file_name():\n%s", stdout)
	}
	df := runEmittedSQL(t, stdout, 1)
	got := map[string]int{}
	for _, v := range collectValues(t, df) {
		src, _ := v[len(v)-1].(string)
		if filepath.Dir(src) != dir {
			t.Errorf("source %q is not a file of %s", src, dir)
		}
		got[filepath.Base(src)]++
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows per source (-want +got):\n%s", diff)
	}
}

func TestCLIJSONOutput(t *testing.T) {
	t.Parallel()
	tides := filepath.Join(testdataRoot, "tides")
	code, stdout, stderr := cliRun(t, "plan", tides, "--source-column", "_source", "-o", "json")
	if code != 0 {
		t.Fatalf("plan: exit code %d; stderr:\n%s", code, stderr)
	}
	var plan cliPlanJSON
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("plan -o json is not JSON: %v\n%s", err, stdout)
	}
	if diff := cmp.Diff(tidesColumns, plan.columns()); diff != "" {
		t.Errorf("plan target columns (-want +got):\n%s", diff)
	}
	if plan.Strategy != "auto" || plan.Plan.SourceColumn != "_source" {
		t.Errorf("strategy %q, source column %q; want auto, _source", plan.Strategy, plan.Plan.SourceColumn)
	}

	out := filepath.Join(workDir(t), "tides")
	code, stdout, stderr = cliRun(t, "merge", tides, "--out", out, "--source-column", "_source", "--verify", "-o", "json")
	if code != 0 {
		t.Fatalf("merge: exit code %d; stderr:\n%s", code, stderr)
	}
	var merged cliPlanJSON
	if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
		t.Fatalf("merge -o json is not JSON: %v\n%s", err, stdout)
	}
	if diff := cmp.Diff(plan.columns(), merged.columns()); diff != "" {
		t.Errorf("merge target columns differ from plan's (-plan +merge):\n%s", diff)
	}
	if merged.RowsWritten == nil || *merged.RowsWritten != 12 || !merged.Verified {
		t.Errorf("rows_written %v, verified %v; want 12, true", merged.RowsWritten, merged.Verified)
	}
}

// --out-format noop runs the whole merge on Spark and keeps nothing; it
// used to run it, then fail counting the rows of a format Spark cannot
// read back.
func TestCLINoopKeepsNothing(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cliRun(t, "merge", filepath.Join(testdataRoot, "tides"), "--out-format", "noop", "-o", "json")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	var merged struct {
		Discarded   bool  `json:"discarded"`
		RowsWritten int64 `json:"rows_written"`
		Scans       int   `json:"scans"`
	}
	if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
		t.Fatalf("merge -o json is not JSON: %v\n%s", err, stdout)
	}
	if !merged.Discarded || merged.RowsWritten != -1 || merged.Scans == 0 {
		t.Errorf("discarded %v, rows_written %d, scans %d; want true, -1, at least 1", merged.Discarded, merged.RowsWritten, merged.Scans)
	}
}

func TestCLIDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	out := filepath.Join(workDir(t), "tides")
	code, stdout, stderr := cliRun(t, "merge", filepath.Join(testdataRoot, "tides"), "--out", out, "--dry-run")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "target: 8 columns") {
		t.Errorf("the dry run does not print the plan:\n%s", stdout)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--dry-run created %s (stat: %v)", out, err)
	}
}

// TestCLIDryRunRefusesWhatTheRunRefuses: `merge --dry-run` is the
// library's dry run, not a plan alone: what the run would refuse before
// reading a row, the dry run refuses with the same error and exit code
// (it planned and exited 0 on an existing output in the default mode).
func TestCLIDryRunRefusesWhatTheRunRefuses(t *testing.T) {
	t.Parallel()
	tides := filepath.Join(testdataRoot, "tides")
	out := filepath.Join(workDir(t), "tides")
	if code, _, stderr := cliRun(t, "merge", tides, "--out", out); code != 0 {
		t.Fatalf("first merge: exit code %d; stderr:\n%s", code, stderr)
	}
	before := treeListing(t, out)
	for _, c := range []struct {
		name string
		args []string
		want string // in stderr, for both runs
	}{
		{"existing output", []string{"--out", out}, "already exists"},
		{"partition column the merge lacks", []string{"--out", filepath.Join(workDir(t), "p"), "--partition-by", "no_such_column"}, "no_such_column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dryCode, _, dryErr := cliRun(t, append([]string{"merge", tides, "--dry-run"}, c.args...)...)
			runCode, _, runErr := cliRun(t, append([]string{"merge", tides}, c.args...)...)
			if dryCode == 0 || dryCode != runCode {
				t.Errorf("exit code: dry run %d, run %d; want the run's, not 0\ndry run's stderr:\n%s", dryCode, runCode, dryErr)
			}
			for _, stderr := range []string{dryErr, runErr} {
				if !strings.Contains(stderr, c.want) {
					t.Errorf("stderr does not say %q:\n%s", c.want, stderr)
				}
			}
		})
	}
	// What the run takes, the dry run plans, exit 0.
	code, stdout, stderr := cliRun(t, "merge", tides, "--out", out, "--mode", "append", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "target: 8 columns") {
		t.Errorf("append dry run: exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if after := treeListing(t, out); !slices.Equal(before, after) {
		t.Errorf("the output changed: %v, then %v", before, after)
	}
}

// treeListing is every entry under dir with its size and modification
// time, to tell that nothing was written there.
func treeListing(t *testing.T, dir string) []string {
	t.Helper()
	var entries []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entries = append(entries, fmt.Sprintf("%s %d %s", path, info.Size(), info.ModTime().Format(time.RFC3339Nano)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestCLIStrictConflictExitCode(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	ints := filepath.Join(dir, "ints.csv")
	strs := filepath.Join(dir, "strs.csv")
	os.WriteFile(ints, []byte("id,v\n1,10\n"), 0o644)
	os.WriteFile(strs, []byte("id,v\n2,ten\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, _, stderr := cliRun(t, "merge", ints, strs, "--out", out, "--types", "strict")
	if code != 3 {
		t.Errorf("exit code %d, want 3 (schema conflict); stderr:\n%s", code, stderr)
	}
	for _, want := range []string{`"v"`, ints, strs, "int", "string"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused merge created %s", out)
	}
	// The same files merge under the default policy: v widens to string.
	code, _, stderr = cliRun(t, "merge", ints, strs, "--out", out)
	if code != 0 {
		t.Errorf("widen: exit code %d; stderr:\n%s", code, stderr)
	}
}

// TestCLIJobFile runs a whole job from a YAML file (CSV output, read back
// for --show), with a flag overriding the file's target mode.
func TestCLIJobFile(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	out := filepath.Join(dir, "out")
	job := filepath.Join(dir, "job.yaml")
	os.WriteFile(job, []byte(`sources:
  - name: first
    path: `+filepath.Join(testdataRoot, "tides", "TestFile1.csv")+`
  - name: second
    path: `+filepath.Join(testdataRoot, "tides", "TestFile2.csv")+`
policy:
  source_column: origin
  normalize: [snake_case]
target:
  path: `+out+`
  format: csv
verify: true
`), 0o644)
	for i, mode := range []string{"", "overwrite"} {
		args := []string{"merge", "-f", job, "--show", "20"}
		if mode != "" {
			args = append(args, "--mode", mode)
		}
		code, stdout, stderr := cliRun(t, args...)
		if i == 0 && code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
		}
		if i == 1 && code != 0 {
			t.Fatalf("second run with --mode overwrite: exit code %d; stderr:\n%s", code, stderr)
		}
		columns, rows := parseShow(t, stdout)
		wantCols := []string{"date", "region", "location", "tide", "time_utc", "height", "reading_id", "tide_number", "origin"}
		if diff := cmp.Diff(wantCols, columns); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
		if len(rows) != 12 || !strings.Contains(stdout, "verified") {
			t.Errorf("%d rows shown, want 12, verified:\n%s", len(rows), stdout)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(out, "*.csv")); len(files) == 0 {
		t.Errorf("no CSV files in %s: the file's target format was not used", out)
	}
	// Without the override the file's default mode refuses the existing output.
	code, _, stderr := cliRun(t, "merge", "-f", job)
	if code != 1 || !strings.Contains(stderr, "--mode") {
		t.Errorf("exit code %d, want 1 with a --mode hint; stderr:\n%s", code, stderr)
	}
}

// TestCLILocal runs the README's main command as a user with Docker would:
// --local starts the project's Spark container for the one command (inputs
// and output mounted at the same paths) and stops it afterwards.
func TestCLILocal(t *testing.T) {
	t.Parallel()
	requireSpark(t) // the image is the one the suite's Spark runs
	if testing.Short() {
		t.Skip("starts a second Spark container")
	}
	bin := cliBinary(t)
	out := filepath.Join(workDir(t), "demo")
	cmd := osexec.CommandContext(testContext(t), bin, "merge", "--local", filepath.Join(testdataRoot, "tides"),
		"--out", out, "--source-column", "_source", "--verify", "--show", "20")
	cmd.Env = append(os.Environ(), "SPARK_REMOTE=", "TESTCONTAINERS_RYUK_DISABLED=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if os.Getenv("CI") != "true" && strings.Contains(stderr.String(), "docker") {
			t.Skipf("--local needs Docker: %v\n%s", err, stderr.String())
		}
		t.Fatalf("sparkmerge merge --local: %v\nstderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"wrote 12 rows", "verified: 12 rows written = 12 rows read from 2 sources", "45m3"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout does not say %q:\n%s", want, stdout.String())
		}
	}
	if parts, _ := filepath.Glob(filepath.Join(out, "part-*.parquet")); len(parts) == 0 {
		t.Errorf("no parquet files in %s", out)
	}
	if strings.Contains(stderr.String(), "Connected to docker") {
		t.Errorf("stderr shows testcontainers' banner:\n%s", stderr.String())
	}
}

// A relative --out is the client's: resolved against the working
// directory, like the inputs, not the server's.
func TestCLIRelativeOut(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	writeFiles(t, dir, map[string]string{"in/a.csv": "id\n1\n"}, "in/a.csv")
	code, _, stderr := cliRunIn(t, dir, "merge", "in", "--out", "rel/out", "--verify")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "rel", "out", "_SUCCESS")); err != nil {
		t.Errorf("no output under the working directory: %v", err)
	}
}

// merge --global-view registers the merged rows as a view other sessions
// query; --view in a shared session (session_id in --remote) likewise;
// nothing is written.
func TestCLIMergeToView(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	writeFiles(t, dir, map[string]string{"a.csv": "id,v\n1,x\n", "b.csv": "v,id,w\ny,2,2.5\n"}, "a.csv", "b.csv")
	view := "cliview_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	code, stdout, stderr := cliRun(t, "merge", dir, "--global-view", view, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		View      string `json:"view"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.View != "global_temp."+view || doc.SessionID == "" {
		t.Fatalf("output %q (%v): want the view and the session id", stdout, err)
	}
	rows := queryRows(t, "SELECT id, v, w FROM global_temp."+view+" ORDER BY id")
	diff(t, "the global view", [][]any{row(int32(1), "x", nil), row(int32(2), "y", 2.5)}, rows)

	code, _, stderr = cliRun(t, "merge", dir, "--view", "v", "--out", filepath.Join(dir, "out"))
	if code != 2 || !strings.Contains(stderr, "--out") {
		t.Errorf("--view with --out: exit %d, %s; want a usage error", code, stderr)
	}
}

// `sparkmerge version` against a server names the Spark version the server
// reports, and says whether the client's rules apply: exactly when a plan
// of a local CSV file is typed on the client (inferred_locally).
func TestCLIVersionNamesTheServer(t *testing.T) {
	t.Parallel()
	want := newClient(t).SparkVersion()
	code, stdout, stderr := cliRun(t, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("version: exit code %d; stderr:\n%s", code, stderr)
	}
	var got struct {
		Server struct {
			Reachable    bool   `json:"reachable"`
			SparkVersion string `json:"spark_version"`
			ClientRules  bool   `json:"client_rules"`
		} `json:"server"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, stdout)
	}
	if !got.Server.Reachable || got.Server.SparkVersion != want {
		t.Errorf("version names Spark %q (reachable %v), the server reports %q", got.Server.SparkVersion, got.Server.Reachable, want)
	}
	// The lines the version matrix runs (scripts/lib.sh pins them) get
	// the client's rules, as the README's table of versions says.
	for _, line := range []string{"3.5", "4.0", "4.1", "4.2", "4.3"} {
		if strings.HasPrefix(want, line+".") && !got.Server.ClientRules {
			t.Errorf("version says the client's rules do not apply to Spark %s; the README says they do for every %s", want, line)
		}
	}
	// A file every client rule set types: ints and plain text.
	csvFile := filepath.Join(workDir(t), "plain.csv")
	if err := os.WriteFile(csvFile, []byte("id,name\n1,x\n2,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = cliRun(t, "plan", csvFile, "-o", "json")
	if code != 0 {
		t.Fatalf("plan: exit code %d; stderr:\n%s", code, stderr)
	}
	var plan struct {
		Reads []struct {
			InferredLocally bool `json:"inferred_locally"`
		} `json:"reads"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil || len(plan.Reads) != 1 {
		t.Fatalf("plan -o json: %v, %d reads\n%s", err, len(plan.Reads), stdout)
	}
	if got.Server.ClientRules != plan.Reads[0].InferredLocally {
		t.Errorf("version says the client's rules apply: %v; the plan typed the CSV file on the client: %v",
			got.Server.ClientRules, plan.Reads[0].InferredLocally)
	}
	code, stdout, _ = cliRun(t, "version")
	if wantText := ": Spark " + want + "; "; code != 0 || !strings.Contains(stdout, wantText) {
		t.Errorf("version (text): exit code %d, stdout %q lacks %q", code, stdout, wantText)
	}
}

// TestCLIShowIsSparks: --show prints the rows as Spark's own show() does
// (the ShowString relation, truncate off): structs as {30, NULL, a},
// arrays as [x, y], maps as {k -> 1}, 10.0 for a double, NULL, and a wide
// string whole; not Go's renderings (map[...], [x y], 10).
func TestCLIShowIsSparks(t *testing.T) {
	t.Parallel()
	dir := workDir(t)
	in := filepath.Join(dir, "nested")
	wide := strings.Repeat("wide-", 12) + "end"
	exec(t, fmt.Sprintf("INSERT OVERWRITE DIRECTORY '%s' USING parquet SELECT /*+ COALESCE(1) */ * FROM VALUES "+
		"(1, named_struct('age', 30, 'email', CAST(NULL AS string), 'name', 'a'), array('x', 'y'), map('k', 1), CAST(10.0 AS double), '%s'), "+
		"(2, CAST(NULL AS struct<age:int,email:string,name:string>), array(), map(), CAST(NULL AS double), CAST(NULL AS string)) "+
		"AS t(id, person, tags, counts, amount, note)", in, wide))
	parts, err := filepath.Glob(filepath.Join(in, "part-*.parquet"))
	if err != nil || len(parts) != 1 {
		t.Fatalf("parquet written: %v %v", parts, err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cliRun(t, "merge", parts[0], "--out", out, "--show", "5")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	columns, rows := parseShow(t, stdout)
	if diff := cmp.Diff([]string{"id", "person", "tags", "counts", "amount", "note"}, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := [][]string{
		{"1", "{30, NULL, a}", "[x, y]", "{k -> 1}", "10.0", wide},
		{"2", "NULL", "[]", "{}", "NULL", "NULL"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows as shown (-Spark's show() +got):\n%s\n%s", diff, stdout)
	}
	for _, goish := range []string{"map[", "[x y]", "[{k 1}]"} {
		if strings.Contains(stdout, goish) {
			t.Errorf("--show prints a Go value (%q):\n%s", goish, stdout)
		}
	}
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// errorLine is the CLI's error line in its stderr (after the progress
// lines), or "".
func errorLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "sparkmerge: ") {
			return line
		}
	}
	return ""
}
