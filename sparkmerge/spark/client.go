package spark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// ErrUnreachable is matched (errors.Is) by every error that means the Spark
// Connect server could not be reached.
var ErrUnreachable = connect.ErrUnreachable

// UnreachableError is the error behind [ErrUnreachable]: the address tried,
// the transport error, and (Stop) what became of the server-side job of a
// call that lost its connection midway. Use errors.As.
type UnreachableError = connect.UnreachableError

// ErrInvalidRemote is matched (errors.Is) by [Connect]'s error when the
// connection string does not parse. The error never contains its values.
var ErrInvalidRemote = connect.ErrInvalidRemote

// SparkError is an error the Spark server returned. Use errors.As:
//
//	var se *spark.SparkError
//	if errors.As(err, &se) && se.ErrorClass == "PATH_NOT_FOUND" { ... }
//
// Its fields:
//
//   - ErrorClass string: Spark's error class, e.g. "PATH_NOT_FOUND" (""
//     when the server sent none).
//   - SQLState string: the SQL state, e.g. "42K03".
//   - Message string: the server's message.
//   - Parameters map[string]string: the message parameters, e.g.
//     {"path": "file:/x"}.
//   - Reason string: the server-side exception class, e.g.
//     "org.apache.spark.sql.AnalysisException".
//   - Code string: the gRPC status code name, e.g. "Internal".
//   - Err error: the error as spark-connect-go returned it (Unwrap).
type SparkError = connect.SparkError

// ConnectOptions configure [Connect]. The zero value is ready to use.
type ConnectOptions struct {
	// UserAgent names the client to the server. Default "sparkmerge".
	UserAgent string
	// Conf are session settings set right after connecting, as
	// spark-submit's --conf sets them (e.g. spark.sql.caseSensitive=true).
	// A setting the server refuses (a static one) fails Connect, and the
	// session keeps the values it had for the others (all or nothing: a
	// shared session is left as it was).
	Conf map[string]string
	// KeepAlive bounds how long a call waits on a silent connection before
	// the client pings the server; an unanswered ping (a stalled network)
	// fails the call as unreachable instead of hanging. Zero means
	// 5m30s, just over the ping interval Spark Connect servers accept
	// during a call; negative turns pings off.
	KeepAlive time.Duration
	// KeepAliveTimeout is how long such a ping may go unanswered. Zero
	// means 20s.
	KeepAliveTimeout time.Duration
	// SessionID joins an existing Spark Connect session (a UUID): temporary
	// views and session settings are then shared with every client on it,
	// e.g. PySpark's (for spark-connect-go's, see Session). It overrides
	// session_id in the connection string. Empty: the connection string's
	// session_id, else a new session.
	SessionID string
	// Session joins a spark-connect-go session: its id and the user it
	// sends, which the server keys a session by as well as the id (a
	// client sending another user would reach another session, without
	// the caller's temporary views). It overrides SessionID and user_id
	// in the connection string.
	Session sql.SparkSession
	// ReattachFor is how long a call whose connection broke keeps trying
	// to pick its operation up again on a new connection before it fails
	// as unreachable (every query and write runs as a reattachable
	// operation). Zero means 2 minutes.
	ReattachFor time.Duration
	// TokenSource, when set, gives the bearer token of every call, fetched
	// anew 5 minutes before it expires: for OAuth tokens, which expire
	// within the hour (see [ClientCredentials], [CommandTokenSource]). It
	// excludes token= in the connection string, and like it switches on
	// TLS except to host localhost.
	TokenSource oauth2.TokenSource
	// SessionPool is a directory where clients keep the sessions they
	// start, for later clients of this machine on the same server as the
	// same user, instead of releasing them at Close: Spark compiles a
	// merge's code once per session, so a merge that ran before in the
	// session it gets runs without compiling it again (see
	// sessionpool.go). Each client gets a session no other client is
	// using, with the settings it had when it was new and nothing left
	// running in it. Empty: every client starts a session of its own. It
	// does not apply to a session given (SessionID, Session, session_id)
	// or to tokens from a TokenSource.
	SessionPool string
	// Getenv reads the environment variables PySpark's client honours:
	// SPARK_REMOTE (when remote is empty), SPARK_CONNECT_AUTHENTICATE_TOKEN
	// (the token when the connection string has none and no TokenSource
	// is given), SPARK_CONNECT_USER_AGENT (before UserAgent), and
	// SPARK_USER, else USER, for the user when the string has no user_id
	// (else none is sent, as by PySpark). Nil means os.Getenv.
	Getenv func(string) string
}

// ClientCredentials returns a token source for OAuth machine-to-machine
// authentication: a service principal's id and secret exchanged at
// tokenURL for access tokens (the client credentials grant). For
// Databricks: ClientCredentials(DatabricksTokenURL(host), id, secret,
// "all-apis").
func ClientCredentials(tokenURL, clientID, clientSecret string, scopes ...string) oauth2.TokenSource {
	return connect.ClientCredentials(tokenURL, clientID, clientSecret, scopes...)
}

// DatabricksTokenURL is the OAuth token endpoint of a Databricks
// workspace, given its URL or host name.
func DatabricksTokenURL(host string) string { return connect.DatabricksTokenURL(host) }

// CommandTokenSource returns a token source that runs command (sh -c) for
// each new token, e.g. "databricks auth token --host https://...". The
// command prints the token alone or a JSON object with access_token and
// an expiry (expiry in RFC 3339, expires_on in Unix seconds, or
// expires_in); a token without one is used for withoutExpiry.
func CommandTokenSource(command string, withoutExpiry time.Duration) oauth2.TokenSource {
	return connect.CommandTokenSource(command, withoutExpiry)
}

// Remote is a parsed Spark Connect connection string: Host, Port, the
// parameters, and Token() (never printed: String redacts it).
type Remote = connect.Remote

// ParseRemote parses a connection string in PySpark's form
// (sc://host:port/;token=...;use_ssl=true;...). Its errors match
// [ErrInvalidRemote].
func ParseRemote(remote string) (Remote, error) { return connect.ParseRemote(remote) }

// DefaultRemote is the server [Connect] uses when neither its remote nor
// SPARK_REMOTE names one, as PySpark does.
const DefaultRemote = "sc://localhost:15002"

// Client runs merges on one Spark Connect session. It is safe for
// concurrent use.
type Client struct {
	// sess runs merges.
	sess *connect.Session
	// server answers what planning asks: sess's in a connected client
	// (see [sessionServer]), a fake in unit tests.
	server server
	// keepSession: Close leaves the session on the server (see Close).
	keepSession atomic.Bool
	// slot is the session pool's slot the session came from, or nil.
	slot *sessionSlot
}

// Connect parses remote, a Spark Connect connection string in PySpark's
// form (sc://host:port/;token=...;use_ssl=true;user_id=...;session_id=...),
// and opens a session, checking that the server answers. An empty remote
// means SPARK_REMOTE, else [DefaultRemote]. Errors never contain the token.
func Connect(ctx context.Context, remote string, opts ConnectOptions) (*Client, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if remote == "" {
		remote = getenv("SPARK_REMOTE")
	}
	if remote == "" {
		remote = DefaultRemote
	}
	r, err := connect.ParseRemote(remote)
	if err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	if opts.Session != nil {
		if opts.SessionID, err = connect.SessionIDOf(opts.Session); err != nil {
			return nil, fmt.Errorf("join the session: %w", err)
		}
		if r.UserID, err = connect.UserIDOf(opts.Session); err != nil {
			return nil, fmt.Errorf("join the session: %w", err)
		}
	}
	if opts.SessionID != "" {
		if _, err := uuid.Parse(opts.SessionID); err != nil {
			return nil, fmt.Errorf("session id %q: not a UUID", opts.SessionID)
		}
		r.SessionID = opts.SessionID
	}
	dialOpts := connect.Options{
		UserAgent: opts.UserAgent, KeepAlive: opts.KeepAlive, KeepAliveTimeout: opts.KeepAliveTimeout,
		ReattachFor: opts.ReattachFor, TokenSource: opts.TokenSource, Getenv: getenv,
	}
	sess, slot, err := dialPooled(ctx, r, dialOpts, opts.SessionPool)
	if err != nil {
		return nil, err
	}
	if err := sess.SetConf(ctx, opts.Conf); err != nil {
		if slot != nil {
			slot.release()
		}
		sess.Close()
		return nil, fmt.Errorf("set session settings: %w", err)
	}
	return &Client{sess: sess, server: sessionServer{sess}, slot: slot}, nil
}

// dialPooled opens a session on r: a session of the pool in dir where
// one is free and r names none (see [ConnectOptions.SessionPool]), made
// as a new one is, else a new session (slot nil).
func dialPooled(ctx context.Context, r connect.Remote, opts connect.Options, dir string) (*connect.Session, *sessionSlot, error) {
	var slot *sessionSlot
	if dir != "" && r.SessionID == "" && opts.TokenSource == nil && !routedSession(r) {
		// A pool that cannot be used (no file locks, a directory that
		// cannot be written) leaves the client a session of its own.
		slot, _ = takeSlot(dir, poolKey(r, opts.Getenv))
	}
	if slot == nil {
		sess, err := connect.Dial(ctx, r, opts)
		return sess, nil, err
	}
	pooled := r
	pooled.SessionID = slot.sessionID()
	sess, err := connect.Dial(ctx, pooled, opts)
	if sessionClosed(err) {
		pooled.SessionID = slot.renew()
		sess, err = connect.Dial(ctx, pooled, opts)
	}
	if err == nil {
		if err = slot.prepare(ctx, sess); err == nil {
			// Forgotten at once, so that a client killed after it
			// does not leave the session to the next.
			sess.OnNamesTables(func() { _ = slot.forget() })
			return sess, slot, nil
		}
		sess.Close()
	}
	// The pool's session could not be made new (a server that refuses
	// the marker setting, say): forget it, and start one of our own.
	_ = slot.forget()
	slot.release()
	sess, err = connect.Dial(ctx, r, opts)
	return sess, nil, err
}

// routedSession says whether r names its session by Databricks' routing
// header, which is a session id given.
func routedSession(r connect.Remote) bool {
	for k := range r.Headers {
		if strings.EqualFold(k, "x-databricks-session-id") {
			return true
		}
	}
	return false
}

// SessionID is the Spark Connect session this client runs on: give it to
// another client (session_id in a connection string, or
// [ConnectOptions.SessionID]) to share temporary views and settings. A
// session whose id was asked for is left on the server by Close.
func (c *Client) SessionID() string {
	c.keepSession.Store(true)
	return c.sess.SessionID()
}

// SessionIDOf returns the session id of a spark-connect-go session. To
// join that session, give the session itself ([ConnectOptions.Session]),
// which carries its user too: a Client on it sees the session's temporary
// views, and the session sees the views the Client makes
// ([Client.MergeView]).
func SessionIDOf(s sql.SparkSession) (string, error) { return connect.SessionIDOf(s) }

// Close ends the session and closes the connection. A session this client
// started (no session id was given) is released on the server, which would
// otherwise keep it, its settings and the code Spark compiled for it (a
// class loader of its own) until it has been idle for an hour: a server
// that had run 107 merges and PySpark runs in an hour held 107 sessions.
// A session the client joined, or one that may be shared (its id was
// asked for with SessionID, or it holds a temporary view MergeView made,
// which exists to be read afterwards), is left as it is. A session from a
// pool ([ConnectOptions.SessionPool]) goes back to it, unless it may be
// shared (then the pool forgets it, and it is left as it is) or it read a
// catalog table, or ran a SQL query source (Spark caches each table's
// schema and files in the session that read it, which would hide another
// writer's changes from the pool's next client: the pool forgets it, and
// it is released).
func (c *Client) Close() error {
	pooled := c.slot != nil && !c.keepSession.Load() && !c.sess.NamedTables()
	if c.slot != nil {
		if !pooled {
			_ = c.slot.forget() // already, if it named tables
		}
		c.slot.release()
	}
	if !pooled && (c.slot != nil || c.sess.Started()) && !c.keepSession.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		_ = c.sess.Release(ctx) // best effort: the server drops it when idle anyway
		cancel()
	}
	return c.sess.Close()
}

// releaseTimeout bounds the release of a session in Close, so that a
// server gone silent does not hold up the caller's exit for long.
const releaseTimeout = 5 * time.Second

// Remote is the server's connection string with any token hidden.
func (c *Client) Remote() string { return c.sess.Remote().Redacted() }

// SparkVersion is the server's Spark version.
func (c *Client) SparkVersion() string { return c.server.sparkVersion() }

// RedactRemote hides the token of a connection string, for logs. A string
// that does not parse is returned as "<invalid connection string>".
func RedactRemote(remote string) string {
	r, err := connect.ParseRemote(remote)
	if err != nil {
		return "<invalid connection string>"
	}
	return r.Redacted()
}

// errorClass returns the Spark error class of err, or "".
func errorClass(err error) string {
	var se *connect.SparkError
	if errors.As(err, &se) {
		return se.ErrorClass
	}
	return ""
}

// QuerySchema returns the schema of a SQL query's result without running
// it (Spark analyses the query only).
func (c *Client) QuerySchema(ctx context.Context, query string) (sparkmerge.Schema, error) {
	c.sess.NamesTables() // the query's, as a SQL query source's
	return c.sess.SQL(query).Schema(ctx)
}

// Interrupt stops every Spark operation this client started that is still
// running on the server; call it when the caller gives up (Ctrl-C), since
// a cancelled context stops only the client.
func (c *Client) Interrupt(ctx context.Context) error { return c.sess.InterruptAll(ctx) }

// TableNames lists the tables and views of the session's current
// database (SHOW TABLES): qualified by their database, temporary views
// by name alone. For completion and listings.
func (c *Client) TableNames(ctx context.Context) ([]string, error) {
	rows, err := c.sess.SQL("SHOW TABLES").Collect(ctx)
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, name := range rows.Columns {
		col[name] = i
	}
	ns, okNS := col["namespace"]
	name, okName := col["tableName"]
	if !okName {
		return nil, fmt.Errorf("show tables: no tableName column in %v", rows.Columns)
	}
	var out []string
	for _, r := range rows.Values {
		n, _ := r[name].(string)
		if q, _ := r[ns].(string); okNS && q != "" {
			n = q + "." + n
		}
		out = append(out, n)
	}
	return out, nil
}
