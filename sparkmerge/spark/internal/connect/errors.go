package connect

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/apache/spark-connect-go/spark/sparkerrors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrUnreachable is wrapped by every error caused by a Spark Connect server
// that cannot be reached (gRPC UNAVAILABLE after the retries, or a dial that
// never got an answer). Branch on it with errors.Is; the error is an
// [*UnreachableError].
var ErrUnreachable = errors.New("spark connect server unreachable")

// UnreachableError reports a server that did not answer.
type UnreachableError struct {
	// Addr is the host:port that was tried.
	Addr string
	// Err is the transport error.
	Err error
	// Stop says what became of the server-side job of a call that lost
	// its connection midway ("" when no job was running or nothing is
	// known): the client asks the server to stop it on a new connection.
	Stop string
}

func (e *UnreachableError) Error() string {
	if e.Stop != "" {
		return fmt.Sprintf("spark connect server at %s is unreachable: %v (%s)", e.Addr, e.Err, e.Stop)
	}
	msg := fmt.Sprint(e.Err)
	switch {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Sprintf("TLS mismatch: the connection to %s uses TLS (use_ssl=true, or a token for a host other than localhost) and the server answered in plain text: %v (drop use_ssl=true from the connection string, or serve Spark Connect over TLS)", e.Addr, e.Err)
	case strings.Contains(msg, "error reading server preface"):
		return fmt.Sprintf("spark connect server at %s closed the connection before answering: %v (a server that expects TLS does so to a plain-text client: add use_ssl=true to the connection string; else check that a Spark Connect server runs there)", e.Addr, e.Err)
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:"):
		return fmt.Sprintf("TLS handshake with %s failed: %v (check the server's certificate and the host name in the connection string)", e.Addr, e.Err)
	}
	return fmt.Sprintf("spark connect server at %s is unreachable: %v (check the connection string, and that a Spark Connect server runs there)", e.Addr, e.Err)
}

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrUnreachable].
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// SparkError is an error reported by the Spark server, with Spark's error
// class, SQL state and message parameters kept. Find it with errors.As:
//
//	var se *connect.SparkError
//	if errors.As(err, &se) && se.ErrorClass == "PATH_NOT_FOUND" { ... }
type SparkError struct {
	// ErrorClass is Spark's error class, e.g. "PATH_NOT_FOUND" ("" when the
	// server sent none).
	ErrorClass string
	// SQLState is the SQL state, e.g. "42K03".
	SQLState string
	// Message is the server's message. It usually starts with
	// "[ERROR_CLASS]" and ends with "SQLSTATE: ...".
	Message string
	// Parameters are the message parameters, e.g. {"path": "file:/x"}.
	Parameters map[string]string
	// Reason is the server-side exception class, e.g.
	// "org.apache.spark.sql.AnalysisException".
	Reason string
	// Code is the gRPC status code name, e.g. "Internal" or "Unavailable".
	Code string
	// Err is the error as the upstream client returned it.
	Err error
}

func (e *SparkError) Error() string {
	if e.Message != "" {
		return withoutStackFrames(e.Message)
	}
	if e.ErrorClass != "" {
		return "[" + e.ErrorClass + "]"
	}
	return e.Code
}

// Unwrap returns the upstream error.
func (e *SparkError) Unwrap() error { return e.Err }

// withoutStackFrames is a server message without the JVM's stack frames
// ("\tat org.apache..." and "\t... 12 more" lines), which some errors
// carry by the dozen (a job that failed in a task): what failed and each
// "Caused by:" stay. Message keeps the whole text.
func withoutStackFrames(msg string) string {
	if !strings.Contains(msg, "\n\tat ") {
		return msg
	}
	var kept []string
	cut := 0
	for _, line := range strings.Split(msg, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "at ") || (strings.HasPrefix(t, "... ") && strings.HasSuffix(t, " more")) || t == "at java...." {
			cut++
			continue
		}
		kept = append(kept, line)
	}
	if cut > 0 {
		kept = append(kept, fmt.Sprintf("(%d lines of the server's stack trace left out)", cut))
	}
	return strings.Join(kept, "\n")
}

// grpcCode returns the gRPC status code carried by err (codes.Unknown when none).
func grpcCode(err error) codes.Code {
	var use *sparkerrors.SparkError
	if errors.As(err, &use) {
		return use.Code
	}
	var usev sparkerrors.SparkError
	if errors.As(err, &usev) {
		return usev.Code
	}
	return status.Code(err)
}

// convertError turns an upstream error into this package's errors: an
// [*UnreachableError] for UNAVAILABLE, a [*SparkError] when the server
// reported one, err unchanged otherwise.
func (s *Session) convertError(err error) error {
	if err == nil {
		return nil
	}
	var mine *SparkError
	if errors.As(err, &mine) || errors.Is(err, ErrUnreachable) {
		return err
	}
	code := grpcCode(err)
	if code == codes.Unavailable {
		return &UnreachableError{Addr: s.remote.Addr(), Err: err}
	}
	var use *sparkerrors.SparkError
	if !errors.As(err, &use) {
		var v sparkerrors.SparkError
		if !errors.As(err, &v) {
			if st, ok := status.FromError(err); ok && st.Code() != codes.OK && st.Code() != codes.Unknown {
				v = *sparkerrors.FromRPCError(st.Err())
			} else {
				return err
			}
		}
		use = &v
	}
	class := use.ErrorClass
	if class == "" {
		class = messageErrorClass(use.Message)
	}
	message := use.Message
	if wraps(class, message) {
		if causes := s.causes(use.ErrorId, message); len(causes) > 0 {
			message += "\nCaused by: " + strings.Join(causes, "\nCaused by: ")
		}
	}
	return &SparkError{
		ErrorClass: class,
		SQLState:   use.SqlState,
		Message:    message,
		Parameters: maps.Clone(use.Parameters),
		Reason:     use.Reason,
		Code:       use.Code.String(),
		Err:        err,
	}
}

// wraps reports whether a server error of class and message is one that
// wraps its cause without saying it: a failed task's read or write
// ("Encountered error while reading file a.csv", "Job aborted due to
// stage failure"). Others (an analysis error, a refused inference) say
// all in their message: asking the server for the causes of every error
// added about a minute to the summed time of the integration tests, which
// meet hundreds of refusals.
func wraps(class, message string) bool {
	return strings.HasPrefix(class, "FAILED_READ_FILE") || strings.HasPrefix(class, "TASK_WRITE_FAILED") ||
		strings.Contains(message, "Job aborted due to stage failure") || strings.Contains(message, "Encountered error while reading file")
}

// causesTimeout bounds the FetchErrorDetails call that asks for an
// error's causes: an error is reported without them rather than late.
const causesTimeout = 10 * time.Second

// causes are the messages of the causes of the server's error errorID
// that message does not hold already, outermost first: a failed write
// says "Encountered error while reading file a.csv" (FAILED_READ_FILE),
// and only its causes say why ("Malformed CSV record"). The server keeps
// them for the FetchErrorDetails call (spark.sql.connect.enrichError, on
// by default), which PySpark makes too; none when it answers nothing,
// fails or the error has no id (a server before Spark 3.5).
func (s *Session) causes(errorID, message string) (out []string) {
	if errorID == "" || s.conn == nil {
		return nil
	}
	var err error
	defer guard("fetch error details", &err)
	ctx, cancel := context.WithTimeout(context.Background(), causesTimeout)
	defer cancel()
	req := s.request("FetchErrorDetailsRequest")
	setString(req, "error_id", errorID)
	resp := newMsg("FetchErrorDetailsResponse")
	if err = s.invoke(ctx, "FetchErrorDetails", req, resp); err != nil {
		return nil
	}
	errs := resp.Get(fd(resp, "errors")).List()
	if errs.Len() == 0 || !resp.Has(fd(resp, "root_error_idx")) {
		return nil
	}
	seen := map[int]bool{}
	for i := int(resp.Get(fd(resp, "root_error_idx")).Int()); i >= 0 && i < errs.Len() && !seen[i]; {
		seen[i] = true
		e := errs.Get(i).Message()
		if m := e.Get(fd(e, "message")).String(); m != "" && !strings.Contains(message, m) {
			out = append(out, m)
		}
		if !e.Has(fd(e, "cause_idx")) {
			break
		}
		i = int(e.Get(fd(e, "cause_idx")).Int())
	}
	return out
}

// messageClass is how Spark starts the message of an error that has an
// error class: "[PATH_NOT_FOUND] Path does not exist", or with a subclass
// "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] ..."
// (SparkThrowableHelper.getMessage).
var messageClass = regexp.MustCompile(`^\[([A-Z][A-Z0-9_]*(?:\.[A-Z][A-Z0-9_]*)*)\] `)

// messageErrorClass is the error class a Spark message starts with, or "".
// Spark 3.5 servers send the class only there: their ErrorInfo carries the
// exception classes and a stack trace, and the errorClass, sqlState and
// messageParameters metadata came with Spark 4.0 (SPARK-45808, SPARK-46532). Without
// it the merge would not know a missing path (PATH_NOT_FOUND) from any
// other failure.
func messageErrorClass(message string) string {
	if m := messageClass.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return ""
}

// guard turns a panic of the upstream client (or of a message builder) into
// an error. Use as: defer guard(op, &err).
func guard(op string, err *error) {
	if r := recover(); r != nil {
		if be, ok := r.(buildError); ok {
			*err = fmt.Errorf("%s: %w", op, be)
			return
		}
		*err = fmt.Errorf("%s: spark connect client panicked: %v", op, r)
	}
}
