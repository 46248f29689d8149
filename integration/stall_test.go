//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

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
	// open holds a flag per forwarded connection, for stallOpen.
	open []*atomic.Bool
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

// stallOpen stalls the connections open now and keeps forwarding new
// ones, as a NAT or load balancer that forgot a long-idle connection.
func (p *stallingProxy) stallOpen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.open {
		f.Store(true)
	}
}

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
		stalled := new(atomic.Bool)
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.open = append(p.open, stalled)
		p.mu.Unlock()
		go p.pipe(in, out, stalled)
		go p.pipe(out, in, stalled)
	}
}

// pipe copies until the proxy stalls, then drops everything it reads.
func (p *stallingProxy) pipe(from, to net.Conn, stalled *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 && !p.stalled.Load() && !stalled.Load() {
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
	t.Parallel()
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

// A write whose connection dies midway is picked up again on a new
// connection (ReattachExecute) and completes, run once. The source is a
// view whose rows sleep while a gate is shut (about 10 s a partition);
// the connection is cut once the write job has begun, and the gate opened
// then, so that the write goes on without holding the server's task
// slots asleep; keepalive notices within about 13 s.
func TestLostConnectionReattaches(t *testing.T) {
	t.Parallel()
	remote := requireSpark(t)
	target := strings.TrimPrefix(remote, "sc://")
	if i := strings.Index(target, "/"); i >= 0 {
		target = target[:i]
	}
	view := "slow_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	out := filepath.Join(workDir(t), "out")
	// 80 rows in 2 partitions, a quarter second each while the gate is
	// shut: about 10 s per partition on local[2].
	g := newGate(t)
	exec(t, "CREATE OR REPLACE GLOBAL TEMP VIEW "+view+" AS SELECT id, "+slowly(g)+" AS slept FROM range(0, 80, 1, 2)")
	t.Cleanup(func() { exec(t, "DROP VIEW IF EXISTS global_temp."+view) })

	proxy := newStallingProxy(t, target)
	c, err := spark.Connect(context.Background(), "sc://"+proxy.addr(), spark.ConnectOptions{
		KeepAlive: 10 * time.Second, KeepAliveTimeout: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	job := spark.Job{
		Sources: []spark.SourceSpec{{Table: "global_temp." + view}},
		Target:  spark.Target{Path: out},
		Verify:  true,
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := c.Merge(context.Background(), job)
		done <- err
	}()
	waitForWrite(t, out, done)
	proxy.stallOpen()
	// On the test's own connection: the write's rows need sleep no more.
	g.open(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the merge failed after its connection died instead of reattaching: %v", err)
		}
		t.Logf("merged after %s", time.Since(start).Round(time.Second))
	case <-testContext(t).Done():
		// Not a tighter limit: the write goes on after the reattach,
		// slower on a loaded machine.
		t.Fatalf("the merge still hangs %s after its connection died", time.Since(start).Round(time.Second))
	}
	rows := queryRows(t, "SELECT count(*), count(DISTINCT id) FROM parquet.`"+out+"`")
	if got := fmt.Sprint(rows); got != "[[80 80]]" {
		t.Errorf("the output holds (rows, distinct ids) %s, want [[80 80]]: the write ran once, whole", got)
	}
}

// A write whose server stays unreachable fails as unreachable in bounded
// time, once the reattach attempts are spent. Its source's rows sleep
// while a gate is shut, until the network has died: the write then ends
// on the server, which the client no longer hears.
func TestUnreachableDuringWriteFails(t *testing.T) {
	t.Parallel()
	remote := requireSpark(t)
	target := strings.TrimPrefix(remote, "sc://")
	if i := strings.Index(target, "/"); i >= 0 {
		target = target[:i]
	}
	view := "slow_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	out := filepath.Join(workDir(t), "out")
	g := newGate(t)
	exec(t, "CREATE OR REPLACE GLOBAL TEMP VIEW "+view+" AS SELECT id, "+slowly(g)+" AS slept FROM range(0, 80, 1, 2)")
	t.Cleanup(func() { exec(t, "DROP VIEW IF EXISTS global_temp."+view) })

	proxy := newStallingProxy(t, target)
	c, err := spark.Connect(context.Background(), "sc://"+proxy.addr(), spark.ConnectOptions{
		KeepAlive: 10 * time.Second, KeepAliveTimeout: 3 * time.Second, ReattachFor: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	job := spark.Job{
		Sources: []spark.SourceSpec{{Table: "global_temp." + view}},
		Target:  spark.Target{Path: out},
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := c.Merge(context.Background(), job)
		done <- err
	}()
	waitForWrite(t, out, done)
	proxy.stall() // every connection, new ones too
	g.open(t)     // on the test's own connection
	select {
	case err := <-done:
		if !errors.Is(err, spark.ErrUnreachable) {
			t.Fatalf("after the network died: err = %v, want spark.ErrUnreachable", err)
		}
		t.Logf("failed after %s: %v", time.Since(start).Round(time.Second), err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the merge still hangs 3 minutes after its network died")
	}
}

// slowly is a column that sleeps a quarter second a row while g is shut,
// not at all once it is open.
func slowly(g *gate) string {
	return "reflect('java.lang.Thread', 'sleep', CASE WHEN " + g.shut() + " THEN CAST(250 AS BIGINT) ELSE CAST(0 AS BIGINT) END)"
}
