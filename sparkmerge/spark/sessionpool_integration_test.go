//go:build integration && unix

package spark

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A pooled session comes to the next client as a new session would: the
// settings the last client set (its Conf, and one a killed merge did not
// put back) as the server has them, what the last client left running
// stopped. Clients at the same time get sessions of their own; a session
// the server has closed is replaced; one whose id a client gave away is
// the pool's no more.
func TestLiveSessionPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := sparktest.Remote(t)
	const zoneKey = "spark.sql.session.timeZone"
	dial := func(opts ConnectOptions) *Client {
		t.Helper()
		c, err := Connect(ctx, remote, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	join := func(id string) *connect.Session {
		t.Helper()
		r, err := connect.ParseRemote(remote)
		if err != nil {
			t.Fatal(err)
		}
		r.SessionID = id
		s, err := connect.Dial(ctx, r, connect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fresh := dial(ConnectOptions{})
	want, err := fresh.sess.Conf(ctx, zoneKey, caseSensitiveKey)
	fresh.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want[zoneKey] == "Asia/Tokyo" {
		t.Fatalf("the server's time zone is Asia/Tokyo already: the test cannot see it set")
	}
	flipped := map[string]string{caseSensitiveKey: "true"}
	if want[caseSensitiveKey] == "true" {
		flipped[caseSensitiveKey] = "false"
	}

	pool := ConnectOptions{SessionPool: t.TempDir()}
	first := dial(ConnectOptions{SessionPool: pool.SessionPool, Conf: map[string]string{zoneKey: "Asia/Tokyo"}})
	id := first.sess.SessionID()
	if err := first.sess.SetConf(ctx, flipped); err != nil {
		t.Fatal(err)
	}
	// A query still running in the session, as a killed client's merge
	// runs on.
	orphan := join(id)
	defer orphan.Close()
	ran := make(chan error, 1)
	go func() {
		_, err := orphan.SQL("SELECT count(*) FROM range(0, 1000000000000)").Collect(ctx)
		ran <- err
	}()
	time.Sleep(3 * time.Second) // the query reaches the server
	first.Close()

	second := dial(pool)
	if got := second.sess.SessionID(); got != id {
		t.Errorf("the next client got session %s, want the pool's %s", got, id)
	}
	got, err := second.sess.Conf(ctx, zoneKey, caseSensitiveKey)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the pooled session's %s is %q, a new session's %q", k, got[k], v)
		}
	}
	select {
	case err := <-ran:
		if err == nil {
			t.Error("the last client's query ran to its end, want it interrupted")
		}
	case <-time.After(2 * time.Minute):
		_ = orphan.InterruptAll(ctx)
		t.Error("the last client's query still runs 2 minutes after the next client took the session")
	}

	third := dial(pool)
	if third.sess.SessionID() == id {
		t.Errorf("two clients at once got session %s", id)
	}
	second.Close()
	closer := join(id)
	if err := closer.Release(ctx); err != nil {
		t.Fatal(err)
	}
	closer.Close()
	fourth := dial(pool)
	replaced := fourth.sess.SessionID()
	if replaced == id || fourth.slot == nil {
		t.Errorf("the closed session %s replaced by %s (pooled: %t), want a new session of the pool", id, replaced, fourth.slot != nil)
	}
	if v, err := fourth.sess.Conf(ctx, zoneKey); err != nil || v[zoneKey] != want[zoneKey] {
		t.Errorf("the replaced session's time zone: %v (%v), want %q", v, err, want[zoneKey])
	}
	fourth.SessionID() // given away: the pool forgets it
	fourth.Close()
	fifth := dial(pool)
	if fifth.sess.SessionID() == replaced {
		t.Errorf("the pool gave session %s, whose id a client gave away, to the next client", replaced)
	}
	// A session that read a catalog table (whose schema and files Spark
	// now caches in it) is the pool's no more from that moment, and
	// released at Close.
	fifth.sess.Table("sparkmerge_pool_witness", nil)
	named := fifth.sess.SessionID()
	slots, err := filepath.Glob(filepath.Join(pool.SessionPool, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range slots {
		if b, err := os.ReadFile(slot); err != nil || strings.Contains(string(b), named) {
			t.Errorf("slot %s holds %s (%v), which named a table", slot, b, err)
		}
	}
	fifth.Close()
	sixth := dial(pool)
	if sixth.sess.SessionID() == named {
		t.Errorf("the pool gave session %s, which named a table, to the next client", named)
	}
	if s, err := func() (*connect.Session, error) {
		r, _ := connect.ParseRemote(remote)
		r.SessionID = named
		return connect.Dial(ctx, r, connect.Options{})
	}(); err == nil || !sessionClosed(err) {
		if s != nil {
			s.Close()
		}
		t.Errorf("joining session %s, which named a table, after Close: %v; want it released", named, err)
	}
	sixth.Close()
	third.Close()
}
