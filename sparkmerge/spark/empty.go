package spark

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge"
)

// Empty inputs. A landing zone gets the occasional empty drop: a file of
// 0 bytes, a Parquet file a writer left without columns. Such a file holds
// no rows and no columns, so it changes nothing in the merge, and every
// read path treats it alike, wherever the file lives and whichever side
// infers schemas: it is not read, the plan lists it ([Planned.Empty]), and
// --verify counts it with 0 rows. Spark agrees: its scans skip files of 0
// bytes (a read of their directory gives none of their rows). A file with
// no columns but rows is refused while planning, naming it: its rows would
// merge as rows of nulls, and Spark cannot read them alone.

// withoutEmptyFiles splits off the reads of one file of 0 bytes, by the
// size the client sees or Spark listed: nothing of them is asked of
// Spark (a Parquet file of 0 bytes fails its schema inference).
func withoutEmptyFiles(reads []*Read) (kept, empty []*Read) {
	for _, r := range reads {
		if r.zeroBytes() {
			empty = append(empty, r)
		} else {
			kept = append(kept, r)
		}
	}
	return kept, empty
}

// zeroBytes reports whether r reads one file, of 0 bytes.
func (r *Read) zeroBytes() bool {
	if r.relational() || r.patterns || len(r.Paths) != 1 {
		return false
	}
	if r.listed {
		return r.listedSize == 0
	}
	size, ok := localSize(r.Paths[0])
	return ok && size == 0
}

// withoutColumnlessFiles splits off the reads that discovery found without
// columns: a file whose first row Spark finds none of is empty (a Parquet
// file without columns or row groups, a CSV file of blank lines); one with
// rows, or whose rows Spark cannot read, is an error naming it. One small
// Spark job per such file; none when there is none.
func (c *Client) withoutColumnlessFiles(ctx context.Context, reads []*Read, parallelism int) (kept, empty []*Read, err error) {
	var columnless []*Read
	for _, r := range reads {
		if len(r.Schema.Fields) > 0 {
			kept = append(kept, r)
			continue
		}
		if r.relational() || r.UserSchema != "" || r.multiFile() {
			return nil, nil, sourceError(r, errNoColumns)
		}
		columnless = append(columnless, r)
	}
	if len(columnless) == 0 {
		return kept, nil, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallelism, 1))
	for _, r := range columnless {
		g.Go(func() error {
			// Alone, so that an error is this file's: Spark infers its
			// (empty) schema again and reads at most one row.
			has, err := c.server.haveRows(gctx, []*Read{r})
			switch {
			case err != nil:
				return sourceError(r, fmt.Errorf("it has no columns, and Spark cannot read its rows (%w): remove it, or give its schema (SourceSpec.Schema)", err))
			case has[0]:
				return sourceError(r, errors.New("it has rows but no columns: they would merge as rows of nulls; remove it, or give its schema (SourceSpec.Schema)"))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return kept, columnless, nil
}

// errNoColumns refuses a source without columns that is not one file (a
// table, a query, a dataset directory, the user's own schema).
var errNoColumns = errors.New("it has no columns: remove it or give its schema (SourceSpec.Schema)")

// emptyNames are the names of the empty reads, in input order.
func emptyNames(empty []*Read) []string {
	sort.SliceStable(empty, func(i, j int) bool { return empty[i].order < empty[j].order })
	names := make([]string, len(empty))
	for i, r := range empty {
		names[i] = r.Name
	}
	return names
}

// nothingToMerge is the error of a job whose every source is empty: a
// merge of no columns has no table to write.
func nothingToMerge(empty []*Read) error {
	names := emptyNames(empty)
	shown := names
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("... and %d more", len(names)-5))
	}
	return fmt.Errorf("nothing to merge: every source is empty (no rows and no columns: files of 0 bytes, or without columns): %s; check that the files were written", strings.Join(shown, ", "))
}

// markHeaderOnly marks the CSV files Spark typed that have no row (their
// header alone; see Read.noRows), which the client knows of the files it
// types itself. Spark's inference makes every column of such a file a
// string, so only files all of whose columns are strings are asked:
// Spark reads at most the first row of each, under its schema, in jobs
// of up to headerOnlyBatch files.
func (c *Client) markHeaderOnly(ctx context.Context, reads []*Read, parallelism int) error {
	var probes, of []*Read
	for _, r := range reads {
		if !inferredFromValues(r) || !allStrings(r) {
			continue
		}
		probes, of = append(probes, pinnedCopy(r)), append(of, r)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallelism, 1))
	for start := 0; start < len(probes); start += headerOnlyBatch {
		end := min(start+headerOnlyBatch, len(probes))
		g.Go(func() error {
			has, err := c.server.haveRows(gctx, probes[start:end])
			if err != nil {
				return fmt.Errorf("find the CSV files without rows among %s, ...: %w", of[start].Name, err)
			}
			for i, h := range has {
				of[start+i].noRows = !h
			}
			return nil
		})
	}
	return g.Wait()
}

// headerOnlyBatch bounds the files one job of markHeaderOnly reads.
const headerOnlyBatch = 200

// inferredFromValues reports whether r is one CSV file whose types Spark's
// inference gives from its values: with a header, inferSchema on, and no
// schema of the user's.
func inferredFromValues(r *Read) bool {
	return r.Format == "csv" && !r.relational() && len(r.Paths) == 1 && r.UserSchema == "" &&
		strings.EqualFold(optionValue(r.Options, "header"), "true") && strings.EqualFold(optionValue(r.Options, "inferSchema"), "true")
}

// allStrings reports whether r has columns, every one a string.
func allStrings(r *Read) bool {
	for _, f := range r.Schema.Fields {
		if f.Type.Kind != sparkmerge.KindString {
			return false
		}
	}
	return len(r.Schema.Fields) > 0
}
