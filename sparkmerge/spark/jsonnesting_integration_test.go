//go:build integration

package spark

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

// refNestingDepth is how deep a line of JSON text nests objects and
// arrays by the rule jsonNestingExpr follows: brackets outside strings,
// in double or single quotes, a backslash in a string escaping the next
// character (infer's nestingDepth, with single quotes).
func refNestingDepth(line string) int {
	depth, deepest := 0, 0
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// Spark's measure of a line's nesting (jsonNestingExpr) is the client's
// rule, on 6,000 generated lines of brackets, quotes of both kinds,
// backslashes, letters, separators and a two-byte character, unbalanced
// and unclosed among them: exact for every line past the bound given,
// 0 or exact below it, under bounds below, at and above the rounds
// that cut innermost pairs (so that both the cut and the fold decide).
func TestLiveJSONNestingAsTheClientCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := liveClient(t)
	rng := rand.New(rand.NewPCG(11, 39))
	const alphabet = `{}[]"'\a ,:é`
	runes := []rune(alphabet)
	want := map[string]int{}
	var text strings.Builder
	for len(want) < 6000 {
		var line strings.Builder
		for range rng.IntN(80) {
			line.WriteRune(runes[rng.IntN(len(runes))])
		}
		if _, seen := want[line.String()]; !seen {
			want[line.String()] = refNestingDepth(line.String())
			text.WriteString(line.String() + "\n")
		}
	}
	// Balanced lines, which the cut of innermost pairs empties: the bound
	// it gives is exact.
	for depth := 1; depth <= 20; depth++ {
		line := strings.Repeat(`{"a":[`, depth/2) + strings.Repeat(`[`, depth%2) + `1,"]]"` + strings.Repeat(`]`, depth%2) + strings.Repeat(`]}`, depth/2)
		want[line] = depth
		text.WriteString(line + "\n")
	}
	deep := strings.Repeat(`{"a":[`, 150) + `"]]]}}}"` + strings.Repeat(`]}`, 150)
	want[deep] = 300
	text.WriteString(deep + "\n")
	path := filepath.Join(sparktest.WorkDir(t), "lines.txt")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bound := range []int{-1, 4, 9, 12, 15, 299} {
		rows, err := c.sess.Read(connect.ReadSpec{Format: "text", Paths: []string{literalPath(path)}}).
			SelectExpr("value", jsonNestingExpr(bound)+" AS depth").Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows.Values) != len(want) {
			t.Errorf("bound %d: %d lines measured, want %d", bound, len(rows.Values), len(want))
		}
		wrong := 0
		for _, row := range rows.Values {
			line, _ := row[0].(string)
			got, _ := row[1].(int32)
			w, known := want[line]
			if !known || (int(got) != w && (w > bound || got != 0)) {
				if wrong++; wrong <= 5 {
					t.Errorf("bound %d: %q measured %d, want %d", bound, line, got, w)
				}
			}
		}
		if wrong > 0 {
			t.Errorf("bound %d: %d of %d lines measured wrong", bound, wrong, len(rows.Values))
		}
	}
}
