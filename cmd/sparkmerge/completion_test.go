package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete asks the CLI for completions as a shell does (cobra's hidden
// __complete command) and returns them, without the directive line.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, stdout, stderr := runCLI(t, nil, append([]string{"__complete"}, args...)...)
	if code != exitOK {
		t.Fatalf("__complete %v: exit %d: %s", args, code, stderr)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line != "" && !strings.HasPrefix(line, ":") {
			out = append(out, line)
		}
	}
	return out
}

// Every enumerated flag completes to its values, not to file names.
func TestCompletionOfValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"merge", "--strategy", ""}, []string{"auto", "union", "multipath"}},
		{[]string{"merge", "--types", ""}, []string{"widen", "strict", "string"}},
		{[]string{"plan", "--missing", ""}, []string{"fill", "fail", "intersect", "reference"}},
		{[]string{"plan", "--order", ""}, []string{"first-seen", "sorted", "reference"}},
		{[]string{"merge", "--mode", ""}, []string{"errorifexists", "overwrite", "append", "ignore"}},
		{[]string{"merge", "--out-format", ""}, []string{"parquet", "csv", "json", "orc", "text", "avro", "delta", "noop", "xml"}},
		{[]string{"schema", "--format", ""}, []string{"csv", "json", "parquet", "orc", "text", "avro", "xml"}},
		{[]string{"plan", "--emit", ""}, []string{"plan", "sql"}},
		{[]string{"plan", "-o", ""}, []string{"text", "json"}},
		{[]string{"version", "--output", ""}, []string{"text", "json"}},
		// A list completes its last item.
		{[]string{"plan", "--normalize", "trim,"}, []string{"trim,trim", "trim,lower", "trim,snake_case", "trim,none"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got := complete(t, tc.args...)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("completions %q lack %q", got, w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("completions %q, want %q", got, tc.want)
			}
		})
	}
	// Sources are file names: the shell's default completion (directive 0).
	code, stdout, _ := runCLI(t, nil, "__complete", "merge", "da")
	if code != exitOK || !strings.HasSuffix(strings.TrimSpace(stdout), ":0") {
		t.Errorf("source completion: exit %d, %q, want the shell's file completion (:0)", code, stdout)
	}
	// table: sources and --table ask the server, here none: no names, no
	// file names, in about the time allowed.
	unreachable := fmt.Sprintf("sc://127.0.0.1:%d", closedPort(t))
	if got := complete(t, "merge", "--remote", unreachable, "table:lak"); len(got) != 0 {
		t.Errorf("table completion without a server: %q", got)
	}
}

// Near misses get "did you mean": unknown flags, values of enumerated
// flags (before any connection: the remote here is closed), formats, and
// keys of a job file, which are named with their line and section.
func TestSuggestions(t *testing.T) {
	unreachable := fmt.Sprintf("sc://127.0.0.1:%d", closedPort(t))
	job := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(job, []byte("sources:\n  - path: a.csv\n    formt: csv\npolicy:\n  types: widen\n  source_colum: _src\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"merge", "a.csv", "--out", "/tmp/o", "--verfy"}, []string{"unknown flag: --verfy", "did you mean --verify?"}},
		{[]string{"merge", "a.csv", "--out", "/tmp/o", "--partition", "x"}, []string{"did you mean --partition-by?"}},
		{[]string{"plan", "a.csv", "--remot", unreachable}, []string{"did you mean --remote?"}},
		{[]string{"merge", "a.csv", "--out", "/tmp/o", "--types", "widn"}, []string{`--types "widn"`, "did you mean widen?"}},
		{[]string{"merge", "a.csv", "--out", "/tmp/o", "--mode", "overwirte"}, []string{"did you mean overwrite?"}},
		{[]string{"merge", "a.csv", "--out", "/tmp/o", "--incremental", "/tmp/s", "--incremental-changed", "remerg"}, []string{"did you mean remerge?"}},
		{[]string{"merge", "a.csv", "--out", "/tmp/o", "--out-format", "parket"}, []string{`--out-format "parket"`, "did you mean parquet?"}},
		{[]string{"plan", "a.csv", "--format", "jsonl"}, []string{"did you mean json?"}},
		{[]string{"plan", "a.csv", "--normalize", "trim,lowr"}, []string{"did you mean lower?"}},
		{[]string{"plan", "-f", job}, []string{
			`line 3: unknown key "formt" in a source; did you mean format?`,
			`line 6: unknown key "source_colum" in policy; did you mean source_column?`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := tc.args
			if !slices.Contains(args, "--remot") {
				args = append(args, "--remote", unreachable)
			}
			code, _, stderr := runCLI(t, nil, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (usage): %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "main.") || strings.Contains(stderr, "unreachable") {
				t.Errorf("stderr names Go types or tried to connect:\n%s", stderr)
			}
		})
	}
	// A data source Spark may have, far from every known name, is let
	// through to Spark: here the closed remote answers.
	code, _, stderr := runCLI(t, nil, "plan", "a.csv", "--format", "com.example.geojson", "--remote", unreachable)
	if code != exitUnreachable {
		t.Errorf("--format com.example.geojson: exit %d, want %d: %s", code, exitUnreachable, stderr)
	}
}
