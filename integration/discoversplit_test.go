//go:build integration

package integration

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// Files larger than Spark's split are read alone in several partitions,
// whose types Spark merges, and are typed together only where that
// equals the fold of the lanes whatever the split. The tests lower
// spark.sql.files.openCostInBytes in a session of their own, so that
// files of a few KB are past the split (min(maxPartitionBytes,
// openCostInBytes)): alone, Spark splits each in as many partitions as
// its cores (FilePartition.maxSplitBytes: bytes/parallelism), among
// others the lanes read it whole.

// splitClient is a client on a session of its own whose split is 40
// bytes.
func splitClient(t *testing.T) *spark.Client {
	t.Helper()
	c, err := connectPatiently(t, testContext(t), requireSpark(t), spark.ConnectOptions{
		UserAgent: "sparkmerge-integration",
		Conf:      map[string]string{"spark.sql.files.openCostInBytes": "40b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// linesOf is a file of a header and lines, line(i) for i below n.
func linesOf(header string, n int, line func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := range n {
		b.WriteString(line(i) + "\n")
	}
	return []byte(b.String())
}

// pastSplitCSV are CSV files of 150 lines past the split, each column
// named apart so that their union has no conflict. The first are typed
// alike in every split (numbers, dates, timestamps, booleans, a string
// forced by a word, a header line repeated past the middle, a column
// without values); the last have a timestamp first and then values its
// parser accepts but that alone are dates or numbers, or dates then
// timestamps: their type follows where the file is split.
func pastSplitCSV() (files map[string][]byte, invariant int) {
	files = map[string][]byte{
		"ints.csv": linesOf("id,n", 150, func(i int) string {
			if i == 120 {
				return fmt.Sprintf("%d,3000000000", i)
			}
			return fmt.Sprintf("%d,%d", i, i*7)
		}),
		"decimals.csv": linesOf("id,x", 150, func(i int) string {
			switch i {
			case 100:
				return fmt.Sprintf("%d,12345678901234567890123", i)
			case 140:
				return fmt.Sprintf("%d,1.5", i)
			}
			return fmt.Sprintf("%d,%d", i, i)
		}),
		"dates.csv":  linesOf("id,day", 150, func(i int) string { return fmt.Sprintf("%d,2024-%02d-%02d", i, 1+i%12, 1+i%28) }),
		"stamps.csv": linesOf("id,at", 150, func(i int) string { return fmt.Sprintf("%d,2024-01-02 03:04:%02d", i, i%60) }),
		"flags.csv": linesOf("id,ok", 150, func(i int) string {
			return fmt.Sprintf("%d,%s", i, []string{"TRUE", "false", "True"}[i%3])
		}),
		"words.csv": linesOf("id,v", 150, func(i int) string {
			switch {
			case i == 145:
				return fmt.Sprintf("%d,abc", i)
			case i > 70:
				return fmt.Sprintf("%d,2020-01-%02d", i, 1+i%28)
			}
			return fmt.Sprintf("%d,%d", i, 2000+i)
		}),
		"header-again.csv": linesOf("id,d2", 150, func(i int) string {
			if i == 110 {
				return "id,d2"
			}
			return fmt.Sprintf("%d,2023-05-%02d", i, 1+i%28)
		}),
		"no-values.csv": linesOf("id,e", 150, func(i int) string { return fmt.Sprintf("%d,", i) }),
		"small.csv":     []byte("id,name\n1,x\n"),
	}
	invariant = len(files)
	files["stamp-then-dates.csv"] = linesOf("id,sd", 150, func(i int) string {
		if i == 0 {
			return "0,2024-01-02 03:04:05"
		}
		return fmt.Sprintf("%d,2024-02-%02d", i, 1+i%28)
	})
	files["stamp-then-years.csv"] = linesOf("id,sy", 150, func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("%d,2024-01-02 03:04:05", i)
		}
		return fmt.Sprintf("%d,%d", i, 1990+i)
	})
	files["date-then-stamps.csv"] = linesOf("id,ds", 150, func(i int) string {
		if i < 75 {
			return fmt.Sprintf("%d,2024-03-%02d", i, 1+i%28)
		}
		return fmt.Sprintf("%d,2024-03-01 10:00:%02d", i, i%60)
	})
	return files, invariant
}

// pastSplitJSON are JSON files past the split whose records' types
// differ across the file: numbers widening to decimal and double, structs
// gaining fields, arrays of ints then doubles then empty, a field that is
// a number, a string and a struct, nulls then numbers, booleans then
// numbers.
func pastSplitJSON() map[string][]byte {
	records := func(n int, line func(i int) string) []byte {
		var b strings.Builder
		for i := range n {
			b.WriteString(line(i) + "\n")
		}
		return []byte(b.String())
	}
	return map[string][]byte{
		"j-numbers.json": records(150, func(i int) string {
			switch i {
			case 60:
				return `{"a":9223372036854775808}`
			case 140:
				return `{"a":1.5}`
			}
			return fmt.Sprintf(`{"a":%d}`, i)
		}),
		"j-nested.json": records(150, func(i int) string {
			switch {
			case i > 120:
				return fmt.Sprintf(`{"o":{"x":"t%d"}}`, i)
			case i > 60:
				return fmt.Sprintf(`{"o":{"y":%d.5}}`, i)
			}
			return fmt.Sprintf(`{"o":{"x":%d}}`, i)
		}),
		"j-arrays.json": records(150, func(i int) string {
			switch {
			case i > 130:
				return `{"l":[]}`
			case i > 70:
				return fmt.Sprintf(`{"l":[%d.5]}`, i)
			}
			return fmt.Sprintf(`{"l":[%d,%d]}`, i, i+1)
		}),
		"j-mixed.json": records(150, func(i int) string {
			switch {
			case i == 149:
				return `{"v":{"k":1}}`
			case i == 75:
				return `{"v":"x"}`
			}
			return fmt.Sprintf(`{"v":%d}`, i)
		}),
		"j-nulls.json": records(150, func(i int) string {
			if i < 100 {
				return `{"z":null}`
			}
			return fmt.Sprintf(`{"z":%d}`, i)
		}),
		"j-bools.json": records(150, func(i int) string {
			if i < 140 {
				return `{"b":true}`
			}
			return `{"b":1}`
		}),
	}
}

// CSV files past the split are typed together where every split types
// them alike, and alone where the split decides (a timestamp first, then
// dates or years; dates then timestamps): each file's schema, and the
// merged output, equal Spark reading each file alone, local and only on
// the server.
func TestCSVTypedTogetherPastTheSplit(t *testing.T) {
	t.Parallel()
	c := splitClient(t)
	files, invariant := pastSplitCSV()
	typedTogetherAsAlone(t, c, files, invariant)
}

// JSON files past the split are typed together, whatever the split:
// Spark's JSON inference types each record alone and merges by an
// associative, commutative compatibleType.
func TestJSONTypedTogetherPastTheSplit(t *testing.T) {
	t.Parallel()
	c := splitClient(t)
	files := pastSplitJSON()
	typedTogetherAsAlone(t, c, files, len(files))
}

// typedTogetherAsAlone plans and merges files (local, and only on the
// server) with Spark's inference, together and each alone, and checks
// that each file's schema and the output are Spark's alone, with
// together files typed together.
func typedTogetherAsAlone(t *testing.T, c *spark.Client, files map[string][]byte, together int) {
	t.Helper()
	typedAsAlone(t, c, files, func(t *testing.T, got *spark.Planned) {
		if got.TypedTogether != together {
			t.Errorf("%d files typed together, want %d", got.TypedTogether, together)
		}
	})
}

// typedAsAlone is typedTogetherAsAlone with check in place of the count
// of files typed together. The reference is Spark reading each file
// alone, planned and read once, unwritten (newMergedOracle), where the
// client reads the files: the same bytes only the server sees are typed
// alike alone, so both merges are held to it (each file's schema, and
// the rows), both outputs read in one query.
func typedAsAlone(t *testing.T, c *spark.Client, files map[string][]byte, check func(t *testing.T, got *spark.Planned)) {
	t.Helper()
	local := localFiles(t, files)
	remote := clusterFiles(t, files)
	// PERMISSIVE: a header line repeated past the first is a row of
	// nulls read (inference skips it), not the end of the merge.
	options := map[string]string{"mode": "PERMISSIVE"}
	paths := func(root string) []string {
		var paths []string
		for _, n := range sortedNames(files) {
			paths = append(paths, filepath.Join(root, n))
		}
		return paths
	}
	// The merges below plan on c's session (its split); the reference's
	// plan too, and its rows, read by the schemas planned, are the same
	// whatever session reads them.
	reference, want, err := mergedOracleOf(t, c, spark.Job{Sources: pathSources(paths(local)...), Strategy: spark.StrategyUnion, SparkInference: true,
		InferEachFileAlone: true, ReaderOptions: options})
	if err != nil {
		t.Fatalf("Spark reading each file alone: %v", err)
	}
	schemas := map[string]string{}
	for _, r := range want.Reads {
		schemas[filepath.Base(r.Name)] = r.Schema.String()
	}
	var outs []compared
	for _, where := range []struct {
		name, root string
	}{{"local files", local}, {"files only the server sees", remote}} {
		runOnParentSession(t, where.name, func(t *testing.T) {
			// Each merge's own plan is the one compared: a dry run of it
			// first would type every file again.
			job := spark.Job{Sources: pathSources(paths(where.root)...), Strategy: spark.StrategyUnion, SparkInference: true, Verify: true,
				ReaderOptions: options}
			job.Target.Path = filepath.Join(workDir(t), "together")
			got, gotOut := merge(t, c, job)
			if len(got.Reads) != len(want.Reads) {
				t.Errorf("%d reads typed together, %d alone", len(got.Reads), len(want.Reads))
			}
			for _, r := range got.Reads {
				if w, ok := schemas[filepath.Base(r.Name)]; !ok || r.Schema.String() != w {
					t.Errorf("%s: typed together %s, alone %s", filepath.Base(r.Name), r.Schema, w)
				}
			}
			check(t, got.Planned)
			outs = append(outs, compared{what: where.name, dir: gotOut})
			t.Logf("%d files typed together in %d requests; alone %d Spark requests, together %d", got.TypedTogether, got.TogetherRequests,
				want.Requests.SparkRequests(), got.Requests.SparkRequests())
		})
	}
	// The merged outputs, against Spark reading each file alone.
	reference.sameAsEach(t, c, outs, nil, "", false)
}

// byHeaderCSV are CSV files past the split (and past the 64 KiB head the
// client reads) of a few header lines, and how many of them one
// inference per header types: those whose head folds to the group's type
// in every column. The others go on to the lanes or to Spark alone:
// a timestamp column whose second split (Spark's, for the file alone in
// a session of local[2] and openCostInBytes 40) starts with a year, which
// alone makes the column a string and in the group a timestamp; a column
// whose int values meet a double past the head (and the file of ints of
// its header); a column without a value in the head, which leaves its
// file out of its group's inference, and so the other file of its header
// alone in it.
func byHeaderCSV() (files map[string][]byte, byHeader int) {
	stamps := func(yearAtSplit bool) []byte {
		var lines []string
		for i := range 3000 {
			lines = append(lines, fmt.Sprintf(`%d,2024-01-02 03:04:%02d,%d,"said \"hi\", %d"`, i, i%60, i*7, i))
		}
		file := []byte("id,at,n,note\n" + strings.Join(lines, "\n") + "\n")
		if !yearAtSplit {
			return file
		}
		// Spark's split for the file alone: (size + openCost) / cores;
		// the line after the first line break from there starts the
		// second split. Its at becomes a year (the file's size stays).
		split := (len(file) + 40) / 2
		start := split + strings.IndexByte(string(file[split:]), '\n') + 1
		end := start + strings.IndexByte(string(file[start:]), '\n')
		id, rest, _ := strings.Cut(string(file[start:end]), ",")
		_, rest, _ = strings.Cut(rest, ",")
		line := id + ",2024," + rest
		return []byte(string(file[:start]) + line + string(file[end:]))
	}
	files = map[string][]byte{
		"stamps-1.csv": stamps(false),
		"stamps-2.csv": stamps(false),
		"stamps-3.csv": stamps(false),
		"days-1.csv": linesOf("id,day,flag", 3000, func(i int) string {
			return fmt.Sprintf("%d,2024-%02d-%02d,%s", i, 1+i%12, 1+i%28, []string{"true", "False"}[i%2])
		}),
		"days-2.csv": linesOf("id,day,flag", 3000, func(i int) string {
			return fmt.Sprintf("%d,2023-%02d-%02d,%s", i, 1+i%12, 1+i%28, []string{"TRUE", "false"}[i%2])
		}),
		"words-1.csv": linesOf("k2,s", 12000, func(i int) string { return fmt.Sprintf("%d,w%d", i, i) }),
		"ints-1.csv":  linesOf("k,v", 12000, func(i int) string { return fmt.Sprintf("%d,%d", i, i) }),
	}
	byHeader = len(files) - 2 // ints-1.csv: an int, its group a double; words-1.csv: no group
	files["stamps-year-at-split.csv"] = stamps(true)
	files["ints-then-double.csv"] = linesOf("k,v", 12000, func(i int) string {
		if i == 11000 {
			return fmt.Sprintf("%d,%d.5", i, i)
		}
		return fmt.Sprintf("%d,%d", i, i)
	})
	files["words-late.csv"] = linesOf("k2,s", 12000, func(i int) string {
		if i < 11500 {
			return fmt.Sprintf("%d,", i)
		}
		return fmt.Sprintf("%d,w%d", i, i)
	})
	return files, byHeader
}

// CSV files past the split are typed by one inference per header line
// where each file's head proves the group's types its own, and otherwise
// as before: each file's schema and the merged output equal Spark
// reading each file alone, local and only on the server; the file whose
// second split starts with a year is not typed by its header's group
// (alone, Spark types its timestamp column a string, checked).
func TestCSVTypedByHeaderAsAlone(t *testing.T) {
	t.Parallel()
	c := splitClient(t)
	files, byHeader := byHeaderCSV()
	typedAsAlone(t, c, files, func(t *testing.T, got *spark.Planned) {
		if got.TypedByHeader != byHeader {
			t.Errorf("%d files typed by header, want %d", got.TypedByHeader, byHeader)
		}
		if got.ByHeaderRequests != 3 {
			t.Errorf("%d requests typed by header, want 3 (one per header line of two provable files)", got.ByHeaderRequests)
		}
		for _, r := range got.Reads {
			if filepath.Base(r.Name) == "stamps-year-at-split.csv" && !strings.Contains(r.Schema.String(), "at string") {
				t.Errorf("stamps-year-at-split.csv: %s, want at string (its second split starts with a year)", r.Schema)
			}
		}
	})
}

// unsplitByHeaderCSV are CSV files of a MiB or more, up to Spark's split
// in a session of default settings (4 MiB), so read whole alone, of two
// header lines, and how many one inference per header types: the three
// of the timestamps' header, one of which has years past its head among
// its timestamps (a year after a timestamp is one, alone as in the
// group); not the two of ints, one of which has a double past its head
// (its group a double, each file's head an int: both go on to the lanes
// or alone).
func unsplitByHeaderCSV() (files map[string][]byte, byHeader int) {
	const lines = 30000 // about 1.3 MB a file
	stamps := func(years bool) []byte {
		return linesOf("id,at,note", lines, func(i int) string {
			if years && i > 20000 && i%1000 == 0 {
				return fmt.Sprintf("%d,2024,plain", i)
			}
			return fmt.Sprintf(`%d,2024-05-06T07:08:%02d.5Z,"a, %d"`, i, i%60, i)
		})
	}
	ints := func(double bool) []byte {
		return linesOf("k,v", 3*lines, func(i int) string {
			if double && i == 80000 {
				return fmt.Sprintf("%d,%d.25", i, i)
			}
			return fmt.Sprintf("%d,%d", i, i*1000)
		})
	}
	return map[string][]byte{
		"stamps-1.csv":     stamps(false),
		"stamps-2.csv":     stamps(false),
		"stamps-years.csv": stamps(true),
		"ints-1.csv":       ints(false),
		"ints-double.csv":  ints(true),
	}, 3
}

// CSV files up to the split but of a MiB or more are typed by one
// inference per header line too (the lanes would take them about one
// request each), where each file's head proves the group's types its
// own: each file's schema and the merged output equal Spark reading each
// file alone, local and only on the server.
func TestCSVUnsplitTypedByHeaderAsAlone(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	files, byHeader := unsplitByHeaderCSV()
	for name, b := range files {
		if len(b) < 1<<20 {
			t.Fatalf("%s: %d bytes, want a MiB or more", name, len(b))
		}
	}
	typedAsAlone(t, c, files, func(t *testing.T, got *spark.Planned) {
		if got.TypedByHeader != byHeader || got.ByHeaderRequests != 2 {
			t.Errorf("%d files typed by header in %d requests, want %d in 2", got.TypedByHeader, got.ByHeaderRequests, byHeader)
		}
		for _, r := range got.Reads {
			if filepath.Base(r.Name) == "stamps-years.csv" && !strings.Contains(r.Schema.String(), "at timestamp") {
				t.Errorf("stamps-years.csv: %s, want at timestamp (years after timestamps)", r.Schema)
			}
		}
	})
}

// With no file fetched whole (Job.FetchLimit below 0), CSV files only
// the server sees, of a MiB or more, in a tree of key=value folders, are
// typed by one inference per header line, proven from the heads their
// listing brought: each file's schema (its folder's partition column
// too) and the merged output equal Spark reading each file alone, and
// the client receives their heads and no more.
func TestServerOnlyFilesTypedByHeaderWithoutFetchingThem(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	flat, byHeader := unsplitByHeaderCSV()
	files := map[string][]byte{}
	for i, n := range sortedNames(flat) {
		files[fmt.Sprintf("day=2024-01-%02d/%s", i+1, n)] = flat[n]
	}
	root := clusterFiles(t, files)
	job := spark.Job{Sources: pathSources(root), Strategy: spark.StrategyUnion, FetchLimit: -1, Verify: true}
	// The reference: each file planned alone and read, unwritten, once;
	// the merge's own plan is the one checked (a dry run of it first
	// would type and fetch the same again).
	aloneJob := job
	aloneJob.InferEachFileAlone = true
	reference, alone, err := mergedOracleOf(t, c, aloneJob)
	if err != nil {
		t.Fatalf("Spark reading each file alone: %v", err)
	}
	if alone.TypedTogether != 0 || alone.TypedByHeader != 0 {
		t.Errorf("typed %d files together and %d by header, asked to type each alone", alone.TypedTogether, alone.TypedByHeader)
	}
	schemas := map[string]string{}
	for _, r := range alone.Reads {
		schemas[r.Name] = r.Schema.String()
	}
	job.Target.Path = filepath.Join(workDir(t), "by-header")
	res, gotOut := merge(t, c, job)
	got := res.Planned
	if len(got.Reads) != len(alone.Reads) {
		t.Errorf("%d reads typed by header, %d alone", len(got.Reads), len(alone.Reads))
	}
	for _, r := range got.Reads {
		if w, ok := schemas[r.Name]; !ok || r.Schema.String() != w {
			t.Errorf("%s: typed together %s, alone %s", r.Name, r.Schema, w)
		}
	}
	if got.TypedByHeader != byHeader || got.ByHeaderRequests != 2 || got.RemoteTyped != 0 || got.PastFetchLimit != len(files) {
		t.Errorf("%d files typed by header in %d requests, %d on the client, %d past the fetch limit; want %d in 2, none, %d", got.TypedByHeader, got.ByHeaderRequests, got.RemoteTyped, got.PastFetchLimit, byHeader, len(files))
	}
	for _, r := range got.Reads {
		if !strings.Contains(r.Schema.String(), "day date") {
			t.Errorf("%s: %s, want its partition column day date", r.Name, r.Schema)
		}
	}
	// The heads, and a few KiB of listings and schemas.
	if most := int64(len(files)*64<<10 + 64<<10); got.Requests.ResultBytes > most {
		t.Errorf("%d bytes sent to the client, want at most %d (the files' heads)", got.Requests.ResultBytes, most)
	}
	t.Logf("plan requests %+v", got.Requests)
	reference.sameAs(t, c, gotOut, nil, "", "")
}

// byHeaderCorpus are generated CSV files of four header lines, two to
// four files each, past the split, whose columns hold the suite's nasty
// values (nastyValues) of a kind, and in a third of the files now and
// then of another of its family (driftPartners): a year among
// timestamps, a double among ints, text among dates, where in the file
// (its head, a split's start, past both) as the draw falls.
func byHeaderCorpus(seed uint64) map[string][]byte {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	kinds := []string{"int", "bigint", "double", "bool", "text", "date", "ts", "year", "decimal"}
	files := map[string][]byte{}
	for h := range 4 {
		names := []string{"id"}
		var steady, drift []string
		for c := range 2 + r.IntN(3) {
			k := kinds[r.IntN(len(kinds))]
			partners := driftPartners[k]
			names = append(names, fmt.Sprintf("h%dc%d", h, c))
			steady, drift = append(steady, k), append(drift, partners[r.IntN(len(partners))])
		}
		for f := range 2 + r.IntN(3) {
			drifting := r.IntN(3) == 0
			rows := 100 + r.IntN(2500)
			var b strings.Builder
			b.WriteString(strings.Join(names, ",") + "\n")
			for row := range rows {
				cells := []string{fmt.Sprint(row)}
				for c, k := range steady {
					if drifting && r.IntN(200) == 0 {
						k = drift[c]
					}
					v := ""
					if r.IntN(8) != 0 {
						vs := nastyValues[k]
						v = vs[r.IntN(len(vs))]
					}
					cells = append(cells, csvCell(v, ","))
				}
				b.WriteString(strings.Join(cells, ",") + "\n")
			}
			files[fmt.Sprintf("h%d-%d.csv", h, f)] = []byte(b.String())
		}
	}
	return files
}

// Generated files typed by one inference per header line, where each
// file's head proves it, and otherwise by the lanes or alone: every
// file's schema and the merged output equal Spark reading each file
// alone, local and only on the server, for each seed; some files of the
// seeds are typed by their header (else the test proves nothing).
func TestCSVTypedByHeaderOnGeneratedFiles(t *testing.T) {
	t.Parallel()
	c := splitClient(t)
	var mu sync.Mutex
	typed := 0
	for _, seed := range []uint64{3401, 3402} {
		typedAsAlone(t, c, byHeaderCorpus(seed), func(t *testing.T, got *spark.Planned) {
			mu.Lock()
			defer mu.Unlock()
			typed += got.TypedByHeader
			t.Logf("seed %d: %d files typed by header in %d requests", seed, got.TypedByHeader, got.ByHeaderRequests)
		})
	}
	if !t.Failed() && typed == 0 {
		t.Error("no generated file was typed by its header: the test proves nothing of that path")
	}
}

// splitsMeetOtherKindsCSV are groups of a header line whose first file's
// later part, past 64 KiB, holds values of no common type with its start
// (booleans after ints, years after dates, ints after booleans), each
// with three small files of the start's kind, and a group of ints alone.
func splitsMeetOtherKindsCSV() map[string][]byte {
	pad := strings.Repeat("p", 50)
	file := func(header string, size int, value func(i int, late bool) string) []byte {
		var b strings.Builder
		b.WriteString(header + "\n")
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "%d,%s,%s\n", i, value(i, b.Len() >= 64<<10), pad)
		}
		return []byte(b.String())
	}
	ints := func(i int, _ bool) string { return fmt.Sprint(i * 7) }
	days := func(i int, _ bool) string { return fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28) }
	flags := func(i int, _ bool) string { return []string{"true", "false"}[i%2] }
	files := map[string][]byte{
		"ints-then-flags.csv": file("id,v,pad", 120<<10, func(i int, late bool) string {
			if late {
				return flags(i, late)
			}
			return ints(i, late)
		}),
		"days-then-years.csv": file("id,d,pad", 120<<10, func(i int, late bool) string {
			if late {
				return fmt.Sprint(1900 + i%100)
			}
			return days(i, late)
		}),
		"flags-then-ints.csv": file("id,b,pad", 120<<10, func(i int, late bool) string {
			if late {
				return ints(i, late)
			}
			return flags(i, late)
		}),
	}
	for k := range 3 {
		files[fmt.Sprintf("ints-%d.csv", k)] = file("id,v,pad", 40<<10, ints)
		files[fmt.Sprintf("days-%d.csv", k)] = file("id,d,pad", 40<<10, days)
		files[fmt.Sprintf("flags-%d.csv", k)] = file("id,b,pad", 40<<10, flags)
		files[fmt.Sprintf("n-%d.csv", k)] = file("id,n,pad", 40<<10, ints)
	}
	return files
}

// Spark merges the types of a read's partitions so that two of no common
// type (an int and a boolean) make null, which the next partition's type
// replaces: a group of files read in many partitions could come out an
// int where one of its files, split in two alone, is a string (found in
// the field: values nulled, --verify passing). Typed by header in a
// session of small partitions (64 KiB, as a server of many cores splits
// larger files), each file is typed as Spark types it alone, and the
// group whose files all hold ints still by its header.
func TestCSVTypedByHeaderWhereSplitsMeetOtherKinds(t *testing.T) {
	t.Parallel()
	c, err := connectPatiently(t, testContext(t), requireSpark(t), spark.ConnectOptions{
		UserAgent: "sparkmerge-integration",
		Conf:      map[string]string{"spark.sql.files.maxPartitionBytes": "64k", "spark.sql.files.openCostInBytes": "40b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	typedAsAlone(t, c, splitsMeetOtherKindsCSV(), func(t *testing.T, got *spark.Planned) {
		if got.TypedByHeader != 3 {
			t.Errorf("%d files typed by header, want 3 (the n files; every other group holds values of no common type)", got.TypedByHeader)
		}
	})
}
