package infer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sparkCorpus holds tricky CSV and JSON-lines files, with Spark's own
// schema of each read alone recorded next to them
// (scripts/record-spark-schemas.sh; the integration suite checks that the
// record is still Spark's answer).
const sparkCorpus = "testdata/spark"

// The rules agree with Spark on every file they accept: where they do not
// refuse a file (leaving it to Spark), their schema is the one Spark
// recorded, name for name and type for type.
// Each line's rules are held to that line's record.
func TestRulesAgreeWithSparksRecordedSchemas(t *testing.T) {
	for _, line := range Known() {
		t.Run("Spark "+line, func(t *testing.T) {
			rules, _ := RulesFor(line)
			rulesAgreeWithRecord(t, rules)
		})
	}
}

func rulesAgreeWithRecord(t *testing.T, rules Rules) {
	data, err := os.ReadFile(filepath.Join(sparkCorpus, "schemas-"+rules.Version()+".json"))
	if err != nil {
		t.Fatalf("no recorded schemas of Spark %s (scripts/record-spark-schemas.sh on that version): %v", rules.Version(), err)
	}
	var recorded map[string]struct{ Schema, Error string }
	if err := json.Unmarshal(data, &recorded); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(recorded))
	for name := range recorded {
		names = append(names, name)
	}
	sort.Strings(names)
	accepted := map[string]int{}
	for _, name := range names {
		want := recorded[name]
		path := filepath.Join(sparkCorpus, name)
		var got string
		var err error
		format := strings.TrimPrefix(filepath.Ext(name), ".")
		switch format {
		case "csv":
			var f CSVFile
			if f, err = rules.CSVFile(path, map[string]string{"header": "true", "inferSchema": "true"}); err == nil {
				got = f.Schema.String()
			}
		case "json":
			var f JSONFile
			if f, err = rules.JSONFile(path, nil); err == nil {
				schema, serr := rules.JSONSchema(f.Raw)
				got, err = schema.String(), serr
			}
		default:
			t.Fatalf("%s: not a corpus file", name)
		}
		var refused *Unsupported
		switch {
		case errors.As(err, &refused):
			t.Logf("%s: left to Spark (%v)", name, err)
		case err != nil:
			t.Errorf("%s: %v, want a schema or an Unsupported refusal", name, err)
		case want.Error != "":
			t.Errorf("%s: the rules give %s where Spark fails with %s", name, got, want.Error)
		case got != want.Schema:
			t.Errorf("%s: the rules give\n\t%s\nSpark gives\n\t%s", name, got, want.Schema)
		default:
			accepted[format]++
		}
	}
	t.Logf("agreed with Spark on %d CSV and %d JSON files of %d", accepted["csv"], accepted["json"], len(names))
	// A refusal is always safe, so a rule change that refuses more would
	// pass unseen: the rules must keep taking what they took when the
	// corpus was recorded.
	const tookCSV, tookJSON = 34, 19
	if accepted["csv"] < tookCSV || accepted["json"] < tookJSON {
		t.Errorf("the rules took %d CSV and %d JSON files, want at least %d and %d as when recorded", accepted["csv"], accepted["json"], tookCSV, tookJSON)
	}
}
