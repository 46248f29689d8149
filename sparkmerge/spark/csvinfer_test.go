package spark

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expected types follow Spark 4.0's CSVInferSchema; the integration
// test TestLocalCSVInferenceMatchesSpark checks the same cases against a
// real server.
func TestInferCSV(t *testing.T) {
	tests := []struct {
		name, csv, want string
	}{
		{"ints", "a,b\n1,-2\n+3,007\n", "a int, b int"},
		{"int bounds", "a,b\n2147483647,-2147483648\n", "a int, b int"},
		{"past int", "a,b\n2147483648,-2147483649\n", "a bigint, b bigint"},
		{"int then bigint", "a\n1\n9223372036854775807\n", "a bigint"},
		{"past bigint is decimal", "a,b\n9223372036854775808,-00000000000000000009223372036854775809\n", "a decimal(19,0), b decimal(19,0)"},
		{"38 digits", "a\n" + strings.Repeat("9", 38) + "\n", "a decimal(38,0)"},
		{"39 digits is double", "a\n" + strings.Repeat("9", 39) + "\n", "a double"},
		{"decimal then int", "a\n99999999999999999999\n5\n", "a decimal(20,0)"},
		{"bigint then decimal", "a\n5000000000\n9223372036854775808\n", "a decimal(20,0)"},
		{"int then decimal", "a\n5\n9223372036854775808\n", "a decimal(19,0)"},
		{"fraction", "a,b\n1.5,2\n-0.25,3.0\n", "a double, b double"},
		{"decimal then fraction", "a\n9223372036854775808\n1.5\n", "a double"},
		{"booleans", "a,b\ntrue,FALSE\nTrue,false\n", "a boolean, b boolean"},
		{"boolean then int", "a\ntrue\n1\n", "a string"},
		{"int then boolean", "a\n1\ntrue\n", "a string"},
		{"text", "city,n\nTokyo,1\nabc,2\n", "city string, n int"},
		{"number then text", "a\n1\nx1\n", "a string"},
		{"text then number", "a\nx1\n1\n", "a string"},
		{"all null is string", "a,b\n,1\n,\n", "a string, b int"},
		{"header only", "a,b\n", "a string, b string"},
		{"repeated header lines are skipped", "a,b\n1,2\na,b\n3,4\n", "a int, b int"},
		{"crlf and empty lines", "a,b\r\n\r\n1,x\r\n\n2,y", "a int, b string"},
		{"case kept", "Id,NAME\n1,x\n", "Id int, NAME string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, why, ok := inferCSV([]byte(tt.csv), ',')
			if !ok {
				t.Fatalf("not inferred locally: %s", why)
			}
			if got := schema.String(); got != tt.want {
				t.Errorf("schema = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestInferCSVTab(t *testing.T) {
	schema, why, ok := inferCSV([]byte("a\tb\n1\tx,y\n"), '\t')
	if !ok {
		t.Fatalf("not inferred locally: %s", why)
	}
	if got, want := schema.String(), "a int, b string"; got != want {
		t.Errorf("schema = %s, want %s", got, want)
	}
}

// Anything whose inference is not certain is left to Spark.
func TestInferCSVLeavesToSpark(t *testing.T) {
	tests := []struct{ name, csv, why string }{
		{"quotes", "a,b\n\"x,y\",1\n", "quotes"},
		{"backslash", "a\nx\\y\n", "backslashes"},
		{"date", "a\n2024-01-31\n", `"a"`},
		{"timestamp", "a\n2024-01-31 10:00:00\n", `"a"`},
		{"time of day", "a\nT10:00\n", `"a"`},
		{"exponent", "a\n1e5\n", `"a"`},
		{"trailing dot", "a\n1.\n", `"a"`},
		{"padded number", "a\n 12\n", `"a"`},
		{"NaN", "a\nNaN\n", `"a"`},
		{"Infinity", "a\nInfinity\n", `"a"`},
		{"non-ASCII digits", "a\n١٢\n", `"a"`},
		{"short row", "a,b\n1\n", "width"},
		{"long row", "a,b\n1,2,3\n", "width"},
		{"empty column name", "a,,c\n1,2,3\n", "column name"},
		{"repeated column name", "id,ID\n1,2\n", "column name"},
		{"padded column name", "a, b\n1,2\n", "column name"},
		{"blank line", "a\n  \n1\n", "blanks"},
		{"lone carriage return", "a\r1\n", "carriage return"},
		{"byte order mark", "\ufeffa\n1\n", "byte order mark"},
		{"not utf-8", "a\n\xff\n", "UTF-8"},
		{"no header", "\n\n", "no header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, why, ok := inferCSV([]byte(tt.csv), ',')
			if ok {
				t.Fatalf("inferred locally as %s; want it left to Spark", schema)
			}
			if !strings.Contains(why, tt.why) {
				t.Errorf("reason %q does not mention %q", why, tt.why)
			}
		})
	}
}

func TestLocalCSVSchemaOptionsAndFiles(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csv, []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	semi := filepath.Join(dir, "semi.csv")
	if err := os.WriteFile(semi, []byte("a;b\n1;x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "a.csv.gz")
	if err := os.WriteFile(gz, []byte("not really gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte("a\n"+strings.Repeat("1\n", maxLocalInferBytes/2)), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := defaultReaderOptions("csv")
	tests := []struct {
		name    string
		path    string
		options map[string]string
		ok      bool
	}{
		{"defaults", csv, defaults, true},
		{"file: URI", "file://" + csv, defaults, true},
		{"semicolon", semi, withOption(defaults, "sep", ";"), true},
		{"mode is irrelevant", csv, withOption(defaults, "mode", "PERMISSIVE"), true},
		{"other option", csv, withOption(defaults, "nullValue", "NA"), false},
		{"odd separator", csv, withOption(defaults, "sep", "::"), false},
		{"no header", csv, withOption(defaults, "header", "false"), false},
		{"no inference", csv, withOption(defaults, "inferSchema", "false"), false},
		{"compressed", gz, defaults, false},
		{"too big", big, defaults, false},
		{"remote", "s3a://bucket/a.csv", defaults, false},
		{"missing", filepath.Join(dir, "missing.csv"), defaults, false},
		{"glob", filepath.Join(dir, "*.csv"), defaults, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, why, ok := localCSVSchema(tt.path, tt.options)
			if ok != tt.ok {
				t.Errorf("inferred locally = %v (%s), want %v", ok, why, tt.ok)
			}
		})
	}
}

func TestInferLocallySplitsReads(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.csv")
	quoted := filepath.Join(dir, "quoted.csv")
	if err := os.WriteFile(plain, []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(quoted, []byte("a,b\n1,\"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sources, err := resolveSources([]SourceSpec{{Paths: []string{plain}}, {Paths: []string{quoted}}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	reads := []*Read{newRead(sources[0]), newRead(sources[1])}
	local, remote := inferLocally(reads, nil)
	if len(local) != 1 || local[0].Paths[0] != plain || len(remote) != 1 || remote[0].Paths[0] != quoted {
		t.Fatalf("local %v, remote %v: want plain.csv local and quoted.csv remote", local, remote)
	}
	r := local[0]
	if !r.InferredLocally || r.Schema.String() != "a int, b string" {
		t.Errorf("local read: inferred %v, schema %s", r.InferredLocally, r.Schema)
	}
	// Spark checks each file's header against the names inferred here.
	if r.Options["enforceSchema"] != "false" {
		t.Errorf("options %v: want enforceSchema=false", r.Options)
	}
	if remote[0].InferredLocally || remote[0].Options["enforceSchema"] != "" {
		t.Errorf("remote read changed: %+v", remote[0])
	}
}

// The client reads at most a budget of bytes; later files go to Spark.
func TestInferLocallyBudget(t *testing.T) {
	dir := t.TempDir()
	var reads []*Read
	for _, name := range []string{"a.csv", "b.csv", "c.csv"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("id\n1\n"), 0o644); err != nil { // 5 bytes
			t.Fatal(err)
		}
		sources, err := resolveSources([]SourceSpec{{Paths: []string{p}}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, newRead(sources[0]))
	}
	local, remote := inferLocallyWithin(reads, nil, 12)
	if len(local) != 2 || len(remote) != 1 || filepath.Base(remote[0].Paths[0]) != "c.csv" {
		t.Fatalf("local %d, remote %d (%v): want a.csv and b.csv local within 12 bytes, c.csv to Spark", len(local), len(remote), remote)
	}
}

func TestShortNumbers(t *testing.T) {
	for data, want := range map[string]bool{
		"id,v\n1,900719925474099\n":     true,  // 15 digits
		"id,v\n1,9007199254740993\n":    false, // 16
		"{\"v\":1.2345678901234567}\n":  false, // 17 digits after the point
		"id,v\n123,x4567890123456789\n": false, // digits of text count too
		"":                              true,
	} {
		if got := shortNumbers([]byte(data)); got != want {
			t.Errorf("shortNumbers(%q) = %v, want %v", data, got, want)
		}
	}
}
