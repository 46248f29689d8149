//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// headBound is the most of a CSV or JSON file only the server sees that
// the client fetches to learn that its rules leave the file to Spark
// (spark's remoteHeadBytes).
const headBound = 64 << 10

// datedCSV is a CSV file of rows rows, ids from first, with a date, a
// timestamp and a quoted text holding the separator and quotes escaped by
// doubling: values the client's rules leave to Spark from the first row
// on.
func datedCSV(first, rows int) []byte {
	var b strings.Builder
	b.WriteString("id,day,at,note,amount\n")
	for r := range rows {
		fmt.Fprintf(&b, "%d,2024-%02d-%02d,2024-01-02 03:%02d:%02d,\"row %d, \"\"of\"\" %d\",%d.%d\n", first+r, 1+r%12, 1+r%28, r%60, first%60, r, first, r%1000, r%7)
	}
	return []byte(b.String())
}

// nanJSON is a JSON-lines file of rows rows, ids from first, with NaN
// among its numbers (which Spark reads and the client's rules leave to
// it) and a date as text.
func nanJSON(first, rows int) []byte {
	var b strings.Builder
	for r := range rows {
		v := "NaN"
		if r%3 != 0 {
			v = fmt.Sprintf("%d.5", r)
		}
		fmt.Fprintf(&b, "{\"id\":%d,\"day\":\"2024-%02d-%02d\",\"v\":%s,\"note\":\"row %d\"}\n", first+r, 1+r%12, 1+r%28, v, r)
	}
	return []byte(b.String())
}

// cleanCSV is a CSV file of rows rows, ids from first, of values the
// client's rules type.
func cleanCSV(first, rows int) []byte {
	var b strings.Builder
	b.WriteString("id,a,b,name\n")
	for r := range rows {
		fmt.Fprintf(&b, "%d,%d,%d.25,n%d\n", first+r, r%1000, r, r%97)
	}
	return []byte(b.String())
}

// Files only the server sees whose values the client's rules leave to
// Spark (quotes escaped by doubling in CSV files, NaN in JSON
// files), small and just over Spark's split size (4 MiB), are not fetched
// whole to the client to be refused there: the client fetches at most
// their first 64 KiB, learns from it that Spark must type them, and Spark
// types them where they live (together where it can). A clean file among
// them is still fetched whole (its rest by name) and typed on the client.
// What the plan fetched (result_bytes) stays under 64 KiB per refused
// file, the clean file and the listing's and the schemas' few KiB, under
// 5% of the refused files' bytes; in a mounted directory and in the
// object store alike; the merge equals the union of Spark's read of each
// file alone, value for value. A file whose head the client refuses and
// that is not UTF-8 past its head is still refused before Spark reads it,
// as one fetched whole was.
func TestServerOnlyFilesSendAtMostTheirHead(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	// Few refused CSV files, each over its 64 KiB head: what the plan
	// fetches of them (about 76 KB a file with the listing's share) is
	// then under 5% of their bytes, by about 7% (the JSON files' by about
	// 11%): no more bytes than that, since the server's CPU grows with
	// them. Two small files are typed by Spark together, the large one
	// alone.
	csvFiles := map[string][]byte{}
	id := 0
	for i := range 2 {
		csvFiles[fmt.Sprintf("d%d.csv", i)] = datedCSV(id, 4500) // about 290 KB
		id += 4500
	}
	csvFiles["large.csv"] = datedCSV(id, 64000) // about 4.3 MB: over the split, Spark types it alone
	id += 64000
	if n := len(csvFiles["large.csv"]); n <= 4<<20 {
		t.Fatalf("large.csv is %d bytes, not over the 4 MiB split", n)
	}
	csvFiles["clean.csv"] = cleanCSV(id, 4000) // about 86 KB, over its head: typed on the client
	id += 4000
	jsonFiles := map[string][]byte{}
	for i := range 4 {
		jsonFiles[fmt.Sprintf("n%d.json", i)] = nanJSON(id, 26000) // about 1.6 MB
		id += 26000
	}
	for name, b := range csvFiles {
		if len(b) <= headBound {
			t.Fatalf("%s is %d bytes, not over the %d bytes of its head", name, len(b), headBound)
		}
	}
	for _, tc := range []struct {
		name  string
		files map[string][]byte
	}{{"csv", csvFiles}, {"json", jsonFiles}} {
		t.Run(tc.name, func(t *testing.T) {
			var refused, clean, bound int64
			for name, b := range tc.files {
				if strings.HasPrefix(name, "clean") {
					clean += int64(len(b))
					bound += int64(len(b))
					continue
				}
				refused += int64(len(b))
				bound += min(int64(len(b)), headBound)
			}
			// The listing's rows, the header lines and the schemas Spark
			// sends back.
			bound += 64 << 10
			policy := sparkmerge.Options{SourceColumn: "_source"}
			// checkPlan checks what a plan of the files fetched, and where
			// it typed each, and returns each file's schema.
			checkPlan := func(root string, planned *spark.Planned) map[string]string {
				t.Helper()
				got := planned.Requests.ResultBytes
				t.Logf("%s: %d files, %d bytes refused by the client: the plan fetched %d bytes, bound %d; %d typed on the client in %d fetch jobs, %d by Spark together in %d requests; discovery %v; requests %+v",
					root, len(tc.files), refused, got, bound, planned.RemoteTyped, planned.RemoteFetchJobs, planned.TypedTogether, planned.TogetherRequests, planned.Discovery, planned.Requests)
				if got > bound || (got-clean)*20 > refused {
					t.Errorf("the plan fetched %d bytes of %d files only the server sees, want at most %d (64 KiB a refused file, the clean ones whole, the listing), and besides the clean ones under 5%% of the %d bytes of the refused ones",
						got, len(tc.files), bound, refused)
				}
				schemas := map[string]string{}
				for _, r := range planned.Reads {
					for _, name := range r.Sources {
						base := name[strings.LastIndex(name, "/")+1:]
						schemas[base] = fmt.Sprintf("%s (client %v)", r.Schema, r.InferredLocally)
						if r.InferredLocally != strings.HasPrefix(base, "clean") {
							t.Errorf("%s: typed on the client %v", name, r.InferredLocally)
						}
					}
				}
				return schemas
			}
			root := clusterFiles(t, tc.files)
			skipSource := func(col string) bool { return strings.HasPrefix(col, "_source ") }
			// The reference: each file read alone by Spark, unioned, read
			// unwritten (newMergedOracle).
			reference, err := newMergedOracle(t, c, spark.Job{Sources: pathSources(root), Strategy: spark.StrategyUnion, SparkInference: true, InferEachFileAlone: true, Policy: policy})
			if err != nil {
				t.Fatalf("Spark reading each file alone: %v", err)
			}
			// The merge's own plan is the one checked in the mounted
			// directory: a dry run of it first would fetch and type the
			// same again.
			res, out := merge(t, c, spark.Job{Sources: pathSources(root), Policy: policy, Verify: true})
			mounted := checkPlan(root, res.Planned)
			if tc.name == "csv" {
				// In the object store too: the clean file's rest is
				// fetched by its name as Spark lists it there.
				store := objectStoreFiles(t, tc.files)
				planned, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(store), Policy: policy, DryRun: true})
				if err != nil {
					t.Fatal(err)
				}
				diff(t, "schemas in the object store", mounted, checkPlan(store, planned))
			}
			reference.sameAs(t, c, out, skipSource, "", "")
			if res.RowsWritten == 0 {
				t.Fatal("wrote no rows")
			}
		})
	}

	// Latin-1 past the head of a file whose head the client refuses: the
	// server checks the rest is UTF-8, and the plan fails naming the
	// encoding to give, as when the client had the whole file.
	latin := append(datedCSV(0, 2000), []byte("99999,2024-01-01,2024-01-02 03:04:05,M\xfcnchen,1.5\n")...)
	root := clusterFiles(t, map[string][]byte{"latin1.csv": latin})
	_, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(root + "/latin1.csv"), DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "encoding=ISO-8859-1") || !strings.Contains(err.Error(), "latin1.csv") {
		t.Errorf("a file not UTF-8 past its head: err = %v, want it refused naming the file and the encoding option", err)
	}
}
