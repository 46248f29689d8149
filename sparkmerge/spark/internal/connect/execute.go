package connect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Every plan runs as a reattachable operation, as PySpark runs them: the
// request carries an operation id of the client's, and the server keeps
// the operation and its unread responses when the stream breaks, so the
// client can pick the stream up again (ReattachExecute) instead of losing
// a long write. The server also ends a reattachable stream on purpose
// every so often (spark.connect.execute.reattachable.senderMaxStreamDuration,
// 2 minutes by default, behind proxies such as Databricks' less): the
// result is complete only at the ResultComplete response.

// DefaultReattachFor is Options.ReattachFor's default: how long a call
// whose stream broke keeps trying to reattach before it fails as
// unreachable. The server keeps a detached operation for 5 minutes
// (spark.connect.execute.manager.detachedTimeout).
const DefaultReattachFor = 2 * time.Minute

// releaseTimeout bounds the ReleaseExecute sent after a complete result.
const releaseTimeout = 10 * time.Second

const service = "/spark.connect.SparkConnectService/"

var serverStream = &grpc.StreamDesc{ServerStreams: true}

// operation is one ExecutePlan on the server, followed from the client.
type operation struct {
	s            *Session
	id           string
	reattachable bool
	request      protoreflect.Message // the ExecutePlanRequest
	// lastResponse is the id of the last response read; a reattached
	// stream resumes after it.
	lastResponse string
	// reattached is whether the stream open now came from ReattachExecute.
	reattached bool
	// ended: the last stream closed without an error.
	ended    bool
	complete bool

	schema  protoreflect.Message // the result's DataType, when sent
	records []arrow.Record
	// progress receives the server's execution progress (see
	// WithProgress), or is nil.
	progress func(Progress)
	// traffic counts the result bytes, or is nil (see [WithTraffic]).
	traffic *Traffic
}

// Progress is Spark's execution progress of one operation, as Spark 4
// streams it (ExecutePlanResponse.ExecutionProgress, every
// spark.connect.progress.reportInterval, 2 seconds by default): the
// stages run so far, and the tasks running now.
type Progress struct {
	Stages        []StageProgress
	InflightTasks int64
}

// StageProgress is one Spark stage's progress.
type StageProgress struct {
	ID             int64
	Tasks          int64
	CompletedTasks int64
	InputBytesRead int64
	Done           bool
}

type progressKey struct{}

// WithProgress returns a context whose operations (queries and commands
// run with it) report Spark's execution progress to f, on the goroutine
// that reads the operation's responses.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// executionProgress reads an ExecutionProgress message.
func executionProgress(m protoreflect.Message) Progress {
	p := Progress{InflightTasks: m.Get(fd(m, "num_inflight_tasks")).Int()}
	stages := m.Get(fd(m, "stages")).List()
	for i := range stages.Len() {
		st := stages.Get(i).Message()
		p.Stages = append(p.Stages, StageProgress{
			ID:             st.Get(fd(st, "stage_id")).Int(),
			Tasks:          st.Get(fd(st, "num_tasks")).Int(),
			CompletedTasks: st.Get(fd(st, "num_completed_tasks")).Int(),
			InputBytesRead: st.Get(fd(st, "input_bytes_read")).Int(),
			Done:           st.Get(fd(st, "done")).Bool(),
		})
	}
	return p
}

// executed is what an operation returned: the result's Arrow records (no
// records for a command or an empty result) and its schema.
type executed struct {
	records []arrow.Record
	schema  protoreflect.Message
}

// release frees the records.
func (e executed) release() {
	for _, r := range e.records {
		r.Release()
	}
}

// table returns the records as one table (nil when there are none); the
// caller releases both.
func (e executed) table() arrow.Table {
	if len(e.records) == 0 {
		return nil
	}
	return array.NewTableFromRecords(e.records[0].Schema(), e.records)
}

// execute runs plan (a root relation or a command) to completion and
// returns what it sent back. A broken stream is reattached for up to
// Options.ReattachFor; a context that ends interrupts the operation on the
// server, which would otherwise keep a reattachable operation running for
// a client that has gone.
func (s *Session) execute(ctx context.Context, plan proto.Message) (out executed, err error) {
	defer guard("execute plan", &err)
	op := &operation{s: s, id: uuid.NewString(), reattachable: s.reattachable()}
	op.progress, _ = ctx.Value(progressKey{}).(func(Progress))
	op.traffic = trafficOf(ctx)
	countRequest(ctx, "ExecutePlan")
	op.request = s.executeRequest(plan, op.id, op.reattachable)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if err != nil {
			for _, r := range op.records {
				r.Release()
			}
		}
	}()

	stream, err := s.openStream(ctx, "ExecutePlan", op.request.Interface())
	var failingSince time.Time
	backoff := 250 * time.Millisecond
	for !op.complete {
		if err == nil {
			var resp protoreflect.Message
			if resp, err = receive(stream); err == nil {
				failingSince, backoff, op.ended = time.Time{}, 250*time.Millisecond, false
				if err = op.take(resp); err != nil {
					return out, err
				}
				continue
			}
		}
		if errors.Is(err, io.EOF) {
			if !op.reattachable {
				break // the stream's end is the result's
			}
			// The server ended this stream on purpose: go on on a new one.
			op.ended = true
			stream, err = op.reattach(ctx)
			continue
		}
		if ctx.Err() != nil {
			op.interrupt(ctx)
			return out, ctx.Err()
		}
		if !op.reattachable || !retriable(err) {
			if op.reattached && operationNotFound(err) {
				if op.ended {
					// A server that keeps no reattachable operations
					// (spark.connect.execute.reattachable.enabled=false)
					// runs the plan to the end of one stream, sends no
					// ResultComplete and forgets the operation; one that
					// keeps them knows an unreleased operation for 5
					// minutes. So the clean end was the result's.
					break
				}
				if op.lastResponse == "" {
					// The server never got the request: send it again,
					// under the same operation id.
					op.reattached = false
					stream, err = s.openStream(ctx, "ExecutePlan", op.request.Interface())
					continue
				}
				return out, fmt.Errorf("the server no longer knows operation %s after its stream broke (it drops an operation left detached for 5 minutes): %w", op.id, err)
			}
			return out, err
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		} else if time.Since(failingSince) > s.reattachFor {
			return out, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			op.interrupt(ctx)
			return out, ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
		stream, err = op.reattach(ctx)
	}
	if op.complete {
		go op.release()
	}
	return executed{records: op.records, schema: op.schema}, nil
}

// reattachable reports whether the server knows reattachable execution
// (Spark 3.5 and later): older servers never send ResultComplete.
func (s *Session) reattachable() bool {
	major, minor, ok := versionNumbers(s.version)
	return !ok || major > 3 || major == 3 && minor >= 5
}

// versionNumbers parses "major.minor[.patch...]".
func versionNumbers(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return major, minor, err1 == nil && err2 == nil
}

// executeRequest builds the ExecutePlanRequest for plan.
func (s *Session) executeRequest(plan proto.Message, operationID string, reattachable bool) protoreflect.Message {
	req := s.request("ExecutePlanRequest")
	setMsg(req, "plan", plan.ProtoReflect())
	setString(req, "operation_id", operationID)
	if reattachable {
		opt := newMsg("ExecutePlanRequest.RequestOption")
		setBool(mut(opt, "reattach_options"), "reattachable", true)
		appendMsg(req, "request_options", opt)
	}
	return req
}

// openStream starts a server-streaming call and sends its one request.
// A failure to send shows as the stream's first receive error.
func (s *Session) openStream(ctx context.Context, method string, req proto.Message) (grpc.ClientStream, error) {
	cs, err := s.conn.NewStream(metadata.NewOutgoingContext(ctx, s.md), serverStream, service+method)
	if err != nil {
		return nil, err
	}
	if err := cs.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := cs.CloseSend(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return cs, nil
}

// receive reads the next ExecutePlanResponse (io.EOF at the stream's end).
func receive(stream grpc.ClientStream) (protoreflect.Message, error) {
	resp := newMsg("ExecutePlanResponse")
	if err := stream.RecvMsg(resp.Interface()); err != nil {
		return nil, err
	}
	return resp, nil
}

// take records one response: its id, a schema, an Arrow batch or the end.
func (op *operation) take(resp protoreflect.Message) error {
	if id := resp.Get(fd(resp, "session_id")).String(); id != "" && id != op.s.sessionID {
		return fmt.Errorf("the server answered for session %s, not this session %s", id, op.s.sessionID)
	}
	if id := resp.Get(fd(resp, "response_id")).String(); id != "" {
		op.lastResponse = id
	}
	if sch := getMsg(resp, "schema"); sch != nil {
		op.schema = sch
	}
	if getMsg(resp, "result_complete") != nil {
		op.complete = true
	}
	if p := getMsg(resp, "execution_progress"); p != nil && op.progress != nil {
		op.progress(executionProgress(p))
	}
	batch := getMsg(resp, "arrow_batch")
	if batch == nil {
		return nil
	}
	data := batch.Get(fd(batch, "data")).Bytes()
	op.traffic.countResultBytes(len(data))
	rdr, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("read an Arrow batch of the result: %w", err)
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.Record()
		rec.Retain()
		op.records = append(op.records, rec)
	}
	if err := rdr.Err(); err != nil {
		return fmt.Errorf("read an Arrow batch of the result: %w", err)
	}
	return nil
}

// reattach opens a stream that resumes the operation after the last
// response read.
func (op *operation) reattach(ctx context.Context) (grpc.ClientStream, error) {
	req := op.s.request("ReattachExecuteRequest")
	setString(req, "operation_id", op.id)
	if op.lastResponse != "" {
		setString(req, "last_response_id", op.lastResponse)
	}
	op.reattached = true
	op.s.reattaches.Add(1)
	return op.s.openStream(ctx, "ReattachExecute", req.Interface())
}

// release tells the server it may drop the operation's kept responses
// (best effort: the server drops them anyway once the operation has been
// detached for a while).
func (op *operation) release() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	req := op.s.request("ReleaseExecuteRequest")
	setString(req, "operation_id", op.id)
	mut(req, "release_all")
	_ = op.s.invoke(ctx, "ReleaseExecute", req, newMsg("ReleaseExecuteResponse"))
}

// interrupt asks the server to stop the operation (best effort, bounded).
func (op *operation) interrupt(ctx context.Context) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	_ = op.s.interrupt(ictx, "INTERRUPT_TYPE_OPERATION_ID", op.id)
}

// retriable reports whether a broken stream may be picked up again: the
// connection failed (UNAVAILABLE), a proxy reset the stream, or the
// server detached this stream because another took the operation over.
func retriable(err error) bool {
	switch grpcCode(err) {
	case codes.Unavailable:
		return true
	case codes.Internal:
		msg := err.Error()
		if strings.Contains(msg, "INVALID_CURSOR.DISCONNECTED") {
			return true
		}
		st, _ := status.FromError(err)
		return len(st.Details()) == 0 && strings.Contains(msg, "RST_STREAM")
	}
	return false
}

// operationNotFound reports the server's answer to a reattach for an
// operation it does not know.
func operationNotFound(err error) bool {
	return strings.Contains(err.Error(), "INVALID_HANDLE.OPERATION_NOT_FOUND")
}
