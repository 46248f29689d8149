//go:build unix

package spark

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A slot is one client's at a time: a second take gets the next slot, a
// slot released is taken again with what it held, and a pool whose slots
// are all taken gives none (the client then starts a session of its own).
func TestSessionSlotsAreOneClientsAtATime(t *testing.T) {
	dir := t.TempDir()
	first, err := takeSlot(dir, "k")
	if err != nil || first == nil {
		t.Fatalf("takeSlot: %v, %v", first, err)
	}
	id := first.sessionID()
	first.state.Token = "token"
	if err := first.save(); err != nil {
		t.Fatal(err)
	}
	second, err := takeSlot(dir, "k")
	if err != nil || second == nil {
		t.Fatalf("takeSlot while the first is held: %v, %v", second, err)
	}
	if second.sessionID() == id {
		t.Errorf("two clients got session %s at once", id)
	}
	first.release()
	again, err := takeSlot(dir, "k")
	if err != nil || again == nil {
		t.Fatalf("takeSlot after release: %v, %v", again, err)
	}
	if again.state.SessionID != id || again.state.Token != "token" {
		t.Errorf("the released slot holds %+v, want session %s with its token", again.state, id)
	}
	var held []*sessionSlot
	for range poolSlots - 2 {
		s, err := takeSlot(dir, "k")
		if err != nil || s == nil {
			t.Fatalf("takeSlot of a free slot: %v, %v", s, err)
		}
		held = append(held, s)
	}
	if s, err := takeSlot(dir, "k"); s != nil || err != nil {
		t.Errorf("every slot taken: got %v, %v; want none", s, err)
	}
	if other, err := takeSlot(dir, "other"); err != nil || other == nil {
		t.Errorf("another server's pool: %v, %v", other, err)
	}
	for _, s := range append(held, second, again) {
		s.release()
	}
}

// A slot file that does not hold a slot (cut short by a killed client,
// or a session id that is not one) is an empty slot, and forget empties
// one.
func TestSessionSlotOfAnUnreadableFileIsEmpty(t *testing.T) {
	dir := t.TempDir()
	for i, content := range []string{`{"session_id": "7fa6dd6d-7a5a`, `{"session_id": "not a uuid", "token": "t"}`} {
		if err := os.WriteFile(filepath.Join(dir, "k-0.json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := takeSlot(dir, "k")
		if err != nil || s == nil {
			t.Fatalf("%d: takeSlot: %v, %v", i, s, err)
		}
		if s.state.SessionID != "" || s.state.Token != "" {
			t.Errorf("%d: %q read as %+v, want an empty slot", i, content, s.state)
		}
		s.sessionID()
		if err := s.forget(); err != nil {
			t.Fatal(err)
		}
		s.release()
		if b, _ := os.ReadFile(filepath.Join(dir, "k-0.json")); strings.Contains(string(b), "-") {
			t.Errorf("%d: a forgotten slot still holds %s", i, b)
		}
	}
}

// Sessions are pooled per server, user and token; the token is never
// written into the key.
func TestSessionPoolKey(t *testing.T) {
	env := map[string]string{"USER": "ana"}
	getenv := func(k string) string { return env[k] }
	key := func(remote string) string {
		t.Helper()
		r, err := connect.ParseRemote(remote)
		if err != nil {
			t.Fatal(err)
		}
		return poolKey(r, getenv)
	}
	base := key("sc://spark.example:15002")
	for _, other := range []string{
		"sc://spark.example:15003",
		"sc://other.example:15002",
		"sc://spark.example:15002/;user_id=bob",
		"sc://spark.example:15002/;token=s3cret",
	} {
		if key(other) == base {
			t.Errorf("%s shares the pool of sc://spark.example:15002", other)
		}
	}
	if a, b := key("sc://spark.example:15002/;token=one"), key("sc://spark.example:15002/;token=two"); a == b || strings.Contains(a, "one") {
		t.Errorf("tokens one and two: keys %s and %s", a, b)
	}
	env["USER"] = "bob"
	if key("sc://spark.example:15002") == base {
		t.Error("another $USER shares ana's pool")
	}
}
