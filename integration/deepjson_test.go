//go:build integration

package integration

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/sparkmerge/sparkmerge/spark"
)

// deepJSON is a JSON-lines record {"id":1,"a":{"a":...{"a":1}...}} whose
// objects nest depth levels deep, the record counting one.
func deepJSON(depth int) string {
	return `{"id":1,"a":` + strings.Repeat(`{"a":`, depth-1) + `1` + strings.Repeat(`}`, depth-1) + "}\n"
}

// sparkReadsJSON is the type and rows (typeAndJSONRows) Spark reads from
// the JSON file path alone, under options.
func sparkReadsJSON(t *testing.T, path string, options map[string]string) (string, []string) {
	t.Helper()
	r := testSessionOf(t).Read().Format("json")
	for k, v := range options {
		r = r.Option(k, v)
	}
	df, err := r.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return typeAndJSONRows(t, df)
}

// mergedAs fails t unless the merge's Parquet output out holds wantType
// and wantRows (typeAndJSONRows).
func mergedAs(t *testing.T, wantType string, wantRows []string, out string) {
	t.Helper()
	gotType, gotRows := typeAndJSONRows(t, readAlone(t, testSessionOf(t), "parquet", out))
	diff(t, "type", wantType, gotType)
	diff(t, "rows", wantRows, gotRows)
}

// jsonReads are Spark's reads of JSON files alone (sparkReadsJSON), each
// read once for the parallel subtests that compare their merges with it:
// the same file where the client reads it and where only the server sees
// it (the same bytes) need Spark's reading of it once, and a deep file's
// read costs the server a second of CPU.
type jsonReads struct {
	mu    sync.Mutex
	reads map[string]*jsonRead
}

type jsonRead struct {
	typ  string
	rows []string
}

// of is sparkReadsJSON(path, options), read by the first subtest that
// asks for it under key.
func (j *jsonReads) of(t *testing.T, key, path string, options map[string]string) (string, []string) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	if r, ok := j.reads[key]; ok {
		return r.typ, r.rows
	}
	typ, rows := sparkReadsJSON(t, path, options)
	if j.reads == nil {
		j.reads = map[string]*jsonRead{}
	}
	j.reads[key] = &jsonRead{typ, rows}
	return typ, rows
}

// JSON nested as deep as the client types it (MaxJSONDepth, 256) merges
// as Spark reads the file alone, from files the client reads and files
// only the cluster sees. A file nested deeper, here 100,000 levels (600
// KB; the client took 10 GB typing it, and a record of 400 levels ends a
// Spark 4.0.1 server when Spark infers it), fails the run before Spark
// is asked anything of it, naming the file, its depth and the bound, with
// the CLI's memory bounded (its peak resident size) and the server alive.
func TestDeepJSONIsBounded(t *testing.T) {
	t.Parallel()
	const bound = 256
	files := textFiles(map[string]string{"at.json": deepJSON(bound), "past.json": deepJSON(100000)})
	dirs := map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)}
	// Spark's read of the file at the bound alone, read once for both
	// places (where the client reads it, the same bytes).
	var alone jsonReads
	for _, where := range []string{"local", "cluster"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			dir := dirs[where]
			res, out := merge(t, c, spark.Job{Sources: pathSources(dir + "/at.json"), Verify: true})
			if len(res.Planned.Reads) != 1 || !res.Planned.Reads[0].InferredLocally {
				t.Errorf("the file at the bound was not typed by the client")
			}
			wantType, wantRows := alone.of(t, "", dirs["local"]+"/at.json", nil)
			mergedAs(t, wantType, wantRows, out)

			for _, args := range [][]string{
				{"plan", dir + "/past.json"},
				{"merge", dir + "/past.json", "--out", filepath.Join(workDir(t), "out")},
			} {
				start := time.Now()
				code, stderr, peak := cliRunMeasured(t, args...)
				took := time.Since(start)
				t.Logf("%s: exit %d in %v, peak resident %d MB", args[0], code, took.Round(time.Millisecond), peak>>20)
				if code == 0 {
					t.Fatalf("%s of a file nested 100,000 levels deep passed", args[0])
				}
				for _, want := range []string{"past.json", "100000 levels deep", "256", "flatten"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("%s: the error does not say %q:\n%s", args[0], want, stderr)
					}
				}
				if peak > 512<<20 {
					t.Errorf("%s: the CLI grew to %d MB typing the file", args[0], peak>>20)
				}
			}
			// The server lives: the file was never sent to it.
			if rows := queryRows(t, "SELECT 1"); len(rows) != 1 {
				t.Errorf("the server answers %v", rows)
			}
		})
	}
}

// cliRunMeasured is cliRun, returning the exit code, stderr and the
// process's peak resident memory in bytes, as its own VmHWM says, read
// every 5 ms while it runs (the last reading before it exits). Not
// wait4's ru_maxrss: Linux carries the parent's resident size into a
// child at exec, so a CLI started from this test binary "peaked" at the
// binary's 888 MB while exiting in 38 ms.
func cliRunMeasured(t *testing.T, args ...string) (code int, stderr string, peak int64) {
	t.Helper()
	r := requireSpark(t)
	cmd := osexec.CommandContext(testContext(t), cliBinary(t), append(args, "--remote", r)...)
	cmd.Env = append(os.Environ(), "SPARK_REMOTE=")
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatalf("run sparkmerge %s: %v", strings.Join(args, " "), err)
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan struct{})
	sampled := make(chan int64, 1)
	go func() {
		var high int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(status); err == nil {
				high = max(high, vmHWM(string(b)))
			}
			select {
			case <-done:
				sampled <- high
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	peak = <-sampled
	var exit *osexec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run sparkmerge %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), errBuf.String(), peak
}

// vmHWM is the peak resident size in bytes in a /proc/PID/status text.
func vmHWM(status string) int64 {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// wideJSON is a JSON-lines record {"id":1,"w":[{"b":1},...]} of n objects
// in one array: many brackets on its line, nested 3 levels.
func wideJSON(n int) string {
	return `{"id":1,"w":[` + strings.TrimSuffix(strings.Repeat(`{"b":1},`, n), ",") + "]}\n"
}

// prettyDeepJSON is deepJSON's record written over several lines, a
// level a line, as a multi-line JSON file holds it.
func prettyDeepJSON(depth int) string {
	return "{\n\"id\": 1,\n\"a\":\n" + strings.Repeat("{\"a\":\n", depth-1) + "1\n" + strings.Repeat("}\n", depth-1) + "}\n"
}

// stringsJSON is a record nested one level whose strings hold 600
// brackets, after quotes and backslashes escaped in them, and in a
// string in single quotes, which Spark's reader allows.
func stringsJSON() string {
	return `{"id":1,"s":"a \"quoted\" \\` + strings.Repeat(`{[`, 150) + `\\","t":'it\'s ` + strings.Repeat(`[{`, 150) + `'}` + "\n"
}

// A JSON file the client does not read whole is typed by Spark, whose
// inference of a record nested 400 levels deep ends the server (see
// TestDeepJSONIsBounded): the plan first has Spark read such files as
// text and measure their nesting, and refuses one past the client's
// bound (MaxJSONDepth, 256) as the client refuses a file it reads, naming
// the file, its depth, the bound and the remedy, before Spark infers or
// reads it. So with Spark's inference (Job.SparkInference), with reader
// options the client's rules do not take (primitivesAsString) and with
// multi-line records (a record over several lines), from files the
// client reads and files only the cluster sees. A file at the bound
// merges value for value as Spark reads it alone; a line of many
// brackets nested shallowly and brackets in strings plan. Among other
// files, which Spark types together, a deep file's lines are kept from the
// batch's inference by its own read (jsonLanes.lineExpr; let through,
// stack.json's 500 levels were typed) and the file is refused as alone.
func TestDeepJSONTypedBySparkIsRefused(t *testing.T) {
	t.Parallel()
	const bound = 256
	files := textFiles(map[string]string{
		"at.json":      deepJSON(bound),
		"wide.json":    wideJSON(400),
		"strings.json": stringsJSON(),
		"past.json":    deepJSON(bound + 1),
		"farpast.json": deepJSON(100000),
		"pretty.json":  prettyDeepJSON(300),
		// Past the bound, and shallow enough for Spark's JSON parser
		// to take (past 1,000 levels it fails the record as malformed).
		"stack.json": deepJSON(500),
	})
	dirs := map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)}
	ways := []struct {
		name    string
		options map[string]string
		refused map[string]string // file: its depth
		job     func(sources []spark.SourceSpec) spark.Job
	}{
		{"Spark's inference", nil, map[string]string{"past.json": "257", "farpast.json": "100000"},
			func(s []spark.SourceSpec) spark.Job { return spark.Job{Sources: s, SparkInference: true} }},
		{"options the rules refuse", map[string]string{"primitivesAsString": "true"}, map[string]string{"past.json": "257", "farpast.json": "100000"},
			func(s []spark.SourceSpec) spark.Job {
				return spark.Job{Sources: s, ReaderOptions: map[string]string{"primitivesAsString": "true"}}
			}},
		{"multi-line records", map[string]string{"multiLine": "true"}, map[string]string{"past.json": "257", "pretty.json": "300"},
			func(s []spark.SourceSpec) spark.Job {
				return spark.Job{Sources: s, ReaderOptions: map[string]string{"multiLine": "true"}}
			}},
	}
	// Spark's read of the file at the bound alone, by way, read once for
	// both places (where the client reads it, the same bytes).
	var alone jsonReads
	for _, where := range []string{"local", "cluster"} {
		for _, way := range ways {
			t.Run(where+"/"+way.name, func(t *testing.T) {
				t.Parallel()
				c := newClient(t)
				dir := dirs[where]
				planned, err := c.Plan(testContext(t), way.job(pathSources(dir+"/at.json", dir+"/wide.json", dir+"/strings.json")))
				if err != nil {
					t.Fatalf("files nested at most %d levels: %v", bound, err)
				}
				t.Logf("3 files planned in %+v", planned.Requests)
				for _, r := range planned.Reads {
					if r.InferredLocally {
						t.Errorf("%s was typed by the client, want Spark", r.Name)
					}
				}
				for file, depth := range way.refused {
					_, err := c.Plan(testContext(t), way.job(pathSources(dir+"/"+file)))
					if err == nil {
						t.Errorf("%s, nested %s levels deep, planned", file, depth)
						continue
					}
					for _, want := range []string{dir + "/" + file, depth + " levels deep", "past the 256", "flatten such records"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("%s: the error does not say %q: %v", file, want, err)
						}
					}
				}
				// Among other files, which Spark types together in one
				// inference over their lines (a single file is asked
				// alone), a deep file's lines never reach that inference:
				// its file goes alone, measured first, and is refused.
				// (Let through, stack.json was typed, 500 levels deep.)
				among := pathSources(dir+"/at.json", dir+"/wide.json", dir+"/strings.json", dir+"/stack.json")
				if _, err := c.Plan(testContext(t), way.job(among)); err == nil {
					t.Errorf("stack.json, nested 500 levels deep among files nested at most %d, planned", bound)
				} else {
					for _, want := range []string{dir + "/stack.json", "500 levels deep", "past the 256"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("stack.json among other files: the error does not say %q: %v", want, err)
						}
					}
				}
				// The file at the bound merges as Spark reads it alone.
				_, out := merge(t, c, way.job(pathSources(dir+"/at.json")))
				wantType, wantRows := alone.of(t, way.name, dirs["local"]+"/at.json", way.options)
				mergedAs(t, wantType, wantRows, out)
				// The server lives: Spark never inferred the deep files.
				if rows := queryRows(t, "SELECT 1"); len(rows) != 1 {
					t.Errorf("the server answers %v", rows)
				}
			})
		}
	}
}

// utf16LE is s in UTF-16LE, without a byte order mark.
func utf16LE(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteByte(byte(u))
		b.WriteByte(byte(u >> 8))
	}
	return b.String()
}

// cjkJSON is a record nested depth levels deep whose first string holds
// characters a byte of which, in UTF-16LE, is a quote or a bracket: 丢
// (22 4E), 丧 (27 4E), 山 (71 5C), 字 (57 5B) and 笑 (11 7B). Read as
// UTF-8 bytes, the string closes at 丢: with hide, 丧 then opens a
// string in single quotes that runs to the end (a record of any depth
// measures 1); without, 字 and 300 笑 count as 301 levels.
func cjkJSON(depth int, hide bool) string {
	s := "丢山字" + strings.Repeat("笑", 300)
	if hide {
		s = "丢丧山字笑"
	}
	return `{"id":1,"s":"` + s + `",` + strings.Repeat(`"a":{`, depth-1) + `"b":1` + strings.Repeat(`}`, depth-1) + "}\n"
}

// A JSON file read with an encoding that is not UTF-8 is measured as
// Spark decodes it: in UTF-16LE, with multiLine and line by line (where
// Spark asks for lineSep), and with multiLine and no encoding (Spark's
// reader detects it), a file whose strings hold characters with a
// quote's or a bracket's byte, nested 200 levels, merges as Spark reads
// it alone (read as UTF-8 bytes, it measured 302 levels and was refused),
// and files nested 300 levels are refused before Spark infers them,
// naming the file, its depth and the bound (read as UTF-8 bytes, one
// measured 1 level and went to Spark's inference, the other 302); from
// files the client reads and files only the cluster sees.
func TestDeepJSONInUTF16IsMeasuredAsSparkDecodesIt(t *testing.T) {
	t.Parallel()
	files := textFiles(map[string]string{
		"under.json": utf16LE(cjkJSON(200, false)),
		"past.json":  utf16LE(cjkJSON(300, true)),
		"over.json":  utf16LE(cjkJSON(300, false)),
	})
	dirs := map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)}
	ways := map[string]map[string]string{
		"multiLine": {"encoding": "UTF-16LE", "multiLine": "true"},
		"lines":     {"encoding": "UTF-16LE", "lineSep": "\n"},
		"charset":   {"charset": "utf-16le", "multiLine": "true"},
		// Spark's reader detects UTF-16 from a file's first bytes.
		"detected": {"multiLine": "true"},
	}
	// Spark's read of under.json alone, by way, read once for both
	// places (where the client reads it, the same bytes).
	var alone jsonReads
	for _, where := range []string{"local", "cluster"} {
		for _, way := range []string{"multiLine", "lines", "charset", "detected"} {
			t.Run(where+"/"+way, func(t *testing.T) {
				t.Parallel()
				c := newClient(t)
				dir := dirs[where]
				options := ways[way]
				job := func(path string) spark.Job {
					return spark.Job{Sources: pathSources(dir + "/" + path), ReaderOptions: options}
				}
				for _, file := range []string{"past.json", "over.json"} {
					_, err := c.Plan(testContext(t), job(file))
					if err == nil {
						t.Errorf("%s, nested 300 levels deep, planned", file)
						continue
					}
					for _, want := range []string{dir + "/" + file, "300 levels deep", "past the 256", "flatten such records"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("%s: the error does not say %q: %v", file, want, err)
						}
					}
				}
				_, out := merge(t, c, job("under.json"))
				wantType, wantRows := alone.of(t, way, dirs["local"]+"/under.json", options)
				mergedAs(t, wantType, wantRows, out)
				if rows := queryRows(t, "SELECT 1"); len(rows) != 1 {
					t.Errorf("the server answers %v", rows)
				}
			})
		}
	}
}

// A file read with an encoding that holds bytes not of that encoding (an
// unpaired UTF-16 surrogate) cannot be measured as Spark decodes it: on
// Spark 4 the plan is refused, naming the encoding and the remedy, before
// Spark infers the file (Spark's reader would read U+FFFD); on 3.5,
// whose decode reads U+FFFD too, it is measured and merged. Local and
// only on the server; the server answers after.
func TestJSONOfBytesNotOfItsEncodingIsRefusedOnSpark4(t *testing.T) {
	t.Parallel()
	broken := utf16LE(`{"a":"x`) + "\x00\xdc" + utf16LE(`","b":[[1]]}`)
	files := textFiles(map[string]string{"broken.json": broken})
	dirs := map[string]string{"local": localFiles(t, files), "cluster": clusterFiles(t, files)}
	options := map[string]string{"encoding": "UTF-16LE", "multiLine": "true"}
	for _, where := range []string{"local", "cluster"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			_, err := c.Plan(testContext(t), spark.Job{Sources: pathSources(dirs[where] + "/broken.json"), ReaderOptions: options})
			if strings.HasPrefix(sparkVersion(t), "3.") {
				if err != nil {
					t.Errorf("Spark 3.5 decodes the bytes as U+FFFD, as its reader does; the plan failed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("a UTF-16LE file with an unpaired surrogate planned on Spark 4")
			}
			for _, want := range []string{dirs[where] + "/broken.json", "bytes that are not of that encoding", "check the encoding option, or re-encode the file as UTF-8"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			if rows := queryRows(t, "SELECT 1"); len(rows) != 1 {
				t.Errorf("the server answers %v", rows)
			}
		})
	}
}
