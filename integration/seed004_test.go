//go:build integration

package integration

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/google/go-cmp/cmp"

	"github.com/sparkmerge/sparkmerge/spark"
)

// Sessions. A test's queries, statements and merges (query, exec,
// newClient) run on one Spark Connect session, borrowed for the test from
// a pool and given back when it ends: a new session per test would load
// and compile Spark's generated code again, in a class loader of its own.
// So a session serves one test at a time, and at most as many as run at
// once exist. A test that makes temporary views, changes session
// settings or checks what a session itself does opens its own first, with
// upstreamSession; query, exec and newClient then use that one.
var (
	sessionsMu sync.Mutex
	sessions   = map[*testing.T]*testSession{}
	idle       []sql.SparkSession // the pool
)

type testSession struct {
	s      sql.SparkSession
	pooled bool
}

// upstreamSession opens a plain spark-connect-go session of the test's
// own, for a test whose temporary views or settings must not outlive it
// (seed 004 is about what the client library itself does): it is stopped
// when the test ends. Call it before query, exec or newClient.
func upstreamSession(t *testing.T) sql.SparkSession {
	t.Helper()
	sessionsMu.Lock()
	defer sessionsMu.Unlock()
	if ts, ok := sessions[t]; ok {
		if ts.pooled {
			t.Fatal("upstreamSession called after query, exec or newClient: the test already runs on a shared session")
		}
		return ts.s
	}
	s := newSession(t)
	sessions[t] = &testSession{s: s}
	t.Cleanup(func() {
		sessionsMu.Lock()
		delete(sessions, t)
		sessionsMu.Unlock()
		s.Stop()
	})
	return s
}

// testSessionOf returns the test's session: its own, or one borrowed from
// the pool until the test ends.
func testSessionOf(t *testing.T) sql.SparkSession {
	t.Helper()
	sessionsMu.Lock()
	defer sessionsMu.Unlock()
	if ts, ok := sessions[t]; ok {
		return ts.s
	}
	var s sql.SparkSession
	if n := len(idle); n > 0 {
		s, idle = idle[n-1], idle[:n-1]
	} else {
		s = newSession(t)
	}
	sessions[t] = &testSession{s: s, pooled: true}
	t.Cleanup(func() {
		sessionsMu.Lock()
		defer sessionsMu.Unlock()
		delete(sessions, t)
		idle = append(idle, s)
	})
	return s
}

// runOnParentSession runs f as a subtest of t, sequential, on t's session:
// t waits for it, so the session still serves one test at a time, and a
// loop of subtests (the read paths of one corpus) takes no session each
// from the pool. f must not call t.Parallel or upstreamSession.
func runOnParentSession(t *testing.T, name string, f func(t *testing.T)) bool {
	t.Helper()
	s := testSessionOf(t)
	return t.Run(name, func(t *testing.T) {
		sessionsMu.Lock()
		sessions[t] = &testSession{s: s, pooled: true}
		sessionsMu.Unlock()
		t.Cleanup(func() {
			sessionsMu.Lock()
			defer sessionsMu.Unlock()
			delete(sessions, t)
		})
		f(t)
	})
}

func newSession(t *testing.T) sql.SparkSession {
	t.Helper()
	r := requireSpark(t)
	s, err := sql.NewSessionBuilder().Remote(r).Build(context.Background())
	if err != nil {
		t.Fatalf("connect to %s: %v", spark.RedactRemote(r), err)
	}
	return s
}

func frame(t *testing.T, s sql.SparkSession, query string) sql.DataFrame {
	t.Helper()
	df, err := s.Sql(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return df
}

func collectValues(t *testing.T, df sql.DataFrame) [][]any {
	t.Helper()
	rows, err := df.Collect(context.Background())
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r.Values()
	}
	return out
}

func fieldNamesAndTypes(t *testing.T, df sql.DataFrame) []string {
	t.Helper()
	schema, err := df.Schema(context.Background())
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	var out []string
	for _, f := range schema.Fields {
		out = append(out, f.Name+":"+f.DataType.TypeName())
	}
	return out
}

// TestSeed004UnionByNameIdenticalSchemas reproduces seed 004's JUnit tests:
// two (id, name) frames, union by name, 4 rows in order, schema unchanged.
func TestSeed004UnionByNameIdenticalSchemas(t *testing.T) {
	t.Parallel()
	s := upstreamSession(t)
	df1 := frame(t, s, "SELECT * FROM VALUES (1, 'Alice'), (2, 'Bob') AS t(id, name)")
	df2 := frame(t, s, "SELECT * FROM VALUES (3, 'Charlie'), (4, 'Diana') AS t(id, name)")

	merged := df1.UnionByName(context.Background(), df2)

	want := [][]any{{int32(1), "Alice"}, {int32(2), "Bob"}, {int32(3), "Charlie"}, {int32(4), "Diana"}}
	if diff := cmp.Diff(want, collectValues(t, merged)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(fieldNamesAndTypes(t, df1), fieldNamesAndTypes(t, merged)); diff != "" {
		t.Errorf("schema changed by the union (-before +after):\n%s", diff)
	}
	if got := fieldNamesAndTypes(t, merged); !cmp.Equal(got, []string{"id:Integer", "name:String"}) {
		t.Errorf("schema = %v, want id:Integer, name:String", got)
	}
}

// TestSeed004UpstreamUnionByNameDropsDuplicates pins the upstream bug the
// project works around: spark-connect-go's UnionByName never sets is_all, so
// Spark plans a UNION DISTINCT and duplicated rows vanish. UnionAll keeps
// them. If this test starts failing, upstream fixed the bug.
func TestSeed004UpstreamUnionByNameDropsDuplicates(t *testing.T) {
	t.Parallel()
	s := upstreamSession(t)
	df1 := frame(t, s, "SELECT * FROM VALUES (1, 'Alice'), (1, 'Alice') AS t(id, name)")
	df2 := frame(t, s, "SELECT * FROM VALUES (1, 'Alice') AS t(id, name)")

	byName, err := df1.UnionByName(context.Background(), df2).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := df1.UnionAll(context.Background(), df2).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if all != 3 {
		t.Errorf("UnionAll kept %d rows, want 3", all)
	}
	if byName != 1 {
		t.Errorf("upstream UnionByName kept %d rows; it used to deduplicate to 1 (is_all unset): re-check the workaround", byName)
	}
}
