package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// A connection string's token= is fixed for the session's life, but OAuth
// tokens (Databricks' among them) expire within the hour while a merge can
// run for longer. A token source is asked for a token at every call,
// reattaches included; it is cached and fetched anew ahead of its expiry.

// RefreshBefore is how long before its expiry a token is replaced: long
// enough that a call started on it is authenticated, and a reattach
// started later gets the new one.
const RefreshBefore = 5 * time.Minute

// tokenCredentials sends a token source's token with every call.
type tokenCredentials struct {
	src    oauth2.TokenSource // cached (oauth2.ReuseTokenSourceWithExpiry)
	secure bool
}

func newTokenCredentials(src oauth2.TokenSource, secure bool) tokenCredentials {
	return tokenCredentials{src: oauth2.ReuseTokenSourceWithExpiry(nil, src, RefreshBefore), secure: secure}
}

func (c tokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	tok, err := c.src.Token()
	if err != nil {
		return nil, fmt.Errorf("get an access token: %w", err)
	}
	return map[string]string{"authorization": "Bearer " + tok.AccessToken}, nil
}

func (c tokenCredentials) RequireTransportSecurity() bool { return c.secure }

// String keeps tokens out of any accidental print.
func (c tokenCredentials) String() string { return "token-source(REDACTED)" }

// ClientCredentials returns a token source for OAuth machine-to-machine
// authentication (the client credentials grant): a service principal's
// id and secret exchanged at tokenURL for access tokens, anew before each
// expires. For Databricks, tokenURL is https://<workspace host>/oidc/v1/token
// and scopes is "all-apis" (see [DatabricksTokenURL]).
func ClientCredentials(tokenURL, clientID, clientSecret string, scopes ...string) oauth2.TokenSource {
	cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: clientSecret, TokenURL: tokenURL, Scopes: scopes}
	return cfg.TokenSource(context.Background())
}

// DatabricksTokenURL is the OAuth token endpoint of a Databricks
// workspace: host is its URL ("https://adb-1.2.azuredatabricks.net") or
// its host name.
func DatabricksTokenURL(host string) string {
	host = strings.TrimRight(host, "/")
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	return host + "/oidc/v1/token"
}

// CommandTokenSource returns a token source that runs command (through
// sh -c) for each new token, as kubectl's exec credentials do: e.g.
// "databricks auth token --host https://..." or "az account
// get-access-token --resource ...". The command prints the token alone,
// or a JSON object with access_token (or accessToken, token) and
// optionally its expiry: expiry (RFC 3339, the Databricks CLI's),
// expires_on (Unix seconds, the Azure CLI's) or expires_in (seconds). A
// token without an expiry is used for withoutExpiry, then fetched anew.
func CommandTokenSource(command string, withoutExpiry time.Duration) oauth2.TokenSource {
	return commandTokens{command: command, withoutExpiry: withoutExpiry, now: time.Now}
}

type commandTokens struct {
	command       string
	withoutExpiry time.Duration
	now           func() time.Time
}

func (c commandTokens) Token() (*oauth2.Token, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("sh", "-c", c.command)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// The command's own message says what is wrong (not logged in,
		// no such profile); the output may hold a token: not shown.
		return nil, fmt.Errorf("token command %q: %w: %s", c.command, err, strings.TrimSpace(stderr.String()))
	}
	tok, err := parseCommandToken(stdout.Bytes(), c.now())
	if err != nil {
		return nil, fmt.Errorf("token command %q: %w", c.command, err)
	}
	if tok.Expiry.IsZero() && c.withoutExpiry > 0 {
		tok.Expiry = c.now().Add(c.withoutExpiry)
	}
	return tok, nil
}

// parseCommandToken reads a token command's output.
func parseCommandToken(out []byte, now time.Time) (*oauth2.Token, error) {
	text := strings.TrimSpace(string(out))
	if text == "" {
		return nil, errors.New("printed no token")
	}
	if !strings.HasPrefix(text, "{") {
		if strings.ContainsAny(text, " \t\n") {
			return nil, errors.New("printed more than a token: print the token alone, or a JSON object with access_token")
		}
		return &oauth2.Token{AccessToken: text, TokenType: "Bearer"}, nil
	}
	var v struct {
		AccessToken  string          `json:"access_token"`
		AccessToken2 string          `json:"accessToken"`
		Token        string          `json:"token"`
		Expiry       string          `json:"expiry"`
		ExpiresOn    json.RawMessage `json:"expires_on"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("printed JSON that does not parse: %v", err)
	}
	tok := &oauth2.Token{TokenType: "Bearer", AccessToken: v.AccessToken}
	for _, alt := range []string{v.AccessToken2, v.Token} {
		if tok.AccessToken == "" {
			tok.AccessToken = alt
		}
	}
	if tok.AccessToken == "" {
		return nil, errors.New("printed JSON without access_token")
	}
	switch {
	case v.Expiry != "":
		t, err := time.Parse(time.RFC3339Nano, v.Expiry)
		if err != nil {
			return nil, fmt.Errorf("expiry %q: want RFC 3339", v.Expiry)
		}
		tok.Expiry = t
	case len(v.ExpiresOn) > 0:
		n, err := jsonSeconds(v.ExpiresOn)
		if err != nil {
			return nil, fmt.Errorf("expires_on: %v", err)
		}
		tok.Expiry = time.Unix(n, 0)
	case len(v.ExpiresIn) > 0:
		n, err := jsonSeconds(v.ExpiresIn)
		if err != nil {
			return nil, fmt.Errorf("expires_in: %v", err)
		}
		tok.Expiry = now.Add(time.Duration(n) * time.Second)
	}
	return tok, nil
}

// jsonSeconds reads a whole number of seconds written as a JSON number or
// string.
func jsonSeconds(raw json.RawMessage) (int64, error) {
	s := strings.Trim(string(raw), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number of seconds", raw)
	}
	return n, nil
}
