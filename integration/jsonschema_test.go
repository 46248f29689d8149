//go:build integration

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateJSON checks that out is one JSON document valid under the
// committed schema docs/schemas/<name>.json.
func validateJSON(t *testing.T, name, out string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	for _, f := range []string{"defs", name} {
		file, err := os.Open(filepath.Join("..", "docs", "schemas", f+".json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(file)
		file.Close()
		if err != nil {
			t.Fatalf("schema %s: %v", f, err)
		}
		if err := c.AddResource("https://sparkmerge.dev/schemas/"+f+".json", doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile("https://sparkmerge.dev/schemas/" + name + ".json")
	if err != nil {
		t.Fatalf("compile schema %s: %v", name, err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("not one JSON document (%v):\n%s", err, out)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("output does not follow docs/schemas/%s.json: %v\n%s", name, err, out)
	}
}

// TestCLIJSONOutputsFollowSchemas runs every command with -o json against
// Spark and validates each document against its committed JSON Schema:
// plan (and --emit sql), merge (verified, with rows shown; to a view),
// schema, version with a server that answers, and an error Spark raised.
func TestCLIJSONOutputsFollowSchemas(t *testing.T) {
	t.Parallel()
	tides := filepath.Join(testdataRoot, "tides")
	out := filepath.Join(workDir(t), "tides")
	for _, tc := range []struct {
		schema string
		args   []string
		code   int
	}{
		{"plan", []string{"plan", tides, "--source-column", "_source"}, 0},
		{"plan", []string{"plan", tides, "--emit", "sql"}, 0},
		{"plan", []string{"merge", tides, "--out", out, "--dry-run"}, 0},
		{"merge", []string{"merge", tides, "--out", out, "--source-column", "_source", "--verify", "--show", "3"}, 0},
		{"merge", []string{"merge", tides, "--view", "tides_json_test"}, 0},
		{"schema", []string{"schema", filepath.Join(tides, "TestFile1.csv"), filepath.Join(tides, "TestFile2.csv")}, 0},
		{"version", []string{"version"}, 0},
		{"error", []string{"plan", filepath.Join(tides, "no-such-file.csv")}, 1},
	} {
		t.Run(strings.Join(tc.args[:min(2, len(tc.args))], " "), func(t *testing.T) {
			code, stdout, stderr := cliRun(t, append(tc.args, "-o", "json")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, stderr)
			}
			validateJSON(t, tc.schema, stdout)
			switch tc.schema {
			case "version":
				if !strings.Contains(stdout, `"reachable":true`) || !strings.Contains(stdout, `"spark_version":"4.`) {
					t.Errorf("version did not report the server's Spark version: %s", stdout)
				}
			case "error":
				if !strings.Contains(stdout, `"class":"PATH_NOT_FOUND"`) {
					t.Errorf("the error document lacks Spark's class: %s", stdout)
				}
			}
		})
	}
}
