package spark

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkmerge/sparkmerge"
)

func TestFileJSONKeys(t *testing.T) {
	dir := t.TempDir()
	read := func(name, content string) *Read {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
		return &Read{Format: "json", Paths: []string{p}}
	}
	tests := []struct {
		name, content string
		want          map[string]string // nil: not inspected
	}{
		{"lines.json", `{"id":1,"Name":{"x":[1,{"ID":2}]}}` + "\n" + `{"id":2,"other":null}` + "\n",
			map[string]string{"id": "id", "name": "Name", "other": "other"}},
		// Spark's default reader takes JSON line by line: a record over
		// several lines is not one it reads, so its keys do not count.
		{"document.json", "{\n  \"a\": 1,\n  \"B\": \"x\"\n}\n", nil},
		{"two-spellings.json", `{"id":1}` + "\n" + `{"ID":2}` + "\n", nil},
		{"array.json", `[{"id":1}]`, nil},
		{"broken.json", `{"id":`, nil},
		{"empty.json", "", nil},
	}
	for _, tt := range tests {
		got, ok := fileJSONKeys(read(tt.name, tt.content))
		if ok != (tt.want != nil) {
			t.Errorf("%s: inspected = %v, want %v", tt.name, ok, tt.want != nil)
			continue
		}
		if ok && !equalMaps(got, tt.want) {
			t.Errorf("%s: keys %v, want %v", tt.name, got, tt.want)
		}
	}
	if _, ok := fileJSONKeys(&Read{Format: "json", Paths: []string{"s3a://bucket/a.json"}}); ok {
		t.Error("a remote path was inspected")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Files that spell a shared key differently are never tried together;
// files that agree are, and a file that agrees with none is read alone.
func TestJSONCaseGroupsKeepConflictsApart(t *testing.T) {
	dir := t.TempDir()
	files := []struct{ name, content string }{
		{"a.json", `{"id":1,"v":1}`},
		{"b.json", `{"ID":2,"v":2}`}, // conflicts with a
		{"c.json", `{"id":3,"w":3}`}, // agrees with a
		{"d.json", `{"ID":4,"V":4}`}, // conflicts with a, c and b (V)
		{"e.json", `{"ID":5}`},       // agrees with b (and d)
	}
	var reads []*Read
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.content+"\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		reads = append(reads, &Read{Name: p, Sources: []string{p}, Format: "json", Paths: []string{p}})
	}
	remote := &Read{Name: "s3a://b/x.json", Sources: []string{"s3a://b/x.json"}, Format: "json", Paths: []string{"s3a://b/x.json"}}
	reads = append(reads, remote)

	labels := jsonCaseGroups(reads, fileJSONKeys)
	if _, inspected := labels[remote]; inspected {
		t.Error("the remote file was inspected")
	}
	groups := groupReads(reads, trialGroupKey(sparkmerge.Options{}, labels))
	var got [][]string
	for _, g := range groups {
		var names []string
		for _, p := range g.Paths {
			names = append(names, filepath.Base(p))
		}
		got = append(got, names)
	}
	want := [][]string{{"a.json", "c.json"}, {"b.json", "e.json"}, {"d.json"}, {"x.json"}}
	diffStrings(t, want, got)
}

func diffStrings(t *testing.T, want, got [][]string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	for i := range want {
		if len(want[i]) != len(got[i]) {
			t.Fatalf("groups %v, want %v", got, want)
		}
		for j := range want[i] {
			if want[i][j] != got[i][j] {
				t.Fatalf("groups %v, want %v", got, want)
			}
		}
	}
}
