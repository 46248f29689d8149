package connect

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// DefaultPort is the Spark Connect port used when a connection string names none.
const DefaultPort = 15002

// Remote is a parsed Spark Connect connection string. Its String, Redacted
// and GoString methods never show the token, so a Remote can be logged and
// printed with any fmt verb.
type Remote struct {
	// Host and Port of the server.
	Host string
	Port int
	// UseSSL is true when the string says use_ssl=true.
	UseSSL bool
	// UserID, UserAgent and SessionID are the reserved parameters user_id,
	// user_agent and session_id (empty when absent). SessionID, when set, is a UUID.
	UserID, UserAgent, SessionID string
	// Headers are the other parameters, sent as gRPC metadata with every
	// call. Keys are lower case (gRPC requires it).
	Headers map[string]string

	// token is behind a pointer so that even printing a struct that holds
	// a Remote in an unexported field (where fmt cannot call String) shows
	// an address, not the token.
	token *string
}

// ErrInvalidRemote is wrapped by every error of [ParseRemote].
var ErrInvalidRemote = errors.New("invalid spark connect connection string")

// ParseRemote parses PySpark's connection string
// "sc://host[:port][/;key=value;...]". It follows PySpark's rules with these
// deliberate relaxations and additions:
//
//   - A value is everything after the first "=" of its parameter, so a
//     token with base64 padding ("token=abc==") is kept whole. Values are
//     URL-unescaped like PySpark does ("%3B" is ";"); an invalid escape keeps
//     the value verbatim.
//   - Keys are lower-cased before they are matched or sent, because gRPC
//     metadata keys must be lower case. Empty parameters (";;") are ignored.
//   - Reserved keys: token, use_ssl, user_id, user_agent, session_id; every
//     other key becomes a header (e.g. x-databricks-cluster-id).
//   - The port defaults to [DefaultPort]; IPv6 hosts are written in brackets.
//
// Errors wrap [ErrInvalidRemote] and never contain parameter values.
func ParseRemote(s string) (Remote, error) {
	rest, ok := strings.CutPrefix(s, "sc://")
	if !ok {
		return Remote{}, invalidRemote("it must start with sc://, e.g. sc://localhost:15002")
	}
	authority, params, _ := strings.Cut(rest, "/")
	if params != "" && !strings.HasPrefix(params, ";") {
		return Remote{}, invalidRemote("the path after the host must be empty or start with /; (e.g. sc://host:15002/;token=...)")
	}
	if strings.ContainsAny(authority, "@?#;") || strings.ContainsAny(params, "?#") {
		return Remote{}, invalidRemote("only sc://host:port/;key=value;... is supported (no user info, path, query or fragment)")
	}
	r := Remote{Port: DefaultPort}
	var err error
	if r.Host, r.Port, err = parseAuthority(authority); err != nil {
		return Remote{}, err
	}
	for i, part := range strings.Split(strings.TrimPrefix(params, ";"), ";") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return Remote{}, invalidRemote("parameter %d must be key=value", i+1)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		if err := r.setParameter(i+1, k, v); err != nil {
			return Remote{}, err
		}
	}
	return r, nil
}

// invalidRemote is an error wrapping [ErrInvalidRemote] that says what is
// wrong, never with a parameter's value.
func invalidRemote(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRemote, fmt.Sprintf(format, args...))
}

// parseAuthority reads host:port (the port [DefaultPort] when absent, an
// IPv6 host in brackets).
func parseAuthority(authority string) (host string, port int, err error) {
	host, portText := authority, ""
	if strings.HasPrefix(authority, "[") || strings.Count(authority, ":") == 1 {
		if h, p, err := net.SplitHostPort(authority); err == nil {
			host, portText = h, p
		} else if strings.HasPrefix(authority, "[") && strings.HasSuffix(authority, "]") {
			host = authority[1 : len(authority)-1]
		} else {
			return "", 0, invalidRemote("host and port must look like host:port")
		}
	} else if strings.Contains(authority, ":") {
		return "", 0, invalidRemote("an IPv6 host must be written in brackets, e.g. sc://[::1]:15002")
	}
	if host == "" {
		return "", 0, invalidRemote("the host is empty")
	}
	if portText == "" {
		return host, DefaultPort, nil
	}
	port, err = strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, invalidRemote("the port must be a number between 1 and 65535")
	}
	return host, port, nil
}

// setParameter sets the n-th parameter, key k (lower case) with value v:
// a reserved key's field, or a header.
func (r *Remote) setParameter(n int, k, v string) error {
	switch k {
	case "token":
		r.token = &v
	case "use_ssl":
		switch strings.ToLower(v) {
		case "true":
			r.UseSSL = true
		case "false":
			r.UseSSL = false
		default:
			return invalidRemote("use_ssl must be true or false")
		}
	case "user_id":
		r.UserID = v
	case "user_agent":
		r.UserAgent = v
	case "session_id":
		if _, err := uuid.Parse(v); err != nil {
			return invalidRemote("session_id must be a UUID")
		}
		r.SessionID = v
	default:
		if !validHeaderKey(k) {
			return invalidRemote("parameter %d: header key %q may only contain a-z, 0-9, '-', '_' and '.'", n, k)
		}
		if strings.HasSuffix(k, "-bin") || strings.HasPrefix(k, "grpc-") {
			return invalidRemote("parameter %d: header key %q is reserved by gRPC", n, k)
		}
		if r.Headers == nil {
			r.Headers = map[string]string{}
		}
		r.Headers[k] = v
	}
	return nil
}

// validHeaderKey reports whether k is a valid (lower-case) gRPC metadata key.
func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Token returns the bearer token of the connection string ("" when none).
func (r Remote) Token() string {
	if r.token == nil {
		return ""
	}
	return *r.token
}

// Addr returns "host:port" (IPv6 hosts in brackets).
func (r Remote) Addr() string { return net.JoinHostPort(r.Host, strconv.Itoa(r.Port)) }

// Secure reports whether the connection uses TLS. Like PySpark: TLS when
// use_ssl=true or a token is set, except that a token to host "localhost"
// without use_ssl=true is sent over plain loopback (PySpark's
// local_channel_credentials), for a local server started with an
// authentication token. use_ssl=false does not turn TLS off when a token is
// set for another host: a token is never sent in clear text over the network.
func (r Remote) Secure() bool {
	if r.UseSSL {
		return true
	}
	return r.Token() != "" && r.Host != "localhost"
}

// Redacted returns the connection string with the token, and the values of
// headers whose key mentions auth, token, secret, password or key,
// replaced by "REDACTED". Parameters come in a fixed order, headers sorted
// by key.
func (r Remote) Redacted() string {
	var b strings.Builder
	b.WriteString("sc://")
	b.WriteString(r.Addr())
	var params []string
	if r.Token() != "" {
		params = append(params, "token=REDACTED")
	}
	if r.UseSSL {
		params = append(params, "use_ssl=true")
	}
	for _, kv := range [][2]string{{"user_id", r.UserID}, {"user_agent", r.UserAgent}, {"session_id", r.SessionID}} {
		if kv[1] != "" {
			params = append(params, kv[0]+"="+url.PathEscape(kv[1]))
		}
	}
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := url.PathEscape(r.Headers[k])
		if sensitiveHeader(k) {
			v = "REDACTED"
		}
		params = append(params, k+"="+v)
	}
	if len(params) > 0 {
		b.WriteString("/;")
		b.WriteString(strings.Join(params, ";"))
	}
	return b.String()
}

// String returns [Remote.Redacted].
func (r Remote) String() string { return r.Redacted() }

// GoString returns [Remote.Redacted], so that %#v does not print the token either.
func (r Remote) GoString() string { return "connect.Remote(" + strconv.Quote(r.Redacted()) + ")" }

// sensitiveHeader reports whether the value of header k may be a credential.
func sensitiveHeader(k string) bool {
	for _, w := range []string{"auth", "token", "secret", "password", "key", "cookie"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
