//go:build integration

package integration

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// jsonTogetherCorpus holds JSON files as they arrive, with every shape
// whose typing could differ once a file's records are nested among
// others': root arrays and scalars, corrupt lines, text after an object
// (one that would write another field), empty objects and names, blank
// and whitespace lines, a byte-order mark, CRLF, keys differing in case
// or repeated, nulls only, numbers past long and double, NaN, invalid
// UTF-8, deep nesting, the corrupt record's own name as a key, and a name
// Spark's URI of the file escapes; and many files of a few schemas.
func jsonTogetherCorpus() map[string][]byte {
	deep := strings.Repeat(`{"d":`, 60) + "1" + strings.Repeat("}", 60)
	files := map[string][]byte{
		"nested.json":        []byte(`{"id":1,"o":{"a":1,"b":[1,2]}}` + "\n" + `{"id":2,"o":{"a":1.5,"c":null}}` + "\n"),
		"mixed.json":         []byte(`{"a":1}` + "\n" + `{"a":"x"}` + "\n" + `{"a":{"b":1}}` + "\n"),
		"numbers.json":       []byte(`{"a":9223372036854775807,"b":0.1}` + "\n" + `{"a":9223372036854775808,"b":12345678901234567890.123,"c":1e400}` + "\n"),
		"corrupt.json":       []byte(`{"a":1}` + "\n" + `{"a":` + "\n" + `{"b":2}` + "\n"),
		"trailing.json":      []byte(`{"a":1} xyz` + "\n" + `{"b":2}}` + "\n"),
		"inject.json":        []byte(`{"a":1},"zz":5}` + "\n" + `{"a":2}` + "\n"),
		"root-array.json":    []byte(`[{"a":1},{"a":2}]` + "\n" + `{"b":1}` + "\n"),
		"scalars.json":       []byte("1\n\"x\"\nnull\n" + `{"a":1}` + "\n"),
		"empty-objects.json": []byte("{}\n{}\n"),
		"empty-nested.json":  []byte(`{"o":{}}` + "\n" + `{"o":[{}]}` + "\n" + `{"id":1}` + "\n"),
		"blank-lines.json":   []byte("\n  \n" + `{"a":1}` + "\r\n\t\n" + `{"a":2}` + "\n"),
		"blank-only.json":    []byte("\n \r\n\t\n"),
		"bom.json":           []byte("\ufeff" + `{"a":1}` + "\n" + `{"a":2.5}` + "\n"),
		"crlf.json":          []byte(`{"a":1}` + "\r\n" + `{"b":"x"}` + "\r\n"),
		"case.json":          []byte(`{"k":1,"K":"x"}` + "\n"),
		"repeated-key.json":  []byte(`{"a":1,"a":"x"}` + "\n"),
		"nulls.json":         []byte(`{"a":null}` + "\n" + `{"a":null,"b":1}` + "\n"),
		"unicode.json":       []byte(`{"é":"ü","emoji":"😀","q\"k":1}` + "\n"),
		"empty-name.json":    []byte(`{"":1,"a":2}` + "\n"),
		"nonnumbers.json":    []byte(`{"a":NaN}` + "\n" + `{"a":Infinity,"b":-Infinity}` + "\n"),
		"corrupt-name.json":  []byte(`{"_corrupt_record":"x","a":1}` + "\n"),
		"deep.json":          []byte(deep + "\n"),
		"invalid-utf8.json":  []byte("{\"a\":\"\xff\xfe\"}\n{\"b\":1}\n"),
		"timestamps.json":    []byte(`{"at":"2024-01-02T03:04:05","day":"2024-01-02"}` + "\n"),
		"plain.json":         []byte(`{"id":1,"name":"x"}` + "\n"),
		// A name Spark's URI of the file escapes.
		"odd name +%20 é.json": []byte(`{"id":1,"day":"2024-05-01"}` + "\n"),
	}
	for i := range 12 {
		var b strings.Builder
		for r := range 5 {
			switch i % 3 {
			case 0:
				fmt.Fprintf(&b, `{"id":%d,"amount":%d.5,"tags":["a","b"]}`+"\n", r, r)
			case 1:
				fmt.Fprintf(&b, `{"amount":%d,"id":"%d","extra":{"k":%d}}`+"\n", r, r, r)
			default:
				fmt.Fprintf(&b, `{"id":%d,"note":"n, %d","amount":null}`+"\n", r, r)
			}
		}
		files[fmt.Sprintf("many-%02d.json", i)] = []byte(b.String())
	}
	return files
}

// Spark types JSON files together, each exactly as it types the file
// alone, on local files and files only the server sees, with the default
// options and with options that change inference; a file whose lines it
// cannot type nested goes to Spark alone, and a file refused alone is
// refused among others. Each file is planned alone once, where the client
// reads it: the same files only the server sees are held to those
// schemas (planned alone all in one plan, and together) and refusals
// (each refused file planned alone there too).
func TestJSONTypedTogetherAsAlone(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := jsonTogetherCorpus()
	local := localFiles(t, files)
	remote := clusterFiles(t, files)
	plan := func(t *testing.T, root string, options map[string]string, alone bool, names ...string) (*spark.Planned, error) {
		t.Helper()
		var paths []string
		for _, n := range names {
			paths = append(paths, filepath.Join(root, n))
		}
		job := spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, SparkInference: true,
			ReaderOptions: options, InferEachFileAlone: alone, DryRun: true,
			Policy: sparkmerge.Options{Types: sparkmerge.TypesString}}
		return c.Plan(testContext(t), job)
	}
	// Each local file alone, by option set: its schema, or Spark's
	// refusal; asked once (the subtests run one after another).
	type aloneEach struct {
		want                  map[string]string
		typed, refused, empty []string
		// requests are the Spark requests of the typed files' plans.
		requests int64
	}
	asked := map[int]*aloneEach{}
	eachAlone := func(t *testing.T, i int, options map[string]string) *aloneEach {
		t.Helper()
		if a := asked[i]; a != nil {
			return a
		}
		a := &aloneEach{want: map[string]string{}}
		for _, name := range sortedNames(files) {
			p, err := plan(t, local, options, true, name)
			if err != nil && strings.Contains(err.Error(), "every source is empty") {
				a.empty = append(a.empty, name) // no rows: blank lines only
				continue
			}
			if err != nil {
				a.refused = append(a.refused, name)
				continue
			}
			a.typed = append(a.typed, name)
			a.want[name] = p.Reads[0].Schema.String()
			a.requests += p.Requests.SparkRequests()
		}
		asked[i] = a
		return a
	}
	for _, where := range []struct {
		name, root string
	}{{"local files", local}, {"files only the server sees", remote}} {
		for i, options := range []map[string]string{nil, {"prefersDecimal": "true", "primitivesAsString": "false", "allowNonNumericNumbers": "false"}} {
			if i > 0 && where.root == remote {
				continue // options reach Spark alike wherever the files are
			}
			t.Run(fmt.Sprintf("%s, options %v", where.name, options), func(t *testing.T) {
				plan := func(alone bool, names ...string) (*spark.Planned, error) {
					t.Helper()
					return plan(t, where.root, options, alone, names...)
				}
				each := eachAlone(t, i, options)
				want, typed, refused := each.want, each.typed, each.refused
				if where.root == remote {
					// The same bytes, so the same refusals alone.
					for _, name := range refused {
						if _, err := plan(true, name); err == nil {
							t.Errorf("%s: refused alone where the client reads it, planned alone where only the server sees it", name)
						}
					}
				}
				got, err := plan(false, typed...)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range got.Reads {
					name := filepath.Base(r.Name)
					if w, ok := want[name]; !ok || r.Schema.String() != w {
						t.Errorf("%s: typed together %s, alone %s", name, r.Schema, w)
					}
				}
				// The many files of three schemas and the clean shapes are
				// typed together; the files whose lines are not all objects,
				// or whose lines Spark cannot type nested, alone.
				if got.TypedTogether < 20 {
					t.Errorf("%d of %d files typed together", got.TypedTogether, len(typed))
				}
				aloneRequests := each.requests
				if where.root == remote {
					// Each file alone in one plan, here, is each file
					// alone where the client reads it. (Where the client
					// reads the files, each is planned alone above: a plan
					// of them all alone, a request a file as well, would
					// be the same requests again; this one proves that
					// plan too.)
					alone, err := plan(true, typed...)
					if err != nil {
						t.Fatal(err)
					}
					if len(alone.Reads) != len(typed) {
						t.Errorf("%d reads of %d files typed alone in one plan", len(alone.Reads), len(typed))
					}
					for _, r := range alone.Reads {
						name := filepath.Base(r.Name)
						if w, ok := want[name]; !ok || r.Schema.String() != w {
							t.Errorf("%s: typed alone among others %s, alone %s", name, r.Schema, w)
						}
					}
					aloneRequests = alone.Requests.SparkRequests()
				}
				if got.Requests.SparkRequests() >= aloneRequests {
					t.Errorf("typed together in %d Spark requests, alone in %d", got.Requests.SparkRequests(), aloneRequests)
				}
				t.Logf("%d of %d files typed together in %d requests (%d Spark requests in all, %d typed alone); refused alone: %v",
					got.TypedTogether, len(typed), got.TogetherRequests, got.Requests.SparkRequests(), aloneRequests, refused)
				for _, name := range refused {
					if _, err := plan(false, name, "plain.json", "many-00.json", "many-01.json"); err == nil {
						t.Errorf("%s: refused alone, planned among others", name)
					}
				}
				// A file without rows alone is one among others, not read.
				if len(each.empty) == 0 {
					t.Error("no file of blank lines only in the corpus")
				}
				for _, name := range each.empty {
					p, err := plan(false, name, "plain.json", "many-00.json", "many-01.json")
					if err != nil {
						t.Errorf("%s: empty alone, refused among others: %v", name, err)
						continue
					}
					if len(p.Empty) != 1 || filepath.Base(p.Empty[0]) != name {
						t.Errorf("%s: empty alone, among others empty %v", name, p.Empty)
					}
				}
			})
		}
	}
}

// sortedNames are the names of files, sorted.
func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// JSON files past 16 MiB, as a lake holds them, are typed together in one
// inference, each file a text read of its own, each exactly as Spark types
// it alone; one whose last line is cut off (a corrupt record) sends its
// batch of large files to Spark alone at once, not halved. Only on the
// server, where such files are.
func TestLargeJSONFilesTypedTogetherAsAlone(t *testing.T) {
	t.Parallel()
	const size = 17 << 20
	lines := func(line func(i int) string) []byte {
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			b.WriteString(line(i))
			b.WriteByte('\n')
		}
		return []byte(b.String())
	}
	files := map[string][]byte{
		"big-a.json": lines(func(i int) string {
			return fmt.Sprintf(`{"id":%d,"v":%d,"o":{"k":%d,"t":"2024-01-%02d"},"tags":["x","y"]}`, i, i, i%7, i%28+1)
		}),
		"big-b.json": lines(func(i int) string {
			if i%1000 == 999 {
				return fmt.Sprintf(`{"id":"%d","v":%d.5,"gone":null,"o":{"k":"s%d"}}`, i, i, i)
			}
			return fmt.Sprintf(`{"id":%d,"v":%d,"gone":null,"extra":{"n":[%d,2.5]}}`, i, i, i)
		}),
	}
	remote := clusterFiles(t, files)
	c := newClient(t)
	plan := func(t *testing.T, alone bool, names ...string) *spark.Planned {
		t.Helper()
		var paths []string
		for _, n := range names {
			paths = append(paths, filepath.Join(remote, n))
		}
		p, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion, SparkInference: true,
			InferEachFileAlone: alone, DryRun: true, Policy: sparkmerge.Options{Types: sparkmerge.TypesString}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	alone := plan(t, true, "big-a.json", "big-b.json")
	want := map[string]string{}
	for _, r := range alone.Reads {
		want[filepath.Base(r.Name)] = r.Schema.String()
	}
	got := plan(t, false, "big-a.json", "big-b.json")
	for _, r := range got.Reads {
		if name := filepath.Base(r.Name); r.Schema.String() != want[name] {
			t.Errorf("%s: typed together %s, alone %s", name, r.Schema, want[name])
		}
	}
	if got.TypedTogether != 2 || got.TogetherRequests != 1 {
		t.Errorf("%d files typed together in %d requests, want 2 in 1", got.TypedTogether, got.TogetherRequests)
	}
	t.Run("a cut-off line", func(t *testing.T) {
		cut := map[string][]byte{"big-c.json": append(append([]byte(nil), files["big-a.json"]...), `{"id":1,"v":`...)}
		dir := clusterFiles(t, cut)
		p, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(filepath.Join(remote, "big-a.json"), filepath.Join(remote, "big-b.json"), filepath.Join(dir, "big-c.json")),
			Strategy: spark.StrategyUnion, SparkInference: true, DryRun: true, Policy: sparkmerge.Options{Types: sparkmerge.TypesString},
			ReaderOptions: map[string]string{"mode": "PERMISSIVE"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Reads {
			name := filepath.Base(r.Name)
			if name == "big-c.json" {
				if !strings.Contains(r.Schema.String(), "_corrupt_record") {
					t.Errorf("%s: %s, want Spark's corrupt record column", name, r.Schema)
				}
			} else if r.Schema.String() != want[name] {
				t.Errorf("%s among a file with a cut-off line: %s, alone %s", name, r.Schema, want[name])
			}
		}
		// One inference of the three, which shows the corrupt record: all
		// three alone then, none halved.
		if p.TypedTogether != 0 || p.TogetherRequests != 1 {
			t.Errorf("%d files typed together in %d requests, want 0 in 1", p.TypedTogether, p.TogetherRequests)
		}
	})
}
