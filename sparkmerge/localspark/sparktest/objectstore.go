package sparktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The object store: moto's S3 server on this machine's loopback, which the
// Spark container (host networking) reaches at the same address through
// Hadoop's S3A connector, whose jars the harness puts on the server's class
// path. scripts/fetch-s3.sh provides both and names them in the
// environment (SPARKMERGE_S3A_JARS, SPARKMERGE_MOTO_SERVER); scripts/test.sh
// passes them on.

// bucket is the one bucket the tests' prefixes live in.
const bucket = "sparkmerge-test"

// objectStore is a running moto server.
type objectStore struct {
	endpoint string    // http://127.0.0.1:PORT
	jars     string    // directory of the S3A jars, mounted into the container
	cmd      *exec.Cmd // nil for a shared store another process started
	log      LogBuffer
	// exited is closed when moto's process ends (exitErr says how): a
	// server that dies before answering, or while tests run, is named
	// with its log instead of leaving a wait to time out or a request to
	// fail without a reason.
	exited  chan struct{}
	exitErr error
}

var (
	store    *objectStore
	noStore  string // why there is no object store, when there is none
	prefixes atomic.Int64
)

// startObjectStore starts moto from the environment's paths; nil and the
// reason when they are not given.
func startObjectStore(ctx context.Context) (*objectStore, string, error) {
	jars, moto := os.Getenv("SPARKMERGE_S3A_JARS"), os.Getenv("SPARKMERGE_MOTO_SERVER")
	if jars == "" || moto == "" {
		return nil, "no object store: set SPARKMERGE_S3A_JARS and SPARKMERGE_MOTO_SERVER (scripts/fetch-s3.sh prints them; scripts/test.sh sets them)", nil
	}
	if matches, _ := filepath.Glob(filepath.Join(jars, "hadoop-aws-*.jar")); len(matches) == 0 {
		return nil, "", fmt.Errorf("SPARKMERGE_S3A_JARS=%s holds no hadoop-aws jar: run scripts/fetch-s3.sh", jars)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &objectStore{endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), jars: jars}
	s.cmd = exec.Command(moto, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	stopWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", moto, err)
	}
	s.exited = make(chan struct{})
	go func() {
		s.exitErr = s.cmd.Wait()
		close(s.exited)
	}()
	for {
		if resp, err := http.Get(s.endpoint + "/"); err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-s.exited:
			return nil, "", fmt.Errorf("moto exited before answering at %s (%v); its log:\n%s", s.endpoint, s.exitErr, s.log.String())
		case <-ctx.Done():
			s.stop()
			return nil, "", fmt.Errorf("moto did not answer at %s: %w; its log:\n%s", s.endpoint, ctx.Err(), s.log.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	// Another server may have taken the port between its choice and
	// moto's start: the bucket must be created, and moto still running.
	if err := s.request(http.MethodPut, "/"+bucket, nil); err != nil {
		s.stop()
		return nil, "", fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return s, "", nil
}

// conf is the Spark configuration that reaches the store through S3A. The
// jars go in spark.jars, as --packages would put them: on the JVM's class
// path (extraClassPath) the SDK bundle comes before Spark's own jars and
// silences Spark's logging, whose lines say when the server is ready.
func (s *objectStore) conf() map[string]string {
	jars, _ := filepath.Glob(filepath.Join(s.jars, "*.jar"))
	return map[string]string{
		"spark.jars":                                   strings.Join(jars, ","),
		"spark.hadoop.fs.s3a.endpoint":                 s.endpoint,
		"spark.hadoop.fs.s3a.endpoint.region":          "us-east-1",
		"spark.hadoop.fs.s3a.path.style.access":        "true",
		"spark.hadoop.fs.s3a.connection.ssl.enabled":   "false",
		"spark.hadoop.fs.s3a.access.key":               "sparkmerge",
		"spark.hadoop.fs.s3a.secret.key":               "sparkmerge",
		"spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	}
}

// request sends an S3 request. moto checks no signature, so a fixed
// SigV4-shaped authorization and an unsigned payload do.
func (s *objectStore) request(method, path string, body []byte) error {
	req, err := http.NewRequest(method, s.endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=sparkmerge/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	select {
	case <-s.exited:
		if err == nil {
			resp.Body.Close()
		}
		return fmt.Errorf("%s %s: moto has exited (%v); its log:\n%s", method, path, s.exitErr, s.log.String())
	default:
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
	}
	return nil
}

// stop stops moto when this process started it (a shared store is its
// starter's to stop).
func (s *objectStore) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// ObjectStoreDir returns a fresh prefix of a bucket in an S3 object store
// that Spark reads through s3a:// and the client cannot read at all: put
// uploads a file under it (name relative to it, slash-separated), uri is
// the prefix as Spark reads it (s3a://bucket/prefix, no trailing slash).
// Objects are stamped with their upload time, which a test cannot set.
//
// It skips the test without the store's pieces (see scripts/fetch-s3.sh),
// and fails it under CI=true, where scripts/test.sh provides them.
func ObjectStoreDir(t testing.TB) (put func(name string, content []byte), uri string) {
	t.Helper()
	Remote(t)
	if store == nil {
		reason := noStore
		if !mounted {
			reason = "the object store needs the harness's own container; SPARK_REMOTE is set"
		}
		if os.Getenv("CI") == "true" && mounted {
			t.Fatalf("%s (CI=true)", reason)
		}
		t.Skip(reason)
	}
	// The process id keeps apart the prefixes of test binaries sharing
	// one store.
	prefix := fmt.Sprintf("t-%d-%d", os.Getpid(), prefixes.Add(1))
	put = func(name string, content []byte) {
		t.Helper()
		var escaped []string
		for _, seg := range strings.Split(prefix+"/"+name, "/") {
			escaped = append(escaped, url.PathEscape(seg))
		}
		if err := store.request(http.MethodPut, "/"+bucket+"/"+strings.Join(escaped, "/"), content); err != nil {
			t.Fatal(err)
		}
	}
	return put, "s3a://" + bucket + "/" + prefix
}
