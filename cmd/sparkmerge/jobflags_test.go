package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

const jobYAML = `
remote: sc://spark.example:15002
strategy: union
format: csv
options:
  sep: ";"
  header: "true"
sources:
  - name: old
    path: /data/old.csv
    options:
      sep: ","
  - paths: [/data/a.json, /data/b.json]
    format: json
    options:
      multiLine: "true"
  - table: lake.events
  - path: /data/typed.csv
    schema: "id bigint, name string"
  - name: recent
    query: SELECT * FROM lake.events WHERE day > '2024-01-01'
policy:
  types: strict
  missing: fail
  order: sorted
  case_sensitive: true
  normalize: [trim, snake_case]
  renames:
    hight: height
  source_column: _src
  reference: source:old
  drop_extra: true
target:
  path: /out/merged
  format: orc
  mode: overwrite
  partition_by: [year]
  options:
    compression: zstd
  evolve: true
verify: true
`

const jobJSON = `{
  "remote": "sc://spark.example:15002",
  "strategy": "union",
  "format": "csv",
  "options": {"sep": ";", "header": "true"},
  "sources": [
    {"name": "old", "path": "/data/old.csv", "options": {"sep": ","}},
    {"paths": ["/data/a.json", "/data/b.json"], "format": "json", "options": {"multiLine": "true"}},
    {"table": "lake.events"},
    {"path": "/data/typed.csv", "schema": "id bigint, name string"},
    {"name": "recent", "query": "SELECT * FROM lake.events WHERE day > '2024-01-01'"}
  ],
  "policy": {
    "types": "strict", "missing": "fail", "order": "sorted", "case_sensitive": true,
    "normalize": ["trim", "snake_case"], "renames": {"hight": "height"},
    "source_column": "_src", "reference": "source:old", "drop_extra": true
  },
  "target": {"path": "/out/merged", "format": "orc", "mode": "overwrite",
             "partition_by": ["year"], "options": {"compression": "zstd"}, "evolve": true},
  "verify": true
}`

// wantFileJob is the job both files describe, with no flags given.
func wantFileJob() spark.Job {
	return spark.Job{
		Sources: []spark.SourceSpec{
			{Name: "old", Paths: []string{"/data/old.csv"}, Options: map[string]string{"sep": ","}},
			{Paths: []string{"/data/a.json", "/data/b.json"}, Format: "json", Options: map[string]string{"multiLine": "true"}},
			{Table: "lake.events"},
			{Paths: []string{"/data/typed.csv"}, Schema: "id bigint, name string"},
			{Name: "recent", Query: "SELECT * FROM lake.events WHERE day > '2024-01-01'"},
		},
		Format:        "csv",
		ReaderOptions: map[string]string{"sep": ";", "header": "true"},
		Policy: sparkmerge.Options{
			Types:           sparkmerge.TypesStrict,
			Missing:         sparkmerge.MissingFail,
			Order:           sparkmerge.OrderSorted,
			CaseSensitive:   true,
			Normalize:       sparkmerge.NormalizeTrim | sparkmerge.NormalizeSnakeCase,
			Renames:         map[string]string{"hight": "height"},
			SourceColumn:    "_src",
			ReferenceSource: "old",
			DropExtra:       true,
		},
		Strategy:    spark.StrategyUnion,
		Parallelism: 8,
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// parseJobFlags registers the job flags on a fresh flag set with their
// defaults, parses flagArgs, and returns the flags, the positional
// arguments and the flag set's own record of what was typed.
func parseJobFlags(t *testing.T, flagArgs ...string) (*jobFlags, []string, func(string) bool) {
	t.Helper()
	var f jobFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(flagArgs); err != nil {
		t.Fatal(err)
	}
	return &f, fs.Args(), fs.Changed
}

func TestBuildJobFromFile(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"job.yaml", jobYAML},
		{"job.json", jobJSON},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.name, tt.content)
			f, args, changed := parseJobFlags(t, "-f", path)
			job, jf, err := f.buildJob(args, changed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantFileJob(), job); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}
			wantTarget := spark.Target{Path: "/out/merged", Format: "orc", Mode: "overwrite", PartitionBy: []string{"year"},
				Options: map[string]string{"compression": "zstd"}, Evolve: true}
			if diff := cmp.Diff(wantTarget, jf.Target); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			if jf.Remote != "sc://spark.example:15002" || !jf.Verify {
				t.Errorf("remote = %q, verify = %v; want the file's values", jf.Remote, jf.Verify)
			}
		})
	}
}

func TestBuildJobFlagsOverrideFile(t *testing.T) {
	path := writeFile(t, "job.yaml", jobYAML)
	f, args, changed := parseJobFlags(t, "-f", path,
		"--strategy", "multipath",
		"--format", "json",
		"--option", "sep=|", "--option", "encoding=latin1",
		"--types", "widen",
		"--missing", "fill",
		"--order", "first-seen",
		"--case-sensitive=false",
		"--normalize", "lower",
		"--rename", "hight=tide_height",
		"--source-column", "origin",
		"--reference", "id bigint",
		"--drop-extra=false",
		"--schema", "x int",
		"--parallelism", "3",
		"--spark-inference",
		"--fetch-limit", "0",
		"/data/extra.csv", "table:db.more",
	)
	job, _, err := f.buildJob(args, changed)
	if err != nil {
		t.Fatal(err)
	}
	want := wantFileJob()
	want.Strategy = spark.StrategyMultipath
	want.Format = "json"
	want.ReaderOptions = map[string]string{"sep": "|", "header": "true", "encoding": "latin1"}
	want.Parallelism = 3
	want.SparkInference = true
	want.FetchLimit = -1 // none
	// Positional sources follow the file's; --schema fills in only path
	// sources without a schema of their own.
	want.Sources = append(want.Sources,
		spark.SourceSpec{Paths: []string{"/data/extra.csv"}},
		spark.SourceSpec{Table: "db.more"},
	)
	for i := range want.Sources {
		if len(want.Sources[i].Paths) > 0 && want.Sources[i].Schema == "" {
			want.Sources[i].Schema = "x int"
		}
	}
	ref, err := sparkmerge.ParseSchema("id bigint")
	if err != nil {
		t.Fatal(err)
	}
	want.Policy = sparkmerge.Options{
		Types:         sparkmerge.TypesWiden,
		Missing:       sparkmerge.MissingFill,
		Order:         sparkmerge.OrderFirstSeen,
		CaseSensitive: false,
		Normalize:     sparkmerge.NormalizeLower,
		Renames:       map[string]string{"hight": "tide_height"},
		SourceColumn:  "origin",
		Reference:     &ref,
		DropExtra:     false,
	}
	if diff := cmp.Diff(want, job); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
}

// TestBuildJobOnlyTypedFlagsOverride pins that the decision is made by
// changed, not by comparing with defaults: a flag whose value differs from
// its default but that the user did not type must not beat the file.
func TestBuildJobOnlyTypedFlagsOverride(t *testing.T) {
	path := writeFile(t, "job.yaml", jobYAML)
	f, _, _ := parseJobFlags(t)
	f.file = path
	f.types = "string"
	f.strategy = "multipath"
	f.sourceColumn = "flag_col"
	typed := map[string]bool{"strategy": true}
	job, _, err := f.buildJob(nil, func(name string) bool { return typed[name] })
	if err != nil {
		t.Fatal(err)
	}
	if job.Policy.Types != sparkmerge.TypesStrict {
		t.Errorf("types = %v, want the file's strict (flag not typed)", job.Policy.Types)
	}
	if job.Policy.SourceColumn != "_src" {
		t.Errorf("source column = %q, want the file's _src (flag not typed)", job.Policy.SourceColumn)
	}
	if job.Strategy != spark.StrategyMultipath {
		t.Errorf("strategy = %v, want the typed flag's multipath", job.Strategy)
	}
}

func TestBuildJobDefaults(t *testing.T) {
	f, args, changed := parseJobFlags(t, "a.csv", "table:db.t")
	job, _, err := f.buildJob(args, changed)
	if err != nil {
		t.Fatal(err)
	}
	want := spark.Job{
		Sources:     []spark.SourceSpec{{Paths: []string{"a.csv"}}, {Table: "db.t"}},
		Strategy:    spark.StrategyAuto,
		Parallelism: 8,
	}
	if diff := cmp.Diff(want, job); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
}

func TestBuildJobReference(t *testing.T) {
	for _, tt := range []struct {
		ref        string
		wantSource string
		wantTable  string
		wantDDL    bool
	}{
		{"source:old", "old", "", false},
		{"table:lake.ref", "", "lake.ref", false},
		{"id bigint, name string", "", "", true},
	} {
		t.Run(tt.ref, func(t *testing.T) {
			f, args, changed := parseJobFlags(t, "--reference", tt.ref, "a.csv")
			job, _, err := f.buildJob(args, changed)
			if err != nil {
				t.Fatal(err)
			}
			if job.Policy.ReferenceSource != tt.wantSource || job.ReferenceTable != tt.wantTable || (job.Policy.Reference != nil) != tt.wantDDL {
				t.Errorf("reference source %q, table %q, schema %v; want %q, %q, schema set %v",
					job.Policy.ReferenceSource, job.ReferenceTable, job.Policy.Reference, tt.wantSource, tt.wantTable, tt.wantDDL)
			}
		})
	}
}

func TestBuildJobFileErrors(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                []string
	}{
		{"unknown top-level key", "job.yaml", "sources: [{path: a.csv}]\nstrategyy: union\n", []string{"strategyy"}},
		{"unknown source key", "job.yaml", "sources:\n  - path: a.csv\n    opts: {sep: ';'}\n", []string{"opts"}},
		{"unknown policy key", "job.yaml", "sources: [{path: a.csv}]\npolicy:\n  type: strict\n", []string{"type"}},
		{"unknown key in JSON", "job.json", `{"sources": [{"path": "a.csv"}], "verfy": true}`, []string{"verfy"}},
		{"source without path or table", "job.yaml", "sources:\n  - name: x\n", []string{"source 1", "path", "table"}},
		{"bad policy value", "job.yaml", "sources: [{path: a.csv}]\npolicy:\n  types: loose\n", []string{"job.yaml", "types", "loose", "widen"}},
		{"source with a path and a table", "job.yaml", "sources:\n  - {path: a.csv, table: t}\n", []string{"source 1", "one of"}},
		{"source with a table and a query", "job.yaml", "sources:\n  - {table: t, query: 'SELECT 1'}\n", []string{"source 1", "query"}},
		{"not a mapping", "job.yaml", "- a.csv\n", []string{"job file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.content)
			f, args, changed := parseJobFlags(t, "-f", path)
			_, _, err := f.buildJob(args, changed)
			var usage *usageError
			if !errors.As(err, &usage) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestRunJobFileUnknownKey checks the exit code a user sees for a typo in
// a job file.
func TestRunJobFileUnknownKey(t *testing.T) {
	path := writeFile(t, "job.yaml", "sources: [{path: a.csv}]\ntarget: {path: /tmp/o, partiton_by: [y]}\n")
	code, _, stderr := runCLI(t, nil, "merge", "-f", path, "--remote", "sc://127.0.0.1:1")
	if code != exitUsage {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
	if !strings.Contains(stderr, "partiton_by") || !strings.Contains(stderr, path) {
		t.Errorf("stderr does not name the unknown key and the file:\n%s", stderr)
	}
}

func TestParseKeyValues(t *testing.T) {
	got, err := parseKeyValues("option", []string{"sep=;", " header =true", "nullValue=", "a=b=c"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sep": ";", "header": "true", "nullValue": "", "a": "b=c"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRunJobFileRemote checks that every command connects to the job
// file's remote when --remote is not given, and that --remote wins.
func TestRunJobFileRemote(t *testing.T) {
	fileAddr := "127.0.0.1:" + strconv.Itoa(closedPort(t))
	flagAddr := "127.0.0.1:" + strconv.Itoa(closedPort(t))
	path := writeFile(t, "job.yaml", "remote: sc://"+fileAddr+"\nsources: [{path: a.csv}]\ntarget: {path: /tmp/o}\n")
	for _, cmd := range []string{"plan", "merge", "schema"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			args := []string{cmd, "-f", path}
			if cmd == "schema" {
				args = append(args, "b.csv") // schema wants a positional source
			}
			code, _, stderr := runCLI(t, nil, args...)
			if code != exitUnreachable || !strings.Contains(stderr, fileAddr) {
				t.Errorf("exit code %d, stderr:\n%s\nwant exit %d naming the file's remote %s", code, stderr, exitUnreachable, fileAddr)
			}
			code, _, stderr = runCLI(t, nil, append(args, "--remote", "sc://"+flagAddr)...)
			if code != exitUnreachable || !strings.Contains(stderr, flagAddr) {
				t.Errorf("with --remote: exit code %d, stderr:\n%s\nwant exit %d naming the flag's remote %s", code, stderr, exitUnreachable, flagAddr)
			}
		})
	}
}

// TestIncrementalUsage: what --incremental cannot take is a usage error,
// said before any server is asked, from flags and from a job file.
func TestIncrementalUsage(t *testing.T) {
	job := func(s string) string { return writeFile(t, "job.yaml", s) }
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"overwrite", []string{"merge", "a.csv", "--out", "/tmp/o", "--incremental", "/tmp/s", "--mode", "overwrite"}, []string{"--mode overwrite", "drop --mode"}},
		{"changed without state", []string{"merge", "a.csv", "--out", "/tmp/o", "--incremental-changed", "remerge"}, []string{"needs --incremental STATE"}},
		{"unknown changed policy", []string{"merge", "a.csv", "--out", "/tmp/o", "--incremental", "/tmp/s", "--incremental-changed", "again"}, []string{"--incremental-changed", "error, remerge, skip"}},
		{"view", []string{"merge", "a.csv", "--view", "v", "--incremental", "/tmp/s"}, []string{"--incremental", "--view"}},
		{"lease without state", []string{"merge", "a.csv", "--out", "/tmp/o", "--incremental-lease", "1h"}, []string{"--incremental-lease needs --incremental STATE"}},
		{"lease no duration", []string{"merge", "a.csv", "--out", "/tmp/o", "--incremental", "/tmp/s", "--incremental-lease", "soon"}, []string{"--incremental-lease soon", "10m or 1h"}},
		{"job file lease no duration", []string{"merge", "-f", job("sources: [{path: a.csv}]\ntarget: {path: /tmp/o}\nincremental:\n  state: /tmp/s\n  lease: -5m\n")}, []string{"--incremental-lease -5m"}},
		{"new state without state", []string{"merge", "a.csv", "--out", "/tmp/o", "--incremental-new-state"}, []string{"--incremental-new-state needs --incremental STATE"}},
		{"job file new state without state", []string{"merge", "-f", job("sources: [{path: a.csv}]\ntarget: {path: /tmp/o}\nincremental:\n  new_state: true\n")}, []string{"--incremental-new-state needs --incremental STATE"}},
		{"job file key", []string{"merge", "-f", job("sources: [{path: a.csv}]\ntarget: {path: /tmp/o}\nincremental:\n  stat: /tmp/s\n")}, []string{`unknown key "stat" in incremental; did you mean state?`}},
		{"job file mode", []string{"merge", "-f", job("sources: [{path: a.csv}]\ntarget: {path: /tmp/o, mode: overwrite}\nincremental:\n  state: /tmp/s\n")}, []string{"--mode overwrite"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, append(tc.args, "--remote", "sc://127.0.0.1:1")...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (usage); stderr:\n%s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestDryRunOfAJobFileThatVerifies: a job file's verify: true is for its
// runs, so --dry-run of it is no usage error (it was: "--verify counts
// the rows a merge writes and --dry-run writes none"); --verify given with
// --dry-run still is.
func TestDryRunOfAJobFileThatVerifies(t *testing.T) {
	path := writeFile(t, "job.yaml", "sources: [{path: a.csv}]\ntarget: {path: /tmp/o}\nverify: true\n")
	code, _, stderr := runCLI(t, nil, "merge", "-f", path, "--dry-run", "--remote", "sc://127.0.0.1:1")
	if code == exitUsage || strings.Contains(stderr, "--dry-run writes none") {
		t.Errorf("exit %d, want past the usage checks (to connecting); stderr:\n%s", code, stderr)
	}
	code, _, _ = runCLI(t, nil, "merge", "-f", path, "--dry-run", "--verify", "--remote", "sc://127.0.0.1:1")
	if code != exitUsage {
		t.Errorf("--dry-run --verify: exit %d, want %d (usage)", code, exitUsage)
	}
}

// --fetch-limit takes Spark's sizes and KiB to TiB; 0 fetches no file
// whole (a job's negative limit), and a bad size is a usage error that
// shows good ones.
func TestFetchLimitFlag(t *testing.T) {
	for _, c := range []struct {
		flag string
		want int64
	}{{"64MiB", 64 << 20}, {"512m", 512 << 20}, {"1g", 1 << 30}, {"100kb", 100 << 10}, {"4096", 4096}, {"0", -1}} {
		f, args, changed := parseJobFlags(t, "--fetch-limit", c.flag, "a.csv")
		job, _, err := f.buildJob(args, changed)
		if err != nil {
			t.Fatalf("--fetch-limit %s: %v", c.flag, err)
		}
		if job.FetchLimit != c.want {
			t.Errorf("--fetch-limit %s: FetchLimit %d, want %d", c.flag, job.FetchLimit, c.want)
		}
	}
	for _, bad := range []string{"lots", "-1", "5 apples", "MiB"} {
		f, args, changed := parseJobFlags(t, "--fetch-limit", bad, "a.csv")
		_, _, err := f.buildJob(args, changed)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--fetch-limit") || !strings.Contains(err.Error(), "64MiB") {
			t.Errorf("--fetch-limit %q: err = %v, want a usage error naming the flag and a good size", bad, err)
		}
	}
}
