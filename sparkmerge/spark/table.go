package spark

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A merge into a table (or a Delta path) learns the table's format from
// the catalog before it plans: an existing table's own format (its
// provider), or, for a table the merge creates, the one asked for
// (Target.Format), else the catalog's default: Iceberg in an Iceberg
// catalog, else Spark's spark.sql.sources.default (parquet here, delta on
// Databricks). The format decides how the table evolves
// (sparkmerge.PlanEvolution), how the merge is written, and how --verify
// counts the rows the commit added (verifyByHistory).

// TargetTable is the table a merge writes, as the catalog describes it
// when the merge is planned.
type TargetTable struct {
	// Name is the table's name as given; a Delta path target is named
	// delta.`path`, as Delta's SQL names it.
	Name string `json:"name"`
	// Format is the table's format: its provider when it exists (delta,
	// iceberg, parquet, ...), else the format it is created in.
	Format string `json:"format"`
	// Exists says whether the table exists.
	Exists bool `json:"exists"`
	// Schema is the existing table's schema.
	Schema sparkmerge.Schema `json:"-"`
	// Evolution is how an append with Evolve changes the table.
	Evolution *sparkmerge.Evolution `json:"evolution,omitempty"`
	// path: a Delta table named by its path (Target.Path).
	path bool
	// partitionBy are an existing table's partition columns, which an
	// append of Spark's writer must name (see appendTarget).
	partitionBy []string
	// filled are the columns the table fills itself where a write leaves
	// them out, by name, with what fills them (see filledColumns).
	filled map[string]string
}

// filledColumns are the columns of a table, by name, that the table
// fills itself where a write leaves them out, with what fills them, from
// their metadata (JSON, by name): a DEFAULT (Spark's CURRENT_DEFAULT, on
// Parquet and Delta tables alike). Delta's identity and generated columns
// are not among them: Delta leaves their metadata out of the schema it
// gives Spark (an identity column BY DEFAULT still comes out NULL where
// the sources lack it; see docs/cli.md).
func filledColumns(metadata map[string]string) map[string]string {
	out := map[string]string{}
	for name, text := range metadata {
		var m map[string]any
		if json.Unmarshal([]byte(text), &m) == nil && m["CURRENT_DEFAULT"] != nil {
			out[name] = fmt.Sprintf("a column with a default value (DEFAULT %v)", m["CURRENT_DEFAULT"])
		}
	}
	return out
}

// unfilledColumnsError is a merge into a table that leaves a column it
// fills itself (TargetTable.filled), or requires (NOT NULL), out of some
// sources' rows: sparkmerge
// writes every column of every row, so those rows would get NULL there,
// not the table's value (found in the field: a DEFAULT 'new' came out
// NULL, verify passing).
//
// A NOT NULL column (a Delta NOT NULL, an Iceberg required column) that
// some sources lack is refused alike: its format refused the NULLs only
// at the write, after every row was read (found in the field).
func unfilledColumnsError(target Target, tt *TargetTable, plan *sparkmerge.Plan) error {
	var parts []string
	for j, f := range plan.Target.Fields {
		what := ""
		for name, w := range tt.filled {
			if sparkmerge.FoldName(name, plan.CaseSensitive) == sparkmerge.FoldName(f.Name, plan.CaseSensitive) {
				what = w
			}
		}
		for _, tf := range tt.Schema.Fields {
			if !tf.Nullable && what == "" && f.Name != plan.SourceColumn && f.Name != plan.Rescue &&
				sparkmerge.FoldName(tf.Name, plan.CaseSensitive) == sparkmerge.FoldName(f.Name, plan.CaseSensitive) {
				what = "NOT NULL in the table"
			}
		}
		if what == "" {
			continue
		}
		var lacking []string
		for i, src := range plan.Sources {
			if j < len(src.Columns) && src.Columns[j] < 0 {
				lacking = append(lacking, fmt.Sprintf("source %d %s", i+1, quoteName(src.Name)))
			}
		}
		if len(lacking) == 0 {
			continue
		}
		if len(lacking) > 3 {
			lacking = append(lacking[:3], fmt.Sprintf("%d more", len(lacking)-3))
		}
		verb := "lacks"
		if len(lacking) > 1 {
			verb = "lack"
		}
		parts = append(parts, fmt.Sprintf("column %s is %s, and %s %s it", backticked(f.Name), what, strings.Join(lacking, ", "), verb))
	}
	if len(parts) == 0 {
		return nil
	}
	verb := "append to"
	if strings.EqualFold(target.Mode, "overwrite") {
		verb = "overwrite"
	}
	return fmt.Errorf("%s %s: %s: sparkmerge writes every column, so those rows would get NULL there, not the table's value; add the column to those sources, or merge into a table that does not fill it or require it (a default dropped: ALTER TABLE %s ALTER COLUMN ... DROP DEFAULT; NOT NULL dropped: ALTER TABLE %s ALTER COLUMN ... DROP NOT NULL): %w",
		verb, targetName(target), strings.Join(parts, "; "), tt.Name, tt.Name, sparkmerge.ErrSchemaConflict)
}

// MarshalJSON writes t with its schema as [sparkmerge.Column]s.
func (t TargetTable) MarshalJSON() ([]byte, error) {
	type fields TargetTable // without this method
	v := struct {
		fields
		Schema []sparkmerge.Column `json:"schema,omitempty"`
	}{fields: fields(t)}
	if t.Exists {
		v.Schema = t.Schema.Columns()
	}
	return json.Marshal(v)
}

// historyFormat reports whether the table's format keeps a history of
// commits that says how many rows each added (Delta, Iceberg).
func (t *TargetTable) historyFormat() bool {
	return t != nil && (t.Format == sparkmerge.FormatDelta || t.Format == sparkmerge.FormatIceberg)
}

// overwritesInPlace says whether a merge into target t overwrites table tt
// in place, in one commit of its format that keeps the table (its
// identity, history, properties and partitioning): an overwrite of an
// existing Delta or Iceberg table (a Delta path's overwrite is Delta's
// own write).
func overwritesInPlace(t Target, tt *TargetTable) bool {
	return strings.EqualFold(t.Mode, "overwrite") && tt.historyFormat() && tt.Exists && !tt.path
}

// keepsTable says whether a merge into target t overwrites the existing
// table tt keeping it (its schema, partitioning, properties, comment,
// owner and grants), as every overwrite of an existing table does: in
// place for Delta and Iceberg (overwritesInPlace), else through a staging
// table and INSERT OVERWRITE (stageTable); and so does an overwrite of a
// Delta path, which Delta writes keeping its table (its overwrite took
// the merge's types only where they were the table's: an int column's
// rows into a bigint one failed, "Failed to merge fields"). Its rows are
// aligned to the table's schema as an append's are.
func keepsTable(t Target, tt *TargetTable) bool {
	return strings.EqualFold(t.Mode, "overwrite") && tt != nil && tt.Exists && (!tt.path || tt.Format == sparkmerge.FormatDelta)
}

// icebergCatalogClasses are the catalog implementations whose tables are
// Iceberg's.
var icebergCatalogClasses = map[string]bool{
	"org.apache.iceberg.spark.SparkCatalog":        true,
	"org.apache.iceberg.spark.SparkSessionCatalog": true,
}

// deltaPathTable names a Delta table by its path, as Delta's SQL does.
func deltaPathTable(path string) string {
	return "delta.`" + strings.ReplaceAll(path, "`", "``") + "`"
}

// isDelta reports whether format names Delta Lake.
// deltaPreviewWidening reports whether a server of sparkVersion has
// Delta 3.x, whose type widening (a preview) changes fewer types than
// Delta 4's (sparkmerge.Table.DeltaPreviewWidening). Delta's releases
// follow Spark's major version: Delta 3.x runs on Spark 3.5 only, Delta
// 4.x on Spark 4. A Databricks Runtime on Spark 3.5 may widen more: the
// merge then refuses a change it could have made, never makes one it
// cannot.
func deltaPreviewWidening(sparkVersion string) bool { return strings.HasPrefix(sparkVersion, "3.") }

func isDelta(format string) bool { return strings.EqualFold(format, sparkmerge.FormatDelta) }

// describeTarget describes the table target t writes to (nil for a path
// target that is not Delta): whether it exists, its format and schema,
// and checks that the format asked for is the table's, or one its
// catalog can create.
func (c *Client) describeTarget(ctx context.Context, t Target) (*TargetTable, error) {
	switch {
	case t.Path != "" && isDelta(t.Format):
		tt := &TargetTable{Name: deltaPathTable(t.Path), Format: sparkmerge.FormatDelta, path: true}
		if c.absentOnServer(ctx, t.Path) {
			return tt, nil
		}
		schema, err := c.server.targetSchema(ctx, t)
		switch errorClass(err) {
		case "":
			tt.Exists, tt.Schema = true, schema
		case "PATH_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE", "DELTA_TABLE_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA":
		default:
			return nil, fmt.Errorf("read the schema of %s: %w", targetName(t), err)
		}
		return tt, nil
	case t.Table == "":
		return nil, nil
	}
	tt := &TargetTable{Name: t.Table}
	schema, metadata, err := c.server.tableSchema(ctx, t.Table)
	switch {
	case err == nil:
		return c.describeExistingTable(ctx, t, tt, schema, metadata)
	case errorClass(err) != "TABLE_OR_VIEW_NOT_FOUND":
		return nil, fmt.Errorf("look up table %s: %w", t.Table, err)
	}
	catalog, class, err := c.tableCatalog(ctx, t.Table)
	if err != nil {
		return nil, err
	}
	iceberg := icebergCatalogClasses[class]
	switch {
	case t.Format != "":
		tt.Format = strings.ToLower(t.Format)
	case iceberg:
		tt.Format = sparkmerge.FormatIceberg
	default:
		values, err := c.server.conf(ctx, "spark.sql.sources.default")
		if err != nil {
			return nil, fmt.Errorf("read the default table format: %w", err)
		}
		tt.Format = strings.ToLower(values["spark.sql.sources.default"])
	}
	switch {
	case tt.Format == sparkmerge.FormatIceberg && !iceberg:
		hint := "configure one (spark.sql.catalog.NAME=org.apache.iceberg.spark.SparkCatalog) and name the table in it"
		if names, err := c.icebergCatalogs(ctx); err == nil && len(names) > 0 {
			hint = "name the table in " + strings.Join(names, " or ") + ", e.g. " + names[0] + "." + lastParts(t.Table)
		}
		if class == "" {
			class = "Spark's session catalog"
		}
		return nil, fmt.Errorf("create table %s as iceberg: its catalog %s (%s) makes no Iceberg tables; %s", t.Table, catalog, class, hint)
	case iceberg && tt.Format != sparkmerge.FormatIceberg:
		return nil, fmt.Errorf("create table %s as %s: its catalog %s is an Iceberg catalog, whose tables are Iceberg's; ask for iceberg or for no format (Target.Format), or name a table of another catalog", t.Table, tt.Format, catalog)
	}
	return tt, nil
}

// lastParts is a table name without its catalog: its last two parts.
func lastParts(table string) string {
	parts := splitName(table)
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, ".")
}

// splitName splits a multi-part name at the dots outside backquotes,
// keeping each part's quotes.
func splitName(name string) []string {
	var parts []string
	quoted := false
	start := 0
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '`':
			quoted = !quoted
		case '.':
			if !quoted {
				parts = append(parts, name[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, name[start:])
}

// unquotePart is a name part without its backquotes.
func unquotePart(part string) string {
	if len(part) >= 2 && part[0] == '`' && part[len(part)-1] == '`' {
		return strings.ReplaceAll(part[1:len(part)-1], "``", "`")
	}
	return part
}

// tableCatalog is the catalog a table name resolves in, as Spark resolves
// it (the first of several parts when a catalog has that name, else the
// session's current catalog), and the catalog's implementation class as
// the server's settings name it ("" when they do not: Spark's built-in
// session catalog, or a catalog of a platform that does not show it).
func (c *Client) tableCatalog(ctx context.Context, table string) (catalog, class string, err error) {
	current, classes, err := c.server.catalogs(ctx)
	if err != nil {
		return "", "", fmt.Errorf("read the catalog of %s: %w", table, err)
	}
	catalog = current
	if parts := splitName(table); len(parts) > 1 {
		first := unquotePart(parts[0])
		if _, ok := classes[first]; ok || strings.EqualFold(first, "spark_catalog") {
			catalog = first
		}
	}
	return catalog, classes[catalog], nil
}

// icebergCatalogs are the names of the server's Iceberg catalogs, as its
// settings name them.
func (c *Client) icebergCatalogs(ctx context.Context) ([]string, error) {
	_, classes, err := c.server.catalogs(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for name, class := range classes {
		if icebergCatalogClasses[class] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// describeExistingTable describes tt, the existing table t writes to, of
// schema and its columns' metadata: its format, partitioning and the
// columns it fills itself, and refuses a view, or a format or
// partitioning the merge cannot keep.
func (c *Client) describeExistingTable(ctx context.Context, t Target, tt *TargetTable, schema sparkmerge.Schema, metadata map[string]string) (*TargetTable, error) {
	tt.Exists, tt.Schema = true, schema
	tt.filled = filledColumns(metadata)
	described, err := c.server.tableProvider(ctx, t.Table)
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", t.Table, err)
	}
	if strings.EqualFold(described.kind, "VIEW") {
		// (An overwrite failed after staging its rows, and left the
		// staging table behind: found in the field.)
		return nil, fmt.Errorf("%s is a view: a merge writes to a table or a path; name the table the view reads, or another table", t.Table)
	}
	tt.Format = strings.ToLower(described.provider)
	tt.partitionBy = described.partitions
	if len(t.PartitionBy) > 0 && !tt.historyFormat() && !slices.EqualFunc(t.PartitionBy, tt.partitionBy, strings.EqualFold) {
		// (Spark's writer refused the append only after the rows were
		// staged, and an overwrite, which keeps the table, ignored it.)
		return nil, fmt.Errorf("table %s is partitioned by (%s), and the merge asks for (%s): a merge into an existing table keeps its partitioning; leave the partition columns out (Target.PartitionBy), or name another table", t.Table, strings.Join(tt.partitionBy, ", "), strings.Join(t.PartitionBy, ", "))
	}
	if t.Format != "" && tt.Format != "" && !strings.EqualFold(t.Format, tt.Format) {
		return nil, fmt.Errorf("table %s is a %s table: a merge into it keeps its format; ask for %s or for none (Target.Format), or name another table", t.Table, tt.Format, tt.Format)
	}
	return tt, nil
}

// partitionColumnsOf are the partition columns DESCRIBE TABLE EXTENDED's
// rows list under "# Partition Information" (after its "# col_name" line,
// up to the next blank or "#" line).
func partitionColumnsOf(rows [][]any) []string {
	var out []string
	in := false
	for _, row := range rows {
		if len(row) == 0 {
			continue
		}
		name, _ := row[0].(string)
		name = strings.TrimSpace(name)
		switch {
		case name == "# Partition Information":
			in = true
		case !in || name == "# col_name":
		case name == "" || strings.HasPrefix(name, "#"):
			return out
		default:
			out = append(out, name)
		}
	}
	return out
}

// tableDescription is what DESCRIBE TABLE EXTENDED says of a table that
// the merge needs.
type tableDescription struct {
	// provider is its format (delta, iceberg, parquet, ...); kind its
	// type (MANAGED, EXTERNAL, VIEW).
	provider, kind string
	// partitions are its partition columns, of a table of Spark's own
	// catalog (see partitionColumnsOf).
	partitions []string
}

// describedValue is the value DESCRIBE TABLE EXTENDED's rows give name
// ("Provider", "Type"), or "".
func describedValue(rows [][]any, name string) string {
	for _, row := range rows {
		if len(row) < 2 {
			continue
		}
		n, _ := row[0].(string)
		value, _ := row[1].(string)
		if strings.TrimSpace(n) == name {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// evolveTable runs the statements that evolve the table, one commit of
// its format each.
func (c *Client) evolveTable(ctx context.Context, e *sparkmerge.Evolution) error {
	for _, stmt := range e.Statements() {
		if err := c.sess.ExecSQL(ctx, stmt); err != nil {
			return fmt.Errorf("evolve table %s (%s): %w\n  hint: the statements before it are committed: the table keeps their columns and types, and its rows", e.Table, stmt, err)
		}
	}
	return nil
}

// Commits that the merge makes to a Delta or Iceberg table are tagged
// with a mark of the run (Delta's userMetadata, an Iceberg snapshot
// property), so that the table's own history says how many rows that
// commit added, whatever other writers committed meanwhile.

// commitTagKey is the Iceberg snapshot property holding the run's mark.
const commitTagKey = "sparkmerge.commit"

// deltaUserMetadataKey is Delta's session setting whose value every
// commit of the session records as its userMetadata: the write option of
// that name is not passed on by a CREATE TABLE AS SELECT.
const deltaUserMetadataKey = "spark.databricks.delta.commitInfo.userMetadata"

// tagCommit marks the commit of a write to table t with tag: for Iceberg
// by the write options it returns, for Delta by the session setting it
// sets until restore is called.
func (c *Client) tagCommit(ctx context.Context, t *TargetTable, tag string) (options map[string]string, restore func(), err error) {
	restore = func() {}
	switch t.Format {
	case sparkmerge.FormatIceberg:
		return map[string]string{"snapshot-property." + commitTagKey: tag}, restore, nil
	case sparkmerge.FormatDelta:
		values, err := c.server.conf(ctx, deltaUserMetadataKey)
		if err != nil {
			return nil, restore, fmt.Errorf("read %s: %w", deltaUserMetadataKey, err)
		}
		if err := c.server.setConf(ctx, map[string]string{deltaUserMetadataKey: "sparkmerge " + tag}); err != nil {
			return nil, restore, fmt.Errorf("mark this run's commit (%s): %w", deltaUserMetadataKey, err)
		}
		old := values[deltaUserMetadataKey]
		return nil, func() {
			// Spark Connect cannot unset a setting: an empty one records
			// no userMetadata.
			_ = c.server.setConf(context.WithoutCancel(ctx), map[string]string{deltaUserMetadataKey: old})
		}, nil
	}
	return nil, restore, nil
}

// historyDepth bounds how many of a Delta table's latest commits are
// searched for the run's: its own and those other writers made since.
const historyDepth = 1000

// rowsCommitted is how many rows the commit tagged tag added to table t,
// as the table's history says: Delta's operation metric numOutputRows of
// that version, Iceberg's added-records of that snapshot.
func (c *Client) rowsCommitted(ctx context.Context, t *TargetTable, tag string) (int64, error) {
	switch t.Format {
	case sparkmerge.FormatDelta:
		rows, err := c.sess.SQL(fmt.Sprintf("DESCRIBE HISTORY %s LIMIT %d", t.Name, historyDepth)).Collect(ctx)
		if err != nil {
			return 0, fmt.Errorf("read the history of %s: %w", t.Name, err)
		}
		return deltaRowsCommitted(rows.Columns, rows.Values, "sparkmerge "+tag, t.Name)
	case sparkmerge.FormatIceberg:
		q := fmt.Sprintf("SELECT snapshot_id, summary['added-records'] FROM %s.snapshots WHERE summary[%s] = %s",
			t.Name, sparkmerge.QuoteString(commitTagKey), sparkmerge.QuoteString(tag))
		rows, err := c.sess.SQL(q).Collect(ctx)
		if err != nil {
			return 0, fmt.Errorf("read the snapshots of %s: %w", t.Name, err)
		}
		if len(rows.Values) != 1 {
			return 0, fmt.Errorf("find this run's snapshot in the snapshots of %s: %d snapshots carry its mark %s=%s, want one", t.Name, len(rows.Values), commitTagKey, tag)
		}
		if rows.Values[0][1] == nil {
			// Iceberg's snapshot summary leaves out a count that is 0
			// (SnapshotSummary: added-records only when above 0): a
			// commit of no rows, a header-only file's, say.
			return 0, nil
		}
		return parseCount(rows.Values[0][1], "added-records", t.Name)
	}
	return 0, fmt.Errorf("table %s: a %s table keeps no history of its commits", t.Name, t.Format)
}

// deltaRowsCommitted finds the commit whose userMetadata is mark among the
// rows of DESCRIBE HISTORY and returns its numOutputRows.
func deltaRowsCommitted(columns []string, rows [][]any, mark, table string) (int64, error) {
	col := func(name string) int {
		for i, c := range columns {
			if c == name {
				return i
			}
		}
		return -1
	}
	meta, metrics, version, op := col("userMetadata"), col("operationMetrics"), col("version"), col("operation")
	if meta < 0 || metrics < 0 {
		return 0, fmt.Errorf("read the history of %s: no userMetadata or operationMetrics column in %v", table, columns)
	}
	var found []int
	for i, row := range rows {
		if s, _ := row[meta].(string); s == mark {
			found = append(found, i)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("find this run's commit in the history of %s: %d commits carry its mark (userMetadata %q), want one", table, len(found), mark)
	}
	row := rows[found[0]]
	entries, _ := row[metrics].([]connect.MapEntry)
	filesWritten := ""
	for _, e := range entries {
		switch k, _ := e.Key.(string); k {
		case "numOutputRows":
			return parseCount(e.Value, "numOutputRows", table)
		case "numFiles":
			filesWritten, _ = e.Value.(string)
		}
	}
	if filesWritten == "0" {
		// A replaceWhere overwrite that wrote no file (no rows: a header
		// alone) leaves numOutputRows out.
		return 0, nil
	}
	return 0, fmt.Errorf("the commit of this run to %s (version %v, %v) has no numOutputRows metric", table, row[max(version, 0)], row[max(op, 0)])
}

// parseCount reads a count the history gives as text.
func parseCount(v any, what, table string) (int64, error) {
	s, _ := v.(string)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s of this run's commit to %s: %q is not a count", what, table, s)
	}
	return n, nil
}
