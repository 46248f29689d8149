package spark

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// A column of a file with rows whose every value is null (empty CSV
// values, JSON nulls) is a string to Spark's inference of that file, as a
// column of text is: a sparse column on a quiet day made a column of
// numbers a string in the merge, and failed an append to a table of
// numbers. Such a column is no evidence of its type
// (sparkmerge.Source.NoValues). The client knows it of the CSV files it
// types (it reads every value); of the other reads Spark is asked, in one
// request, and only of the string columns that another source or the
// target types otherwise, where the answer changes the merge. Each probe
// stops at the column's first value: a file is read whole only where the
// column has none, where the merge then reads it again.

// valueProbe asks whether one string column of a read holds a value.
type valueProbe struct {
	read   *Read // the read, its schema pinned (not inferred again)
	column string
}

// markNoValues finds, of the reads' string columns that others type
// otherwise (the other reads, and the schemas of also: the table appended
// to, the reference), those without a value, which the client did not
// type: each read's valueless. A column is asked once per plan.
func (c *Client) markNoValues(ctx context.Context, reads []*Read, policy sparkmerge.Options, also ...sparkmerge.Schema) error {
	key := sparkmerge.ColumnKey(policy)
	typed := map[string]bool{} // keys some column types otherwise than string
	note := func(s sparkmerge.Schema) {
		for _, f := range s.Fields {
			if f.Type.Kind != sparkmerge.KindString {
				typed[key(f.Name)] = true
			}
		}
	}
	for _, r := range reads {
		note(r.Schema)
	}
	for _, s := range also {
		note(s)
	}
	var probes []valueProbe
	var of []*Read
	for _, r := range reads {
		if !r.typesFromValues() {
			continue
		}
		var pinned *Read
		for _, name := range r.ownColumns() {
			if !typed[key(name)] || slices.Contains(r.valuesAsked, name) {
				continue
			}
			if pinned == nil {
				copied := *r
				copied.pinned = r.Schema.String()
				if r.partition != nil {
					copied.pinned = r.dataSchema.String()
				}
				pinned = &copied
			}
			r.valuesAsked = append(r.valuesAsked, name)
			probes, of = append(probes, valueProbe{read: pinned, column: name}), append(of, r)
		}
	}
	if len(probes) == 0 {
		return nil
	}
	has, err := c.server.columnsHaveValues(ctx, probes)
	if err != nil {
		if stop, e := stopTogether(ctx, err); stop {
			return fmt.Errorf("find the columns without a value among the string columns of %s, which other sources type: %w", of[0].Name, e)
		}
		// Spark could not read a file (a malformed line under FAILFAST,
		// which the merge meets too): its columns stay evidence, as they
		// were before Spark was asked.
		return nil
	}
	for i, p := range probes {
		if !has[i] {
			of[i].valueless = append(of[i].valueless, p.column)
		}
	}
	return nil
}

// typesFromValues reports whether r's types are Spark's inference of its
// files' values, which the client does not know to hold values in every
// column: a CSV read with inferSchema, or a JSON read (without
// primitivesAsString), of files, without a schema of the user's, with
// rows, and not a CSV read the client typed (it knows: noValues). A file
// of a tree whose own column gives way to a partition column's values is
// not asked.
func (r *Read) typesFromValues() bool {
	if r.relational() || r.UserSchema != "" || r.overlapExprs != nil || r.withoutRows() {
		return false
	}
	switch r.Format {
	case "csv":
		if !strings.EqualFold(optionValue(r.Options, "inferSchema"), "true") {
			return false
		}
		for _, part := range r.parts() {
			if !part.InferredLocally {
				return true
			}
		}
		return false // the client read every value
	case "json":
		return !strings.EqualFold(optionValue(r.Options, "primitivesAsString"), "true")
	}
	return false
}

// ownColumns are the names of r's string columns that its files hold (a
// file of a tree: not the tree's partition columns).
func (r *Read) ownColumns() []string {
	schema := r.Schema
	if r.partition != nil {
		schema = r.dataSchema
	}
	var out []string
	for _, f := range schema.Fields {
		if f.Type.Kind == sparkmerge.KindString {
			out = append(out, f.Name)
		}
	}
	return out
}
