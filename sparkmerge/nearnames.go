package sparkmerge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Names that differ only by white space around them (" amount",
// "amount ") or by how they spell their words ("OrderId", "order_id") are
// different columns to Spark, and so to the merge: each is a column of
// its own, null in the rows of the sources that spell it otherwise, or a
// column an appended table lacks. A header edited by hand or written by
// another tool does this. The merge does not make them one unasked (they
// can be different data); the plan warns of them (Plan.NearNames), and the
// errors about columns that differ say which rewrite of Options.Normalize
// would make them one.

// NearNames are target column names that one rewrite of names the merge
// did not apply (Options.Normalize) would make one.
type NearNames struct {
	// Names are the names as the target spells them, in the order the
	// merge first saw them (a plan's: target order).
	Names []string
	// Normalize is the rewrite: NormalizeTrim or NormalizeSnakeCase.
	Normalize NameNormalizer
}

// Hint says what the names are and the rewrite that makes them one.
func (n NearNames) Hint() string { return n.What() + ": " + n.Remedy() }

// What says what the names are: `columns "amount" and " amount" differ
// only by white space around them`.
func (n NearNames) What() string {
	how := "differ only by white space around them"
	if n.Normalize == NormalizeSnakeCase {
		how = "are one name in snake_case"
	}
	quoted := make([]string, len(n.Names))
	for i, name := range n.Names {
		quoted[i] = strconv.Quote(name)
	}
	return fmt.Sprintf("columns %s %s", joinAnd(quoted), how)
}

// Remedy is the rewrite of names that makes them one.
func (n NearNames) Remedy() string {
	return fmt.Sprintf("to merge them as one column, normalize names with %s (Options.Normalize)", n.Normalize)
}

// nearRewrites are the rewrites names are compared under, the weaker
// first.
var nearRewrites = []NameNormalizer{NormalizeTrim, NormalizeSnakeCase}

// nearNames groups columns by the rewrites of names opts does not apply:
// names are the columns' spellings in the target (distinct columns under
// opts), spellings(i) those of column i in the sources (none: its name);
// each group is two or more columns whose every spelling the rewrite makes
// one name (a rewrite that would split a column, as snake_case splits
// "OrderId" from "orderid", does not group it), in the order of names. A
// group a weaker rewrite found is not found again. Names that differ only
// by case are one column unless names match case-sensitively, which the
// user asked for: the snake_case rewrite, which lower-cases, does not
// group those.
func nearNames(names []string, spellings func(i int) []string, opts Options) []NearNames {
	var out []NearNames
	seen := map[string]bool{}
	for _, rewrite := range nearRewrites {
		if opts.Normalize&rewrite != 0 || rewrite == NormalizeTrim && opts.Normalize&NormalizeSnakeCase != 0 {
			continue // applied already (snake_case trims)
		}
		rewritten := opts
		rewritten.Normalize |= rewrite
		key := ColumnKey(rewritten)
		var keys []string
		byKey := map[string][]string{}
		for i, name := range names {
			k, ok := oneKey(key, name, spellings(i))
			if !ok {
				continue
			}
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], name)
		}
		for _, k := range keys {
			group := byKey[k]
			if len(group) < 2 || onlyCaseDiffers(group) {
				continue
			}
			id := strings.Join(group, "\x00")
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, NearNames{Names: group, Normalize: rewrite})
		}
	}
	return out
}

// oneKey is the key of every spelling of a column (of name, if none), ok
// false if they have different keys.
func oneKey(key func(string) string, name string, spellings []string) (string, bool) {
	if len(spellings) == 0 {
		return key(name), true
	}
	k := key(spellings[0])
	for _, s := range spellings[1:] {
		if key(s) != k {
			return "", false
		}
	}
	return k, true
}

// onlyCaseDiffers reports whether names are one name but for case.
func onlyCaseDiffers(names []string) bool {
	for _, n := range names[1:] {
		if !strings.EqualFold(n, names[0]) {
			return false
		}
	}
	return true
}

// nearTarget are the groups of p's target columns (the provenance and
// rescue columns aside) that a rewrite would make one, of which no source
// has two: the rewrite would merge them, not fail on a source.
func (b *builder) nearTarget(p *Plan) []NearNames {
	spelled := b.spellings()
	var names []string
	var ids []int32 // by name: its column
	at := map[string]int{}
	for j, id := range b.target {
		name := b.cols[id].name
		if name == p.SourceColumn || name == p.Rescue {
			continue
		}
		at[name] = j
		names = append(names, name)
		ids = append(ids, id)
	}
	groups := nearNames(names, func(i int) []string { return spelled[ids[i]] }, b.opts)
	groups = slices.DeleteFunc(groups, func(g NearNames) bool {
		for _, sp := range p.Sources {
			held := 0
			for _, name := range g.Names {
				if sp.Columns[at[name]] >= 0 {
					held++
				}
			}
			if held > 1 {
				return true
			}
		}
		return false
	})
	if len(groups) == 0 {
		return nil
	}
	return groups
}

// spellings are, by column id, the column's distinct spellings in the
// sources.
func (b *builder) spellings() [][]string {
	out := make([][]string, len(b.cols))
	for spelling, id := range b.bySpelling {
		if id >= 0 {
			out[id] = append(out[id], spelling)
		}
	}
	return out
}

// joinAnd joins words as a list in prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
