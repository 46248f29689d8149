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

// poolClient connects to the test's Spark with opts; the caller closes it.
func poolClient(t *testing.T, opts ConnectOptions) *Client {
	t.Helper()
	c, err := Connect(context.Background(), sparktest.Remote(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// releasesSessions says whether the server has ReleaseSession (Spark 4.0
// and later): Spark 3.5 keeps a session until its idle timeout.
func releasesSessions(c *Client) bool {
	return !strings.HasPrefix(c.SparkVersion(), "3.")
}

// joinSession dials the test's Spark on session id, as another client.
func joinSession(t *testing.T, id string) (*connect.Session, error) {
	t.Helper()
	r, err := connect.ParseRemote(sparktest.Remote(t))
	if err != nil {
		t.Fatal(err)
	}
	r.SessionID = id
	return connect.Dial(context.Background(), r, connect.Options{})
}

// A pooled session comes to the next client as a new session would: the
// settings the last client set (its Conf, and one a killed merge did not
// put back) as the server has them, what the last client left running
// stopped. Clients at the same time get sessions of their own.
func TestLiveSessionPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const zoneKey = "spark.sql.session.timeZone"
	fresh := poolClient(t, ConnectOptions{})
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
	first := poolClient(t, ConnectOptions{SessionPool: pool.SessionPool, Conf: map[string]string{zoneKey: "Asia/Tokyo"}})
	id := first.sess.SessionID()
	if err := first.sess.SetConf(ctx, flipped); err != nil {
		t.Fatal(err)
	}
	// A query still running in the session, as a killed client's merge
	// runs on.
	orphan, err := joinSession(t, id)
	if err != nil {
		t.Fatal(err)
	}
	defer orphan.Close()
	ran := make(chan error, 1)
	go func() {
		_, err := orphan.SQL("SELECT count(*) FROM range(0, 1000000000000)").Collect(ctx)
		ran <- err
	}()
	time.Sleep(3 * time.Second) // the query reaches the server
	first.Close()

	second := poolClient(t, pool)
	defer second.Close()
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
	third := poolClient(t, pool)
	defer third.Close()
	if third.sess.SessionID() == id {
		t.Errorf("two clients at once got session %s", id)
	}
}

// A session the server has closed is replaced by a new session of the
// pool; one whose id a client gave away is the pool's no more.
func TestLiveSessionPoolReplacesClosedAndSharedSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := ConnectOptions{SessionPool: t.TempDir()}
	first := poolClient(t, pool)
	id := first.sess.SessionID()
	first.Close()
	closed := releasesSessions(first)
	if closed {
		closer, err := joinSession(t, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := closer.Release(ctx); err != nil {
			t.Fatal(err)
		}
		closer.Close()
	} else {
		t.Logf("Spark %s has no ReleaseSession (a session closes only when idle past its timeout): no closed session to replace", first.SparkVersion())
	}
	second := poolClient(t, pool)
	given := second.sess.SessionID()
	if closed && (given == id || second.slot == nil) {
		t.Errorf("the closed session %s replaced by %s (pooled: %t), want a new session of the pool", id, given, second.slot != nil)
	}
	second.SessionID() // given away: the pool forgets it
	second.Close()
	third := poolClient(t, pool)
	defer third.Close()
	if third.sess.SessionID() == given {
		t.Errorf("the pool gave session %s, whose id a client gave away, to the next client", given)
	}
}

// A session that read a catalog table (whose schema and files Spark now
// caches in it) is the pool's no more from that moment, and is released
// at Close.
func TestLiveSessionPoolForgetsSessionsThatNameTables(t *testing.T) {
	t.Parallel()
	pool := ConnectOptions{SessionPool: t.TempDir()}
	first := poolClient(t, pool)
	first.sess.Table("sparkmerge_pool_witness", nil)
	named := first.sess.SessionID()
	slots, err := filepath.Glob(filepath.Join(pool.SessionPool, "*.json"))
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots %v, %v", slots, err)
	}
	for _, slot := range slots {
		if b, err := os.ReadFile(slot); err != nil || strings.Contains(string(b), named) {
			t.Errorf("slot %s holds %s (%v) after its session named a table", slot, b, err)
		}
	}
	first.Close()
	second := poolClient(t, pool)
	defer second.Close()
	if second.sess.SessionID() == named {
		t.Errorf("the pool gave session %s, which named a table, to the next client", named)
	}
	if !releasesSessions(second) {
		return // Spark 3.5 has no ReleaseSession: the session stays until idle
	}
	if s, err := joinSession(t, named); err == nil || !sessionClosed(err) {
		if s != nil {
			s.Close()
		}
		t.Errorf("joining session %s, which named a table, after Close: %v; want it released", named, err)
	}
}
