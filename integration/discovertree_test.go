//go:build integration

package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Files of a partitioned tree (key=value directories: a landing zone's
// usual shape) that the client does not type are typed by Spark together
// with others, as files outside a tree are (spark's csvTogetherKey and
// jsonTogetherKey; issue 34), not by a request per file. Each file must
// get the schema Spark gives it read alone with the tree's root as its
// basePath: its own columns as Spark infers them from the file, then the
// tree's partition columns (a column of its own named as one in that
// column's place) typed as Spark types them over the whole tree.

// treeDirs are the partition directories of the trees below: nested,
// dates, an escaped value and nulls.
var treeDirs = []string{"region=eu/day=2024-01-01", "region=us/day=2024-02-29", "region=a%2Fb/day=__HIVE_DEFAULT_PARTITION__"}

// partitionedCSVCorpus are CSV files of drifting headers in a tree:
// dates and timestamps, a bare year after a date (typed by the order of
// its values), quoted values holding the separator and quotes, the header
// line again, a byte-order mark and CRLF, rows of other widths, a header
// alone, a column named as the tree's partition column day (its values
// its directory's), many files of a few headers, and a file with a line
// of a tab (typed alone by design: Spark's filters of blank lines
// differ on it).
func partitionedCSVCorpus() (files map[string][]byte, alone []string) {
	own := map[string]string{
		"dates.csv":        "id,when,at\n1,2024-12-31,2024-01-02 03:04:05\n2,2020-02-29,2024-01-02T03:04:05.123\n",
		"year-after.csv":   "id,when,at\n1,2020-01-05,x\n2,2020,1999-12-31 23:59:59\n",
		"quoted.csv":       "id,note,n\n1,\"a,b\",\"2\"\n2,\"say \"\"hi\"\"\",3\n3,\"\",\"\"\n",
		"header-again.csv": "id,when,at\n1,2024-01-01,2024-01-01 00:00:00\nid,when,at\n2,2024-01-02,2024-01-02 00:00:00\n",
		"bom.csv":          "\ufeffid,when\r\n1,2024-03-01\r\n2,2024-03-02\r\n",
		"widths.csv":       "id,a,b\n1,2024-01-01\n2,2024-01-02,3.5,extra,9\n3,x,4,\"q,\"\n",
		"header-only.csv":  "id,when,at\n",
		"tab-line.csv":     "id,when\n\t\n1,2024-01-01\n",
	}
	files = map[string][]byte{}
	for i, name := range sortedNames(textFiles(own)) {
		p := treeDirs[i%len(treeDirs)] + "/" + name
		files[p] = []byte(own[name])
		if name == "tab-line.csv" {
			alone = append(alone, p)
		}
	}
	// Its own day, a date as its directory's.
	files[treeDirs[0]+"/own-day.csv"] = []byte("id,day,note\n1,2024-01-01,\"x, y\"\n2,,z\n")
	for i := range 12 {
		files[fmt.Sprintf("%s/part-%02d.csv", treeDirs[i%len(treeDirs)], i)] = []byte(fewHeadersCSV(i, "when"))
	}
	return files, alone
}

// partitionedJSONCorpus are JSON files of drifting keys in a tree: dates
// and timestamps as strings, nested records and arrays, numbers past a
// long, a key named as the partition column day (its values its
// directory's), blank lines and CRLF, many files of a few shapes, and a
// file of a top-level array (typed alone by design: the root's own
// rules).
func partitionedJSONCorpus() (files map[string][]byte, alone []string) {
	own := map[string]string{
		"dated.json":  `{"id":1,"when":"2024-01-01","at":"2024-01-02T03:04:05.123Z"}` + "\n" + `{"id":2,"when":"2020-02-29"}` + "\n",
		"nested.json": `{"id":1,"o":{"k":[1,2],"s":{"x":"2024-01-01"}}}` + "\n" + `{"id":2,"o":{"k":[],"t":true}}` + "\n",
		"big.json":    `{"id":123456789012345678901234567890,"d":1.5}` + "\n" + `{"id":1,"d":1e400}` + "\n",
		"blank.json":  "\n" + `{"id":1,"note":"a\"b"}` + "\r\n\r\n" + `{"id":null,"note":null}` + "\r\n",
		"array.json":  `[{"id":1},{"id":2}]` + "\n",
	}
	files = map[string][]byte{}
	for i, name := range sortedNames(textFiles(own)) {
		p := treeDirs[i%len(treeDirs)] + "/" + name
		files[p] = []byte(own[name])
		if name == "array.json" {
			alone = append(alone, p)
		}
	}
	files[treeDirs[1]+"/own-day.json"] = []byte(`{"id":1,"day":"2024-02-29"}` + "\n" + `{"id":2}` + "\n")
	for i := range 12 {
		var b strings.Builder
		for r := range 4 {
			switch i % 3 {
			case 0:
				fmt.Fprintf(&b, `{"id":%d,"when":"2024-%02d-%02d","amount":%d.5}`+"\n", r, 1+i%12, 1+r, r)
			case 1:
				fmt.Fprintf(&b, `{"at":"2024-01-01T0%d:00:00","id":%d,"tags":["a","b"]}`+"\n", r, r)
			default:
				fmt.Fprintf(&b, `{"id":%d,"o":{"n":%d}}`+"\n", r, r)
			}
		}
		files[fmt.Sprintf("%s/part-%02d.json", treeDirs[i%len(treeDirs)], i)] = []byte(b.String())
	}
	return files, alone
}

func TestPartitionedTreeTypedTogetherAsAlone(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			// Trees in parallel, each on a session of its own.
			t.Parallel()
			c := newClient(t)
			files, aloneByDesign := partitionedCSVCorpus()
			if format == "json" {
				files, aloneByDesign = partitionedJSONCorpus()
			}
			local := localFiles(t, files)
			remote := clusterFiles(t, files)
			want := readAloneWithBasePath(t, format, local, treeFiles(files))
			for _, where := range []struct {
				name, root string
			}{{"local files", local}, {"files only the server sees", remote}} {
				for _, sparkInference := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s, spark inference %v", where.name, sparkInference), func(t *testing.T) {
						// Types the files' columns do not share become
						// strings: the files' own types are compared, not the
						// plan's.
						job := spark.Job{Sources: pathSources(where.root), Format: format, Strategy: spark.StrategyUnion, SparkInference: sparkInference, DryRun: true,
							Policy: sparkmerge.Options{Types: sparkmerge.TypesString}}
						got, alone := plannedAsAlone(t, c, job)
						notOnClient := 0
						for _, r := range got.Reads {
							rel := strings.TrimPrefix(strings.TrimPrefix(r.Name, "file:"), where.root+"/")
							if w, ok := want[rel]; !ok || r.Schema.String() != w {
								t.Errorf("%s: planned %s; Spark reads it alone with basePath as %s", rel, r.Schema, w)
							}
							if !r.InferredLocally && !slices.Contains(aloneByDesign, rel) {
								notOnClient++
							}
						}
						if got.TypedTogether != notOnClient {
							t.Errorf("%d files typed together, want %d (every file the client does not type but %v)", got.TypedTogether, notOnClient, aloneByDesign)
						}
						// With Spark's inference every file is Spark's to type:
						// together, in fewer requests than alone. (Without it
						// the client types most, and the few left cost a
						// parse per header and an inference together.)
						if sparkInference && got.Requests.SparkRequests() >= alone.Requests.SparkRequests() {
							t.Errorf("typed together in %d Spark requests, alone in %d", got.Requests.SparkRequests(), alone.Requests.SparkRequests())
						}
						if got.TogetherRequests > 12 {
							t.Errorf("%d requests typed %d files together", got.TogetherRequests, got.TypedTogether)
						}
						t.Logf("%d of %d files typed together in %d requests; the plan's Spark requests %+v (%d), each file alone %+v (%d)",
							got.TypedTogether, len(files), got.TogetherRequests, got.Requests, got.Requests.SparkRequests(), alone.Requests, alone.Requests.SparkRequests())
					})
				}
			}
		})
	}
}

// readAloneWithBasePath is Spark's schema of each file (below root) read
// alone with root as its basePath, under the options sparkmerge reads
// format with, by file: the file's own columns as Spark's inference of it
// gives them, the tree's partition columns typed as Spark types them over
// the whole tree (Spark's read of the tree as a binaryFile dataset), where
// Spark's read of one file types them over its own directory's values.
func readAloneWithBasePath(t *testing.T, format, root string, files []string) map[string]string {
	t.Helper()
	const view = "sparkmerge_alone_with_base" // the test's session serves it alone; dropped below
	defer exec(t, "DROP VIEW IF EXISTS "+view)
	exec(t, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s USING binaryFile OPTIONS (%s)", view, readerOptionsSQL(root, nil)))
	partitions := map[string]string{} // lower-cased name -> type
	for _, col := range described(t, view) {
		if !slices.Contains([]string{"path", "modificationTime", "length", "content"}, col[0]) {
			partitions[strings.ToLower(col[0])] = col[1]
		}
	}
	if len(partitions) == 0 {
		t.Fatalf("Spark reads %s without partition columns", root)
	}
	out := map[string]string{}
	for _, f := range files {
		options := sparkOptions(format)
		options["basePath"] = root
		exec(t, fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s USING %s OPTIONS (%s)", view, format, readerOptionsSQL(root+"/"+f, options)))
		var fields []string
		for _, col := range described(t, view) {
			typ := col[1]
			if p, ok := partitions[strings.ToLower(col[0])]; ok {
				typ = p
			}
			name, err := sparkmerge.QuoteIdent(col[0])
			if err != nil {
				t.Fatal(err)
			}
			fields = append(fields, name+" "+typ)
		}
		schema, err := sparkmerge.ParseSchema(strings.Join(fields, ", "))
		if err != nil {
			t.Fatalf("%s: Spark's schema %v: %v", f, fields, err)
		}
		out[f] = schema.String()
	}
	return out
}

// described are the columns of a view, name and type, as DESCRIBE gives
// them.
func described(t *testing.T, view string) [][2]string {
	t.Helper()
	var out [][2]string
	for _, row := range queryRows(t, "DESCRIBE "+view) {
		name, _ := row[0].(string)
		typ, _ := row[1].(string)
		if name == "" || strings.HasPrefix(name, "#") {
			break // a section after the columns
		}
		out = append(out, [2]string{name, typ})
	}
	return out
}
