package connect

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// execServer is a Spark Connect server on loopback whose execution RPCs
// (ExecutePlan, ReattachExecute, ReleaseExecute, Interrupt) follow a
// script, for the client's reattach logic. AnalyzePlan answers the
// version only.
type execServer struct {
	addr    string
	version string
	// script answers call number n (counting execution RPCs from 0).
	script func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, ctx context.Context) error
	// details answers FetchErrorDetails (nil: Unimplemented).
	details func(req protoreflect.Message) protoreflect.Message

	mu    sync.Mutex
	calls []execCall
}

type execCall struct {
	method string
	req    protoreflect.Message
	md     metadata.MD
}

func startExecServer(t *testing.T, version string, script func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, ctx context.Context) error) *execServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &execServer{addr: lis.Addr().String(), version: version, script: script}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(f.handle))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return f
}

var requestTypes = map[string]string{
	"AnalyzePlan":     "AnalyzePlanRequest",
	"ExecutePlan":     "ExecutePlanRequest",
	"ReattachExecute": "ReattachExecuteRequest",
	"ReleaseExecute":  "ReleaseExecuteRequest",
	"Interrupt":       "InterruptRequest",
	// FetchErrorDetails is answered by execServer.details.
	"FetchErrorDetails": "FetchErrorDetailsRequest",
}

func (f *execServer) handle(_ any, stream grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(stream)
	method := strings.TrimPrefix(full, service)
	typ, ok := requestTypes[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "fake: %s", method)
	}
	req := newMsg(typ)
	if err := stream.RecvMsg(req.Interface()); err != nil {
		return err
	}
	if method == "FetchErrorDetails" {
		if f.details == nil {
			return status.Errorf(codes.Unimplemented, "fake: %s", method)
		}
		return stream.SendMsg(f.details(req).Interface())
	}
	if method == "AnalyzePlan" {
		resp := newMsg("AnalyzePlanResponse")
		setString(resp, "session_id", req.Get(fd(req, "session_id")).String())
		setString(mut(resp, "spark_version"), "version", f.version)
		return stream.SendMsg(resp.Interface())
	}
	md, _ := metadata.FromIncomingContext(stream.Context())
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, execCall{method, req, md})
	f.mu.Unlock()
	switch method {
	case "ReleaseExecute":
		return stream.SendMsg(newMsg("ReleaseExecuteResponse").Interface())
	case "Interrupt":
		return stream.SendMsg(newMsg("InterruptResponse").Interface())
	}
	sid := req.Get(fd(req, "session_id")).String()
	send := func(resp protoreflect.Message) error {
		setString(resp, "session_id", sid)
		return stream.SendMsg(resp.Interface())
	}
	return f.script(n, method, req, send, stream.Context())
}

// callsOf returns the recorded calls of method.
func (f *execServer) callsOf(method string) []execCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []execCall
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

func (f *execServer) methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c.method != "ReleaseExecute" {
			out = append(out, c.method)
		}
	}
	return out
}

// batch is a response with one Arrow batch of column n holding vals, or
// none without vals. (It runs in the server's goroutines: no t.Fatal.)
func batch(t *testing.T, id string, vals ...int64) protoreflect.Message {
	t.Helper()
	resp := newMsg("ExecutePlanResponse")
	setString(resp, "response_id", id)
	if len(vals) == 0 {
		return resp
	}
	data, err := arrowIPC([]LocalColumn{{Name: "n", Longs: vals}})
	if err != nil {
		t.Error(err)
		return resp
	}
	b := mut(resp, "arrow_batch")
	b.Set(fd(b, "data"), protoreflect.ValueOfBytes(data))
	b.Set(fd(b, "row_count"), protoreflect.ValueOfInt64(int64(len(vals))))
	return resp
}

func complete(id string) protoreflect.Message {
	resp := newMsg("ExecutePlanResponse")
	setString(resp, "response_id", id)
	mut(resp, "result_complete")
	return resp
}

func sparkErr(class string) error {
	st, _ := status.New(codes.Internal, "["+class+"] fake. SQLSTATE: XXKCM").WithDetails(&errdetails.ErrorInfo{
		Reason:   "org.apache.spark.SparkSQLException",
		Domain:   "org.apache.spark",
		Metadata: map[string]string{"errorClass": class},
	})
	return st.Err()
}

func dialExec(t *testing.T, f *execServer, opts Options) *Session {
	t.Helper()
	remote, err := ParseRemote("sc://" + f.addr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(context.Background(), remote, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func collectN(t *testing.T, s *Session) ([]int64, error) {
	t.Helper()
	rows, err := s.SQL("SELECT n").Collect(context.Background())
	if err != nil {
		return nil, err
	}
	var got []int64
	for _, r := range rows.Values {
		got = append(got, r[0].(int64))
	}
	return got, nil
}

func str(m protoreflect.Message, name string) string { return m.Get(fd(m, name)).String() }

// waitFor polls cond for up to 5 s (the release is sent in the background).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("not seen within 5 s: %s", what)
}

// The server ends a reattachable stream on purpose (after 2 minutes by
// default): the client resumes after the last response it read, under the
// same operation, and the result holds every batch once.
func TestExecuteResumesAStreamTheServerEnded(t *testing.T) {
	f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		switch n {
		case 0: // ExecutePlan: two batches, then the stream ends
			if err := send(batch(t, "r1", 1, 2)); err != nil {
				return err
			}
			return send(batch(t, "r2", 3))
		case 1: // ReattachExecute after r2
			if got := str(req, "last_response_id"); got != "r2" {
				return status.Errorf(codes.InvalidArgument, "reattached after %q, want r2", got)
			}
			if err := send(batch(t, "r3", 4)); err != nil {
				return err
			}
			return send(complete("r4"))
		}
		return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
	})
	s := dialExec(t, f, Options{})
	got, err := collectN(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ExecutePlan", "ReattachExecute"}, f.methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	exec := f.callsOf("ExecutePlan")[0].req
	op := str(exec, "operation_id")
	if _, err := uuid.Parse(op); err != nil {
		t.Errorf("operation_id %q: %v", op, err)
	}
	opts := exec.Get(fd(exec, "request_options")).List()
	if opts.Len() != 1 || !getMsg(opts.Get(0).Message(), "reattach_options").Get(fd(getMsg(opts.Get(0).Message(), "reattach_options"), "reattachable")).Bool() {
		t.Errorf("ExecutePlan did not ask for a reattachable operation: %v", exec)
	}
	if got := str(f.callsOf("ReattachExecute")[0].req, "operation_id"); got != op {
		t.Errorf("reattached to operation %q, want %q", got, op)
	}
	waitFor(t, "ReleaseExecute(release_all) of the operation", func() bool {
		rel := f.callsOf("ReleaseExecute")
		return len(rel) == 1 && str(rel[0].req, "operation_id") == op && getMsg(rel[0].req, "release_all") != nil
	})
	for _, c := range f.calls {
		if got := c.md.Get("x-databricks-session-id"); len(got) != 1 || got[0] != s.SessionID() {
			t.Errorf("%s: routing header %q, want the session id", c.method, got)
		}
	}
}

// A connection that breaks midway (UNAVAILABLE) is picked up again: a
// write's command is never sent twice.
func TestExecuteReattachesABrokenStream(t *testing.T) {
	f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		switch {
		case n == 0:
			if err := send(batch(t, "r1")); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "connection reset")
		case n == 1 || n == 2: // the first reattach also fails
			if n == 1 {
				return status.Error(codes.Unavailable, "connection refused")
			}
			return send(complete("r2"))
		}
		return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
	})
	s := dialExec(t, f, Options{})
	if err := s.ExecSQL(context.Background(), "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ExecutePlan", "ReattachExecute", "ReattachExecute"}, f.methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	for _, c := range f.callsOf("ReattachExecute") {
		if got := str(c.req, "last_response_id"); got != "r1" {
			t.Errorf("reattached after %q, want r1", got)
		}
	}
}

// A request lost before the server got it (the reattach finds no such
// operation and nothing was read) is sent again under the same id; an
// operation the server lost after it had answered fails, never reruns.
func TestExecuteOperationNotFound(t *testing.T) {
	t.Run("never received", func(t *testing.T) {
		f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
			switch n {
			case 0:
				return status.Error(codes.Unavailable, "connection reset")
			case 1:
				return sparkErr("INVALID_HANDLE.OPERATION_NOT_FOUND")
			case 2:
				return send(complete("r1"))
			}
			return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
		})
		s := dialExec(t, f, Options{})
		if err := s.ExecSQL(context.Background(), "CREATE TABLE t (a INT)"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ExecutePlan", "ReattachExecute", "ExecutePlan"}, f.methods()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		ex := f.callsOf("ExecutePlan")
		if len(ex) == 2 && str(ex[0].req, "operation_id") != str(ex[1].req, "operation_id") {
			t.Errorf("the request was sent again under another operation id")
		}
	})
	t.Run("lost after answering", func(t *testing.T) {
		f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
			switch n {
			case 0:
				if err := send(batch(t, "r1", 1)); err != nil {
					return err
				}
				return status.Error(codes.Unavailable, "connection reset")
			case 1:
				return sparkErr("INVALID_HANDLE.OPERATION_NOT_FOUND")
			}
			return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
		})
		s := dialExec(t, f, Options{})
		err := s.ExecSQL(context.Background(), "CREATE TABLE t (a INT)")
		if err == nil || !strings.Contains(err.Error(), "no longer knows operation") {
			t.Errorf("err = %v, want the lost operation named", err)
		}
		if diff := cmp.Diff([]string{"ExecutePlan", "ReattachExecute"}, f.methods()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
}

// Spark's own errors end the call at once, with their class.
func TestExecuteSparkErrorIsFinal(t *testing.T) {
	f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		return sparkErr("PATH_NOT_FOUND")
	})
	s := dialExec(t, f, Options{})
	_, err := collectN(t, s)
	var se *SparkError
	if !errors.As(err, &se) || se.ErrorClass != "PATH_NOT_FOUND" {
		t.Errorf("err = %v, want the Spark error", err)
	}
	if diff := cmp.Diff([]string{"ExecutePlan"}, f.methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// A Spark error's causes, which the server keeps for FetchErrorDetails,
// follow its message: a failed write's says which record of which file
// Spark could not parse. A server without them (Unimplemented, no answer)
// leaves the message as it was.
func TestSparkErrorCarriesItsCauses(t *testing.T) {
	failed := func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		st, _ := status.New(codes.Internal, "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file a.csv. SQLSTATE: KD001").WithDetails(&errdetails.ErrorInfo{
			Reason: "org.apache.spark.SparkException", Domain: "org.apache.spark",
			Metadata: map[string]string{"errorClass": "FAILED_READ_FILE.NO_HINT", "errorId": "e-1"},
		})
		return st.Err()
	}
	f := startExecServer(t, "4.0.1", failed)
	var asked []string
	f.details = func(req protoreflect.Message) protoreflect.Message {
		asked = append(asked, req.Get(fd(req, "error_id")).String())
		resp := newMsg("FetchErrorDetailsResponse")
		setInt32(resp, "root_error_idx", 0)
		for i, m := range []string{"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file a.csv.", "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing.", `[MALFORMED_CSV_RECORD] Malformed CSV record: 1,"hello`} {
			e := newMsg("FetchErrorDetailsResponse.Error")
			setString(e, "message", m)
			if i < 2 {
				setInt32(e, "cause_idx", int32(i+1))
			}
			appendMsg(resp, "errors", e)
		}
		return resp
	}
	s := dialExec(t, f, Options{})
	_, err := collectN(t, s)
	want := "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file a.csv. SQLSTATE: KD001\n" +
		"Caused by: [MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing.\n" +
		`Caused by: [MALFORMED_CSV_RECORD] Malformed CSV record: 1,"hello`
	var se *SparkError
	if !errors.As(err, &se) || se.ErrorClass != "FAILED_READ_FILE.NO_HINT" || se.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if !cmp.Equal(asked, []string{"e-1"}) {
		t.Errorf("FetchErrorDetails asked of %q, want e-1", asked)
	}

	// An error that says all in its message is not asked about.
	analysis := startExecServer(t, "4.0.1", func(int, string, protoreflect.Message, func(protoreflect.Message) error, context.Context) error {
		st, _ := status.New(codes.Internal, "[PATH_NOT_FOUND] Path does not exist: file:/x. SQLSTATE: 42K03").WithDetails(&errdetails.ErrorInfo{
			Reason: "org.apache.spark.sql.AnalysisException", Domain: "org.apache.spark",
			Metadata: map[string]string{"errorClass": "PATH_NOT_FOUND", "errorId": "e-2"},
		})
		return st.Err()
	})
	analysis.details = f.details
	if _, err = collectN(t, dialExec(t, analysis, Options{})); !errors.As(err, &se) || se.ErrorClass != "PATH_NOT_FOUND" || len(asked) != 1 {
		t.Errorf("an analysis error: %v, FetchErrorDetails asked of %q", err, asked)
	}

	plain := startExecServer(t, "4.0.1", failed) // FetchErrorDetails unimplemented
	_, err = collectN(t, dialExec(t, plain, Options{}))
	if !errors.As(err, &se) || se.Error() != "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file a.csv. SQLSTATE: KD001" {
		t.Errorf("without details: err = %v", err)
	}
}

// A caller that gives up stops the operation on the server: a detached
// reattachable operation would otherwise run on for a client gone.
func TestExecuteCancelInterruptsTheOperation(t *testing.T) {
	started := make(chan struct{})
	f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	s := dialExec(t, f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	err := s.ExecSQL(ctx, "INSERT INTO t SELECT * FROM big")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	op := str(f.callsOf("ExecutePlan")[0].req, "operation_id")
	in := f.callsOf("Interrupt")
	if len(in) != 1 || str(in[0].req, "operation_id") != op || in[0].req.Get(fd(in[0].req, "interrupt_type")).Enum() != in[0].req.Descriptor().Fields().ByName("interrupt_type").Enum().Values().ByName("INTERRUPT_TYPE_OPERATION_ID").Number() {
		t.Errorf("interrupts %v, want one for operation %s", in, op)
	}
}

// A server that stays unreachable fails the call as unreachable once
// ReattachFor has passed.
func TestExecuteGivesUpAfterReattachFor(t *testing.T) {
	f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		if n == 0 {
			if err := send(batch(t, "r1", 1)); err != nil {
				return err
			}
		}
		return status.Error(codes.Unavailable, "connection refused")
	})
	s := dialExec(t, f, Options{ReattachFor: time.Second})
	start := time.Now()
	_, err := collectN(t, s)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s, want about ReattachFor (1 s) plus one backoff", took)
	}
	if n := len(f.callsOf("ReattachExecute")); n < 2 {
		t.Errorf("%d reattach attempts, want several", n)
	}
}

// A Spark 3.4 server knows no reattachable execution and sends no
// ResultComplete: the stream's end is the result's.
func TestExecuteOnAServerWithoutReattach(t *testing.T) {
	f := startExecServer(t, "3.4.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		if n > 0 {
			return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
		}
		return send(batch(t, "r1", 7))
	})
	s := dialExec(t, f, Options{})
	got, err := collectN(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{7}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	exec := f.callsOf("ExecutePlan")[0].req
	if n := exec.Get(fd(exec, "request_options")).List().Len(); n != 0 {
		t.Errorf("asked a 3.4 server for a reattachable operation")
	}
}

func TestVersionNumbers(t *testing.T) {
	for v, want := range map[string]bool{"4.0.1": true, "3.5.0": true, "3.5": true, "3.4.1": false, "16.4.x-scala2.12": true, "": true, "x": true} {
		s := &Session{version: v}
		if got := s.reattachable(); got != want {
			t.Errorf("reattachable(%q) = %v, want %v", v, got, want)
		}
	}
}

// A server that keeps no reattachable operations
// (spark.connect.execute.reattachable.enabled=false) ends the one stream
// without ResultComplete and forgets the operation: the clean end is the
// result's, and a command, answered by no response at all, is never sent
// again.
func TestExecuteOnAServerThatKeepsNoOperations(t *testing.T) {
	script := func(rows bool) func(int, string, protoreflect.Message, func(protoreflect.Message) error, context.Context) error {
		return func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
			switch {
			case n == 0 && rows:
				return send(batch(t, "r1", 5, 6))
			case n == 0:
				return nil
			case n == 1 && method == "ReattachExecute":
				return sparkErr("INVALID_HANDLE.OPERATION_NOT_FOUND")
			}
			return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
		}
	}
	f := startExecServer(t, "4.0.1", script(true))
	got, err := collectN(t, dialExec(t, f, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{5, 6}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	f = startExecServer(t, "4.0.1", script(false))
	if err := dialExec(t, f, Options{}).ExecSQL(context.Background(), "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ExecutePlan", "ReattachExecute"}, f.methods()); diff != "" {
		t.Errorf("calls (-want +got):\n%s (a command sent twice?)", diff)
	}
}

// Spark 4's execution progress, streamed with the responses, reaches the
// function WithProgress put in the context.
func TestExecutionProgressRead(t *testing.T) {
	m := newMsg("ExecutePlanResponse.ExecutionProgress")
	st := newMsg("ExecutePlanResponse.ExecutionProgress.StageInfo")
	setInt64(st, "stage_id", 3)
	setInt64(st, "num_tasks", 40)
	setInt64(st, "num_completed_tasks", 12)
	setInt64(st, "input_bytes_read", 1<<20)
	appendMsg(m, "stages", st)
	setInt64(m, "num_inflight_tasks", 2)
	resp := newMsg("ExecutePlanResponse")
	setMsg(resp, "execution_progress", m)
	var got []Progress
	ctx := WithProgress(context.Background(), func(p Progress) { got = append(got, p) })
	op := &operation{s: &Session{}}
	op.progress, _ = ctx.Value(progressKey{}).(func(Progress))
	if err := op.take(resp); err != nil {
		t.Fatal(err)
	}
	want := []Progress{{Stages: []StageProgress{{ID: 3, Tasks: 40, CompletedTasks: 12, InputBytesRead: 1 << 20}}, InflightTasks: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// setInt64 sets field name of m, for building the server's messages.
func setInt64(m protoreflect.Message, name string, v int64) {
	m.Set(fd(m, name), protoreflect.ValueOfInt64(v))
}
