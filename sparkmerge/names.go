package sparkmerge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// FoldName returns the key names are matched by: the name itself when
// matching is case-sensitive, else its lower-case form (Spark's resolver uses
// equalsIgnoreCase).
func FoldName(name string, caseSensitive bool) string {
	if caseSensitive {
		return name
	}
	return strings.ToLower(name)
}

// namer maps a source's column name to the target spelling and the key it
// is matched by.
type namer struct {
	normalize     NameNormalizer
	caseSensitive bool
	renames       map[string]string // key: matching key of the old name
}

func newNamer(opts Options) *namer {
	n := &namer{normalize: opts.Normalize, caseSensitive: opts.CaseSensitive}
	if len(opts.Renames) > 0 {
		n.renames = make(map[string]string, len(opts.Renames))
		for old, new := range opts.Renames {
			n.renames[FoldName(normalizeName(old, opts.Normalize), opts.CaseSensitive)] = new
		}
	}
	return n
}

// name returns the spelling a source column gets in the target (normalized,
// then renamed) and the key it is matched by.
func (n *namer) name(original string) (spelling, key string) {
	spelling = normalizeName(original, n.normalize)
	key = FoldName(spelling, n.caseSensitive)
	if n.renames != nil {
		if to, ok := n.renames[key]; ok {
			spelling = to
			key = FoldName(to, n.caseSensitive)
		}
	}
	return spelling, key
}

// normalizeName applies the rewrites of n in the order trim, snake_case,
// lower.
func normalizeName(name string, n NameNormalizer) string {
	if n == 0 {
		return name
	}
	if n&(NormalizeTrim|NormalizeSnakeCase) != 0 {
		name = strings.TrimSpace(name)
	}
	if n&NormalizeSnakeCase != 0 {
		name = snakeCase(name)
	}
	if n&NormalizeLower != 0 {
		name = strings.ToLower(name)
	}
	return name
}

// snakeCase rewrites name to lower snake_case: words split at white space,
// punctuation and case changes ("TideNumber", "HTTPServer", "time UTC") are
// joined by single underscores. A leading underscore is kept ("_id").
func snakeCase(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 4)
	lead := strings.HasPrefix(name, "_")
	if lead {
		b.WriteByte('_')
	}
	pendingSep := false
	var prev rune = -1 // previous letter or digit in the current word; -1 at a word start
	for i, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			pendingSep = b.Len() > 0 && !(lead && b.Len() == 1)
			prev = -1
			continue
		}
		if prev != -1 && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(name[i+utf8.RuneLen(r):])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				unicode.IsUpper(prev) && unicode.IsLower(next) {
				pendingSep = true
			}
		}
		if pendingSep {
			b.WriteByte('_')
			pendingSep = false
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

// ColumnKey is the key NewPlan matches a source column's name by under
// opts (normalized, renamed, case-folded unless CaseSensitive): two
// columns of one key are one target column.
func ColumnKey(opts Options) func(name string) string {
	n := newNamer(opts)
	return func(name string) string {
		_, key := n.name(name)
		return key
	}
}
