package connect

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// An execution resumed on a second stream is one request, its result
// bytes those of every batch; a context without a Traffic counts nothing.
func TestTrafficCountsRequestsAndResultBytes(t *testing.T) {
	var sent int
	f := startExecServer(t, "4.0.1", func(n int, method string, req protoreflect.Message, send func(protoreflect.Message) error, _ context.Context) error {
		switch method {
		case "ExecutePlan", "ReattachExecute":
			b := batch(t, "r"+method, int64(n))
			sent += len(getMsg(b, "arrow_batch").Get(fd(getMsg(b, "arrow_batch"), "data")).Bytes())
			if err := send(b); err != nil {
				return err
			}
			if method == "ExecutePlan" {
				return nil // the stream ends: the client reattaches
			}
			return send(complete("done"))
		}
		return status.Errorf(codes.Internal, "unexpected call %d %s", n, method)
	})
	s := dialExec(t, f, Options{})
	traffic := &Traffic{}
	ctx := WithTraffic(context.Background(), traffic)
	if _, err := s.SQL("SELECT n").Collect(ctx); err != nil {
		t.Fatal(err)
	}
	got := traffic.Counts()
	if got.Executions != 1 || got.Analyses != 0 || got.Settings != 0 {
		t.Errorf("counted %+v, want one execution", got)
	}
	if got.ResultBytes != int64(sent) || sent == 0 {
		t.Errorf("counted %d result bytes, the server sent %d", got.ResultBytes, sent)
	}
	before := traffic.Counts()
	if _, err := s.SQL("SELECT n").Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if traffic.Counts() != before {
		t.Errorf("a call without the Traffic was counted: %+v, then %+v", before, traffic.Counts())
	}
}
