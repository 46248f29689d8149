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
// request, and only where the answer can change the merge: of a column
// some source types otherwise than string, and no source is known to hold
// a string in (a CSV file the client typed with a value there, a JSON file
// whose values there the client saw not null). Then the column is a
// string in the target if any read holds a value in it, and none of its
// reads needs flagging; so a probe asks whether any of a column's reads
// holds a value, and stops at the first: the column's first read first
// (a column of text has a value there), then the others of the columns
// without, in a second request.

// valueProbe asks whether any of some reads holds a value in one column.
type valueProbe struct {
	// reads are the reads, their schemas pinned (not inferred again), and
	// columns the column's name in each.
	reads   []*Read
	columns []string
}

// markNoValues flags, of the reads' string columns that others type
// otherwise (the other reads, and the schemas of also: the table appended
// to, the reference), those without a value in any read the client did
// not type: each read's valueless. A column of a read is asked once per
// plan.
func (c *Client) markNoValues(ctx context.Context, reads []*Read, policy sparkmerge.Options, also ...sparkmerge.Schema) error {
	key := sparkmerge.ColumnKey(policy)
	typed := map[string]bool{}  // keys some column types otherwise than string
	valued := map[string]bool{} // keys some read is known to hold a string in
	note := func(s sparkmerge.Schema) {
		for _, f := range s.Fields {
			if f.Type.Kind != sparkmerge.KindString {
				typed[key(f.Name)] = true
			}
		}
	}
	for _, r := range reads {
		note(r.Schema)
		for _, name := range r.stringsHeld() {
			valued[key(name)] = true
		}
	}
	for _, s := range also {
		note(s)
	}
	var probes []valueProbe
	var of [][]*Read            // by probe: the reads asked
	probeOf := map[string]int{} // by key: its probe
	for _, r := range reads {
		if !r.typesFromValues() {
			continue
		}
		var pinned *Read
		for _, name := range r.ownColumns() {
			k := key(name)
			if !typed[k] || valued[k] || slices.Contains(r.valuesAsked, name) {
				continue
			}
			if pinned == nil {
				pinned = pinnedCopy(r)
			}
			r.valuesAsked = append(r.valuesAsked, name)
			i, seen := probeOf[k]
			if !seen {
				i = len(probes)
				probeOf[k], probes, of = i, append(probes, valueProbe{}), append(of, nil)
			}
			probes[i].reads, probes[i].columns = append(probes[i].reads, pinned), append(probes[i].columns, name)
			of[i] = append(of[i], r)
		}
	}
	if len(probes) == 0 {
		return nil
	}
	has, err := c.anyValues(ctx, probes)
	if err != nil {
		if stop, e := stopTogether(ctx, err); stop {
			return fmt.Errorf("find the columns without a value among the string columns of %s, which other sources type: %w", of[0][0].Name, e)
		}
		// Spark could not read a file (a malformed line under FAILFAST,
		// which the merge meets too): its columns stay evidence, as they
		// were before Spark was asked.
		return nil
	}
	for i, p := range probes {
		if !has[i] {
			for j, r := range of[i] {
				r.valueless = append(r.valueless, p.columns[j])
			}
		}
	}
	return nil
}

// anyValues says, of each probe, whether any of its reads holds a value
// in its column: first of each probe's first read (a column of text has a
// value there, and one scan a column answers), then, in a second request,
// of the other reads of the probes without.
func (c *Client) anyValues(ctx context.Context, probes []valueProbe) ([]bool, error) {
	first := make([]valueProbe, len(probes))
	for i, p := range probes {
		first[i] = valueProbe{reads: p.reads[:1], columns: p.columns[:1]}
	}
	has, err := c.server.columnsHaveValues(ctx, first)
	if err != nil {
		return nil, err
	}
	var rest []valueProbe
	var restOf []int // by probe of rest: its index in probes
	for i, p := range probes {
		if !has[i] && len(p.reads) > 1 {
			rest, restOf = append(rest, valueProbe{reads: p.reads[1:], columns: p.columns[1:]}), append(restOf, i)
		}
	}
	if len(rest) == 0 {
		return has, nil
	}
	restHas, err := c.server.columnsHaveValues(ctx, rest)
	if err != nil {
		return nil, err
	}
	for j, i := range restOf {
		has[i] = restHas[j]
	}
	return has, nil
}

// stringsHeld are the names of r's string columns the client knows r to
// hold a value in: of the CSV files it typed, a column with a value in
// one; of the JSON files, a key whose values it saw not all null (an
// empty string, typed as a null by inference, is not known so).
func (r *Read) stringsHeld() []string {
	var out []string
	for _, name := range r.ownColumns() {
		for _, part := range r.parts() {
			if part.InferredLocally && part.holdsString(name) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// holdsString reports whether the client, having typed the file r, saw a
// value in its string column name.
func (r *Read) holdsString(name string) bool {
	switch r.Format {
	case "csv":
		return !r.noRows && !slices.Contains(r.noValues, name) &&
			slices.ContainsFunc(r.Schema.Fields, func(f sparkmerge.Field) bool { return f.Name == name && f.Type.Kind == sparkmerge.KindString })
	case "json":
		for _, f := range r.raw.Fields {
			if f.Name == name {
				return f.Type.Kind != sparkmerge.KindNull
			}
		}
	}
	return false
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

// pinnedCopy is r read with its discovered schema, as pinSchemas pins it
// (a file of a tree without its partition columns), for a probe of its
// rows that must not have Spark infer the schema again.
func pinnedCopy(r *Read) *Read {
	copied := *r
	copied.pinned = r.Schema.String()
	if r.partition != nil {
		copied.pinned = r.dataSchema.String()
	}
	return &copied
}
