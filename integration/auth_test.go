//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark"
)

// A Spark Connect server that requires a bearer token
// (spark.connect.authenticate.token, Spark 4.0's pre-shared key check)
// refuses a client without it, and a merge authenticates with a token
// from a token command or from OAuth client credentials (the Databricks
// service principal's environment), refreshed before it expires.
func TestTokensFromASourceAuthenticate(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-token"
	dir := workDir(t)
	requireSpark(t)
	image := sparktest.Image()
	ctx := testContext(t)
	srv, err := localspark.Start(ctx, localspark.Options{
		Image:          image,
		Mounts:         []string{dir},
		Conf:           sparktest.OwnServerConf(map[string]string{"spark.connect.authenticate.token": secret}),
		StartupTimeout: time.Hour, // the test's deadline bounds it
	})
	if err != nil {
		t.Fatalf("start a Spark that requires a token: %v", err)
	}
	sparktest.StopWithTest(t, srv)
	// "localhost": a token goes over plain text only on loopback.
	remote := fmt.Sprintf("sc://localhost:%d", srv.Port())
	if c, err := spark.Connect(ctx, remote, spark.ConnectOptions{TokenSource: spark.CommandTokenSource("echo "+secret, time.Hour)}); err != nil {
		t.Fatalf("connect with the token: %v", err)
	} else {
		c.Close()
	}

	if c, err := spark.Connect(context.Background(), remote, spark.ConnectOptions{}); err == nil {
		c.Close()
		t.Fatal("a server that requires a token took a client without one: the test proves nothing")
	}
	if c, err := spark.Connect(context.Background(), remote, spark.ConnectOptions{TokenSource: spark.CommandTokenSource("echo wrong", time.Hour)}); err == nil {
		c.Close()
		t.Fatal("a server that requires a token took a wrong one")
	}

	// OAuth machine-to-machine: tokens that expire at once (expires_in 1,
	// inside the refresh margin), so every call takes a new one.
	var issued atomic.Int64
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, sec, _ := r.BasicAuth(); id != "sp" || sec != "sp-secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": secret, "token_type": "Bearer", "expires_in": 1})
	}))
	defer tokens.Close()

	in := writeFiles(t, dir, map[string]string{"a.csv": "id,name\n1,x\n", "b.csv": "name,id,extra\ny,2,e\n"}, "a.csv", "b.csv")
	bin := cliBinary(t)
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"token command", []string{"--token-command", "echo " + secret}, nil},
		// DATABRICKS_HOST names the server's host (the CLI sends
		// Databricks credentials to that host only), where the token
		// endpoint listens too.
		{"service principal", nil, []string{"DATABRICKS_CLIENT_ID=sp", "DATABRICKS_CLIENT_SECRET=sp-secret",
			"DATABRICKS_HOST=" + strings.Replace(tokens.URL, "127.0.0.1", "localhost", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			args := append([]string{"merge", in[0], in[1], "--out", out, "--verify", "-o", "json", "--remote", remote}, tc.args...)
			cmd := osexec.CommandContext(testContext(t), bin, args...)
			cmd.Env = append(append(os.Environ(), "SPARK_REMOTE="), tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				var exit *osexec.ExitError
				if !errors.As(err, &exit) {
					t.Fatal(err)
				}
				t.Fatalf("merge exited %d: %s", exit.ExitCode(), stderr.String())
			}
			var res struct {
				RowsWritten int64 `json:"rows_written"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.RowsWritten != 2 {
				t.Errorf("result %s (%v), want 2 rows written", stdout.String(), err)
			}
			if strings.Contains(stdout.String()+stderr.String(), secret) {
				t.Errorf("the token shows in the output")
			}
		})
	}
	if n := issued.Load(); n < 3 {
		t.Errorf("the token endpoint issued %d tokens for a merge of many calls with tokens that expire at once, want a new one per call", n)
	}
}
