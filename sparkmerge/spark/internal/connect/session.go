package connect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/spark-connect-go/spark/client"
	"github.com/apache/spark-connect-go/spark/client/base"
	"github.com/apache/spark-connect-go/spark/client/options"
	"github.com/google/uuid"
	"golang.org/x/oauth2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options configure [Dial]. The zero value is ready to use.
type Options struct {
	// UserAgent names the client to the server (Spark's client_type); the
	// connection string's user_agent wins over it. Default "sparkmerge".
	// The Go version and OS are appended.
	UserAgent string
	// Retry is the retry policy for calls that fail with gRPC UNAVAILABLE.
	Retry RetryPolicy
	// DialTimeout bounds the call Dial makes to verify the server answers.
	// Default 20s.
	DialTimeout time.Duration
	// KeepAlive is how long a connection may stay silent while a call
	// waits (a long write sends nothing) before the client pings the
	// server; a ping unanswered within KeepAliveTimeout closes the
	// connection and fails the call as unreachable instead of waiting
	// forever on a stalled network. Default DefaultKeepAlive; gRPC
	// raises anything under 10s to 10s; negative turns pings off.
	KeepAlive time.Duration
	// KeepAliveTimeout is how long a ping may go unanswered. Default 20s.
	KeepAliveTimeout time.Duration
	// ReattachFor is how long a query or command whose stream broke keeps
	// trying to pick it up again on a new connection (ReattachExecute)
	// before it fails as unreachable. Default DefaultReattachFor.
	ReattachFor time.Duration
	// TokenSource, when set, gives the bearer token of every call (see
	// [ClientCredentials], [CommandTokenSource]), fetched anew
	// [RefreshBefore] its expiry: for OAuth tokens, which outlive no
	// long merge. It excludes token= in the connection string, and like
	// it switches on TLS except to host localhost.
	TokenSource oauth2.TokenSource
	// Getenv reads the environment variables PySpark's client honours,
	// with its precedence (pyspark/sql/connect/client/core.py):
	// SPARK_CONNECT_AUTHENTICATE_TOKEN is the token when the connection
	// string has none (and no TokenSource is given);
	// SPARK_CONNECT_USER_AGENT the user agent when the string has no
	// user_agent (before UserAgent); the user is the string's user_id,
	// else SPARK_USER, else USER, else none is sent, as PySpark sends
	// none. Nil means os.Getenv.
	Getenv func(string) string
}

// DefaultKeepAlive is Options.KeepAlive's default: just over gRPC Java's
// default minimum ping interval (5 minutes), which Spark Connect servers
// keep; a client that pings more often during a long call is sent away
// (GOAWAY "too_many_pings"), failing the call.
const DefaultKeepAlive = 5*time.Minute + 30*time.Second

// RetryPolicy retries the unary calls (analyze, settings, the dial check)
// that fail with gRPC UNAVAILABLE, with exponential backoff. Queries and
// commands are never sent twice: their broken streams are picked up again
// under their operation id (see Options.ReattachFor). The zero value means
// 4 attempts, 250ms initial and 4s maximum backoff.
type RetryPolicy struct {
	// MaxAttempts counts the first call; 1 disables retries. 0 means 4.
	MaxAttempts int
	// InitialBackoff is the wait before the second attempt; it doubles each
	// time up to MaxBackoff. 0 means 250ms and 4s.
	InitialBackoff, MaxBackoff time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = 250 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 4 * time.Second
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	return p
}

// Session is a connection to a Spark Connect server under one Spark
// session id. It is safe for concurrent use: the gRPC connection and the
// upstream executor keep no per-call state, and each call opens its own
// stream. Close it when done.
type Session struct {
	remote    Remote
	userID    string // as sent: the user_id given, else $SPARK_USER, else $USER, else none
	sessionID string
	agent     string      // client_type
	md        metadata.MD // headers of every call, the routing header included
	retry     RetryPolicy
	// reattachFor bounds the reattach attempts of a broken stream.
	reattachFor time.Duration
	// reattaches counts the streams picked up again, for tests.
	reattaches atomic.Int64
	conn       *grpc.ClientConn
	exec       base.SparkConnectClient
	version    string
	// started: the session id was made here (none was given), so no other
	// client was told it by the caller.
	started bool
	// namedTables: a frame of the session names catalog tables (see
	// NamesTables); onNamesTables is called when the first does.
	namedTables   atomic.Bool
	onNamesTables func()
}

// NamesTables records that a frame of the session names catalog tables
// (Table does; a SQL query the caller wrote may): Spark caches a table's
// schema and files in the session that analyses it, until REFRESH TABLE,
// so that such a session would not see another writer's later changes.
func (s *Session) NamesTables() {
	if s.namedTables.CompareAndSwap(false, true) && s.onNamesTables != nil {
		s.onNamesTables()
	}
}

// OnNamesTables has f called when a frame of the session first names
// catalog tables (see NamesTables), before the frame is built. Set it
// before the session is used.
func (s *Session) OnNamesTables(f func()) { s.onNamesTables = f }

// NamedTables says whether a frame of the session named catalog tables
// (see NamesTables).
func (s *Session) NamedTables() bool { return s.namedTables.Load() }

// maxMessageSize is the largest gRPC message accepted from the server
// (PySpark uses the same 128 MiB).
const maxMessageSize = 128 << 20

// Dial connects to the server of remote and verifies that it answers (one
// AnalyzePlan spark_version call, retried per opts.Retry). When it does not,
// the error wraps [ErrUnreachable] and names host:port.
func Dial(ctx context.Context, remote Remote, opts Options) (s *Session, err error) {
	defer guard("connect to spark", &err)
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if tok := EnvToken(remote, getenv); tok != "" && remote.Token() == "" && opts.TokenSource == nil {
		remote.token = &tok
	}
	if opts.TokenSource != nil && remote.Token() != "" {
		return nil, errors.New("connect to spark: the connection string has a token and a token source was given: give one of them")
	}
	headers, sessionID, started, err := sessionHeaders(remote)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(remote.Addr(), dialOptions(remote, opts)...)
	if err != nil {
		return nil, fmt.Errorf("connect to spark at %s: %w", remote.Addr(), err)
	}
	agent := fmt.Sprintf("%s go/%s os/%s", userAgent(remote, opts, getenv), runtime.Version(), runtime.GOOS)
	md := metadata.New(headers)
	userID := sessionUser(remote, getenv)
	reattachFor := opts.ReattachFor
	if reattachFor <= 0 {
		reattachFor = DefaultReattachFor
	}
	s = &Session{
		remote:      remote,
		userID:      userID,
		sessionID:   sessionID,
		started:     started,
		agent:       agent,
		md:          md,
		retry:       opts.Retry.withDefaults(),
		reattachFor: reattachFor,
		conn:        conn,
		exec: client.NewSparkExecutor(conn, md, sessionID, options.SparkClientOptions{
			UserAgent: agent,
			UserId:    userID,
		}),
	}
	if err := s.verify(ctx, opts.DialTimeout); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return s, nil
}

// dialOptions are the gRPC options of a connection to remote: TLS where
// the connection is secure, the token or token source as bearer
// credentials, keep-alive pings.
func dialOptions(remote Remote, opts Options) []grpc.DialOption {
	secure := remote.Secure() || opts.TokenSource != nil && remote.Host != "localhost"
	var creds credentials.TransportCredentials
	if secure {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	} else {
		creds = insecure.NewCredentials()
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize)),
	}
	if tok := remote.Token(); tok != "" {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(bearer{token: tok, secure: secure}))
	}
	if opts.TokenSource != nil {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(newTokenCredentials(opts.TokenSource, secure)))
	}
	if opts.KeepAlive >= 0 {
		ka := keepalive.ClientParameters{Time: opts.KeepAlive, Timeout: opts.KeepAliveTimeout}
		if ka.Time == 0 {
			ka.Time = DefaultKeepAlive
		}
		if ka.Timeout <= 0 {
			ka.Timeout = 20 * time.Second
		}
		dialOpts = append(dialOpts, grpc.WithKeepaliveParams(ka))
	}
	return dialOpts
}

// sessionHeaders are the headers of every call and the session id, given
// (session_id, or Databricks' routing header) or made here (started).
// Databricks serverless routes a session by that header, which must equal
// the session id: one UUID is sent as both (the header is meaningless to
// other servers), and either one given is honoured.
func sessionHeaders(remote Remote) (headers map[string]string, sessionID string, started bool, err error) {
	const routingHeader = "x-databricks-session-id"
	headers = map[string]string{}
	for k, v := range remote.Headers {
		headers[strings.ToLower(k)] = v
	}
	sessionID = remote.SessionID
	if sessionID == "" {
		sessionID = headers[routingHeader]
	}
	started = sessionID == ""
	if started {
		sessionID = uuid.NewString()
	}
	if h, set := headers[routingHeader]; set && h != sessionID {
		return nil, "", false, fmt.Errorf("connect to spark: session_id %s and the %s header %s differ: give one of them", sessionID, routingHeader, h)
	}
	headers[routingHeader] = sessionID
	return headers, sessionID, started, nil
}

// userAgent is the client's name as the connection string, then
// $SPARK_CONNECT_USER_AGENT, then opts give it ("sparkmerge" by default).
func userAgent(remote Remote, opts Options, getenv func(string) string) string {
	for _, agent := range []string{remote.UserAgent, getenv("SPARK_CONNECT_USER_AGENT"), opts.UserAgent} {
		if agent != "" {
			return agent
		}
	}
	return "sparkmerge"
}

// EnvToken is the token of remote, else $SPARK_CONNECT_AUTHENTICATE_TOKEN
// (as PySpark reads it), read through getenv.
func EnvToken(remote Remote, getenv func(string) string) string {
	if tok := remote.Token(); tok != "" {
		return tok
	}
	return getenv("SPARK_CONNECT_AUTHENTICATE_TOKEN")
}

// SessionUser is the user a session on remote is opened as (see
// sessionUser).
func SessionUser(remote Remote, getenv func(string) string) string {
	return sessionUser(remote, getenv)
}

// sessionUser is the user the session is opened as. The server keys a
// session by user and session id: without user_id, the user PySpark sends,
// so that a session id shared with PySpark names the same session
// (spark-connect-go sends "na" where PySpark sends none; user_id=na in
// the connection string matches it).
func sessionUser(remote Remote, getenv func(string) string) string {
	if remote.UserID != "" {
		return remote.UserID
	}
	if u := getenv("SPARK_USER"); u != "" {
		return u
	}
	return getenv("USER")
}

// verify asks the server its Spark version (retried per the session's
// policy, within timeout, 20 s when zero): a server that does not answer
// is an error wrapping [ErrUnreachable] naming host:port.
func (s *Session) verify(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := s.retrying(vctx, func() (err error) {
		defer guard("spark version", &err)
		s.version, err = s.exec.SparkVersion(vctx)
		return err
	})
	if err == nil {
		return nil
	}
	err = s.convertError(err)
	if !errors.Is(err, ErrUnreachable) && (errors.Is(err, context.DeadlineExceeded) || grpcCode(err) == codes.DeadlineExceeded) {
		err = &UnreachableError{Addr: s.remote.Addr(), Err: err}
	}
	return fmt.Errorf("connect to spark: %w", err)
}

// bearer sends the token as "authorization: Bearer <token>" with every call.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }

// String keeps the token out of any accidental print.
func (b bearer) String() string { return "bearer(REDACTED)" }

// SparkVersion returns the server's Spark version, e.g. "4.0.1".
func (s *Session) SparkVersion() string { return s.version }

// SessionID returns the Spark Connect session id (a UUID).
func (s *Session) SessionID() string { return s.sessionID }

// Started reports whether the session id was made by Dial rather than
// given (session_id, or Databricks' routing header).
func (s *Session) Started() bool { return s.started }

// Release ends the session on the server (ReleaseSession): its operations
// stop, and its temporary views, settings and the code Spark compiled for
// it are dropped now rather than when the session has been idle for
// spark.connect.session.manager.defaultSessionTimeout (an hour by
// default). The server refuses the session id afterwards. Servers before
// Spark 3.5 do not know the call (Unimplemented).
func (s *Session) Release(ctx context.Context) error {
	err := s.invoke(ctx, "ReleaseSession", s.request("ReleaseSessionRequest"), newMsg("ReleaseSessionResponse"))
	if err != nil {
		return fmt.Errorf("release session %s: %w", s.sessionID, s.convertError(err))
	}
	return nil
}

// Remote returns the connection string the session was dialed with.
func (s *Session) Remote() Remote { return s.remote }

// Close closes the connection. The server-side session is left to expire.
func (s *Session) Close() error {
	if s == nil || s.conn == nil {
		return nil
	}
	return s.conn.Close()
}

// retrying runs call until it succeeds, fails with a code other than
// UNAVAILABLE, runs out of attempts or ctx ends.
func (s *Session) retrying(ctx context.Context, call func() error) error {
	p := s.retry.withDefaults()
	backoff := p.InitialBackoff
	var err error
	for attempt := 1; ; attempt++ {
		err = call()
		if err == nil || grpcCode(err) != codes.Unavailable || attempt >= p.MaxAttempts {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, p.MaxBackoff)
	}
}

// call invokes method of the upstream executor with ctx and plan via
// reflection: the executor's methods take the generated *Plan type, which is
// internal to spark-connect-go, and plan is an instance of that very type
// (built from the global registry).
func (s *Session) call(ctx context.Context, method string, plan proto.Message) []reflect.Value {
	if s == nil || s.exec == nil {
		panic("session is not connected (use Dial)")
	}
	countRequest(ctx, method)
	m := reflect.ValueOf(s.exec).MethodByName(method)
	if !m.IsValid() {
		panic(buildError{"the upstream executor has no method " + method})
	}
	return m.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(plan)})
}

func errorAt(out []reflect.Value, i int) error {
	if e, _ := out[i].Interface().(error); e != nil {
		return e
	}
	return nil
}

// analyzeSchema runs AnalyzePlan(schema) and returns the response's DataType.
func (s *Session) analyzeSchema(ctx context.Context, plan proto.Message) (dt protoreflect.Message, err error) {
	err = s.retrying(ctx, func() (err error) {
		defer guard("analyze plan", &err)
		out := s.call(ctx, "AnalyzePlan", plan)
		if err := errorAt(out, 1); err != nil {
			return err
		}
		resp, ok := out[0].Interface().(proto.Message)
		if !ok || out[0].IsNil() {
			return errors.New("analyze plan: empty response")
		}
		sch := getMsg(resp.ProtoReflect(), "schema")
		if sch == nil || getMsg(sch, "schema") == nil {
			return errors.New("analyze plan: the response has no schema")
		}
		dt = getMsg(sch, "schema")
		return nil
	})
	return dt, s.convertError(err)
}

// analyzeExplain runs AnalyzePlan(explain, simple): the physical plan's
// text, without running it.
func (s *Session) analyzeExplain(ctx context.Context, plan proto.Message) (text string, err error) {
	err = s.retrying(ctx, func() (err error) {
		defer guard("analyze plan", &err)
		req := s.request("AnalyzePlanRequest")
		explain := mut(req, "explain")
		setMsg(explain, "plan", plan.ProtoReflect())
		explain.Set(fd(explain, "explain_mode"), protoreflect.ValueOfEnum(1)) // EXPLAIN_MODE_SIMPLE
		resp := newMsg("AnalyzePlanResponse")
		if err := s.invoke(ctx, "AnalyzePlan", req, resp); err != nil {
			return err
		}
		out := getMsg(resp, "explain")
		if out == nil {
			return errors.New("analyze plan: the response has no explain string")
		}
		text = out.Get(fd(out, "explain_string")).String()
		return nil
	})
	return text, s.convertError(err)
}

// analyzeInputFiles runs AnalyzePlan(input_files) on its own request:
// the upstream executor asks for schemas only.
func (s *Session) analyzeInputFiles(ctx context.Context, plan proto.Message) (files []string, err error) {
	err = s.retrying(ctx, func() (err error) {
		defer guard("analyze plan", &err)
		req := s.request("AnalyzePlanRequest")
		setMsg(mut(req, "input_files"), "plan", plan.ProtoReflect())
		resp := newMsg("AnalyzePlanResponse")
		if err := s.invoke(ctx, "AnalyzePlan", req, resp); err != nil {
			return err
		}
		in := getMsg(resp, "input_files")
		if in == nil {
			return errors.New("analyze plan: the response has no input files")
		}
		list := in.Get(fd(in, "files")).List()
		files = make([]string, list.Len())
		for i := range list.Len() {
			files[i] = list.Get(i).String()
		}
		return nil
	})
	return files, s.convertError(err)
}

// executeQuery runs a root plan and returns its result as one Arrow table
// (nil when the server sent no batch) and the result's schema (nil when
// the server sent none).
func (s *Session) executeQuery(ctx context.Context, plan proto.Message) (tbl arrow.Table, schema protoreflect.Message, err error) {
	out, err := s.execute(ctx, plan)
	if err != nil {
		return nil, nil, s.abandon(ctx, s.convertError(err), false)
	}
	defer out.release()
	return out.table(), out.schema, nil
}

// executeCommand runs a command plan for its effect. It is never sent
// twice: a broken stream is reattached to the same operation.
func (s *Session) executeCommand(ctx context.Context, plan proto.Message) error {
	out, err := s.execute(ctx, plan)
	if err != nil {
		return s.abandon(ctx, s.convertError(err), true)
	}
	out.release()
	return nil
}

// abandonTimeout bounds the interrupt sent after a lost connection.
const abandonTimeout = 10 * time.Second

// abandon handles a call that failed as unreachable while ctx is still
// live, typically a connection that keepalive found dead midway: the
// server would run the call's job to its end (a write included) for a
// client that has gone, so it is asked, on a new connection, to stop this
// session's operations. Best effort and bounded; for a command (which
// has effects) the error says whether the server took the request.
func (s *Session) abandon(ctx context.Context, err error, command bool) error {
	var ue *UnreachableError
	if !errors.As(err, &ue) || ctx.Err() != nil {
		return err
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	ierr := s.InterruptAll(ictx)
	switch {
	case ierr == nil:
		ue.Stop = "the server was reached on a new connection and asked to stop the job; check the target before rerunning"
	case command:
		ue.Stop = "the server could not be asked to stop the job, which may still run to its end; check the target before rerunning"
	}
	return err
}

// request returns a new request message (spark.connect.<name>) of this
// session: its session id, user and client type set.
func (s *Session) request(name string) protoreflect.Message {
	req := newMsg(name)
	setString(req, "session_id", s.sessionID)
	if s.userID != "" { // PySpark sends no user context without a user
		setString(mut(req, "user_context"), "user_id", s.userID)
	}
	setString(req, "client_type", s.agent)
	return req
}

// invoke makes a unary call of the Spark Connect service with the
// session's headers.
func (s *Session) invoke(ctx context.Context, method string, req, resp protoreflect.Message) error {
	countRequest(ctx, method)
	return s.conn.Invoke(metadata.NewOutgoingContext(ctx, s.md), service+method, req.Interface(), resp.Interface())
}

// InterruptAll asks the server to stop every running operation of this
// session (the Interrupt RPC with INTERRUPT_TYPE_ALL). Cancelling a call's
// context only stops the client: the Spark job it started runs on.
func (s *Session) InterruptAll(ctx context.Context) error {
	return s.interrupt(ctx, "INTERRUPT_TYPE_ALL", "")
}

// interrupt sends the Interrupt RPC of the given type (for
// INTERRUPT_TYPE_OPERATION_ID, of that operation).
func (s *Session) interrupt(ctx context.Context, kind, operationID string) (err error) {
	defer guard("interrupt", &err)
	req := s.request("InterruptRequest")
	setEnum(req, "interrupt_type", kind)
	if operationID != "" {
		setString(req, "operation_id", operationID)
	}
	if err := s.invoke(ctx, "Interrupt", req, newMsg("InterruptResponse")); err != nil {
		return fmt.Errorf("interrupt: %w", s.convertError(err))
	}
	return nil
}

// Conf returns the values of the given session settings (the Config RPC's
// get: a setting the session has not set comes back with its default, and
// an unknown one is an error). It is one call, retried like an analysis.
func (s *Session) Conf(ctx context.Context, keys ...string) (values map[string]string, err error) {
	return s.getConf(ctx, "get", keys)
}

// ConfOption gives the settings of keys that have a value, as Conf, but
// without failing on a key the server has no value for (the Config RPC's
// get_option): Conf's get fails on a Spark setting that is neither set
// nor an SQL setting with a default (spark.executor.cores, say).
func (s *Session) ConfOption(ctx context.Context, keys ...string) (values map[string]string, err error) {
	return s.getConf(ctx, "get_option", keys)
}

// getConf is the Config RPC's operation (get, get_option) of keys: the
// settings that have a value.
func (s *Session) getConf(ctx context.Context, operation string, keys []string) (values map[string]string, err error) {
	err = s.retrying(ctx, func() (err error) {
		defer guard("get config", &err)
		req := s.request("ConfigRequest")
		appendStrings(mut(mut(req, "operation"), operation), "keys", keys...)
		resp := newMsg("ConfigResponse")
		if err := s.invoke(ctx, "Config", req, resp); err != nil {
			return err
		}
		values = configPairs(resp)
		return nil
	})
	return values, s.convertError(err)
}

// SetConf sets session settings (the Config RPC's set), all or nothing.
// The server refuses static settings and unknown spark.sql.* ones. It sets
// a call's pairs one by one and stops at the first it refuses, keeping
// those before it; so when it refuses one of several, the settings SetConf
// changed are put back as the session had them (set again, or unset), and
// a session shared with other clients is left as it was.
func (s *Session) SetConf(ctx context.Context, values map[string]string) (err error) {
	if len(values) == 0 {
		return nil
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var before map[string]string
	if len(keys) > 1 {
		if before, err = s.sessionConf(ctx); err != nil {
			return fmt.Errorf("set config: read the session's settings first: %w", err)
		}
	}
	err = s.setConf(ctx, keys, values)
	if err == nil || before == nil {
		return err
	}
	rctx := context.WithoutCancel(ctx)
	now, rerr := s.sessionConf(rctx)
	if rerr == nil {
		rerr = s.restoreConf(rctx, keys, before, now)
	}
	if rerr != nil {
		return fmt.Errorf("%w (and putting back the settings set before it failed: %v)", err, rerr)
	}
	return err
}

// setConf sends one Config set of keys' values, in keys' order.
func (s *Session) setConf(ctx context.Context, keys []string, values map[string]string) error {
	err := s.retrying(ctx, func() (err error) {
		defer guard("set config", &err)
		req := s.request("ConfigRequest")
		set := mut(mut(req, "operation"), "set")
		for _, k := range keys {
			kv := newMsg("KeyValue")
			setString(kv, "key", k)
			setString(kv, "value", values[k])
			appendMsg(set, "pairs", kv)
		}
		return s.invoke(ctx, "Config", req, newMsg("ConfigResponse"))
	})
	return s.convertError(err)
}

// sessionConf is every setting the session has a value for (the Config
// RPC's get_all): set in it, or by the server's own configuration; a
// setting left at its default is absent.
func (s *Session) sessionConf(ctx context.Context) (values map[string]string, err error) {
	err = s.retrying(ctx, func() (err error) {
		defer guard("get all config", &err)
		req := s.request("ConfigRequest")
		mut(mut(req, "operation"), "get_all")
		resp := newMsg("ConfigResponse")
		if err := s.invoke(ctx, "Config", req, resp); err != nil {
			return err
		}
		values = configPairs(resp)
		return nil
	})
	return values, s.convertError(err)
}

// configPairs are the settings a ConfigResponse gives a value, by key.
func configPairs(resp protoreflect.Message) map[string]string {
	values := map[string]string{}
	pairs := resp.Get(fd(resp, "pairs")).List()
	for i := range pairs.Len() {
		kv := pairs.Get(i).Message()
		if v := fd(kv, "value"); kv.Has(v) {
			values[kv.Get(fd(kv, "key")).String()] = kv.Get(v).String()
		}
	}
	return values
}

// Settings is every setting the session has a value for: set in it, or by
// the server's own configuration (the Config RPC's get_all).
func (s *Session) Settings(ctx context.Context) (map[string]string, error) {
	return s.sessionConf(ctx)
}

// ResetSettings puts every setting of the session back as to has them:
// a setting to has is set to its value where the session's differs, any
// other the session has is unset (back to the server's default).
func (s *Session) ResetSettings(ctx context.Context, to map[string]string) error {
	now, err := s.sessionConf(ctx)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(now)+len(to))
	for k := range now {
		keys = append(keys, k)
	}
	for k := range to {
		if _, ok := now[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return s.restoreConf(ctx, keys, to, now)
}

// restoreConf puts keys back as before had them, where the session's
// value now differs: set to their earlier value, or unset when the
// session had none.
func (s *Session) restoreConf(ctx context.Context, keys []string, before, now map[string]string) error {
	var reset, unset []string
	for _, k := range keys {
		old, had := before[k]
		cur, has := now[k]
		switch {
		case had && (!has || cur != old):
			reset = append(reset, k)
		case !had && has:
			unset = append(unset, k)
		}
	}
	if len(reset) > 0 {
		if err := s.setConf(ctx, reset, before); err != nil {
			return err
		}
	}
	if len(unset) == 0 {
		return nil
	}
	err := s.retrying(ctx, func() (err error) {
		defer guard("unset config", &err)
		req := s.request("ConfigRequest")
		appendStrings(mut(mut(req, "operation"), "unset"), "keys", unset...)
		return s.invoke(ctx, "Config", req, newMsg("ConfigResponse"))
	})
	return s.convertError(err)
}
