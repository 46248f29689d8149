package main

import (
	"encoding/json"
	"fmt"
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
	dir, err := filepath.Abs("../../docs/schemas")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"defs", name} {
		doc, err := jsonschema.UnmarshalJSON(openFile(t, filepath.Join(dir, f+".json")))
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

// The outputs a unit test can make for real: version (with a server that
// does not answer) and error documents of every kind, each valid under its
// committed schema; and the schemas catch what the contract forbids.
func TestJSONOutputsFollowSchemas(t *testing.T) {
	unreachable := fmt.Sprintf("sc://127.0.0.1:%d", closedPort(t))
	_, out, _ := runCLI(t, nil, "version", "-o", "json", "--remote", unreachable)
	validateJSON(t, "version", out)
	_, out, _ = runCLI(t, nil, "version", "-o", "json", "--offline")
	validateJSON(t, "version", out)
	for _, args := range [][]string{
		{"merge", "a.csv", "--out", "/tmp/o", "--types", "widn"},
		{"plan", "a.csv", "--remote", unreachable},
		{"schema", "a.csv", "--bogus"},
	} {
		_, out, _ := runCLI(t, nil, append(args, "-o", "json")...)
		validateJSON(t, "error", out)
	}
}

// The schemas refuse what the contract rules out: Go field names, the
// JSON schema form's type names, a null boolean.
func TestJSONSchemasRefuseOldForms(t *testing.T) {
	for name, doc := range map[string]string{
		"Go field names":        `[{"Name":"a.csv","schema":[]}]`,
		"JSON type names":       `[{"name":"a.csv","schema":[{"name":"id","type":"integer","nullable":true}]}]`,
		"a null boolean":        `[{"name":"a.csv","schema":[{"name":"id","type":"int","nullable":null}]}]`,
		"a column without type": `[{"name":"a.csv","schema":[{"name":"id","nullable":true}]}]`,
	} {
		t.Run(name, func(t *testing.T) {
			c := jsonschema.NewCompiler()
			for _, f := range []string{"defs", "schema"} {
				d, err := jsonschema.UnmarshalJSON(openFile(t, filepath.Join("../../docs/schemas", f+".json")))
				if err != nil {
					t.Fatal(err)
				}
				if err := c.AddResource("https://sparkmerge.dev/schemas/"+f+".json", d); err != nil {
					t.Fatal(err)
				}
			}
			sch, err := c.Compile("https://sparkmerge.dev/schemas/schema.json")
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if sch.Validate(v) == nil {
				t.Errorf("docs/schemas/schema.json accepts %s", doc)
			}
		})
	}
}

func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
