//go:build integration

package integration

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// tableMetadata is what DESCRIBE TABLE EXTENDED says of a table that an
// overwrite must keep: its columns, partition columns, comment,
// properties and provider.
func tableMetadata(t *testing.T, table string) map[string]string {
	t.Helper()
	rows := queryRows(t, "DESCRIBE TABLE EXTENDED "+table)
	out := map[string]string{}
	section := "column"
	for _, r := range rows {
		name, _ := r[0].(string)
		value, _ := r[1].(string)
		switch {
		case name == "# Partition Information":
			section = "partition"
			continue
		case name == "# Detailed Table Information":
			section = "detail"
			continue
		case name == "" || strings.HasPrefix(name, "# "):
			continue
		}
		switch section {
		case "column":
			out["columns"] += name + " " + value + ";"
		case "partition":
			out["partitioned by"] += name + ";"
		case "detail":
			switch name {
			case "Comment", "Table Properties", "Provider", "Owner", "Created Time":
				out[name] = value
			}
		}
	}
	return out
}

// An overwrite of an existing table (not Delta's or Iceberg's) replaces
// its rows and keeps the table: its comment, properties, partitioning and
// creation, named with three parts (spark_catalog.default.t) as with one.
// The table keeps its columns: a source column it lacks is refused by
// name, leaving it as it was, unless Evolve adds it. A merge that fails
// while writing leaves the table, rows and metadata, as it was. Sources
// are local files and files only the cluster sees.
func TestTableOverwriteKeepsTable(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	short := "sm_keep_" + id
	table := "spark_catalog.default." + short
	exec(t, "CREATE TABLE "+table+" (id int, v string, p string) USING parquet PARTITIONED BY (p) COMMENT 'kept by overwrites' TBLPROPERTIES ('team'='data', 'tier'='gold')",
		"INSERT INTO "+table+" VALUES (1, 'old', 'x'), (2, 'old', 'y')")
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	before := tableMetadata(t, table)
	if before["Comment"] != "kept by overwrites" || before["partitioned by"] != "p;" || !strings.Contains(before["Table Properties"], "team=data") {
		t.Fatalf("the table as created: %v", before)
	}
	rowsOf := func() [][]any {
		t.Helper()
		exec(t, "REFRESH TABLE "+table) // this session read the table before
		rows := queryRows(t, "SELECT id, v, p FROM "+table+" ORDER BY id")
		return rows
	}
	partitions := func() [][]any {
		t.Helper()
		rows := queryRows(t, "SHOW PARTITIONS "+table)
		return rows
	}
	oldRows := [][]any{row(int32(1), "old", "x"), row(int32(2), "old", "y")}
	local := writeFiles(t, workDir(t), map[string]string{"a.csv": "id,v,p\n3,new,z\n", "extra.csv": "id,v,p,w\n5,wide,x,0.5\n", "bad.csv": "id,v,p\n6,bad,x\nsix,bad,x\n"},
		"a.csv", "extra.csv", "bad.csv")
	host, dir := sparktest.ClusterDir(t)
	putFiles(t, host, textFiles(map[string]string{"b.csv": "p,id,v\nx,4,cluster\n"}))
	sources := append(pathSources(local[0]), pathSources(dir+"/b.csv")...)

	// A merge that fails while it writes (a value that does not parse).
	_, err := c.Merge(context.Background(), spark.Job{Sources: []spark.SourceSpec{{Paths: local[2:3], Schema: "id int, v string, p string"}},
		Target: spark.Target{Table: table, Mode: "overwrite"}})
	if err == nil {
		t.Fatal("a value that does not parse under FAILFAST was written")
	}
	diff(t, "rows after a failed overwrite", oldRows, rowsOf())
	diff(t, "metadata after a failed overwrite", before, tableMetadata(t, table))

	// A column the table lacks.
	_, err = c.Merge(context.Background(), spark.Job{Sources: append(sources, pathSources(local[1])...), Target: spark.Target{Table: table, Mode: "overwrite"}})
	if err == nil || !strings.Contains(err.Error(), "sources have columns it lacks") || !strings.Contains(err.Error(), `has "w"`) {
		t.Errorf("an overwrite bringing column w: err = %v, want it refused naming w", err)
	}
	diff(t, "rows after a refused overwrite", oldRows, rowsOf())

	res, err := c.Merge(context.Background(), spark.Job{Sources: sources, Verify: true, Target: spark.Target{Table: table, Mode: "overwrite"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.RowsWritten != 2 {
		t.Errorf("overwrite: %d rows written, verified %v; want 2, verified", res.RowsWritten, res.Verified)
	}
	diff(t, "rows after the overwrite", [][]any{row(int32(3), "new", "z"), row(int32(4), "cluster", "x")}, rowsOf())
	diff(t, "partitions after the overwrite", [][]any{row("p=x"), row("p=z")}, partitions())
	diff(t, "metadata after the overwrite", before, tableMetadata(t, table))

	// Evolve adds the column, then overwrites; the rest of the table stays.
	res, err = c.Merge(context.Background(), spark.Job{Sources: append(sources, pathSources(local[1])...), Verify: true,
		Policy: sparkmerge.Options{SourceColumn: "_source"}, Target: spark.Target{Table: short, Mode: "overwrite", Evolve: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.RowsWritten != 3 {
		t.Errorf("evolving overwrite: %d rows written, verified %v; want 3, verified", res.RowsWritten, res.Verified)
	}
	exec(t, "REFRESH TABLE "+table)
	rows := queryRows(t, "SELECT id, v, p, w, _source IS NOT NULL FROM "+table+" ORDER BY id")
	diff(t, "rows after the evolving overwrite", [][]any{row(int32(3), "new", "z", nil, true), row(int32(4), "cluster", "x", nil, true), row(int32(5), "wide", "x", 0.5, true)}, rows)
	after := tableMetadata(t, table)
	want := maps.Clone(before)
	want["columns"] = "id int;v string;w double;_source string;p string;"
	diff(t, "metadata after the evolving overwrite", want, after)
	staging := queryRows(t, "SHOW TABLES IN spark_catalog.default LIKE '"+short+"__sparkmerge_*'")
	if len(staging) != 0 {
		t.Errorf("staging tables left: %v", staging)
	}
}
