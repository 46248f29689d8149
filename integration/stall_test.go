//go:build integration

package integration

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/spark"
)

// stallingProxy forwards TCP connections on 127.0.0.1 to a target until
// stall is called; from then on it keeps every connection open and
// forwards nothing, as a network that silently stops delivering packets.
type stallingProxy struct {
	ln      net.Listener
	target  string
	stalled atomic.Bool
	mu      sync.Mutex
	conns   []net.Conn
}

func newStallingProxy(t *testing.T, target string) *stallingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallingProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *stallingProxy) addr() string { return p.ln.Addr().String() }

func (p *stallingProxy) stall() { p.stalled.Store(true) }

func (p *stallingProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// pipe copies until the proxy stalls, then drops everything it reads.
func (p *stallingProxy) pipe(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 && !p.stalled.Load() {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *stallingProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// A connection that stops delivering once connected fails the next call
// in bounded time, as unreachable (the CLI's exit 4), instead of hanging.
func TestStalledConnectionFails(t *testing.T) {
	remote := requireSpark(t)
	target := strings.TrimPrefix(remote, "sc://")
	if i := strings.Index(target, "/"); i >= 0 {
		target = target[:i]
	}
	proxy := newStallingProxy(t, target)
	c, err := spark.Connect(context.Background(), "sc://"+proxy.addr(), spark.ConnectOptions{
		KeepAlive: 10 * time.Second, KeepAliveTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := workDir(t)
	paths := writeFiles(t, dir, map[string]string{"a.csv": "id\n1\n"}, "a.csv")
	job := spark.Job{Sources: pathSources(paths...), SparkInference: true}
	if _, err := c.Plan(context.Background(), job); err != nil {
		t.Fatalf("plan through the proxy before it stalls: %v", err)
	}
	proxy.stall()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := c.Plan(context.Background(), job)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, spark.ErrUnreachable) {
			t.Errorf("after the stall: err = %v, want spark.ErrUnreachable", err)
		}
		t.Logf("failed after %s: %v", time.Since(start).Round(time.Second), err)
	case <-time.After(4 * time.Minute):
		t.Fatal("a call over a stalled connection still hangs after 4 minutes")
	}
}
