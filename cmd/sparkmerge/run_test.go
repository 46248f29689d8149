package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// runCLI runs the CLI in-process with an empty environment unless env is
// given, and returns the exit code and what it printed.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code = run(ctx, args, &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

// closedPort returns a loopback port nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestRunUsageErrors(t *testing.T) {
	// Every case names a remote that cannot answer: a usage error must be
	// reported before any connection is tried, so these never reach it.
	unreachable := fmt.Sprintf("sc://127.0.0.1:%d", closedPort(t))
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"unknown flag", []string{"merge", "--bogus", "a.csv", "--out", "/tmp/o"}, []string{"unknown flag: --bogus"}},
		{"unknown command", []string{"mrege", "a.csv"}, []string{`unknown command "mrege"`, "did you mean merge"}},
		{"bad --types", []string{"merge", "--types", "loose", "a.csv", "--out", "/tmp/o"}, []string{"--types", `"loose"`, "widen", "strict", "string"}},
		{"bad --missing", []string{"plan", "--missing", "nope", "a.csv"}, []string{"--missing", `"nope"`}},
		{"bad --order", []string{"plan", "--order", "random", "a.csv"}, []string{"--order", `"random"`}},
		{"bad --strategy", []string{"plan", "--strategy", "zip", "a.csv"}, []string{"--strategy", `"zip"`, "auto", "union", "multipath"}},
		{"bad --normalize", []string{"plan", "--normalize", "upper", "a.csv"}, []string{"--normalize"}},
		{"bad --rename", []string{"plan", "--rename", "noequals", "a.csv"}, []string{"--rename"}},
		{"bad --schema", []string{"plan", "--schema", "id notatype(", "a.csv"}, []string{"--schema"}},
		{"bad --reference", []string{"plan", "--missing", "reference", "--reference", "not a schema (", "a.csv"}, []string{"--reference", "source:NAME", "table:NAME"}},
		{"no sources merge", []string{"merge", "--out", "/tmp/o"}, []string{"no sources", "-f"}},
		{"no sources plan", []string{"plan"}, []string{"no sources"}},
		{"no sources schema", []string{"schema"}, []string{"requires at least 1 arg"}},
		{"both out and table", []string{"merge", "a.csv", "--out", "/tmp/o", "--table", "t"}, []string{"exactly one of --out PATH and --table NAME"}},
		{"neither out nor table", []string{"merge", "a.csv"}, []string{"exactly one of --out PATH and --table NAME"}},
		{"option without =", []string{"merge", "a.csv", "--out", "/tmp/o", "--option", "header"}, []string{"--option", `"header"`, "key=value"}},
		{"option with empty key", []string{"plan", "a.csv", "--option", "=x"}, []string{"--option", "key=value"}},
		{"write-option without =", []string{"merge", "a.csv", "--out", "/tmp/o", "--write-option", "zstd"}, []string{"--write-option", `"zstd"`, "key=value"}},
		{"bad --emit", []string{"plan", "--emit", "xyz", "a.csv"}, []string{"--emit", `"xyz"`, "plan, sql"}},
		{"bad --output", []string{"merge", "a.csv", "--out", "/tmp/o", "-o", "yaml"}, []string{"--output", `"yaml"`, "text, json"}},
		{"bad --mode", []string{"merge", "a.csv", "--out", "/tmp/o", "--mode", "replace"}, []string{"--mode", `"replace"`, "overwrite", "append"}},
		{"conf without =", []string{"plan", "a.csv", "--conf", "spark.sql.caseSensitive"}, []string{"--conf", `"spark.sql.caseSensitive"`, "key=value"}},
		{"local with remote", []string{"plan", "a.csv", "--local", "--remote", "sc://h:1"}, []string{"--local", "--remote"}},
		{"bad remote", []string{"plan", "a.csv", "--remote", "http://127.0.0.1:15002"}, []string{"--remote", "sc://"}},
		{"missing job file", []string{"plan", "-f", "/nonexistent/job.yaml"}, []string{"job file", "/nonexistent/job.yaml"}},
		{"version takes no args", []string{"version", "extra"}, []string{"unknown command"}},
		{"dry run with verify", []string{"merge", "a.csv", "--out", "/tmp/o", "--dry-run", "--verify"}, []string{"--verify", "--dry-run"}},
		{"noop with verify", []string{"merge", "a.csv", "--out-format", "noop", "--verify"}, []string{"noop keeps no rows", "--verify"}},
		{"noop with a table", []string{"merge", "a.csv", "--out-format", "noop", "--table", "t"}, []string{"noop keeps no rows", "--table"}},
		{"noop with --out", []string{"merge", "a.csv", "--out-format", "noop", "--out", "/tmp/o"}, []string{"noop keeps no rows", "--out"}},
		{"negative --files", []string{"merge", "a.csv", "--out", "/tmp/o", "--files", "-3"}, []string{"--files -3"}},
		{"negative --show", []string{"merge", "a.csv", "--out", "/tmp/o", "--show", "-1"}, []string{"--show -1"}},
		{"zero --parallelism", []string{"plan", "a.csv", "--parallelism", "0"}, []string{"--parallelism 0"}},
		{"schema with a policy flag", []string{"schema", "a.csv", "--types", "strict"}, []string{"--types", "each source's own", "plan or merge"}},
		// Spark reads an unknown mode as PERMISSIVE, nulling what does not
		// parse: refused.
		{"unknown parse mode", []string{"merge", "a.csv", "--out", "/tmp/o", "--option", "mode=STRICT"}, []string{"mode", `"STRICT"`, "FAILFAST", "PERMISSIVE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--remote") {
				args = append(args, "--remote", unreachable)
			}
			code, stdout, stderr := runCLI(t, nil, args...)
			if code != exitUsage {
				t.Errorf("exit code = %d, want %d (usage); stderr:\n%s", code, exitUsage, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "unreachable") {
				t.Errorf("a usage error tried to connect first:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing on a usage error", stdout)
			}
		})
	}
}

// With -o json a failed command prints one JSON document on stdout (the
// message also goes to stderr), with the exit code.
func TestRunJSONErrors(t *testing.T) {
	unreachable := fmt.Sprintf("sc://127.0.0.1:%d", closedPort(t))
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"merge", "a.csv", "-o", "json", "--remote", unreachable}, exitUsage},
		{[]string{"plan", "a.csv", "-o", "json", "--remote", unreachable}, exitUnreachable},
	} {
		code, stdout, stderr := runCLI(t, nil, tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.code)
		}
		var doc jsonError
		dec := json.NewDecoder(strings.NewReader(stdout))
		if err := dec.Decode(&doc); err != nil || dec.More() {
			t.Errorf("%v: stdout is not one JSON document (%v):\n%s", tt.args, err, stdout)
			continue
		}
		if doc.Error.ExitCode != tt.code || doc.Error.Message == "" || !strings.Contains(stderr, doc.Error.Message) {
			t.Errorf("%v: error document %+v; stderr %s", tt.args, doc, stderr)
		}
	}
}

// version names the build, spark-connect-go's version, and the server's
// Spark version when one answers; -o json is one document; --version is
// the first line alone, asking no server.
func TestRunVersion(t *testing.T) {
	unreachable := fmt.Sprintf("sc://127.0.0.1:%d", closedPort(t))
	code, stdout, stderr := runCLI(t, nil, "version", "--remote", unreachable)
	if code != exitOK {
		t.Fatalf("exit code = %d, stderr: %s", code, stderr)
	}
	want := readBuildInfo()
	if want.SparkConnectGo == "unknown" || !strings.HasPrefix(want.SparkConnectGo, "v") {
		t.Errorf("spark-connect-go version %q: not read from the build", want.SparkConnectGo)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || lines[0] != want.short() || !strings.Contains(lines[0], want.SparkConnectGo) ||
		!strings.HasPrefix(lines[1], "server "+unreachable+": not reached") {
		t.Errorf("stdout:\n%s\nwant %q, then the server not reached", stdout, want.short())
	}

	code, stdout, _ = runCLI(t, nil, "--version")
	if code != exitOK || stdout != want.short()+"\n" {
		t.Errorf("--version: exit %d, %q, want %q", code, stdout, want.short())
	}

	code, stdout, _ = runCLI(t, nil, "version", "--offline", "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); code != exitOK || err != nil {
		t.Fatalf("version -o json: exit %d, %v:\n%s", code, err, stdout)
	}
	if doc["spark_connect_go"] != want.SparkConnectGo || doc["version"] != want.Version || doc["server"] != nil {
		t.Errorf("version -o json --offline = %s", stdout)
	}
}

// A version and revision stamped with -ldflags -X win over what the
// toolchain recorded; a revision stamped "-dirty" says the tree was
// modified.
func TestReadBuildInfoStamped(t *testing.T) {
	defer func(v, r string) { version, revision = v, r }(version, revision)
	version, revision = "v1.2.3", "0123456789abcdef0123456789abcdef01234567-dirty"
	b := readBuildInfo()
	if b.Version != "v1.2.3" || b.Revision != "0123456789abcdef0123456789abcdef01234567" || !b.Modified {
		t.Errorf("readBuildInfo() = %+v", b)
	}
	if got := b.short(); !strings.HasPrefix(got, "sparkmerge v1.2.3 (revision 0123456789ab-dirty, go") {
		t.Errorf("short() = %q", got)
	}
}

func TestRunHelpListsCommands(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "--help")
	if code != exitOK {
		t.Fatalf("exit code = %d", code)
	}
	for _, cmd := range []string{"plan", "merge", "schema", "version", "completion"} {
		if !strings.Contains(stdout, cmd) {
			t.Errorf("help does not list %q:\n%s", cmd, stdout)
		}
	}
}

func TestRunUnreachable(t *testing.T) {
	port := closedPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"plan", "a.csv", "--remote", "sc://" + addr}},
		{"flag with token", nil, []string{"merge", "a.csv", "--out", "/tmp/o", "--remote", "sc://" + addr + "/;token=sekret==;user_id=me"}},
		{"SPARK_REMOTE with token", map[string]string{"SPARK_REMOTE": "sc://" + addr + "/;token=sekret=="}, []string{"schema", "a.csv"}},
		// Databricks credentials in the environment are not for a local
		// server: it is reported unreachable, not as an OAuth failure.
		{"Databricks credentials for another host", map[string]string{"DATABRICKS_CLIENT_ID": "sp", "DATABRICKS_CLIENT_SECRET": "sekret"}, []string{"plan", "a.csv", "--remote", "sc://" + addr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			code, stdout, stderr := runCLI(t, tt.env, tt.args...)
			elapsed := time.Since(start)
			if code != exitUnreachable {
				t.Errorf("exit code = %d, want %d (unreachable); stderr:\n%s", code, exitUnreachable, stderr)
			}
			if elapsed > 20*time.Second {
				t.Errorf("took %s to report a closed port, want a quick answer", elapsed)
			}
			if !strings.Contains(stderr, addr) {
				t.Errorf("stderr does not name %s:\n%s", addr, stderr)
			}
			if !strings.Contains(stderr, "--remote") {
				t.Errorf("stderr does not say what to do (--remote):\n%s", stderr)
			}
			if strings.Contains(stdout+stderr, "sekret") {
				t.Errorf("the token leaked into the output:\nstdout: %s\nstderr: %s", stdout, stderr)
			}
		})
	}
}

func TestRunBadRemoteHidesToken(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "plan", "a.csv", "--remote", "sc://127.0.0.1:1/;token=sekret==;use_ssl=maybe")
	if code != exitUsage {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
	if !strings.Contains(stderr, "use_ssl") {
		t.Errorf("stderr does not say which parameter is wrong:\n%s", stderr)
	}
	if strings.Contains(stdout+stderr, "sekret") {
		t.Errorf("the token leaked:\n%s", stderr)
	}
}

func TestExitCode(t *testing.T) {
	conflict := fmt.Errorf("plan: %w", &sparkmerge.TypeConflictError{Policy: sparkmerge.TypesStrict})
	if !errors.Is(conflict, sparkmerge.ErrSchemaConflict) {
		t.Fatal("TypeConflictError no longer matches ErrSchemaConflict; the test below would prove nothing")
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"plain", errors.New("boom"), exitError},
		{"usage", usagef("--x: bad"), exitUsage},
		{"wrapped usage", fmt.Errorf("outer: %w", usagef("--x: bad")), exitUsage},
		{"schema conflict sentinel", fmt.Errorf("merge: %w", sparkmerge.ErrSchemaConflict), exitConflict},
		{"type conflict error", conflict, exitConflict},
		{"csv header drift", fmt.Errorf("plan: %w", &spark.HeaderDriftError{Files: 2}), exitConflict},
		{"unreachable", fmt.Errorf("connect: %w", spark.ErrUnreachable), exitUnreachable},
		{"spark error", &spark.SparkError{ErrorClass: "PATH_NOT_FOUND"}, exitError},
		{"verify", &spark.VerifyError{Read: 2, Written: 1}, exitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
