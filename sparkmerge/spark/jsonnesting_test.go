package spark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The single JSON files of like text options are measured in one text
// read, whatever their number or their other options (those that do not
// change how the text splits into records); a group of files and a
// pattern are measured each in a read of their own.
func TestNestingMeasures(t *testing.T) {
	reads := []*Read{
		{Format: "json", Paths: []string{"/d/a.json"}},
		{Format: "json", Paths: []string{"/d/b.json"}, Options: map[string]string{"primitivesAsString": "true"}},
		{Format: "json", Paths: []string{"/d/c.json"}, Options: map[string]string{"multiLine": "true"}},
		{Format: "json", Paths: []string{"file:///d/d,1.json"}, Options: map[string]string{"lineSep": ";"}},
		{Format: "json", Paths: []string{"/d/e.json"}, Options: map[string]string{"multiline": "TRUE", "mode": "FAILFAST"}},
		{Format: "json", Paths: []string{"/d/g1.json", "/d/g2.json"}},
		{Format: "json", Paths: []string{"/d/*.json"}, patterns: true},
		{Format: "json", Paths: []string{"/d/f.json"}, Options: map[string]string{"lineSep": ";"}},
	}
	got := nestingMeasures(reads)
	want := []nestingMeasure{
		{paths: []string{"/d/a.json", "/d/b.json"}, options: map[string]string{}, byKey: map[string]int{"/d/a.json": 0, "/d/b.json": 1}, value: "value"},
		{paths: []string{"/d/c.json", "/d/e.json"}, options: map[string]string{"wholetext": "true"}, byKey: map[string]int{"/d/c.json": 2, "/d/e.json": 4}, value: detectedValue},
		{paths: []string{`file:///d/d\,1.json`, "/d/f.json"}, options: map[string]string{"lineSep": ";"}, byKey: map[string]int{"/d/d,1.json": 3, "/d/f.json": 7}, value: "value"},
		{paths: []string{"/d/g1.json", "/d/g2.json"}, options: map[string]string{}, read: 5, value: "value"},
		{paths: []string{"/d/*.json"}, options: map[string]string{}, read: 6, value: "value"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(nestingMeasure{})); diff != "" {
		t.Errorf("measures (-want +got):\n%s", diff)
	}
}

// What Spark found past the bound goes back to its read: a single file
// by its path as Spark names it, a group's file to the group, each read
// its deepest file; a file that is no read's is an error, not dropped.
func TestDeepestByRead(t *testing.T) {
	measures := []nestingMeasure{
		{paths: []string{"/d/a.json", "/d/b.json"}, byKey: map[string]int{"/d/a.json": 0, "/d/b.json": 1}},
		{paths: []string{"/d/g1.json", "/d/g2.json"}, read: 2},
	}
	got, err := deepestByRead(measures, []measuredDepth{
		{measure: 0, path: "/d/b.json", depth: 300},
		{measure: 1, path: "/d/g2.json", depth: 400},
		{measure: 1, path: "/d/g1.json", depth: 900},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]deepJSONFile{1: {path: "/d/b.json", depth: 300}, 2: {path: "/d/g1.json", depth: 900}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(deepJSONFile{})); diff != "" {
		t.Errorf("deepest (-want +got):\n%s", diff)
	}
	if _, err := deepestByRead(measures, []measuredDepth{{measure: 0, path: "/elsewhere/b.json", depth: 300}}); err == nil || !strings.Contains(err.Error(), "/elsewhere/b.json") {
		t.Errorf("a file of no read: err = %v, want it named", err)
	}
}

// The nesting of the JSON files Spark types costs one request per plan,
// however many files: twelve files of three kinds of text (lines, lines
// split at another separator, whole files) are measured in one request of
// three text reads, before Spark infers any of them.
func TestPlanMeasuresNestingInOneRequest(t *testing.T) {
	dir := t.TempDir()
	var sources []SourceSpec
	for i := range 12 {
		path := filepath.Join(dir, string(rune('a'+i))+".json")
		if err := os.WriteFile(path, []byte(jsonC), 0o644); err != nil {
			t.Fatal(err)
		}
		var options map[string]string
		switch i % 3 {
		case 1:
			options = map[string]string{"lineSep": ";", "primitivesAsString": "true"}
		case 2:
			options = map[string]string{"multiLine": "true"}
		}
		sources = append(sources, SourceSpec{Paths: []string{path}, Options: options})
	}
	client, fake := newFakeClient()
	deep := filepath.Join(dir, "k.json")
	fake.jsonDepths = map[string]int{deep: 257}
	_, err := client.Plan(context.Background(), Job{Sources: sources, SparkInference: true})
	if err == nil || !strings.Contains(err.Error(), `source "`+deep+`": a record nests objects and arrays 257 levels deep`) {
		t.Errorf("err = %v, want %s refused for its 257 levels", err, deep)
	}
	// The files of default options are typed together first (the fake
	// refuses, so they go alone): then every file left is measured, in
	// one request.
	calls := fake.recorded()
	if len(calls) != 2 || !strings.HasPrefix(calls[0], "jsonLaneTypes ") || !strings.HasPrefix(calls[1], "jsonNesting ") {
		t.Fatalf("calls %q, want jsonLaneTypes, then one jsonNesting", calls)
	}
	if measures := strings.Fields(strings.TrimPrefix(calls[1], "jsonNesting ")); len(measures) != 3 {
		t.Errorf("%d text reads (%q), want 3: one per kind of text", len(measures), measures)
	}
}

// A multipath group with a deep file is refused naming the file, not
// only the group.
func TestPlanRefusesADeepFileOfAGroup(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"a.json", "b.json"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(jsonC), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	client, fake := newFakeClient()
	fake.jsonDepths = map[string]int{paths[1]: 1000}
	_, err := client.Plan(context.Background(), Job{Sources: []SourceSpec{{Name: "drop", Paths: paths}}, Strategy: StrategyMultipath})
	if err == nil || !strings.Contains(err.Error(), `source "drop": a record of its file "`+paths[1]+`" nests objects and arrays 1000 levels deep`) || !strings.Contains(err.Error(), "flatten") {
		t.Errorf("err = %v, want %s named for its 1000 levels", err, paths[1])
	}
	if diff := cmp.Diff([]string{"jsonNesting " + strings.Join(paths, ",")}, fake.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
