//go:build integration

package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

// jsonInferenceCases are JSON-lines files whose schema the client infers
// itself (local: true) or leaves to Spark.
var jsonInferenceCases = []struct {
	name, content string
	local         bool
}{
	{"scalars.json", `{"b":1,"a":"x","c":true,"d":1.5,"e":1e3}`, true},
	{"integers.json", `{"a":9223372036854775807,"b":9223372036854775808,"c":` + strings.Repeat("9", 39) + `,"d":-5}`, true},
	{"widening.json", "{\"a\":1,\"b\":1,\"c\":true,\"d\":1}\n{\"a\":2.5,\"b\":99999999999999999999,\"c\":1,\"d\":\"x\"}", true},
	{"nulls.json", "{\"a\":null,\"b\":\"\",\"c\":\"\"}\n{\"c\":3}", true},
	{"nested.json", "{\"s\":{\"y\":1},\"l\":[1,2.5],\"empty\":[],\"o\":[{\"k\":1},{\"j\":true}]}\n{\"s\":{\"x\":\"q\",\"y\":2.0}}", true},
	{"empty-structs.json", `{"a":{},"b":1,"c":[{}]}`, true},
	{"struct-then-scalar.json", "{\"a\":{\"x\":1}}\n{\"a\":1}", true},
	{"crlf.json", "{\"a\":1}\r\n\r\n{\"b\":2}", true},
	// Left to Spark.
	{"nan.json", `{"a":NaN,"b":1}`, false},
	{"single-quotes.json", `{'a':1}`, false},
}

// TestLocalJSONInferenceMatchesSpark plans JSON files with local inference
// and with Spark's, on the real server: every file's schema must be the
// same, and auto's merge (files grouped where that reads each exactly) must
// be the merge of each file read alone.
func TestLocalJSONInferenceMatchesSpark(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	dir := workDir(t)
	files := map[string]string{}
	var names []string
	for _, tc := range jsonInferenceCases {
		files[tc.name] = tc.content + "\n"
		names = append(names, tc.name)
	}
	paths := writeFiles(t, dir, files, names...)
	plan := func(strategy spark.Strategy, sparkInference bool) *spark.Planned {
		t.Helper()
		p, err := c.Plan(context.Background(), spark.Job{Sources: pathSources(paths...), Strategy: strategy, SparkInference: sparkInference})
		if err != nil {
			t.Fatalf("plan (%v, Spark inference %v): %v", strategy, sparkInference, err)
		}
		return p
	}
	local, remote := plan(spark.StrategyUnion, false), plan(spark.StrategyUnion, true)
	for i, tc := range jsonInferenceCases {
		l, r := local.Reads[i], remote.Reads[i]
		if filepath.Base(l.Paths[0]) != tc.name || filepath.Base(r.Paths[0]) != tc.name {
			t.Fatalf("read %d is %s / %s, want %s", i, l.Paths[0], r.Paths[0], tc.name)
		}
		if l.InferredLocally != tc.local {
			t.Errorf("%s: inferred locally = %v, want %v", tc.name, l.InferredLocally, tc.local)
		}
		if !l.Schema.Equal(r.Schema) {
			t.Errorf("%s: client infers %s, Spark %s", tc.name, l.Schema, r.Schema)
		}
	}

	// auto: files whose types agree form groups, and the merge is the
	// merge of each file read alone by Spark, value for value.
	local, remote = plan(spark.StrategyAuto, false), plan(spark.StrategyAuto, true)
	grouped := 0
	for _, r := range local.Reads {
		if len(r.Paths) > 1 && r.InferredLocally {
			grouped++
		}
	}
	if grouped == 0 {
		t.Errorf("auto grouped no locally inferred files: %v", describeReads(local))
	}
	// nulls.json's c holds "" and 3: Spark types it bigint and then, under
	// FAILFAST, cannot read "" as one. Every path must fail on it, not
	// null the value.
	var readable []string
	for _, p := range paths {
		if filepath.Base(p) == "nulls.json" {
			for _, sparkInference := range []bool{false, true} {
				_, err := c.Merge(context.Background(), spark.Job{Sources: pathSources(p), SparkInference: sparkInference, Target: spark.Target{Path: filepath.Join(workDir(t), "out")}})
				if err == nil {
					t.Errorf("nulls.json (Spark inference %v) merged; Spark alone cannot read it under FAILFAST", sparkInference)
				}
			}
			continue
		}
		readable = append(readable, p)
	}
	_, auto := merge(t, c, spark.Job{Sources: pathSources(readable...), Strategy: spark.StrategyAuto, Verify: true})
	_, alone := merge(t, c, spark.Job{Sources: pathSources(readable...), Strategy: spark.StrategyUnion, SparkInference: true, Verify: true})
	newOracle(alone).sameAs(t, c, auto, nil, "", "")
	t.Logf("auto reads, local: %v", describeReads(local))
	t.Logf("auto reads, Spark: %v", describeReads(remote))
}
