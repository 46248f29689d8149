//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Files only the cluster sees: the harness mounts a directory into the
// Spark container at a path that does not exist on this machine
// (sparktest.ClusterDir), so the client cannot read a byte of it, as with
// s3a://, dbfs:/ or a volume only the cluster mounts. sparkmerge must list
// such sources on the server and read every file under its own header; the
// output must be the output of the same files read from where the client
// sees them, value for value.

// clusterFiles writes files into a fresh directory only Spark sees and
// returns the path Spark reads it at.
func clusterFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	host, remote := sparktest.ClusterDir(t)
	putFiles(t, host, files)
	return remote
}

// objectStoreFiles uploads files under a fresh prefix of the harness's S3
// object store and returns its s3a:// URI. Objects carry their upload
// time, so it waits until they are older than the two seconds within
// which a file is never read by position (see spark's settled), as files
// at rest are.
func objectStoreFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	put, uri := sparktest.ObjectStoreDir(t)
	for name, content := range files {
		put(name, content)
	}
	time.Sleep(2500 * time.Millisecond)
	return uri
}

// storeUpload is files uploaded to the object store early, settling while
// the test does other work (see objectStoreFiles for why they must).
type storeUpload struct {
	uri string // "" when the run has no object store
	at  time.Time
}

// uploadEarly uploads files under a fresh prefix of the object store, in
// a subtest of t (which a run without the store skips, not t).
func uploadEarly(t *testing.T, files map[string][]byte) *storeUpload {
	t.Helper()
	u := &storeUpload{}
	t.Run("upload to the object store", func(t *testing.T) {
		put, uri := sparktest.ObjectStoreDir(t)
		for name, content := range files {
			put(name, content)
		}
		u.uri, u.at = uri, time.Now()
	})
	return u
}

// settled returns the files' s3a:// URI once they are as old as
// objectStoreFiles makes them, skipping t when they were not uploaded.
func (u *storeUpload) settled(t *testing.T) string {
	t.Helper()
	if u.uri == "" {
		t.Skip("not in the object store (see the upload subtest)")
	}
	time.Sleep(time.Until(u.at.Add(2500 * time.Millisecond)))
	return u.uri
}

// localFiles writes files into a fresh directory both the client and
// Spark see at the same path.
func localFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := workDir(t)
	putFiles(t, dir, files)
	return dir
}

// putFiles writes files, modified a minute ago as files at rest are: a
// file modified within the last two seconds is never read by position
// (see spark's settled), which would make local and remote plans differ.
func putFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	past := time.Now().Add(-time.Minute)
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
}

func textFiles(files map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(files))
	for k, v := range files {
		out[k] = []byte(v)
	}
	return out
}

// The case: x.csv has a,b,c and y.csv c,a,b. A Spark read of the
// glob maps y.csv by position under x.csv's header; sparkmerge must give
// (1,2,3) and (10,20,30) in a,b,c for the glob, the directory and the
// file:// URI, with --verify passing honestly.
func TestClusterHeaderShift(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{
		"h4/x.csv": "a,b,c\n1,2,3\n",
		"h4/y.csv": "c,a,b\n30,10,20\n",
	})
	dir := clusterFiles(t, files)
	bucket := objectStoreFiles(t, files)
	want := [][]any{row("1", "2", "3"), row("10", "20", "30")}
	var outs []compared // their rows read in one query once all have merged
	for _, src := range []string{
		dir + "/h4/*.csv", dir + "/h4", "file://" + dir + "/h4/",
		bucket + "/h4/*.csv", bucket + "/h4", bucket + "/h4/",
	} {
		for _, strategy := range []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion} {
			name := strategy.String() + " " + src
			t.Run(name, func(t *testing.T) {
				// Written where the sources are: the mount, or the bucket
				// through S3A's committer.
				root := dir
				if strings.HasPrefix(src, "s3a:") {
					root = bucket
				}
				res, out := merge(t, c, spark.Job{
					Sources:  pathSources(src),
					Strategy: strategy,
					Verify:   true,
					Target:   spark.Target{Path: root + "/out-" + fmt.Sprint(len(src)) + strategy.String(), Mode: "overwrite"},
				})
				if res.RowsWritten != 2 {
					t.Errorf("rows written = %d, want 2", res.RowsWritten)
				}
				if len(res.RowsRead) != 2 {
					t.Errorf("per-source counts %v: want one per file", res.RowsRead)
				}
				outs = append(outs, compared{name, out, ""})
			})
		}
	}
	sameOutputs(t, outs, []string{"a", "b", "c"}, "", want)
	// multipath refuses the drifting headers, as it does for local files.
	for _, src := range []string{dir + "/h4/*.csv", bucket + "/h4/*.csv"} {
		_, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(src), Strategy: spark.StrategyMultipath})
		var drift *spark.HeaderDriftError
		if !errorsAs(err, &drift) {
			t.Fatalf("multipath over drifting headers only Spark sees (%s): err = %v, want *spark.HeaderDriftError", src, err)
		}
	}
}

// clusterCase is a set of files merged from where the client reads them and
// from where only Spark sees them.
type clusterCase struct {
	name  string
	files map[string][]byte
	// written, when set, makes the files instead (Spark writes them, in
	// the case's own subtest).
	written func(t *testing.T) map[string][]byte
	sources []string // relative to the files' root; "" is the root itself
	policy  sparkmerge.Options
	// remoteTyped, when set, is how many remote files the client must
	// type itself (Parquet ones included).
	remoteTyped int
}

// bigCSVFiles are n CSV files of about size bytes each (each a little
// smaller than the one before, so that they differ in size), in two column
// orders, with a column that is an integer in some files and a decimal
// number in others. With ownHeaders each file's name column is numbered
// (name3), so that no two files share a header line.
func bigCSVFiles(n, size int, ownHeaders bool) map[string][]byte {
	files := map[string][]byte{}
	for i := range n {
		var b bytes.Buffer
		name := "name"
		if ownHeaders {
			name = fmt.Sprintf("name%d", i)
		}
		if i%2 == 0 {
			b.WriteString("id," + name + ",score\n")
		} else {
			b.WriteString("score,id," + name + "\n")
		}
		for k := 0; b.Len() < size-i*4096; k++ {
			id, name, score := fmt.Sprint(i*10_000_000+k), fmt.Sprintf("n%d-%d", i, k%977), fmt.Sprint(k%1000)
			if i%3 == 0 {
				score = fmt.Sprintf("%d.%d", k%1000, k%7)
			}
			if i%2 == 0 {
				fmt.Fprintf(&b, "%s,%s,%s\n", id, name, score)
			} else {
				fmt.Fprintf(&b, "%s,%s,%s\n", score, id, name)
			}
		}
		files[fmt.Sprintf("big%d.csv", i)] = b.Bytes()
	}
	return files
}

// parquetFile is the bytes of one Parquet file holding the rows of query,
// written by Spark.
func parquetFile(t *testing.T, query string) []byte {
	t.Helper()
	return sparkWrittenFile(t, "parquet", "", query)
}

// sparkWrittenFile is the bytes of one file of format holding the rows of
// query, written by Spark with the writer options of the SQL OPTIONS
// clause options ("" for none).
func sparkWrittenFile(t *testing.T, format, options, query string) []byte {
	t.Helper()
	// A fresh name, for Spark to create (and own) the directory.
	dir, err := os.MkdirTemp(workDir(t), format+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	exec(t, fmt.Sprintf("INSERT OVERWRITE DIRECTORY '%s' USING %s %s SELECT /*+ COALESCE(1) */ * FROM (%s)", dir, format, options, query))
	parts, err := filepath.Glob(filepath.Join(dir, "part-*."+format))
	if err != nil || len(parts) != 1 {
		t.Fatalf("%s: want one part file, got %v (%v)", dir, parts, err)
	}
	b, err := os.ReadFile(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// largerThan fails the test unless b is over n bytes.
func largerThan(t *testing.T, n int, b []byte) []byte {
	t.Helper()
	if len(b) <= n {
		t.Fatalf("a fixture of %d bytes, want over %d", len(b), n)
	}
	return b
}

func clusterCases(t *testing.T) []clusterCase {
	tides := map[string][]byte{}
	for _, name := range []string{"TestFile1.csv", "TestFile2.csv"} {
		b, err := os.ReadFile(filepath.Join(testdataRoot, "tides", name))
		if err != nil {
			t.Fatal(err)
		}
		tides[name] = b
	}
	seed000 := map[string][]byte{}
	for _, name := range []string{"one.json", "two.json"} {
		b, err := os.ReadFile(filepath.Join(testdataRoot, "seed000", name))
		if err != nil {
			t.Fatal(err)
		}
		seed000[name] = b
	}
	many := map[string]string{}
	headers := []string{"id,name,score", "score,id,name", "name,score,id,extra", "ID,Score"}
	for i := range 40 {
		h := headers[i%len(headers)]
		var vals []string
		for _, col := range strings.Split(h, ",") {
			switch strings.ToLower(col) {
			case "id":
				vals = append(vals, fmt.Sprint(i))
			case "name":
				vals = append(vals, fmt.Sprintf("n%d", i))
			case "score":
				vals = append(vals, fmt.Sprintf("%d.%d", i, i%7))
			default:
				vals = append(vals, "x")
			}
		}
		many[fmt.Sprintf("f%02d.csv", i)] = h + "\n" + strings.Join(vals, ",") + "\n"
	}
	return []clusterCase{
		{
			name: "csv header shift and a new column",
			files: textFiles(map[string]string{
				"x.csv": "a,b,c\n1,2,3\n4,5,6\n",
				"y.csv": "c,a,b\n30,10,20\n",
				"z.csv": "b,d,a\n200,dd,100\n",
			}),
			sources: []string{""},
		},
		{name: "tides", files: tides, sources: []string{"*.csv"}},
		{name: "json seed000", files: seed000, sources: []string{""}},
		{
			name: "csv case and type drift",
			files: textFiles(map[string]string{
				"a.csv": "ID,name,score\n1,x,1\n2,y,2\n",
				"b.csv": "id,Name,score,extra\n3,z,2.5,e\n",
				"c.csv": "score,id\n7,4\n",
			}),
			sources: []string{"*.csv"},
		},
		{
			name: "json case and type drift",
			files: textFiles(map[string]string{
				"a.json": "{\"ID\":1,\"v\":1}\n{\"ID\":2,\"v\":2}\n",
				"b.json": "{\"id\":3,\"v\":1.5}\n",
				"c.json": "{\"id\":4,\"w\":\"x\",\"v\":null}\n",
			}),
			sources: []string{""},
		},
		{
			// Spark's inference drops a key that holds only {} or [{}]
			// from its file: null there, never the text '{}', also where
			// another file's string column takes the key in a positional
			// scan.
			name: "json keys holding only empty objects",
			files: textFiles(map[string]string{
				"a.json": "{\"id\":1,\"a\":{}}\n",
				"b.json": "{\"id\":2,\"a\":[{}]}\n",
				"c.json": "{\"id\":3,\"a\":\"x\"}\n",
				"d.json": "{\"id\":4,\"b\":\"y\"}\n",
			}),
			sources: []string{""},
		},
		{
			name: "parquet evolution",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"p1.parquet": parquetFile(t, "SELECT CAST(1 AS INT) AS id, CAST(1.25 AS DECIMAL(10,2)) AS amount"),
					"p2.parquet": parquetFile(t, "SELECT CAST(2 AS BIGINT) AS id, CAST(2.125 AS DECIMAL(12,4)) AS amount, TIMESTAMP'2024-01-02 03:04:05' AS ts"),
					"p3.parquet": parquetFile(t, "SELECT CAST(3 AS INT) AS id, 'three' AS note"),
				}
			},
			sources: []string{"*.parquet"},
		},
		{
			// Over footerTailBytes (64 KiB): typed from the fetched end of
			// each file alone, a directory fetched by ranges of sizes.
			name: "parquet files larger than their fetched end",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"big1.parquet": largerThan(t, 64<<10, parquetFile(t, "SELECT CAST(id AS INT) AS id, sha2(CAST(id AS STRING), 512) AS h FROM range(0, 3000)")),
					"big2.parquet": largerThan(t, 64<<10, parquetFile(t, "SELECT id, sha2(CAST(id AS STRING), 256) AS h, CAST(id AS DOUBLE) / 3 AS third FROM range(3000, 6000)")),
				}
			},
			sources:     []string{""},
			remoteTyped: 2,
		},
		{
			// Typed from their footers by the client, for every codec it
			// reads: int and bigint, decimals and a new column drift.
			name: "orc evolution",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"o1.orc": orcFile(t, "zstd", "SELECT CAST(1 AS INT) AS id, CAST(1.25 AS DECIMAL(10,2)) AS amount, TIMESTAMP_NTZ'2024-01-01 00:00:00' AS at"),
					"o2.orc": orcFile(t, "snappy", "SELECT CAST(2 AS BIGINT) AS id, CAST(2.125 AS DECIMAL(12,4)) AS amount, TIMESTAMP'2024-01-02 03:04:05' AS ts"),
					"o3.orc": orcFile(t, "zlib", "SELECT CAST(3 AS INT) AS id, 'three' AS note, array(1, 2) AS ints"),
					"o4.orc": orcFile(t, "lz4", "SELECT CAST(4 AS INT) AS ID, map('k', 1.5D) AS m"),
					"o5.orc": orcFile(t, "none", "SELECT CAST(5 AS SMALLINT) AS id, INTERVAL '1-2' YEAR TO MONTH AS ym"),
				}
			},
			sources:     []string{"*.orc"},
			remoteTyped: 5,
		},
		{
			// Over footerTailBytes (64 KiB): typed from the fetched end of
			// each file alone.
			name: "orc files larger than their fetched end",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"big1.orc": largerThan(t, 64<<10, orcFile(t, "zstd", "SELECT CAST(id AS INT) AS id, sha2(CAST(id AS STRING), 512) AS h FROM range(0, 3000)")),
					"big2.orc": largerThan(t, 64<<10, orcFile(t, "snappy", "SELECT id, sha2(CAST(id AS STRING), 256) AS h, CAST(id AS DOUBLE) / 3 AS third FROM range(3000, 6000)")),
				}
			},
			sources:     []string{""},
			remoteTyped: 2,
		},
		{
			name: "partitioned tree",
			written: func(t *testing.T) map[string][]byte {
				return map[string][]byte{
					"day=1/a.parquet": parquetFile(t, "SELECT CAST(1 AS INT) AS id, 'a' AS v"),
					"day=2/b.parquet": parquetFile(t, "SELECT CAST(2 AS INT) AS id, 'b' AS v"),
				}
			},
			sources: []string{""},
		},
		{
			name: "glob characters and spaces in file names",
			files: textFiles(map[string]string{
				"x1.csv":         "id,v\n1,one\n",
				"x[12].csv":      "id,v\n2,two\n",
				"a b%20c{d}.csv": "v,id\nthree,3\n",
			}),
			sources: []string{""},
		},
		{name: "forty files with four headers", files: textFiles(many), sources: []string{"*.csv"}},
	}
}

// Every case, merged by auto and union from files only Spark sees, gives
// the output of the same files where the client sees them, which in turn
// is the output of Spark reading each file alone (union with Spark's
// inference), with a provenance column naming each row's file. Files in
// the object store are merged by one strategy a case, auto and union in
// turns (the differential suite merges every corpus shape from there):
// its merges cost twice a mounted directory's.
func TestClusterFilesMergeAsLocalFiles(t *testing.T) {
	t.Parallel()
	for ci, tc := range clusterCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			// Cases in parallel, each on a session of its own.
			t.Parallel()
			c := newClient(t)
			files := tc.files
			if tc.written != nil {
				files = tc.written(t)
			}
			local := localFiles(t, files)
			cluster, store := clusterFiles(t, files), uploadEarly(t, files)
			remotes := []struct {
				name string
				root func(t *testing.T) string
			}{{"cluster", func(*testing.T) string { return cluster }}, {"s3a", store.settled}}
			_, outputs := sparktest.ClusterDir(t)
			sources := func(root string) []spark.SourceSpec {
				var paths []string
				for _, s := range tc.sources {
					paths = append(paths, strings.TrimSuffix(root+"/"+s, "/"))
				}
				return pathSources(paths...)
			}
			policy := tc.policy
			policy.SourceColumn = "_source"
			skipSource := func(col string) bool { return strings.HasPrefix(col, "_source ") }

			// The reference: each file read alone by Spark, unioned, read
			// unwritten (newMergedOracle).
			reference, err := newMergedOracle(t, c, spark.Job{Sources: sources(local), Strategy: spark.StrategyUnion, SparkInference: true, Policy: policy})
			if err != nil {
				t.Fatalf("Spark reading each file alone: %v", err)
			}
			// Every output, compared with the reference in one query once
			// all have merged (sameAsEach): the rows, and provenance
			// naming each file where the merge read it.
			var outs []compared
			for _, strategy := range []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion} {
				localRes, fromLocal := merge(t, c, spark.Job{Sources: sources(local), Strategy: strategy, Policy: policy, Verify: true})
				outs = append(outs, compared{strategy.String() + " local", fromLocal, local})
				for i, r := range remotes {
					if r.name == "s3a" && strategy != []spark.Strategy{spark.StrategyAuto, spark.StrategyUnion}[ci%2] {
						continue
					}
					runOnParentSession(t, strategy.String()+" "+r.name, func(t *testing.T) {
						remote := r.root(t)
						res, fromRemote := merge(t, c, spark.Job{Sources: sources(remote), Strategy: strategy, Policy: policy, Verify: true,
							Target: spark.Target{Path: fmt.Sprintf("%s/%s-%d", outputs, strategy, i)}})
						if res.RowsWritten == 0 {
							t.Fatal("wrote no rows")
						}
						samePlanShape(t, tc, localRes, res)
						outs = append(outs, compared{strategy.String() + " " + r.name, fromRemote, remote})
					})
				}
			}
			reference.sameAsEach(t, c, outs, skipSource, local, false)
		})
	}
}

// samePlanShape checks that the client types the remote CSV and JSON files
// as it types local ones, from contents fetched in one Spark job (these
// corpora are small), and lays out the same scans.
func samePlanShape(t *testing.T, tc clusterCase, localRes, res *spark.Result) {
	t.Helper()
	if got, want := inferredLocally(res.Planned), inferredLocally(localRes.Planned); got != want {
		t.Errorf("%d remote files typed by the client, %d local ones", got, want)
	}
	if tc.remoteTyped > 0 && res.Planned.RemoteTyped != tc.remoteTyped {
		t.Errorf("%d remote files typed by the client, want %d", res.Planned.RemoteTyped, tc.remoteTyped)
	}
	if res.Planned.RemoteFetchJobs > 1 {
		t.Errorf("%d Spark jobs fetched the remote files' contents, want at most 1", res.Planned.RemoteFetchJobs)
	}
	if res.Scans != localRes.Scans {
		t.Errorf("%d scans of the remote files, %d of the local ones", res.Scans, localRes.Scans)
	}
}

// A directory of files only the server sees holding more than one
// fetch's worth (128 MiB) is fetched by ranges of sizes, one Spark job
// each (their heads came with the listing, in its job): every file is
// typed by the client from its fetched copy, exactly as the same files
// where the client reads them. (Each file has a header line of its own:
// files of a shared one are held for their group's inference, below.)
func TestClusterFetchInRanges(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := bigCSVFiles(12, 12<<20, true) // 144 MiB
	local, remote := localFiles(t, files), clusterFiles(t, files)
	fromLocal, fromRemote := planDir(t, c, local), planDir(t, c, remote)
	// The files' heads (64 KiB each) with the listing, then their rests
	// in two ranges of at most 128 MiB.
	if fromRemote.RemoteTyped != len(files) || fromRemote.RemoteFetchJobs != 2 {
		t.Errorf("%d of %d remote files typed by the client, in %d fetch jobs; want all, in 2", fromRemote.RemoteTyped, len(files), fromRemote.RemoteFetchJobs)
	}
	schemas := func(p *spark.Planned, root string) map[string]string {
		out := map[string]string{}
		for _, r := range p.Reads {
			for _, name := range r.Sources {
				out[strings.TrimPrefix(name, root)] = fmt.Sprintf("%s (client: %v)", r.Schema, r.InferredLocally)
			}
		}
		return out
	}
	if diff := cmp.Diff(schemas(fromLocal, local), schemas(fromRemote, remote)); diff != "" {
		t.Errorf("schemas of the files, relative to their root (-local +remote):\n%s", diff)
	}
	if got := fromRemote.Plan.Target.String(); got != fromLocal.Plan.Target.String() {
		t.Errorf("remote target %s, local %s", got, fromLocal.Plan.Target)
	}
}

// Files only the server sees of two header lines, each line's six files
// 72 MiB (past minHeldGroup), are held for their group's inference, not
// fetched whole: the files whose heads have the group's types (a decimal
// score) are typed by it; the others (an integer score in their heads,
// which the group's decimals make no proof) are fetched after it and typed
// by the client. Every file's schema is the one the client gives it
// where it reads the files.
func TestClusterHeldGroupsTypedByHeaderOrFetchedAfter(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := bigCSVFiles(12, 12<<20, false)
	local, remote := localFiles(t, files), clusterFiles(t, files)
	fromLocal, fromRemote := planDir(t, c, local), planDir(t, c, remote)
	if fromRemote.TypedByHeader != 4 || fromRemote.ByHeaderRequests != 2 || fromRemote.RemoteTyped != 8 {
		t.Errorf("%d remote files typed by header in %d requests, %d by the client; want 4 (big0, 3, 6, 9) in 2, 8", fromRemote.TypedByHeader, fromRemote.ByHeaderRequests, fromRemote.RemoteTyped)
	}
	// The heads with the listing, then the rests of the eight: under 100 MiB.
	if got := fromRemote.Requests.ResultBytes; got > 100<<20 {
		t.Errorf("%d bytes sent to the client, want the heads and eight files' rests, under 100 MiB", got)
	}
	schemas := func(p *spark.Planned, root string) map[string]string {
		out := map[string]string{}
		for _, r := range p.Reads {
			for _, name := range r.Sources {
				out[strings.TrimPrefix(name, root)] = r.Schema.String()
			}
		}
		return out
	}
	if diff := cmp.Diff(schemas(fromLocal, local), schemas(fromRemote, remote)); diff != "" {
		t.Errorf("schemas of the files, relative to their root (-local +remote):\n%s", diff)
	}
}

// planDir plans the files of dir by default.
func planDir(t *testing.T, c *spark.Client, dir string) *spark.Planned {
	t.Helper()
	p, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(dir)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// inferredLocally counts the CSV and JSON files whose schema the client
// inferred (remote Parquet footers are Spark's to read).
func inferredLocally(p *spark.Planned) int {
	n := 0
	for _, r := range p.Reads {
		if r.InferredLocally && (r.Format == "csv" || r.Format == "json") {
			n += len(r.Sources)
		}
	}
	return n
}

// Listing on the server follows Spark's own rules: hidden files, _SUCCESS
// markers and plain subdirectories are not sources, and pathGlobFilter
// narrows a directory.
func TestClusterListingRules(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := clusterFiles(t, textFiles(map[string]string{
		"a.csv":          "id,v\n1,a\n",
		"b.csv":          "v,id\nb,2\n",
		"_SUCCESS":       "",
		".hidden.csv":    "id,v\n99,hidden\n",
		"sub/nested.csv": "id,v\n98,nested\n",
		"notes.txt":      "id,v\n97,text\n",
		"more.json":      "{\"id\":96}\n",
	}))
	planned, err := c.Plan(context.Background(), spark.Job{
		Sources:       pathSources(dir),
		Format:        "csv",
		ReaderOptions: map[string]string{"pathGlobFilter": "*.csv"},
		Strategy:      spark.StrategyUnion,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range planned.Reads {
		got = append(got, strings.Join(r.Paths, "+"))
	}
	diff(t, "reads", []string{dir + "/a.csv", dir + "/b.csv"}, got)

	// Without a format, the files' names disagree (csv and json; a .txt
	// counts only alone): a clear error naming what to do.
	_, err = c.Plan(context.Background(), spark.Job{Sources: pathSources(dir)})
	if err == nil || !strings.Contains(err.Error(), "Job.Format") {
		t.Errorf("mixed extensions without a format: err = %v, want a hint to set the format", err)
	}
	// A path that exists nowhere says so.
	_, err = c.Plan(context.Background(), spark.Job{Sources: pathSources(dir + "/missing/*.csv")})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing path: err = %v, want it named", err)
	}
}

// A README or notes among a directory's CSV files are skipped and named
// in the plan, not merged as rows, wherever the directory lives; so are
// they in a local directory of CSV and JSON files, each read as its name
// says (a README.txt there was merged as rows of a column "value", and
// notes.md among CSV files failed the plan).
func TestStrayFilesInADirectoryAreSkipped(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := textFiles(map[string]string{"a.csv": "id,v\n1,a\n", "b.csv": "v,id\nb,2\n", "README.txt": "id,v\nthis,is not data\n", "notes.md": "# id,v\n"})
	mixed := textFiles(map[string]string{"a.csv": "id,v\n1,a\n", "b.json": `{"v":"b","id":2}` + "\n", "README.txt": "id,v\nthis,is not data\n"})
	for _, tc := range []struct {
		dir     string
		skipped []string
	}{
		{localFiles(t, files), []string{"README.txt", "notes.md"}},
		{clusterFiles(t, files), []string{"README.txt", "notes.md"}},
		{localFiles(t, mixed), []string{"README.txt"}},
	} {
		res, out := merge(t, c, spark.Job{Sources: pathSources(tc.dir), Verify: true})
		var skipped []string
		for _, s := range res.Skipped {
			skipped = append(skipped, filepath.Base(s))
		}
		if !slices.Equal(skipped, tc.skipped) || !strings.Contains(res.Planned.String(), "README.txt") {
			t.Errorf("%s: skipped %v, want %v; plan:\n%s", tc.dir, res.Skipped, tc.skipped, res.Planned)
		}
		diff(t, tc.dir+" rows", [][]any{row("1", "a"), row("2", "b")}, parquetRows(t, out, []string{"id", "v"}, "id"))
	}
}

// Files in an object store join positional scans as local files do, with
// the same check: an object rewritten between planning and the merge (same
// size, columns swapped; only its modification time tells) fails the merge
// naming it, instead of shifting its values.
func TestObjectStoreFileChangedAfterPlanning(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	put, bucket := sparktest.ObjectStoreDir(t)
	put("a.csv", []byte("id,qty,note\n1,7,hi\n"))
	put("b.csv", []byte("qty,id,note\n8,2,yo\n"))
	time.Sleep(2500 * time.Millisecond) // settled: see objectStoreFiles
	_, outputs := sparktest.ClusterDir(t)
	job := spark.Job{Sources: pathSources(bucket + "/*.csv"), Strategy: spark.StrategyUnion, Target: spark.Target{Path: outputs + "/out"}}
	planned, err := c.Plan(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if len(planned.Reads) != 2 || !strings.Contains(planned.String(), "positional scan") {
		t.Fatalf("want the two objects in one positional scan; plan:\n%s", planned)
	}
	time.Sleep(1100 * time.Millisecond) // S3 keeps modification times in seconds
	changed := bucket + "/b.csv"
	put("b.csv", []byte("id,qty,note\n2,8,yo\n"))
	_, err = c.MergePlanned(context.Background(), job, planned)
	wantChanged(t, "merge", err, changed)
}

// jsonLinesOfSize is a JSON-lines file of about size bytes, records of
// an id, an integer score and a text under key (with a quote and a
// comma); with doubleLater, the scores past the first 20,000 records
// (far past the 64 KiB head) have a fraction.
func jsonLinesOfSize(size int, key string, doubleLater bool) []byte {
	var b bytes.Buffer
	for k := 0; b.Len() < size; k++ {
		score := fmt.Sprint(k % 1000)
		if doubleLater && k > 20_000 {
			score += ".5"
		}
		fmt.Fprintf(&b, "{\"id\":%d,\"score\":%s,%q:\"n%d, \\\"q\\\" %s\"}\n", k, score, key, k%977, strings.Repeat("x", 60))
	}
	return b.Bytes()
}

// JSON files only the server sees whose heads type alike, six of 11 MiB
// (past minHeldGroup), are held for Spark's typing together, not fetched
// whole: each typed as Spark types it alone, the one whose scores gain a
// fraction past its head too; two small files of other keys are fetched
// and typed on the client. The merge reads every row.
func TestClusterHeldJSONFilesTypedTogether(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files := map[string][]byte{}
	for i := range 6 {
		files[fmt.Sprintf("big%d.json", i)] = jsonLinesOfSize(11<<20, "note", i == 3)
	}
	for i := range 2 {
		files[fmt.Sprintf("small%d.json", i)] = jsonLinesOfSize(1<<20, "remark", false)
	}
	// Each file a read of its own (union), so that each read's schema is
	// its file's; the merge below groups them (auto).
	job := spark.Job{Sources: pathSources(clusterFiles(t, files)), Strategy: spark.StrategyUnion}
	got, err := c.Plan(testContext(t), job)
	if err != nil {
		t.Fatal(err)
	}
	if got.TypedTogether != 6 || got.RemoteTyped != 2 || got.PastFetchLimit != 0 {
		t.Errorf("%d typed together, %d by the client, %d past the fetch limit; want 6, 2, 0", got.TypedTogether, got.RemoteTyped, got.PastFetchLimit)
	}
	// The heads with the listing, then the two small files' rests.
	if most := int64(8<<16 + 2<<20 + 1<<20); got.Requests.ResultBytes > most {
		t.Errorf("%d bytes sent to the client, want at most %d (the heads, two small files)", got.Requests.ResultBytes, most)
	}
	// Spark reading each file alone, planned once (union: a read per
	// file): each read's schema is the file's as Spark types it alone,
	// and its merge, never written, is the oracle of the rows below
	// (newMergedOracle).
	alone := job
	alone.SparkInference, alone.InferEachFileAlone = true, true
	reference, want, err := mergedOracleOf(t, c, alone)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, r := range want.Reads {
		for _, s := range r.Sources {
			schemas[s] = r.Schema.String()
		}
	}
	if len(schemas) != len(files) {
		t.Errorf("Spark alone typed %d files, want %d: %v", len(schemas), len(files), schemas)
	}
	for _, r := range got.Reads {
		for _, s := range r.Sources {
			if w := schemas[s]; r.Schema.String() != w {
				t.Errorf("%s: %s, Spark alone %s", s, r.Schema, w)
			}
			if strings.HasSuffix(s, "big3.json") && !strings.Contains(r.Schema.String(), "score double") {
				t.Errorf("%s: %s, want score double (fractions past its head)", s, r.Schema)
			}
		}
	}
	// The merged output, value for value, against Spark reading each
	// file alone.
	job.Strategy, job.Verify = spark.StrategyAuto, true
	job.Target.Path = filepath.Join(workDir(t), "held")
	res, gotOut := merge(t, c, job)
	var rows int64
	for _, b := range files {
		rows += int64(bytes.Count(b, []byte("\n")))
	}
	if res.RowsWritten != rows {
		t.Errorf("%d rows written, want %d", res.RowsWritten, rows)
	}
	reference.sameAs(t, c, gotOut, nil, "", "")
}
