package connect

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sparkmerge/sparkmerge"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// fakeServer is a Spark Connect server on loopback that answers AnalyzePlan
// (spark_version and schema) and records the metadata and requests it got.
// ExecutePlan fails with a Spark error carrying error class details.
type fakeServer struct {
	addr string
	mu   sync.Mutex
	md   []metadata.MD
	reqs []proto.Message
}

func startFake(t *testing.T) *fakeServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{addr: lis.Addr().String()}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(f.handle))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return f
}

func (f *fakeServer) handle(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	md, _ := metadata.FromIncomingContext(stream.Context())
	var req proto.Message
	switch method {
	case "/spark.connect.SparkConnectService/AnalyzePlan":
		req = newMsg("AnalyzePlanRequest").Interface()
	case "/spark.connect.SparkConnectService/ExecutePlan":
		req = newMsg("ExecutePlanRequest").Interface()
	default:
		return status.Errorf(codes.Unimplemented, "fake: %s", method)
	}
	if err := stream.RecvMsg(req); err != nil {
		return err
	}
	f.mu.Lock()
	f.md = append(f.md, md)
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if strings.HasSuffix(method, "/ExecutePlan") {
		st, _ := status.New(codes.Internal, "[PATH_NOT_FOUND] Path does not exist: file:/nope. SQLSTATE: 42K03").WithDetails(&errdetails.ErrorInfo{
			Reason: "org.apache.spark.sql.AnalysisException",
			Domain: "org.apache.spark",
			Metadata: map[string]string{
				"errorClass":        "PATH_NOT_FOUND",
				"sqlState":          "42K03",
				"messageParameters": `{"path":"file:/nope"}`,
			},
		})
		return st.Err()
	}
	r := req.ProtoReflect()
	resp := newMsg("AnalyzePlanResponse")
	setString(resp, "session_id", r.Get(fd(r, "session_id")).String())
	setString(resp, "server_side_session_id", "srv")
	if getMsg(r, "spark_version") != nil {
		setString(mut(resp, "spark_version"), "version", "4.0.1-fake")
	} else {
		dt := newMsg("DataType").Interface()
		if err := prototext.Unmarshal([]byte(`struct { fields { name: "amount" data_type { decimal { precision: 12 scale: 4 } } nullable: true } }`), dt); err != nil {
			return err
		}
		setMsg(mut(resp, "schema"), "schema", dt.ProtoReflect())
	}
	return stream.SendMsg(resp.Interface())
}

func TestDialFakeServer(t *testing.T) {
	fake := startFake(t)
	const sid = "6a1b2c3d-1111-4222-8333-444455556666"
	remote, err := ParseRemote("sc://" + strings.Replace(fake.addr, "127.0.0.1", "localhost", 1) +
		"/;token=abc==;user_id=ann;session_id=" + sid + ";X-Databricks-Cluster-Id=C1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Dial(ctx, remote, Options{UserAgent: "test-agent"})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer s.Close()
	if s.SparkVersion() != "4.0.1-fake" {
		t.Errorf("SparkVersion() = %q", s.SparkVersion())
	}
	if s.SessionID() != sid {
		t.Errorf("SessionID() = %q, want %q", s.SessionID(), sid)
	}

	got, err := s.Read(ReadSpec{Format: "csv", Paths: []string{"/a", "/b"}}).Schema(ctx)
	if err != nil {
		t.Fatalf("Schema: %v", err)
	}
	want := sparkmerge.Schema{Fields: []sparkmerge.Field{{Name: "amount", Type: sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 12, Scale: 4}, Nullable: true}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema (-want +got):\n%s", diff)
	}

	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.md) != 2 {
		t.Fatalf("server saw %d calls, want 2", len(fake.md))
	}
	for i, md := range fake.md {
		if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer abc==" {
			t.Errorf("call %d: authorization = %q, want the whole token", i, got)
		}
		if got := md.Get("x-databricks-cluster-id"); len(got) != 1 || got[0] != "C1" {
			t.Errorf("call %d: x-databricks-cluster-id = %q", i, got)
		}
		if got := md.Get("x-databricks-session-id"); len(got) != 1 || got[0] != sid {
			t.Errorf("call %d: x-databricks-session-id = %q, want the session id", i, got)
		}
		r := fake.reqs[i].ProtoReflect()
		if got := r.Get(fd(r, "session_id")).String(); got != sid {
			t.Errorf("call %d: session_id = %q", i, got)
		}
		uc := getMsg(r, "user_context")
		if got := uc.Get(fd(uc, "user_id")).String(); got != "ann" {
			t.Errorf("call %d: user_id = %q", i, got)
		}
		if got := r.Get(fd(r, "client_type")).String(); !strings.HasPrefix(got, "test-agent go/") {
			t.Errorf("call %d: client_type = %q", i, got)
		}
	}
	// The second call analyzed the read we built.
	plan := getMsg(getMsg(fake.reqs[1].ProtoReflect(), "schema"), "plan")
	checkProto(t, "Plan", plan.Interface(), `root { read { data_source { format: "csv" paths: "/a" paths: "/b" } } }`)
}

// Databricks serverless routes by the x-databricks-session-id header: sent
// equal to the session id, which the header sets when session_id is not
// given; a conflict between the two is an error.
func TestDatabricksSessionHeader(t *testing.T) {
	fake := startFake(t)
	const sid = "7a1b2c3d-1111-4222-8333-444455556666"
	for _, tc := range []struct {
		params string
		want   string // "" for a fresh UUID, "error" for a refusal
	}{
		{"", ""},
		{"/;x-databricks-session-id=" + sid, sid},
		{"/;session_id=" + sid, sid},
		{"/;session_id=" + sid + ";x-databricks-session-id=8a1b2c3d-1111-4222-8333-444455556666", "error"},
	} {
		remote, err := ParseRemote("sc://" + fake.addr + tc.params)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Dial(context.Background(), remote, Options{})
		if tc.want == "error" {
			if err == nil {
				s.Close()
				t.Errorf("%s: conflicting session ids accepted", tc.params)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.params, err)
		}
		if tc.want != "" && s.SessionID() != tc.want {
			t.Errorf("%s: session id %s, want %s", tc.params, s.SessionID(), tc.want)
		}
		fake.mu.Lock()
		last := fake.md[len(fake.md)-1]
		fake.mu.Unlock()
		if got := last.Get("x-databricks-session-id"); len(got) != 1 || got[0] != s.SessionID() {
			t.Errorf("%s: header %q, session id %s", tc.params, got, s.SessionID())
		}
		s.Close()
	}
}

func TestSparkErrorKeepsClassStateAndParameters(t *testing.T) {
	fake := startFake(t)
	remote, _ := ParseRemote("sc://" + fake.addr)
	ctx := context.Background()
	s, err := Dial(ctx, remote, Options{})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer s.Close()
	_, err = s.Read(ReadSpec{Format: "csv", Paths: []string{"/nope"}}).Collect(ctx)
	var se *SparkError
	if !errors.As(err, &se) {
		t.Fatalf("Collect error %v (%T) is not a *SparkError", err, err)
	}
	want := &SparkError{
		ErrorClass: "PATH_NOT_FOUND",
		SQLState:   "42K03",
		Message:    "[PATH_NOT_FOUND] Path does not exist: file:/nope. SQLSTATE: 42K03",
		Parameters: map[string]string{"path": "file:/nope"},
		Reason:     "org.apache.spark.sql.AnalysisException",
		Code:       "Internal",
	}
	if diff := cmp.Diff(want, se, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
		t.Errorf("SparkError (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(err.Error(), "collect: [PATH_NOT_FOUND] Path does not exist") {
		t.Errorf("error text = %q", err.Error())
	}
	if errors.Is(err, ErrUnreachable) {
		t.Error("a Spark error is reported as unreachable")
	}
}

func TestDialClosedPortIsUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	remote, _ := ParseRemote("sc://" + addr + "/;token=s3cr3t")
	remote.Host = "localhost" // keep the token on plain loopback
	start := time.Now()
	_, err = Dial(context.Background(), remote, Options{Retry: RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond}})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Dial error = %v, want ErrUnreachable", err)
	}
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.Addr != remote.Addr() {
		t.Errorf("error %v does not name %s", err, remote.Addr())
	}
	for _, want := range []string{remote.Addr(), "check the connection string"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error shows the token: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Dial took %v", d)
	}
}

func TestGuardTurnsPanicsIntoErrors(t *testing.T) {
	f := func() (err error) {
		defer guard("op", &err)
		var s []int
		_ = s[len(s)] // panics: index out of range
		return nil
	}
	if err := f(); err == nil || !strings.HasPrefix(err.Error(), "op: spark connect client panicked") {
		t.Errorf("guard: %v", err)
	}
	g := func() (err error) {
		defer guard("op", &err)
		newMsg("NoSuchMessage")
		return nil
	}
	var be buildError
	if err := g(); !errors.As(err, &be) {
		t.Errorf("guard(buildError) = %v", err)
	}
}

// The environment variables PySpark's client honours, with its precedence
// (pyspark/sql/connect/client/core.py): the connection string first, then
// SPARK_CONNECT_AUTHENTICATE_TOKEN, SPARK_CONNECT_USER_AGENT, SPARK_USER
// and USER; without any user, none is sent, as PySpark sends none.
func TestDialHonoursPySparkEnvironment(t *testing.T) {
	tests := []struct {
		name      string
		params    string
		env       map[string]string
		wantAuth  string // authorization header, "" for none
		wantUser  string
		wantAgent string // client_type's prefix
	}{
		{"nothing set", "", nil, "", "", "sparkmerge-test go/"},
		{"USER", "", map[string]string{"USER": "ann"}, "", "ann", "sparkmerge-test go/"},
		{"SPARK_USER before USER", "", map[string]string{"USER": "ann", "SPARK_USER": "bob"}, "", "bob", "sparkmerge-test go/"},
		{"user_id before SPARK_USER", ";user_id=cy", map[string]string{"SPARK_USER": "bob"}, "", "cy", "sparkmerge-test go/"},
		{"token from the environment", "", map[string]string{"SPARK_CONNECT_AUTHENTICATE_TOKEN": "t0k"}, "Bearer t0k", "", "sparkmerge-test go/"},
		{"token= before the environment", ";token=str", map[string]string{"SPARK_CONNECT_AUTHENTICATE_TOKEN": "t0k"}, "Bearer str", "", "sparkmerge-test go/"},
		{"user agent from the environment", "", map[string]string{"SPARK_CONNECT_USER_AGENT": "nightly-job"}, "", "", "nightly-job go/"},
		{"user_agent= before the environment", ";user_agent=notebook", map[string]string{"SPARK_CONNECT_USER_AGENT": "nightly-job"}, "", "", "notebook go/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startFake(t)
			// localhost: a token goes over plain loopback, as PySpark's
			// local_channel_credentials.
			remote, err := ParseRemote("sc://" + strings.Replace(fake.addr, "127.0.0.1", "localhost", 1) + "/" + tc.params)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Dial(context.Background(), remote, Options{UserAgent: "sparkmerge-test", Getenv: func(k string) string { return tc.env[k] }})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			s.Close()
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if len(fake.reqs) == 0 {
				t.Fatal("the server saw no call")
			}
			md, r := fake.md[0], fake.reqs[0].ProtoReflect()
			if got := strings.Join(md.Get("authorization"), ","); got != tc.wantAuth {
				t.Errorf("authorization = %q, want %q", got, tc.wantAuth)
			}
			uc := getMsg(r, "user_context")
			got := ""
			if uc != nil {
				got = uc.Get(fd(uc, "user_id")).String()
			}
			if got != tc.wantUser {
				t.Errorf("user_id = %q, want %q", got, tc.wantUser)
			}
			if got := r.Get(fd(r, "client_type")).String(); !strings.HasPrefix(got, tc.wantAgent) {
				t.Errorf("client_type = %q, want prefix %q", got, tc.wantAgent)
			}
		})
	}
}

// A TLS mismatch is named as such, in either direction, and is still
// unreachable (the CLI's exit 4).
func TestDialTLSMismatchIsNamed(t *testing.T) {
	fake := startFake(t) // plain text
	tlsServer := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	for _, tc := range []struct {
		name, remote string
		want         []string
	}{
		{"TLS to a plain-text server", "sc://" + fake.addr + "/;use_ssl=true", []string{"TLS mismatch", "drop use_ssl=true"}},
		{"plain text to a TLS server", "sc://" + strings.TrimPrefix(tlsServer.URL, "https://"), []string{"closed the connection before answering", "add use_ssl=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRemote(tc.remote)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Dial(context.Background(), r, Options{DialTimeout: 3 * time.Second, Retry: RetryPolicy{MaxAttempts: 1}})
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Dial: %v, want an unreachable error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
