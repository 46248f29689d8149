//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// csvInferenceCases are CSV files whose schema the client infers itself
// (local: true) or leaves to Spark. Each is planned twice, once asking
// Spark for every schema; the schemas must be the same.
var csvInferenceCases = []struct {
	name, content string
	local         bool
}{
	{"ints.csv", "a,b\n1,-2\n+3,007\n-0,0\n", true},
	{"int-bounds.csv", "a,b,c,d\n2147483647,-2147483648,2147483648,-2147483649\n", true},
	{"bigint-bounds.csv", "a,b,c\n9223372036854775807,-9223372036854775808,9223372036854775808\n", true},
	{"wide-integers.csv", "a,b,c\n" + strings.Repeat("9", 38) + "," + strings.Repeat("9", 39) + ",-00000000000000000009223372036854775809\n", true},
	{"decimal-then-int.csv", "a,b,c\n99999999999999999999,5000000000,5\n5,9223372036854775808,9223372036854775808\n", true},
	{"fractions.csv", "a,b,c\n1.5,2,9223372036854775808\n-0.25,3.0,1.5\n", true},
	{"booleans.csv", "a,b,c,d\ntrue,FALSE,true,1\nTrue,false,1,true\n", true},
	{"text.csv", "city,n,t\nTokyo,1,x1\nabc,2,1\n", true},
	{"nulls.csv", "a,b,c\n,1,\n,,\n", true},
	{"header-only.csv", "a,b\n", true},
	{"repeated-header.csv", "a,b\n1,2\na,b\n3,4\n", true},
	{"crlf.csv", "a,b\r\n\r\n1,x\r\n\n2,y", true},
	{"mixed-case.csv", "Id,NAME\n1,x\n", true},
	{"tabs.tsv", "a\tb\n1\tx,y\n", true},
	{"dates.csv", "a,b,c,d\n2024-01-31,2024-01-31 10:00:00,0000-02-29,2024-01-31T10:00:00.123456789+18:00\n2020-02-29,2024-02-29T23:59,1582-10-10,2024-01-31 10:00:00Z\n", true},
	// A year after a date or timestamp is a timestamp, first an int
	// (which a timestamp after it makes a string); a date and a
	// timestamp make a timestamp, either with text a string.
	{"datetime-order.csv", "a,b,c,d,e,f\n2024-01-31,2024-01-31 10:00:00,2020,2024-01-31,2024-01-31,1\n2020,0000,2024-01-31 10:00:00,2024-01-31 10:00:00,x,2024-01-31\n", true},
	// Values quoted whole: the text between the quotes, typed as any
	// value ("2" an int, "2024-01-31" a date).
	{"quoted.csv", "a,b,c,d\n\"x,y\",\"2\",\"2024-01-31\",\"true\"\n\"p;q\",3,2024-02-01,\"FALSE\"\r\n", true},
	// Left to Spark: the plan must still be the same.
	{"doubled-quotes.csv", "a,b\n\"say \"\"hi\"\"\",1\n", false},
	{"spaced-quotes.csv", "a,b,c\n \"2\",\"3\" ,\" 4\"\n", false},
	{"empty-quotes.csv", "a,b\n\"\",1\n", false},
	{"odd-dates.csv", "a,b,c\n2021-02-29,2024-01-31 24:00:00,2024-01-31 10:00:00 UTC\n", false},
	{"signed-year-after-date.csv", "a\n2024-01-31\n-2020\n", false},
	{"exponent.csv", "a,b\n1e5,1.\n", false},
	{"special-doubles.csv", "a,b\nNaN,Infinity\n", false},
	{"padded.csv", "a,b\n 12,x \n", false},
	{"time-of-day.csv", "a\nT10:00\n", false},
}

// TestLocalCSVInferenceMatchesSpark plans the same CSV files with local
// inference and with Spark's, on the real server, and compares every
// read's schema: the client must infer exactly what Spark infers, and must
// infer locally the files it claims to handle.
func TestLocalCSVInferenceMatchesSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	files := map[string]string{}
	var names []string
	for _, tc := range csvInferenceCases {
		files[tc.name] = tc.content
		names = append(names, tc.name)
	}
	paths := writeFiles(t, dir, files, names...)
	local, remote := planBothWays(t, c, spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion})
	if len(local.Reads) != len(paths) || len(remote.Reads) != len(paths) {
		t.Fatalf("reads: %d local, %d remote, want %d each", len(local.Reads), len(remote.Reads), len(paths))
	}
	for i, tc := range csvInferenceCases {
		l, r := local.Reads[i], remote.Reads[i]
		if filepath.Base(l.Paths[0]) != tc.name || filepath.Base(r.Paths[0]) != tc.name {
			t.Fatalf("read %d is %s / %s, want %s", i, l.Paths[0], r.Paths[0], tc.name)
		}
		if l.InferredLocally != tc.local {
			t.Errorf("%s: inferred locally = %v, want %v", tc.name, l.InferredLocally, tc.local)
		}
		if r.InferredLocally {
			t.Errorf("%s: inferred locally under SparkInference", tc.name)
		}
		if !l.Schema.Equal(r.Schema) {
			t.Errorf("%s: client infers %s, Spark %s", tc.name, l.Schema, r.Schema)
		}
	}
}

// TestLocallyInferredCSVMerges merges locally inferred files end to end:
// the read carries enforceSchema=false and the values arrive typed.
func TestLocallyInferredCSVMerges(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{
		"a.csv": "id,amount,ok\n1,2.5,true\n2,,false\n",
		"b.csv": "ok,id,note\nTRUE,9223372036854775807,x\n",
	}, "a.csv", "b.csv")
	res, out := merge(t, c, spark.Job{Sources: pathSources(paths...), Target: spark.Target{Path: filepath.Join(dir, "out")}})
	for _, r := range res.Reads {
		if !r.InferredLocally {
			t.Errorf("%s: not inferred locally", r.Name)
		}
	}
	if got, want := res.Plan.Target.String(), "id bigint, amount double, ok boolean, note string"; got != want {
		t.Errorf("target = %s, want %s", got, want)
	}
	got := parquetRows(t, out, []string{"id", "amount", "ok", "note"}, "id")
	want := [][]any{
		row("1", "2.5", "true", nil),
		row("2", nil, "false", nil),
		row("9223372036854775807", nil, "true", "x"),
	}
	diff(t, "rows", want, got)
}

// TestLocalInferenceOfSplitFilesMatchesSpark infers files big enough that
// Spark splits each into partitions, infers them apart and merges the
// types (on local[2] a read of S bytes splits every (S + 4 MiB open
// cost) / 2 bytes: a file over 4 MiB is two partitions). The client folds every record in order; the types drift
// between the halves so that both orders of each merge are exercised.
func TestLocalInferenceOfSplitFilesMatchesSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	const rows = 200_000
	var csv, json strings.Builder
	csv.WriteString("a,b,c,d,e\n")
	for i := range rows {
		if i < rows/2 {
			fmt.Fprintf(&csv, "%d,true,%d,%d,\n", i, uint64(i)+10_000_000_000_000_000_000, i)
			fmt.Fprintf(&json, "{\"a\":%d,\"b\":%d.5,\"c\":%d,\"d\":null,\"e\":\"x\"}\n", i, i, i)
		} else {
			fmt.Fprintf(&csv, "true,%d,%d.5,%d,2.5\n", i, i, int64(i)+3_000_000_000)
			fmt.Fprintf(&json, "{\"a\":\"s%d\",\"b\":%d,\"c\":99999999999999999999,\"d\":true,\"e\":%d}\n", i, i, i)
		}
	}
	paths := writeFiles(t, workDir(t), map[string]string{"big.csv": csv.String(), "big.json": json.String()}, "big.csv", "big.json")
	for _, p := range paths {
		if info, err := os.Stat(p); err != nil || info.Size() < 5<<20 {
			t.Fatalf("%s: %v, want over 5 MiB so that Spark splits it", p, err)
		}
	}
	local, remote := planBothWays(t, c, spark.Job{Sources: pathSources(paths...), Strategy: spark.StrategyUnion})
	// Inference is the part of discovery spent reading the files.
	if local.Inference <= 0 || local.Inference > local.Discovery || remote.Inference != 0 {
		t.Errorf("inference %v of discovery %v (client), %v (Spark's)", local.Inference, local.Discovery, remote.Inference)
	}
	want := []string{
		"a string, b string, c double, d bigint, e double",
		"a string, b double, c decimal(20,0), d boolean, e string",
	}
	for i, p := range paths {
		l, r := local.Reads[i], remote.Reads[i]
		if !l.InferredLocally {
			t.Errorf("%s: not inferred on the client", p)
		}
		if !l.Schema.Equal(r.Schema) || r.Schema.String() != want[i] {
			t.Errorf("%s: client infers %s, Spark %s; want %s", filepath.Base(p), l.Schema, r.Schema, want[i])
		}
	}
}

// A CSV file whose types hold only if Spark reads it in one partition (a
// timestamp, then years: a timestamp in one partition, a string across
// two) is typed on the client only where the session's split cannot cut
// it: on the default session the client types it, equal to Spark; on a
// session whose split is 40 bytes Spark types it (alone: a string), local
// and only on the server. A file of dates alone is typed on the client on
// both.
func TestSplitSensitiveCSVFileFollowsTheSessionsSplit(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"stamp-then-years.csv": linesOf("id,sy", 150, func(i int) string {
			if i%2 == 0 {
				return fmt.Sprintf("%d,2024-01-02 03:04:05", i)
			}
			return fmt.Sprintf("%d,%d", i, 1990+i)
		}),
		"dates.csv": linesOf("id,day", 150, func(i int) string { return fmt.Sprintf("%d,2024-%02d-%02d", i, 1+i%12, 1+i%28) }),
	}
	for _, session := range []struct {
		name        string
		c           *spark.Client
		yearsLocal  bool
		yearsSchema string
	}{{"default split", newClient(t), true, "id int, sy timestamp"}, {"split of 40 bytes", splitClient(t), false, "id int, sy string"}} {
		for _, where := range []struct {
			name, root string
		}{{"local files", localFiles(t, files)}, {"files only the server sees", clusterFiles(t, files)}} {
			t.Run(session.name+", "+where.name, func(t *testing.T) {
				job := spark.Job{Sources: pathSources(where.root), Strategy: spark.StrategyUnion, DryRun: true}
				got, err := session.c.Plan(testContext(t), job)
				if err != nil {
					t.Fatal(err)
				}
				job.SparkInference, job.InferEachFileAlone = true, true
				alone, err := session.c.Plan(testContext(t), job)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]string{}
				for _, r := range alone.Reads {
					want[filepath.Base(r.Name)] = r.Schema.String()
				}
				if want["stamp-then-years.csv"] != session.yearsSchema {
					t.Errorf("Spark alone types stamp-then-years.csv %s, want %s", want["stamp-then-years.csv"], session.yearsSchema)
				}
				for _, r := range got.Reads {
					name := filepath.Base(r.Name)
					if r.Schema.String() != want[name] {
						t.Errorf("%s: typed %s, Spark alone %s", name, r.Schema, want[name])
					}
					if wantLocal := name == "dates.csv" || session.yearsLocal; r.InferredLocally != wantLocal {
						t.Errorf("%s: typed on the client %v, want %v", name, r.InferredLocally, wantLocal)
					}
				}
			})
		}
	}
}
