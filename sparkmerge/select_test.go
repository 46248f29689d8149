package sparkmerge

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatchColumn(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"id", "id", true},
		{"id", "idx", false},
		{"*", "", true},
		{"*", "anything.at/all", true},
		{"_*", "_tmp", true},
		{"_*", "tmp_", false},
		{"*_at", "created_at", true},
		{"*_at", "created_at_x", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a*b*c", "abbbc", true},
		{"?d", "id", true},
		{"?d", "d", false},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{`a\?`, "a?", true},
		{"x[1]", "x[1]", true}, // no character classes
		{"über*", "übersicht", true},
		{"??", "üb", true},
	}
	for _, c := range cases {
		if got := MatchColumn(c.pattern, c.name); got != c.want {
			t.Errorf("MatchColumn(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestParseColumnList(t *testing.T) {
	got := ParseColumnList([]string{"a, b", " c ", `x\,y,`, ""})
	if diff := cmp.Diff([]string{"a", "b", "c", "x,y"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSelection(t *testing.T) {
	cases := []struct {
		name    string
		sources []Source
		opts    Options
		want    string   // target DDL
		dropped []string // source 2's dropped columns
	}{{
		name: "columns keep only the named, in target order",
		sources: []Source{
			{Name: "a", Schema: schema(t, "id int, name string, _tmp int")},
			{Name: "b", Schema: schema(t, "NAME string, id bigint, extra date")},
		},
		opts:    Options{Columns: []string{"name", "ID"}},
		want:    "id bigint, name string",
		dropped: []string{"extra"},
	}, {
		name: "exclude by pattern",
		sources: []Source{
			{Name: "a", Schema: schema(t, "id int, _tmp int, _tmp2 string")},
			{Name: "b", Schema: schema(t, "id int, _tmp3 date, v double")},
		},
		opts:    Options{Exclude: []string{"_tmp*"}},
		want:    "id int, v double",
		dropped: []string{"_tmp3"},
	}, {
		name: "selection after renames and normalizing",
		sources: []Source{
			{Name: "a", Schema: schema(t, "`Reading Id` string, hight double")},
			{Name: "b", Schema: schema(t, "reading_id string, height double, `Debug Info` string")},
		},
		opts: Options{Normalize: NormalizeSnakeCase, Renames: map[string]string{"hight": "height"},
			Columns: []string{"reading_id", "height", "debug*"}, Exclude: []string{"debug_info"}},
		want:    "reading_id string, height double",
		dropped: []string{"Debug Info"},
	}, {
		name: "an excluded column no longer conflicts",
		sources: []Source{
			{Name: "a", Schema: schema(t, "id int, bad array<int>")},
			{Name: "b", Schema: schema(t, "id int, bad int")},
		},
		opts:    Options{Exclude: []string{"bad"}},
		want:    "id int",
		dropped: []string{"bad"},
	}, {
		name: "a reference keeps its columns; sources' excluded ones are null",
		sources: []Source{
			{Name: "a", Schema: schema(t, "id int, secret string")},
			{Name: "b", Schema: schema(t, "id int, secret string, x int")},
		},
		opts: Options{Missing: MissingReference, Reference: ptr(schema(t, "id bigint, secret string")),
			DropExtra: true, Exclude: []string{"secret"}},
		want:    "id bigint, secret string",
		dropped: []string{"secret", "x"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.sources, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Target.String(); got != c.want {
				t.Errorf("target = %s, want %s", got, c.want)
			}
			if diff := cmp.Diff(c.dropped, p.Diagnostics(1).Dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectionUnmatched(t *testing.T) {
	sources := []Source{{Name: "a", Schema: schema(t, "id int, name string")}}
	_, err := NewPlan(sources, Options{Columns: []string{"id", "nmae"}})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "columns" || oe.Value != "nmae" {
		t.Fatalf("err = %v, want an OptionError for columns \"nmae\"", err)
	}
	// An exclusion matching nothing is fine: a column may come and go.
	if _, err := NewPlan(sources, Options{Exclude: []string{"gone*"}}); err != nil {
		t.Fatal(err)
	}
	// Case-sensitively, a column spelled otherwise is not matched.
	if _, err := NewPlan(sources, Options{CaseSensitive: true, Columns: []string{"ID"}}); !errors.As(err, &oe) {
		t.Fatalf("case-sensitive: err = %v, want an OptionError", err)
	}
}

func TestDistinctSQL(t *testing.T) {
	sources := []Source{{Name: "a", Schema: schema(t, "id int")}, {Name: "b", Schema: schema(t, "id int")}}
	for _, distinct := range []bool{false, true} {
		p, err := NewPlan(sources, Options{Distinct: distinct})
		if err != nil {
			t.Fatal(err)
		}
		sql, err := p.SQL([]string{"x", "y"})
		if err != nil {
			t.Fatal(err)
		}
		want := "SELECT `id`\nFROM x\nUNION ALL\nSELECT `id`\nFROM y"
		if distinct {
			want = strings.Replace(want, "UNION ALL", "UNION", 1)
		}
		if sql != want {
			t.Errorf("distinct=%v: SQL = %q, want %q", distinct, sql, want)
		}
	}
}
