//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark"
)

var updateInferGolden = flag.Bool("update-infer-golden", false, "record Spark's schemas of the inference corpus into its golden file (scripts/record-spark-schemas.sh)")

// inferCorpus holds tricky CSV and JSON-lines files; its golden file says
// what Spark makes of each read alone, and the unit tests of package infer
// hold the client's inference to it.
const inferCorpus = "../sparkmerge/spark/internal/infer/testdata/spark"

// inferGolden is the golden file for the server's Spark version, by its
// major.minor (the rules' version: inference does not change in patches).
func inferGolden(version string) string {
	if parts := strings.SplitN(version, ".", 3); len(parts) >= 2 {
		version = parts[0] + "." + parts[1]
	}
	return filepath.Join(inferCorpus, "schemas-"+version+".json")
}

// sparkSchemas is a golden file: per file, Spark's schema of it read
// alone with sparkmerge's reader options (header and inferSchema for CSV,
// FAILFAST), or the error class of a read Spark refuses.
type sparkSchemas map[string]struct {
	Schema string `json:"schema,omitempty"`
	Error  string `json:"error,omitempty"`
}

// The golden file is Spark's own answer: every file of the corpus, read
// alone by the test run's Spark, gets exactly the recorded schema.
func TestInferGoldenIsSparks(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	version := c.SparkVersion()
	entries, err := os.ReadDir(inferCorpus)
	if err != nil {
		t.Fatal(err)
	}
	dir := workDir(t)
	got := sparkSchemas{}
	var names []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		// Not the golden files, of this version or another.
		if ext != ".csv" && ext != ".json" || strings.HasPrefix(e.Name(), "schemas-") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(inferCorpus, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, e.Name())
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
		schemas, err := c.Schemas(context.Background(), spark.Job{Sources: pathSources(path)})
		entry := got[e.Name()]
		switch {
		case err != nil:
			var se *spark.SparkError
			if !errors.As(err, &se) {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			entry.Error = se.ErrorClass
			if entry.Error == "" {
				// Spark 3.5 fails some reads with no error class
				// (malformed JSON in schema inference): the
				// exception's class stands in, so that a failure is
				// never recorded as an empty schema.
				entry.Error = "no error class: " + se.Reason
			}
		case len(schemas) != 1:
			t.Fatalf("%s: %d schemas", e.Name(), len(schemas))
		default:
			entry.Schema = schemas[0].Schema.String()
		}
		got[e.Name()] = entry
	}
	sort.Strings(names)
	golden := inferGolden(version)
	if *updateInferGolden {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // array<bigint> as written
		enc.SetIndent("", "  ")
		if err := enc.Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d schemas of Spark %s in %s", len(got), version, golden)
		return
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("no golden file for Spark %s (record it with scripts/record-spark-schemas.sh): %v", version, err)
	}
	var want sparkSchemas
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if want[name] != got[name] {
			t.Errorf("%s: Spark %s gives %+v, the golden file says %+v (re-record with scripts/record-spark-schemas.sh if Spark changed)", name, version, got[name], want[name])
		}
	}
	if len(want) != len(names) {
		t.Errorf("the golden file has %d entries, the corpus %d files: re-record it", len(want), len(names))
	}
}
