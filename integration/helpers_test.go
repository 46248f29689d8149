//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// newClient connects the sparkmerge executor to the harness's Spark, on
// the test's session (see testSessionOf).
func newClient(t *testing.T) *spark.Client {
	t.Helper()
	r := requireSpark(t)
	c, err := connectPatiently(t, testContext(t), r, spark.ConnectOptions{UserAgent: "sparkmerge-integration", Session: testSessionOf(t)})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connectPatiently is spark.Connect, tried again while the server accepts
// connections but answers slower than Connect waits for it (20 s, which
// a loaded machine exceeds): a slow machine makes the suite slower, not
// red. A server that accepts none fails at once.
func connectPatiently(t *testing.T, ctx context.Context, remote string, opts spark.ConnectOptions) (*spark.Client, error) {
	t.Helper()
	for {
		c, err := spark.Connect(ctx, remote, opts)
		if err == nil || !errors.Is(err, spark.ErrUnreachable) || ctx.Err() != nil || !listening(remote) {
			return c, err
		}
		t.Logf("Spark answers slowly, connecting again: %v", err)
	}
}

// listening reports whether remote's server accepts TCP connections.
func listening(remote string) bool {
	r, err := spark.ParseRemote(remote)
	if err != nil {
		return false
	}
	conn, err := net.DialTimeout("tcp", r.Addr(), 5*time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// writeFiles writes name -> content files into dir and returns their paths
// in the order given by names. The files are modified a minute ago, at
// rest as the files a merge reads are: a file modified in the last
// milliseconds is read on its own, never in a positional scan.
func writeFiles(t *testing.T, dir string, files map[string]string, names ...string) []string {
	t.Helper()
	past := time.Now().Add(-time.Minute)
	var paths []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func pathSources(paths ...string) []spark.SourceSpec {
	out := make([]spark.SourceSpec, len(paths))
	for i, p := range paths {
		out[i] = spark.SourceSpec{Paths: []string{p}}
	}
	return out
}

// planBothWays plans job with the client's schema inference and with
// Spark's (Job.SparkInference).
func planBothWays(t *testing.T, c *spark.Client, job spark.Job) (local, remote *spark.Planned) {
	t.Helper()
	job.SparkInference = false
	local, err := c.Plan(context.Background(), job)
	if err != nil {
		t.Fatalf("plan with local inference: %v", err)
	}
	job.SparkInference = true
	if remote, err = c.Plan(context.Background(), job); err != nil {
		t.Fatalf("plan with Spark's inference: %v", err)
	}
	return local, remote
}

// merged is a merge's result and its output directory.
type merged struct {
	*spark.Result
	out string
}

// mergeBothWays merges job with the client's schema inference (so with
// positional scans where they apply) and with Spark's, which never makes
// them, each into a fresh output.
func mergeBothWays(t *testing.T, c *spark.Client, job spark.Job) (local, remote merged) {
	t.Helper()
	job.SparkInference = false
	local.Result, local.out = merge(t, c, job)
	job.SparkInference = true
	remote.Result, remote.out = merge(t, c, job)
	return local, remote
}

// merge runs a job that writes parquet into a fresh directory and returns
// the result and the output path.
func merge(t *testing.T, c *spark.Client, job spark.Job) (*spark.Result, string) {
	t.Helper()
	if job.Target.Path == "" && job.Target.Table == "" {
		job.Target.Path = filepath.Join(workDir(t), "out")
	}
	res, err := c.Merge(context.Background(), job)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	return res, job.Target.Path
}

// query runs SQL on the harness's Spark with the upstream client and
// returns column names and rows. Where the names are not needed, call
// queryRows: the names cost Spark another analysis of the query (and, of
// a Parquet read, a job that reads its footers).
func query(t *testing.T, q string) ([]string, [][]any) {
	t.Helper()
	s := testSessionOf(t)
	df := frame(t, s, q)
	rows, err := df.Collect(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	schema, err := df.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, f := range schema.Fields {
		cols = append(cols, f.Name)
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r.Values()
	}
	return cols, out
}

// queryRows runs SQL on the harness's Spark with the upstream client and
// returns its rows.
func queryRows(t *testing.T, q string) [][]any {
	t.Helper()
	rows, err := frame(t, testSessionOf(t), q).Collect(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r.Values()
	}
	return out
}

// exec runs SQL statements for their effect.
func exec(t *testing.T, statements ...string) {
	t.Helper()
	s := testSessionOf(t)
	for _, q := range statements {
		df := frame(t, s, q)
		if _, err := df.Collect(context.Background()); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// parquetRows reads a parquet output ordered by the given SQL expressions
// (empty: by every column's text), every column cast to string so that
// values compare exactly. The rows are sorted in one partition
// (COALESCE(1)), which a global sort needs no exchange for: one Spark job
// for the rows, where a sort over the files' partitions costs three (a
// sampling job for its range partitioner, a shuffle and the result).
func parquetRows(t *testing.T, dir string, cols []string, orderBy string) [][]any {
	t.Helper()
	exprs := make([]string, len(cols))
	for i, c := range cols {
		q, err := sparkmerge.QuoteIdent(c)
		if err != nil {
			t.Fatal(err)
		}
		// Aliased so that ORDER BY sees the typed columns, not the strings.
		exprs[i] = fmt.Sprintf("CAST(%s AS string) AS `_%d`", q, i)
	}
	if orderBy == "" {
		// Every column, as text: a total order for any schema.
		var all []string
		for i := range cols {
			all = append(all, fmt.Sprintf("`_%d` NULLS FIRST", i))
		}
		orderBy = strings.Join(all, ", ")
	}
	q := fmt.Sprintf("SELECT /*+ COALESCE(1) */ %s FROM parquet.`%s` ORDER BY %s", strings.Join(exprs, ", "), dir, orderBy)
	rows := queryRows(t, q)
	return rows
}

// schemaOf returns "name type" strings of a parquet output, in order.
func schemaOf(t *testing.T, c *spark.Client, dir string) []string {
	t.Helper()
	schemas, err := c.Schemas(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: []string{dir}, Format: "parquet"}}})
	if err != nil {
		t.Fatalf("schema of %s: %v", dir, err)
	}
	var out []string
	for _, f := range schemas[0].Schema.Fields {
		out = append(out, f.Name+" "+f.Type.String())
	}
	return out
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// row builds an expected row of strings; nil stays nil (a SQL NULL).
func row(values ...any) []any { return values }

// describeReads is each read of a plan as "file+file: schema".
func describeReads(p *spark.Planned) []string {
	var out []string
	for _, r := range p.Reads {
		var base []string
		for _, path := range r.Paths {
			base = append(base, filepath.Base(path))
		}
		out = append(out, strings.Join(base, "+")+": "+r.Schema.String())
	}
	return out
}

// oracle is an expected Parquet output that several outputs are compared
// with (every read path of a corpus): its schema and its rows, read the
// way a comparison reads them, are asked of Spark once, not once per
// comparison. Safe for parallel subtests; dir must not change.
type oracle struct {
	dir    string
	mu     sync.Mutex
	schema []string
	// outputs are the oracle as readOutput read it, by its arguments.
	outputs map[string]*output
	// whole is the oracle read whole, every column of names, where it is
	// a merge's result never written (newMergedOracle, partitionOracle):
	// outputs are then taken from it instead of read.
	whole *output
	names []string
}

func newOracle(dir string) *oracle {
	return &oracle{dir: dir, outputs: map[string]*output{}}
}

// schemaOf is schemaOf(o.dir), read once.
func (o *oracle) schemaOf(t *testing.T, c *spark.Client) []string {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.schema == nil {
		o.schema = schemaOf(t, c, o.dir)
	}
	return o.schema
}

// output is readOutput(o.dir, cols, root), read once.
func (o *oracle) output(t *testing.T, cols []string, root string) *output {
	t.Helper()
	key := fmt.Sprintf("%q %q", cols, root)
	o.mu.Lock()
	defer o.mu.Unlock()
	want, ok := o.outputs[key]
	if !ok && o.whole != nil {
		want = o.whole.project(t, o.names, cols, root)
		o.outputs[key] = want
	}
	if !ok && o.whole == nil {
		var err error
		if want, err = readOutput(t, o.dir, cols, root); err != nil {
			t.Fatalf("read the expected output %s: %v", o.dir, err)
		}
		o.outputs[key] = want
	}
	return want
}

// output is a Parquet output as readOutput reads it.
type output struct {
	// schema is Spark's type of a struct of every column (typeof): their
	// names, order and types; "" for an output without rows.
	schema string
	// rows are the columns read, as text, sorted (see sortCells).
	rows [][]any
	// provenance are the distinct values of _source with the sources'
	// root removed, sorted; nil unless a root was given.
	provenance []string
}

// readOutput reads a Parquet output in one query: its schema, the rows of
// cols cast to text and, where root is set, the distinct provenance
// values relative to root (a _source among cols is then relative to root
// too). One analysis and its job reading the footers,
// then one job: a schema read, a rows read and a provenance read cost
// three of each, and a sort each (its sampling job, a shuffle and the
// sorted result); the rows are sorted here instead, any total order
// serving a comparison of the same rows. An error is the query's (a
// column of cols missing, say).
func readOutput(t *testing.T, dir string, cols []string, root string) (*output, error) {
	t.Helper()
	df, err := testSessionOf(t).Read().Format("parquet").Option("mergeSchema", "true").Load(dir)
	if err != nil {
		return nil, err
	}
	return readFrame(t, df, dir, cols, root)
}

// readFrame is readOutput of a DataFrame, named what in errors.
func readFrame(t *testing.T, df sql.DataFrame, what string, cols []string, root string) (*output, error) {
	t.Helper()
	ctx := context.Background()
	df, err := df.SelectExpr(ctx, outputExprs(t, cols, root)...)
	if err != nil {
		return nil, err
	}
	collected, err := df.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := &output{}
	for _, r := range collected {
		out.add(t, what, r.Values(), root)
	}
	out.sort()
	return out, nil
}

// outputExprs are readFrame's columns: Spark's typeof of a struct of
// every column, the cells of cols as text (a _source among them relative
// to root where root is set), and the provenance relative to root, or a
// null where root is not set.
func outputExprs(t *testing.T, cols []string, root string) []string {
	t.Helper()
	exprs := []string{"typeof(struct(*))"}
	for i, c := range cols {
		q, err := sparkmerge.QuoteIdent(c)
		if err != nil {
			t.Fatal(err)
		}
		e := "CAST(" + q + " AS string)"
		if c == "_source" && root != "" {
			e = "replace(_source, " + sparkmerge.QuoteString(root) + ", '')"
		}
		exprs = append(exprs, fmt.Sprintf("%s AS `_%d`", e, i))
	}
	provenance := "CAST(NULL AS string)"
	if root != "" {
		provenance = "replace(_source, " + sparkmerge.QuoteString(root) + ", '')"
	}
	return append(exprs, provenance+" AS `_provenance`")
}

// add is a row of outputExprs (v) to out, named what in errors.
func (out *output) add(t *testing.T, what string, v []any, root string) {
	t.Helper()
	schema, _ := v[0].(string)
	if out.schema != "" && schema != out.schema {
		t.Fatalf("%s: rows of two schemas, %s and %s", what, out.schema, schema)
	}
	out.schema = schema
	end := len(v) - 1
	if root != "" {
		p, _ := v[end].(string)
		if !slices.Contains(out.provenance, p) {
			out.provenance = append(out.provenance, p)
		}
	}
	out.rows = append(out.rows, v[1:end])
}

// sort sorts out's rows and provenance, the order outputs compare in.
func (out *output) sort() {
	sortCells(out.rows)
	sort.Strings(out.provenance)
}

// compared is an output compared with an oracle (sameAsEach): what made
// it, named in a failure, its directory, and the root of the sources it
// names in _source ("" where its provenance is not compared).
type compared struct{ what, dir, root string }

// readOutputs reads several Parquet outputs as readOutput reads each, in
// one query: each output's read analysed as alone (a job reading its
// footers), their rows in one union told apart by the output's index,
// read by one job where each output's read costs one of its own. An
// error is the query's, which fails where any output's read would.
func readOutputs(t *testing.T, outs []compared, cols []string) ([]*output, error) {
	t.Helper()
	ctx := context.Background()
	var union sql.DataFrame
	for i, o := range outs {
		df, err := testSessionOf(t).Read().Format("parquet").Option("mergeSchema", "true").Load(o.dir)
		if err != nil {
			return nil, err
		}
		if df, err = df.SelectExpr(ctx, append([]string{fmt.Sprintf("%d AS `_output`", i)}, outputExprs(t, cols, o.root)...)...); err != nil {
			return nil, err
		}
		if union == nil {
			union = df
		} else {
			union = union.UnionAll(ctx, df)
		}
	}
	collected, err := union.Collect(ctx)
	if err != nil {
		return nil, err
	}
	read := make([]*output, len(outs))
	for i := range read {
		read[i] = &output{}
	}
	for _, r := range collected {
		v := r.Values()
		i, ok := v[0].(int32)
		if !ok || int(i) >= len(outs) {
			t.Fatalf("a row of no output compared (%T %v)", v[0], v[0])
		}
		read[i].add(t, outs[i].dir, v[1:], outs[i].root)
	}
	for _, o := range read {
		o.sort()
	}
	return read, nil
}

// sortCells sorts rows of text cells (nil, a SQL NULL, first), cell by
// cell.
func sortCells(rows [][]any) {
	cell := func(v any) (string, bool) { s, ok := v.(string); return s, ok }
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		for k := 0; k < len(a) && k < len(b); k++ {
			x, xok := cell(a[k])
			y, yok := cell(b[k])
			switch {
			case xok != yok:
				return !xok
			case x != y:
				return x < y
			}
		}
		return len(a) < len(b)
	})
}

// sameAs checks that the Parquet output got has the oracle's schema and
// rows, value for value (as text), in one query of each (see readOutput;
// the oracle's read once), and returns got's rows and the names of their
// columns. The rows compared are the oracle's columns for which skip is
// false, sorted as text (see sortCells; find a row by its values, not by
// its place). With roots, the provenance column too: its distinct values
// relative to gotRoot must be the oracle's relative to wantRoot (each file
// named where the merge read it).
func (o *oracle) sameAs(t *testing.T, c *spark.Client, got string, skip func(col string) bool, wantRoot, gotRoot string) ([]string, [][]any) {
	t.Helper()
	var names []string
	for _, col := range o.schemaOf(t, c) {
		if skip == nil || !skip(col) {
			names = append(names, strings.Fields(col)[0])
		}
	}
	want := o.output(t, names, wantRoot)
	have, err := readOutput(t, got, names, gotRoot)
	if err != nil {
		// Say how the schemas differ, which is why such a read fails.
		diff(t, "schema", o.schemaOf(t, c), schemaOf(t, c, got))
		t.Fatalf("read %s as the expected output is read: %v", got, err)
	}
	if want.schema == "" || have.schema == "" {
		// No row to say it: the schemas as read alone.
		diff(t, "schema", o.schemaOf(t, c), schemaOf(t, c, got))
	}
	diff(t, "schema (Spark's typeof of every column)", want.schema, have.schema)
	diff(t, "rows", want.rows, have.rows)
	if gotRoot != "" {
		diff(t, "provenance, relative to the root", want.provenance, have.provenance)
	}
	return names, have.rows
}

// sameAsByName is sameAs for an output whose columns may come in another
// order than the oracle's (a partitioned tree's partition columns: a merge
// puts each after the columns of the file that brings it first, Spark's
// read after every file's): the columns, names and types, compared in any
// order, the rows by name, every value as text, and _source, where the
// oracle has it, relative to each output's root, in every row.
func (o *oracle) sameAsByName(t *testing.T, c *spark.Client, wantRoot, got, gotRoot string) {
	t.Helper()
	sorted := func(cols []string) []string { return slices.Sorted(slices.Values(cols)) }
	var names []string
	for _, col := range o.schemaOf(t, c) {
		names = append(names, strings.Fields(col)[0])
	}
	names = sorted(names)
	want := o.output(t, names, wantRoot)
	have, err := readOutput(t, got, names, gotRoot)
	if err != nil {
		diff(t, "columns", sorted(o.schemaOf(t, c)), sorted(schemaOf(t, c, got)))
		t.Fatalf("read %s as the expected output is read: %v", got, err)
	}
	if want.schema == "" || have.schema == "" {
		diff(t, "columns", sorted(o.schemaOf(t, c)), sorted(schemaOf(t, c, got)))
	}
	diff(t, "columns (Spark's typeof of each, in any order)", sorted(structFields(t, want.schema)), sorted(structFields(t, have.schema)))
	diff(t, "rows", want.rows, have.rows)
}

// sameAsEach is sameAs (byName: sameAsByName) of several outputs, read in
// one query (readOutputs) where each comparison costs one: each output's
// schema, rows and, where its root is set, provenance compared with the
// oracle's, a difference named by the output's what. Where the query
// fails (an output's columns are not the oracle's), each output is
// compared alone, which says how.
func (o *oracle) sameAsEach(t *testing.T, c *spark.Client, outs []compared, skip func(col string) bool, wantRoot string, byName bool) {
	t.Helper()
	if len(outs) == 0 {
		return
	}
	sorted := func(cols []string) []string { return slices.Sorted(slices.Values(cols)) }
	var names []string
	for _, col := range o.schemaOf(t, c) {
		if skip == nil || !skip(col) {
			names = append(names, strings.Fields(col)[0])
		}
	}
	if byName {
		names = sorted(names)
	}
	want := o.output(t, names, wantRoot)
	haves, err := readOutputs(t, outs, names)
	if err != nil {
		t.Logf("the outputs read together: %v; each compared alone", err)
		for _, out := range outs {
			runOnParentSession(t, "compared: "+out.what, func(t *testing.T) {
				if byName {
					o.sameAsByName(t, c, wantRoot, out.dir, out.root)
				} else {
					o.sameAs(t, c, out.dir, skip, wantRoot, out.root)
				}
			})
		}
		return
	}
	for i, out := range outs {
		have := haves[i]
		if want.schema == "" || have.schema == "" {
			// No row to say it: the schemas as read alone.
			if byName {
				diff(t, out.what+": columns", sorted(o.schemaOf(t, c)), sorted(schemaOf(t, c, out.dir)))
			} else {
				diff(t, out.what+": schema", o.schemaOf(t, c), schemaOf(t, c, out.dir))
			}
		}
		if byName {
			diff(t, out.what+": columns (Spark's typeof of each, in any order)", sorted(structFields(t, want.schema)), sorted(structFields(t, have.schema)))
		} else {
			diff(t, out.what+": schema (Spark's typeof of every column)", want.schema, have.schema)
		}
		diff(t, out.what+": rows", want.rows, have.rows)
		if out.root != "" && !byName {
			diff(t, out.what+": provenance, relative to the root", want.provenance, have.provenance)
		}
	}
}

// sameOutputs checks that each of outs has the rows want (the cells of
// cols as text, in any order) and, where wantType is not "", Spark's type
// of a struct of every column (typeof: the columns' names, order and
// types), read in one query (readOutputs) where each output's own reads
// cost one or more each; a difference is named by the output's what.
func sameOutputs(t *testing.T, outs []compared, cols []string, wantType string, want [][]any) {
	t.Helper()
	if len(outs) == 0 {
		return
	}
	want = slices.Clone(want)
	sortCells(want)
	haves, err := readOutputs(t, outs, cols)
	if err != nil {
		// Name the output whose read fails.
		for _, out := range outs {
			if _, err := readOutput(t, out.dir, cols, out.root); err != nil {
				t.Errorf("%s: read %s: %v", out.what, out.dir, err)
			}
		}
		t.Fatalf("the outputs read together: %v", err)
	}
	for i, out := range outs {
		if wantType != "" {
			diff(t, out.what+": schema (Spark's typeof of every column)", wantType, haves[i].schema)
		}
		diff(t, out.what+": rows", want, haves[i].rows)
	}
}

// structFields are the top-level fields of a struct type as Spark's typeof
// writes it, "name:type" each: struct<a:int,b:struct<c:int,d:decimal(5,2)>>
// is a:int and b:struct<c:int,d:decimal(5,2)>. Spark writes the names
// unquoted, so a name holding ',', '<' or '(' would be split wrongly: the
// outputs compared by name have none.
func structFields(t *testing.T, typ string) []string {
	t.Helper()
	if typ == "" {
		return nil
	}
	inner, isStruct := strings.CutPrefix(typ, "struct<")
	inner, closed := strings.CutSuffix(inner, ">")
	if !isStruct || !closed {
		t.Fatalf("%q is not a struct type", typ)
	}
	var fields []string
	depth, start := 0, 0
	for i, r := range inner {
		switch r {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				fields = append(fields, inner[start:i])
				start = i + 1
			}
		}
	}
	return append(fields, inner[start:])
}

// ownSpark starts a Spark Connect server of the test's own (for tests that
// kill it or need another layout), on the harness's image with the
// harness's settings that save CPU (sparktest.OwnServerConf: nothing
// compiled), and connects to it; both are stopped when the test ends.
func ownSpark(t *testing.T, opts localspark.Options, copts spark.ConnectOptions) (*localspark.Server, *spark.Client) {
	t.Helper()
	requireSpark(t)
	opts.Image = sparktest.Image()
	opts.Conf = sparktest.OwnServerConf(opts.Conf)
	ctx := testContext(t)
	opts.StartupTimeout = time.Hour // the test's deadline bounds it
	srv, err := localspark.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start a Spark of the test's own: %v", err)
	}
	sparktest.StopWithTest(t, srv)
	c, err := connectPatiently(t, ctx, srv.Remote(), copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}
