//go:build integration

package integration

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// newMergedOracle is the oracle of job's merge (Spark reading each file
// alone, with Job.InferEachFileAlone): its result as a DataFrame, never
// written, read whole in one query (readFrame: Spark's typeof of every
// column and every value as text), where writing it and reading it back
// cost a write, a job reading the written footers for its schema and
// another for its rows. Outputs are compared with it as with one
// written (sameAs, sameAsByName). The error is Spark's, planning the
// merge or reading its rows (a malformed line under FAILFAST, say).
func newMergedOracle(t *testing.T, c *spark.Client, job spark.Job) (*oracle, error) {
	t.Helper()
	o, _, err := mergedOracleOf(t, c, job)
	return o, err
}

// mergedOracleOf is newMergedOracle, and the plan of its merge (each
// read's schema: where job infers each file alone, Spark's of each file
// read alone).
func mergedOracleOf(t *testing.T, c *spark.Client, job spark.Job) (*oracle, *spark.Planned, error) {
	t.Helper()
	job.Target, job.Verify = spark.Target{}, false
	df, planned, err := c.MergeFrame(testContext(t), job, testSessionOf(t))
	if err != nil {
		return nil, nil, err
	}
	o := newOracle("the merged reference")
	for _, f := range planned.Plan.Target.Fields {
		o.schema = append(o.schema, f.Name+" "+f.Type.String())
		o.names = append(o.names, f.Name)
	}
	if o.whole, err = readFrame(t, df, o.dir, o.names, ""); err != nil {
		return nil, nil, err
	}
	return o, planned, nil
}

// partitionOracle is the partitioned trees' second oracle, never written: each
// data file below root read alone by Spark (a union of the files as
// sources of their own, with Spark's inference of each file alone
// (Job.InferEachFileAlone), under options), joined by
// file with its partition values as Spark's read of the tree types them
// (the tree read as a binaryFile dataset, whose partition columns are
// any format's), read whole in one query. Rows carry their file in
// _source. The error is Spark's reading the files alone.
func partitionOracle(t *testing.T, c *spark.Client, format, root string, files []string, options map[string]string) (*oracle, error) {
	t.Helper()
	var sources []spark.SourceSpec
	for _, f := range files {
		sources = append(sources, spark.SourceSpec{Paths: []string{root + "/" + f}, Format: format})
	}
	ctx := testContext(t)
	s := testSessionOf(t)
	alone, planned, err := c.MergeFrame(ctx, spark.Job{Sources: sources, Strategy: spark.StrategyUnion, SparkInference: true, InferEachFileAlone: true,
		Policy: sparkmerge.Options{SourceColumn: "_source"}, ReaderOptions: options}, s)
	if err != nil {
		return nil, err
	}
	tree, err := s.Read().Format("binaryFile").Load(root)
	if err != nil {
		t.Fatal(err)
	}
	treeSchema, err := tree.Schema(ctx)
	if err != nil {
		t.Fatalf("Spark's read of %s as binaryFile: %v", root, err)
	}
	o := newOracle("the partitioned reference")
	for _, f := range planned.Plan.Target.Fields {
		o.schema = append(o.schema, f.Name+" "+f.Type.String())
		o.names = append(o.names, f.Name)
	}
	var partitions, selected []string
	for _, f := range treeSchema.Fields {
		if !slices.Contains([]string{"path", "modificationTime", "length", "content"}, f.Name) {
			q, _ := sparkmerge.QuoteIdent(f.Name)
			partitions = append(partitions, q)
			selected = append(selected, "p."+q)
			o.names = append(o.names, f.Name)
		}
	}
	if len(partitions) == 0 {
		t.Fatalf("Spark reads %s without partition columns (%v)", root, treeSchema.Fields)
	}
	// A file without partition values in the listing would lose its rows
	// in the join: the oracle's rows are the files' read alone, each
	// with its file's listing (at most one: a file is listed once), and
	// the query fails on a row of a file the listing lacks.
	const view = "sparkmerge_alone" // the test's session serves it alone; dropped below
	if err := alone.CreateTempView(ctx, view, true, false); err != nil {
		t.Fatal(err)
	}
	defer exec(t, "DROP VIEW "+view)
	listing := fmt.Sprintf("(SELECT regexp_replace(path, '^file:', '') AS `__file`, %s FROM binaryFile.`%s`) p", strings.Join(partitions, ", "), root)
	joined := frame(t, s, fmt.Sprintf("SELECT r.*, %s FROM %s r LEFT JOIN %s ON r._source = p.`__file` WHERE assert_true(p.`__file` IS NOT NULL, concat('no partition values in the listing for ', r._source)) IS NULL",
		strings.Join(selected, ", "), view, listing))
	if o.whole, err = readFrame(t, joined, o.dir, o.names, ""); err != nil {
		if strings.Contains(err.Error(), "no partition values in the listing") {
			t.Fatalf("files without partition values in the tree's listing: %v", err)
		}
		return nil, err
	}
	// The partition columns' types as Spark's typeof writes them, for the
	// schema said beside a failed comparison.
	if typed := typedNames(t, o.names, o.whole.schema); typed != nil {
		o.schema = append(o.schema, typed[len(o.schema):]...)
	}
	return o, nil
}

// project is out, read with every column of names and no root, as
// readOutput reads it with the columns cols and root: the cells of cols
// in their order, a _source among them relative to root, the distinct
// provenance values relative to root where root is set (SQL's replace
// and strings.ReplaceAll both replace every occurrence), rows sorted.
func (out *output) project(t *testing.T, names, cols []string, root string) *output {
	t.Helper()
	index := func(col string) int {
		i := slices.Index(names, col)
		if i < 0 {
			t.Fatalf("the oracle has no column %s (it has %v)", col, names)
		}
		return i
	}
	relative := func(v any) any {
		if s, ok := v.(string); ok && root != "" {
			return strings.ReplaceAll(s, root, "")
		}
		return v
	}
	p := &output{schema: out.schema}
	seen := map[string]bool{}
	for _, r := range out.rows {
		var cells []any
		for _, col := range cols {
			v := r[index(col)]
			if col == "_source" {
				v = relative(v)
			}
			cells = append(cells, v)
		}
		p.rows = append(p.rows, cells)
		if root != "" {
			v, _ := relative(r[index("_source")]).(string)
			if !seen[v] {
				seen[v] = true
				p.provenance = append(p.provenance, v)
			}
		}
	}
	sortCells(p.rows)
	sort.Strings(p.provenance)
	return p
}

// frameOracle is the oracle of a DataFrame's rows, read whole in one
// query (readFrame), named what in errors; the schema said beside a
// failed comparison is as Spark's typeof writes it.
func frameOracle(t *testing.T, df sql.DataFrame, what string) *oracle {
	t.Helper()
	schema, err := df.Schema(testContext(t))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	o := newOracle(what)
	for _, f := range schema.Fields {
		o.names = append(o.names, f.Name)
	}
	if o.whole, err = readFrame(t, df, what, o.names, ""); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if o.schema = typedNames(t, o.names, o.whole.schema); o.schema == nil {
		t.Fatalf("%s has no rows: no schema to compare with", what)
	}
	return o
}

// typedNames are "name type" per column of names (schemaOf's form), the
// types as Spark's typeof of a struct of every column writes them (typ);
// nil where typ is not that struct (an output without rows).
func typedNames(t *testing.T, names []string, typ string) []string {
	t.Helper()
	fields := structFields(t, typ)
	if len(fields) != len(names) {
		return nil
	}
	out := make([]string, len(names))
	for i, f := range fields {
		out[i] = names[i] + " " + strings.TrimPrefix(f, names[i]+":")
	}
	return out
}
