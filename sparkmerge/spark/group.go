package spark

import (
	"fmt"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// groupExact is auto's grouping: it reads together, in one load, files
// whose load gives every file's rows exactly as the file read alone, so
// that the merged table never depends on the grouping (only its speed
// does). Files group when they share format, reader options and user
// schema (groupKey) and, by their own schemas:
//
//   - CSV: the same columns in the same order. The read carries
//     enforceSchema=false, so Spark checks each file's header against them.
//   - JSON, Parquet and ORC: every column they share is spelled alike and
//     has the same type. The load, under the group's schema, types each
//     value as the file alone does, and a column a file lacks is null, as
//     the projection of the file alone would make it.
//
// No type is widened inside a group: a group's schema is its files'
// columns in first-seen order, sent with the read. When such groups would
// still change the merge's first-seen column order (a file brings a column
// into an early group that a read in between brought first), only files
// with identical schemas are grouped, which never changes it.
func groupExact(reads []*Read, policy sparkmerge.Options) []*Read {
	if grouped := groupBySchema(reads, sharesTypes); sameTarget(reads, grouped, policy) {
		return grouped
	}
	return groupBySchema(reads, identicalSchema)
}

// fitsFunc says whether read r can join a group whose columns so far are
// fields (first seen first), by lower-cased name in byName. exact is true
// while every file in the group has a JSON schema that keeps every key of
// its records (see jsonKeepsEveryKey).
type fitsFunc func(fields []sparkmerge.Field, byName map[string]sparkmerge.Field, exact bool, r *Read) bool

// identicalSchema admits only files with the group's exact schema.
func identicalSchema(fields []sparkmerge.Field, _ map[string]sparkmerge.Field, _ bool, r *Read) bool {
	return sparkmerge.Schema{Fields: fields}.String() == r.Schema.String()
}

// sharesTypes admits CSV files with the group's exact columns, and other
// files whose columns shared with the group are spelled alike and typed
// the same. A JSON file joins a group of other columns only when the
// client typed every key of it and of the group's files: a key Spark's
// inference drops from a file alone (an empty object, an array of them)
// would be parsed under another file's type in the group's read.
func sharesTypes(fields []sparkmerge.Field, byName map[string]sparkmerge.Field, exact bool, r *Read) bool {
	switch r.Format {
	case "json":
		if !exact || !jsonKeepsEveryKey(r) {
			return identicalSchema(fields, byName, exact, r)
		}
	case "parquet", "orc":
	default:
		return identicalSchema(fields, byName, exact, r)
	}
	for _, f := range r.Schema.Fields {
		if g, seen := byName[strings.ToLower(f.Name)]; seen && (g.Name != f.Name || !g.Type.Equal(f.Type)) {
			return false
		}
	}
	// Nor a column spelled near one of the group's (" amount", "Order Id"
	// and order_id): in one read both spellings would be one source's,
	// which the plan's warning of names a rewrite would make one leaves
	// out (found in the field) and a rewrite would refuse.
	near := map[string]string{}
	for _, g := range fields {
		near[nearKey(g.Name)] = g.Name
	}
	for _, f := range r.Schema.Fields {
		if g, ok := near[nearKey(f.Name)]; ok && !strings.EqualFold(g, f.Name) {
			return false
		}
	}
	return true
}

// nearKey is a column name as the strongest rewrite of names
// (snake_case, which trims and lower-cases) spells it.
var nearKey = sparkmerge.ColumnKey(sparkmerge.Options{Normalize: sparkmerge.NormalizeSnakeCase})

// jsonKeepsEveryKey reports whether r is a JSON file typed on the client
// whose read schema has every key its records have: none inferred as an
// empty object (or array of them), which Spark's inference drops.
func jsonKeepsEveryKey(r *Read) bool {
	if !r.InferredLocally || r.raw.Kind != sparkmerge.KindStruct {
		return false
	}
	var keeps func(t sparkmerge.DataType) bool
	keeps = func(t sparkmerge.DataType) bool {
		switch t.Kind {
		case sparkmerge.KindArray:
			return keeps(*t.Elem)
		case sparkmerge.KindStruct:
			if len(t.Fields) == 0 {
				return false
			}
			for _, f := range t.Fields {
				if !keeps(f.Type) {
					return false
				}
			}
		}
		return true
	}
	return keeps(r.raw)
}

// groupBySchema groups single-file reads with known schemas by groupKey and
// fits. A file joins the earliest group it fits among the last
// maxCompatGroups groups of its key.
func groupBySchema(reads []*Read, fits fitsFunc) []*Read {
	type group struct {
		key    string
		label  string
		count  int
		exact  bool                        // every file keeps every key (JSON)
		byName map[string]sparkmerge.Field // by lower-cased name
		fields []sparkmerge.Field
		in     map[string]int // lower-cased name -> files that have it
	}
	var groups []*group
	labels := map[*Read]*group{}
	for _, r := range reads {
		key := groupKey(r)
		if key == "" || r.multiFile() || len(r.Schema.Fields) == 0 || namesAlikeButForCase(r.Schema) || hidesFileMetadata(r.Schema) {
			continue // alone (see namesAlikeButForCase, hidesFileMetadata)
		}
		var into *group
		tried := 0
		for i := len(groups) - 1; i >= 0 && tried < maxCompatGroups; i-- {
			if g := groups[i]; g.key == key {
				tried++
				if fits(g.fields, g.byName, g.exact, r) {
					into = g
				}
			}
		}
		if into == nil {
			into = &group{key: key, label: fmt.Sprintf("\x00group %d", len(groups)), byName: map[string]sparkmerge.Field{}, in: map[string]int{}, exact: true}
			groups = append(groups, into)
		}
		into.exact = into.exact && r.Format == "json" && jsonKeepsEveryKey(r)
		labels[r] = into
		into.count++
		for _, f := range r.Schema.Fields {
			name := strings.ToLower(f.Name)
			into.in[name]++
			if _, seen := into.byName[name]; !seen {
				into.byName[name] = f
				into.fields = append(into.fields, f)
			}
		}
	}
	grouped := groupReads(reads, func(r *Read) string {
		if g := labels[r]; g != nil {
			return g.key + g.label
		}
		return ""
	})
	for _, r := range grouped {
		if !r.multiFile() {
			continue
		}
		g := labels[r.members[0]]
		fields := make([]sparkmerge.Field, len(g.fields))
		for i, f := range g.fields {
			// A column some files lack is null in their rows.
			f.Nullable = f.Nullable || g.in[strings.ToLower(f.Name)] < g.count
			fields[i] = f
		}
		r.Schema = sparkmerge.Schema{Fields: fields}
	}
	return grouped
}

// namesAlikeButForCase reports whether schema has two top-level columns
// whose names differ only by case (dup and DUP, which a case-sensitive
// merge keeps apart). Such a file is read alone: a group knows its
// columns by lower-cased name, and took the second for the first, so its
// load left the column out (found in the field: a Parquet file's DUP
// lost, verify passing).
func namesAlikeButForCase(schema sparkmerge.Schema) bool {
	seen := map[string]bool{}
	for _, f := range schema.Fields {
		name := strings.ToLower(f.Name)
		if seen[name] {
			return true
		}
		seen[name] = true
	}
	return false
}

// sameTarget reports whether planning over grouped gives the target that
// planning over each file alone (reads) gives: the same columns, in the
// same order, with the same types.
func sameTarget(reads, grouped []*Read, policy sparkmerge.Options) bool {
	if len(grouped) == len(reads) {
		return true
	}
	alone, err := sparkmerge.NewPlan(planSources(reads), policy)
	if err != nil {
		return false
	}
	together, err := sparkmerge.NewPlan(planSources(grouped), policy)
	return err == nil && alone.Target.String() == together.Target.String()
}

// maxCompatGroups bounds the groups a file is tried against (the latest
// ones), so that grouping stays linear when almost no two files agree.
const maxCompatGroups = 16
