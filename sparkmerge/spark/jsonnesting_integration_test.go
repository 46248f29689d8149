//go:build integration

package spark

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

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

// randomLines are n distinct lines of up to 79 characters of alphabet,
// in the order made, and each line's depth as the client counts it
// (refNestingDepth).
func randomLines(rng *rand.Rand, alphabet string, n int) ([]string, map[string]int) {
	runes := []rune(alphabet)
	want := map[string]int{}
	var lines []string
	for len(want) < n {
		var line strings.Builder
		for range rng.IntN(80) {
			line.WriteRune(runes[rng.IntN(len(runes))])
		}
		if _, seen := want[line.String()]; !seen {
			want[line.String()] = refNestingDepth(line.String())
			lines = append(lines, line.String())
		}
	}
	return lines, want
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
	lines, want := randomLines(rng, `{}[]"'\a ,:é`, 6000)
	var text strings.Builder
	for _, line := range lines {
		text.WriteString(line + "\n")
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

// encodeText is s in the charset: UTF-16 or UTF-32 of a byte order
// (bom: with its mark first).
func encodeText(s, charset string, bom bool) []byte {
	var out []byte
	if bom {
		s = "\uFEFF" + s
	}
	for _, r := range s {
		switch charset {
		case "UTF-16LE", "UTF-16BE":
			for _, u := range utf16.Encode([]rune{r}) {
				if charset == "UTF-16LE" {
					out = append(out, byte(u), byte(u>>8))
				} else {
					out = append(out, byte(u>>8), byte(u))
				}
			}
		case "UTF-32LE":
			out = append(out, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		case "UTF-32BE":
			out = append(out, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
		}
	}
	return out
}

// The measure reads a JSON file of UTF-16 or UTF-32 as Spark's reader
// decodes it, line by line at lineSep's bytes in the charset and whole
// with multiLine: on 3,000 generated lines of brackets, quotes,
// backslashes and characters whose UTF-16 units hold a quote's, a
// backslash's or a bracket's byte (丢 22 4E, 丧 27 4E, 山 71 5C, 字 57 5B,
// 笑 11 7B), every line decodes to itself and measures as the client
// counts it, in each charset and byte order (with a byte order mark
// where Spark's charset reads one), and whole files of no encoding as
// Spark's reader detects it from their first bytes.
func TestLiveJSONNestingDecodesTheCharset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := liveClient(t)
	rng := rand.New(rand.NewPCG(5, 16))
	lines, want := randomLines(rng, `{}[]"'\a ,:丢丧山字笑😀`, 3000)
	deep := `{"s":"丢丧山字",` + strings.Repeat(`"a":[`, 150) + `"]]]}}}笑"` + strings.Repeat(`]`, 150) + `}`
	want[deep] = 151
	lines = append(lines, deep)
	whole := strings.Join(lines, "\n")
	dir := sparktest.WorkDir(t)
	for _, tc := range []struct {
		encoding, multiLine string
		file                string // charset the file is written in
		bom                 bool
	}{
		{"UTF-16LE", "false", "UTF-16LE", false},
		{"UTF-16BE", "false", "UTF-16BE", false},
		{"UTF-32LE", "false", "UTF-32LE", false},
		{"UTF-32BE", "false", "UTF-32BE", false},
		{"UTF-16LE", "true", "UTF-16LE", false},
		{"UTF-16", "true", "UTF-16LE", true},
		{"UTF-16", "true", "UTF-16BE", false},
		{"UTF-32", "true", "UTF-32LE", true},
		{"UTF-32LE", "true", "UTF-32LE", false},
		{"UTF-32BE", "true", "UTF-32BE", true},
		{"", "true", "UTF-16LE", false},
		{"", "true", "UTF-16BE", true},
		{"", "true", "UTF-32LE", false},
		{"", "true", "UTF-32BE", false},
	} {
		name := tc.encoding + "-" + tc.multiLine + "-" + tc.file
		path := filepath.Join(dir, name+".json")
		text := whole
		if tc.encoding == "" {
			// Detected by its first bytes: ASCII first, as in JSON.
			text = "{}\n" + whole
		}
		if err := os.WriteFile(path, encodeText(text, tc.file, tc.bom), 0o644); err != nil {
			t.Fatal(err)
		}
		options := map[string]string{"encoding": tc.encoding, "multiLine": tc.multiLine, "lineSep": "\n"}
		measures := nestingMeasures([]*Read{{Format: "json", Paths: []string{path}, Options: options}})
		if len(measures) != 1 {
			t.Fatalf("%s: %d measures", name, len(measures))
		}
		m := measures[0]
		rows, err := c.sess.Read(connect.ReadSpec{Format: "text", Paths: m.paths, Options: m.options}).
			SelectExpr(m.valueSQL()+" AS value").SelectExpr("value", jsonNestingExpr(-1)+" AS depth").Collect(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]int{}
		for _, row := range rows.Values {
			line, _ := row[0].(string)
			depth, _ := row[1].(int32)
			got[strings.TrimPrefix(line, "\uFEFF")] = int(depth)
		}
		wantHere := want
		if tc.multiLine == "true" {
			wantHere = map[string]int{text: refNestingDepth(text)}
		}
		if len(got) != len(wantHere) {
			t.Errorf("%s: %d texts measured, want %d", name, len(got), len(wantHere))
		}
		wrong := 0
		for line, w := range wantHere {
			if d, ok := got[line]; !ok || d != w {
				if wrong++; wrong <= 3 {
					t.Errorf("%s: %.80q measured %d (found %v), want %d", name, line, d, ok, w)
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%s: %d of %d texts measured wrong", name, wrong, len(wantHere))
		}
	}
}
