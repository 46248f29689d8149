//go:build integration

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

// A run in the session an earlier run kept merges as a run in a new
// session does: a landing zone only Spark sees, merged again after a file
// with a new column and a quoted value landed, gives every file's rows
// (the server lists the folder anew), and a setting the earlier run was
// given (--conf spark.sql.session.timeZone, which moves every timestamp
// written without an offset) is gone: the same rows, value for value, as
// --new-session's.
func TestCLIKeptSessionMergesAsANewOne(t *testing.T) {
	t.Parallel()
	host, zone := sparktest.ClusterDir(t)
	out := workDir(t)
	pool := t.TempDir()
	env := []string{"SPARKMERGE_SESSION_POOL=" + pool}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(host, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merge := func(to string, flags ...string) {
		t.Helper()
		args := append([]string{"merge", zone, "--out", filepath.Join(out, to), "--mode", "overwrite"}, flags...)
		if code, stdout, stderr := cliRunWith(t, "", env, args...); code != 0 {
			t.Fatalf("sparkmerge %v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
	}
	pooled := func() []string {
		t.Helper()
		slots, err := filepath.Glob(filepath.Join(pool, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, slot := range slots {
			var s struct {
				SessionID string `json:"session_id"`
			}
			b, err := os.ReadFile(slot)
			if err != nil || json.Unmarshal(b, &s) != nil {
				t.Fatalf("slot %s: %v: %s", slot, err, b)
			}
			if s.SessionID != "" {
				ids = append(ids, s.SessionID)
			}
		}
		return ids
	}

	write("d1.csv", "id,ts\n1,2024-03-01 10:00:00\n2,2024-03-02 11:30:00\n")
	merge("tokyo", "--conf", "spark.sql.session.timeZone=Asia/Tokyo")
	kept := pooled()
	if len(kept) != 1 {
		t.Fatalf("sessions kept after one run: %v, want one", kept)
	}
	write("d2.csv", "ts,id,note\n2024-03-03 09:15:00,3,\"a, b\"\n")
	merge("kept")
	if again := pooled(); len(again) != 1 || again[0] != kept[0] {
		t.Errorf("sessions kept after the second run: %v, want the first run's %s again", again, kept[0])
	}
	merge("new", "--new-session")
	// A run into a table: Spark caches the table's schema and files in
	// the session, which would hide another writer's changes from a later
	// run, so the session is not kept (and is released).
	table := "pool_" + strings.ReplaceAll(filepath.Base(host), "-", "_")
	t.Cleanup(func() { exec(t, "DROP TABLE IF EXISTS "+table) })
	if code, stdout, stderr := cliRunWith(t, "", env, "merge", zone, "--table", table); code != 0 {
		t.Fatalf("merge into a table: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if ids := pooled(); len(ids) != 0 {
		t.Errorf("sessions kept after a run into a table: %v, want none", ids)
	}

	cols := []string{"id", "ts", "note"}
	want := parquetRows(t, filepath.Join(out, "new"), cols, "")
	diff(t, "the kept session's merge against a new session's", want, parquetRows(t, filepath.Join(out, "kept"), cols, ""))
	if len(want) != 3 {
		t.Errorf("a new session's merge: %v, want the 3 rows of both files", want)
	}
	tokyo := parquetRows(t, filepath.Join(out, "tokyo"), cols[:2], "")
	if len(tokyo) != 2 || len(want) < 1 || tokyo[0][1] == want[0][1] {
		t.Errorf("the first run's timestamps %v against a new session's %v: want them moved by --conf's time zone", tokyo, want)
	}
}
