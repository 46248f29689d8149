package sparkmerge

import "strings"

// selection is Options.Columns and Options.Exclude while planning: which
// column names (after normalizing and renaming) the target may take from
// the sources, and which entries of Columns matched some name.
type selection struct {
	include, exclude []string // folded as names are matched
	caseSensitive    bool
	original         []string // Columns as given, for errors
	matched          []bool   // per include entry
}

func newSelection(opts Options) *selection {
	s := &selection{caseSensitive: opts.CaseSensitive, original: opts.Columns, matched: make([]bool, len(opts.Columns))}
	for _, p := range opts.Columns {
		s.include = append(s.include, FoldName(p, opts.CaseSensitive))
	}
	for _, p := range opts.Exclude {
		s.exclude = append(s.exclude, FoldName(p, opts.CaseSensitive))
	}
	return s
}

// seen records a name that exists (a source's or the reference's), so that
// entries of Columns matching it are not reported as matching nothing.
func (s *selection) seen(name string) {
	key := FoldName(name, s.caseSensitive)
	for i, p := range s.include {
		if !s.matched[i] && MatchColumn(p, key) {
			s.matched[i] = true
		}
	}
}

// keeps reports whether a source column of this name (after normalizing
// and renaming) is selected, and records the match.
func (s *selection) keeps(name string) bool {
	if len(s.include) == 0 && len(s.exclude) == 0 {
		return true
	}
	key := FoldName(name, s.caseSensitive)
	in := len(s.include) == 0
	for i, p := range s.include {
		if MatchColumn(p, key) {
			in, s.matched[i] = true, true
		}
	}
	if !in {
		return false
	}
	for _, p := range s.exclude {
		if MatchColumn(p, key) {
			return false
		}
	}
	return true
}

// unmatched reports the first entry of Columns that matched no column.
func (s *selection) unmatched() error {
	for i, ok := range s.matched {
		if !ok {
			return &OptionError{Option: "columns", Value: s.original[i],
				Reason: "matches no column of any source (names are matched after normalizing and renaming" + caseNote(s.caseSensitive) + "); check its spelling, or drop it"}
		}
	}
	return nil
}

func caseNote(caseSensitive bool) string {
	if caseSensitive {
		return ", case-sensitively"
	}
	return ", case-insensitively"
}

// MatchColumn reports whether a column name matches pattern: '*' matches
// any run of characters (none too), '?' any one character, '\' makes the
// next character literal; every other character matches itself. Unlike
// path.Match, '/' and '.' are ordinary characters and there are no
// character classes, since column names hold brackets as often as paths
// do. Callers fold both sides for case-insensitive matching.
func MatchColumn(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	// Iterative matching with one backtrack point for the last '*'.
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
			continue
		case pi < len(p) && p[pi] == '?':
			pi++
			ni++
			continue
		case pi < len(p):
			c := p[pi]
			width := 1
			if c == '\\' && pi+1 < len(p) {
				c, width = p[pi+1], 2
			}
			if c == n[ni] {
				pi += width
				ni++
				continue
			}
		}
		if star < 0 {
			return false
		}
		mark++
		pi, ni = star+1, mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// ParseColumnList reads comma-separated column names or patterns, as
// repeated --columns and --exclude flags give them, into one list:
// entries are trimmed, empty ones dropped. A name holding a comma is
// written with '\,'.
func ParseColumnList(values []string) []string {
	var out []string
	for _, v := range values {
		var cur strings.Builder
		flush := func() {
			if t := strings.TrimSpace(cur.String()); t != "" {
				out = append(out, t)
			}
			cur.Reset()
		}
		for i := 0; i < len(v); i++ {
			switch {
			case v[i] == '\\' && i+1 < len(v) && v[i+1] == ',':
				cur.WriteByte(',')
				i++
			case v[i] == ',':
				flush()
			default:
				cur.WriteByte(v[i])
			}
		}
		flush()
	}
	return out
}
