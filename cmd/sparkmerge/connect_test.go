package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// Where a run's access tokens come from: a token command, else a
// Databricks service principal's credentials in the environment (for a
// Databricks host only), never
// both a token= and a token command, and nothing for --local.
func TestTokenSource(t *testing.T) {
	var asked []string
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		asked = append(asked, r.URL.Path+" "+id+":"+secret+" "+r.FormValue("scope"))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "from-oauth", "token_type": "Bearer", "expires_in": 3600})
	}))
	defer tokens.Close()
	sp := map[string]string{"DATABRICKS_CLIENT_ID": "sp", "DATABRICKS_CLIENT_SECRET": "s3cret", "DATABRICKS_HOST": tokens.URL}

	for _, tc := range []struct {
		name    string
		env     map[string]string
		command string
		local   bool
		remote  string
		token   string // the source's token; "" for no source
		usage   bool
	}{
		{name: "nothing set", remote: "sc://h:443"},
		{name: "service principal", env: sp, remote: "sc://dbc-1.cloud.databricks.com:443/;use_ssl=true", token: "from-oauth"},
		{name: "token= wins over the environment", env: sp, remote: "sc://h:443/;token=abc"},
		{name: "--local ignores the environment", env: sp, local: true, remote: "sc://127.0.0.1:15002"},
		{name: "--local ignores a token command", env: map[string]string{"SPARKMERGE_TOKEN_COMMAND": "echo env-token"}, local: true, remote: "sc://127.0.0.1:15002"},
		{name: "token command", env: sp, command: "echo cmd-token", remote: "sc://h:443", token: "cmd-token"},
		{name: "token command from the environment", env: map[string]string{"SPARKMERGE_TOKEN_COMMAND": "echo env-token"}, remote: "sc://h:443", token: "env-token"},
		{name: "token= and a token command", command: "echo x", remote: "sc://h:443/;token=abc", usage: true},
		{name: "only an id", env: map[string]string{"DATABRICKS_CLIENT_ID": "sp"}, remote: "sc://h:443"},
		// Databricks credentials are for Databricks hosts: a workspace's
		// domain, $DATABRICKS_HOST's host, or a server named by cluster id.
		{name: "service principal, another host", env: sp, remote: "sc://localhost:15002"},
		{name: "service principal, DATABRICKS_HOST's host", env: sp, remote: "sc://127.0.0.1:443", token: "from-oauth"},
		{name: "service principal, a cluster id", env: sp, remote: "sc://proxy.example:443/;x-databricks-cluster-id=0123-abc", token: "from-oauth"},
		{name: "service principal, an Azure workspace", env: sp, remote: "sc://adb-1.2.azuredatabricks.net:443", token: "from-oauth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &globalOptions{tokenCommand: tc.command, local: tc.local, getenv: func(k string) string { return tc.env[k] }}
			src, err := g.tokenSource(tc.remote)
			var ue *usageError
			if tc.usage {
				if !errors.As(err, &ue) {
					t.Errorf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.token == "" {
				if src != nil {
					t.Errorf("a token source, want none")
				}
				return
			}
			if src == nil {
				t.Fatal("no token source")
			}
			tok, err := src.Token()
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != tc.token {
				t.Errorf("token %q, want %q", tok.AccessToken, tc.token)
			}
		})
	}
	if len(asked) != 4 {
		t.Errorf("token endpoint asked %d times, want 4 (once per Databricks case)", len(asked))
	}
	for _, a := range asked {
		if a != "/oidc/v1/token sp:s3cret all-apis" {
			t.Errorf("token endpoint asked %q, want /oidc/v1/token with the principal's credentials and scope all-apis", a)
		}
	}
}

// Where a run keeps its session for the next run: $SPARKMERGE_SESSION_POOL,
// else the user's cache directory; nowhere with --new-session,
// SPARKMERGE_SESSION_POOL=off, --local, or without a home.
func TestSessionPool(t *testing.T) {
	home := map[string]string{"HOME": "/home/ana"}
	defaultPool := "/home/ana/.cache/sparkmerge/sessions"
	if runtime.GOOS == "darwin" {
		defaultPool = "/home/ana/Library/Caches/sparkmerge/sessions"
	}
	for _, tc := range []struct {
		name       string
		env        map[string]string
		newSession bool
		local      bool
		want       string
	}{
		{"home", home, false, false, defaultPool},
		{"XDG_CACHE_HOME", map[string]string{"HOME": "/home/ana", "XDG_CACHE_HOME": "/cache"}, false, false, "/cache/sparkmerge/sessions"},
		{"SPARKMERGE_SESSION_POOL", map[string]string{"HOME": "/home/ana", "SPARKMERGE_SESSION_POOL": "/pool"}, false, false, "/pool"},
		{"off", map[string]string{"HOME": "/home/ana", "SPARKMERGE_SESSION_POOL": "off"}, false, false, ""},
		{"--new-session", home, true, false, ""},
		{"--local", home, false, true, ""},
		{"no home", map[string]string{}, false, false, ""},
	} {
		g := &globalOptions{newSession: tc.newSession, local: tc.local, getenv: func(k string) string { return tc.env[k] }}
		if got := g.sessionPool(); got != tc.want {
			t.Errorf("%s: pool %q, want %q", tc.name, got, tc.want)
		}
	}
}
