package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// scriptedTokens hands out the tokens it holds, one per fetch.
type scriptedTokens struct {
	mu      sync.Mutex
	tokens  []*oauth2.Token
	fetched int
}

func (s *scriptedTokens) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fetched >= len(s.tokens) {
		return nil, fmt.Errorf("no token left after %d", s.fetched)
	}
	s.fetched++
	return s.tokens[s.fetched-1], nil
}

// authorizations returns the authorization header of every call the fake
// got, in order.
func authorizations(f *fakeServer) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, md := range f.md {
		out = append(out, strings.Join(md.Get("authorization"), ","))
	}
	return out
}

// A token is cached while it is fresh and replaced RefreshBefore its
// expiry, so a merge longer than a token's life keeps authenticating.
func TestTokenSourceIsRefreshedBeforeItExpires(t *testing.T) {
	fake := startFake(t)
	src := &scriptedTokens{tokens: []*oauth2.Token{
		{AccessToken: "t1", Expiry: time.Now().Add(RefreshBefore + 1500*time.Millisecond)},
		{AccessToken: "t2", Expiry: time.Now().Add(time.Hour)},
	}}
	remote, err := ParseRemote("sc://" + strings.Replace(fake.addr, "127.0.0.1", "localhost", 1))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(context.Background(), remote, Options{TokenSource: src})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	schema := func() {
		if _, err := s.Read(ReadSpec{Format: "csv", Paths: []string{"/a"}}).Schema(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	schema()
	time.Sleep(2 * time.Second) // t1 is now within RefreshBefore of its expiry
	schema()
	schema()
	want := []string{"Bearer t1", "Bearer t1", "Bearer t2", "Bearer t2"}
	if got := authorizations(fake); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("authorization headers %q, want %q", got, want)
	}
	if src.fetched != 2 {
		t.Errorf("%d tokens fetched, want 2 (one cached while fresh)", src.fetched)
	}
}

func TestTokenSourceExcludesATokenInTheConnectionString(t *testing.T) {
	remote, err := ParseRemote("sc://localhost:1/;token=abc")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dial(context.Background(), remote, Options{TokenSource: &scriptedTokens{}})
	if err == nil || !strings.Contains(err.Error(), "give one of them") {
		t.Errorf("err = %v, want a refusal of both", err)
	}
}

// A token is never sent in clear text to another host: a token source
// switches on TLS, which a plain-text server then fails.
func TestTokenSourceUsesTLSBeyondLocalhost(t *testing.T) {
	fake := startFake(t)
	remote, err := ParseRemote("sc://" + fake.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dial(context.Background(), remote, Options{
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "secret-token"}),
		DialTimeout: 3 * time.Second, Retry: RetryPolicy{MaxAttempts: 1},
	})
	if err == nil {
		t.Fatal("a token went to 127.0.0.1 over plain text")
	}
	if strings.Contains(err.Error(), "secret-token") {
		t.Errorf("the error shows the token: %v", err)
	}
	if len(authorizations(fake)) != 0 {
		t.Errorf("the plain-text server got a call")
	}
}

// Databricks machine-to-machine OAuth: the service principal's id and
// secret are exchanged at the workspace's /oidc/v1/token for tokens that
// every call then carries.
func TestClientCredentials(t *testing.T) {
	var mu sync.Mutex
	issued := 0
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if r.URL.Path != "/oidc/v1/token" || r.Method != http.MethodPost || id != "sp-id" || secret != "sp-secret" ||
			r.FormValue("grant_type") != "client_credentials" || r.FormValue("scope") != "all-apis" {
			http.Error(w, "bad request: "+r.Method+" "+r.URL.Path+" "+r.Form.Encode(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		issued++
		n := issued
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("m2m-%d", n), "token_type": "Bearer", "expires_in": 3600})
	}))
	defer tokens.Close()

	fake := startFake(t)
	remote, err := ParseRemote("sc://" + strings.Replace(fake.addr, "127.0.0.1", "localhost", 1))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(context.Background(), remote, Options{TokenSource: ClientCredentials(DatabricksTokenURL(tokens.URL), "sp-id", "sp-secret", "all-apis")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Read(ReadSpec{Format: "csv", Paths: []string{"/a"}}).Schema(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := authorizations(fake); fmt.Sprint(got) != "[Bearer m2m-1 Bearer m2m-1]" {
		t.Errorf("authorization headers %q, want the one token issued", got)
	}

	bad := ClientCredentials(DatabricksTokenURL(tokens.URL), "sp-id", "wrong", "all-apis")
	if _, err := bad.Token(); err == nil || strings.Contains(err.Error(), "wrong") && strings.Contains(err.Error(), "secret") {
		t.Errorf("a refused secret: err = %v", err)
	}
}

func TestDatabricksTokenURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://adb-1.2.azuredatabricks.net/": "https://adb-1.2.azuredatabricks.net/oidc/v1/token",
		"dbc-a1.cloud.databricks.com":          "https://dbc-a1.cloud.databricks.com/oidc/v1/token",
		"http://127.0.0.1:8080":                "http://127.0.0.1:8080/oidc/v1/token",
	} {
		if got := DatabricksTokenURL(in); got != want {
			t.Errorf("DatabricksTokenURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCommandToken(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		out, token string
		expiry     time.Time
		err        string
	}{
		{out: "abc.def\n", token: "abc.def"},
		{out: `{"access_token": "dbx", "token_type": "Bearer", "expiry": "2026-12-01T11:00:00.5+01:00"}`, token: "dbx", expiry: time.Date(2026, 12, 1, 10, 0, 0, 5e8, time.UTC)},
		{out: `{"accessToken": "az", "expiresOn": "2026-12-01 11:00:00.000000", "expires_on": 1796119200}`, token: "az", expiry: time.Unix(1796119200, 0)},
		{out: `{"token": "t", "expires_in": "600"}`, token: "t", expiry: now.Add(10 * time.Minute)},
		{out: "", err: "printed no token"},
		{out: "Token: abc", err: "more than a token"},
		{out: `{"expires_in": 5}`, err: "without access_token"},
		{out: `{"access_token": "x", "expiry": "tomorrow"}`, err: "want RFC 3339"},
		{out: `{"access_token": "x", "expires_in": 1.5}`, err: "whole number"},
		{out: `{"access_token": `, err: "does not parse"},
	} {
		tok, err := parseCommandToken([]byte(tc.out), now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.out, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.out, err)
			continue
		}
		if tok.AccessToken != tc.token || !tok.Expiry.Equal(tc.expiry) {
			t.Errorf("%q: token %q expiring %v, want %q expiring %v", tc.out, tok.AccessToken, tok.Expiry, tc.token, tc.expiry)
		}
	}
}

// The command runs again for each new token; a token without an expiry
// lasts withoutExpiry; a failing command's message is kept.
func TestCommandTokenSource(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "n")
	cmd := fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s; echo tok-$n`, counter)
	src := CommandTokenSource(cmd, time.Hour)
	for want := 1; want <= 2; want++ {
		tok, err := src.Token()
		if err != nil {
			t.Fatal(err)
		}
		if tok.AccessToken != fmt.Sprintf("tok-%d", want) || time.Until(tok.Expiry) < 59*time.Minute {
			t.Errorf("token %q expiring %v, want tok-%d in an hour", tok.AccessToken, tok.Expiry, want)
		}
	}
	if data, _ := os.ReadFile(counter); strings.TrimSpace(string(data)) != "2" {
		t.Errorf("the command ran %s times, want 2", data)
	}
	_, err := CommandTokenSource("echo 'not logged in: run databricks auth login' >&2; exit 3", time.Hour).Token()
	if err == nil || !strings.Contains(err.Error(), "databricks auth login") {
		t.Errorf("err = %v, want the command's message", err)
	}
}
