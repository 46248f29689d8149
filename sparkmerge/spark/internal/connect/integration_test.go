//go:build integration

package connect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

func TestMain(m *testing.M) { os.Exit(sparktest.Main(m)) }

// liveSession dials the test run's Spark (see sparktest): SPARK_REMOTE, or
// the project's container; without either the test skips with the reason.
func liveSession(t *testing.T) *Session {
	t.Helper()
	remote, err := ParseRemote(sparktest.Remote(t))
	if err != nil {
		t.Fatalf("SPARK_REMOTE: %v", err)
	}
	sess, err := Dial(context.Background(), remote, Options{UserAgent: "sparkmerge-connect-test", Retry: RetryPolicy{MaxAttempts: 2}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func dt(k sparkmerge.Kind) sparkmerge.DataType { return sparkmerge.DataType{Kind: k} }

func TestLiveSchemaExactTypes(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	if !strings.HasPrefix(s.SparkVersion(), "4.") && !strings.HasPrefix(s.SparkVersion(), "3.") {
		t.Errorf("SparkVersion() = %q", s.SparkVersion())
	}
	f := s.SQL("SELECT CAST(1.5 AS decimal(12,4)) AS a, CAST(NULL AS decimal(38,0)) AS b, NULL AS n, " +
		"TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz, INTERVAL '1-2' YEAR TO MONTH AS ym, INTERVAL '3' HOUR AS h, " +
		"named_struct('x', 1, 'y z', CAST(NULL AS string)) AS `s.t`, array(CAST(1 AS bigint), NULL) AS arr, map('k', 2.5D) AS m")
	got, err := f.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ptr := func(d sparkmerge.DataType) *sparkmerge.DataType { return &d }
	want := sparkmerge.Schema{Fields: []sparkmerge.Field{
		{Name: "a", Type: sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 12, Scale: 4}},
		{Name: "b", Type: sparkmerge.DataType{Kind: sparkmerge.KindDecimal, Precision: 38}, Nullable: true},
		{Name: "n", Type: dt(sparkmerge.KindNull), Nullable: true},
		{Name: "ntz", Type: dt(sparkmerge.KindTimestampNTZ)},
		{Name: "ym", Type: sparkmerge.DataType{Kind: sparkmerge.KindYearMonthInterval, StartField: 0, EndField: 1}},
		{Name: "h", Type: sparkmerge.DataType{Kind: sparkmerge.KindDayTimeInterval, StartField: 1, EndField: 1}},
		{Name: "s.t", Type: sparkmerge.DataType{Kind: sparkmerge.KindStruct, Fields: []sparkmerge.Field{
			{Name: "x", Type: dt(sparkmerge.KindInt)},
			{Name: "y z", Type: dt(sparkmerge.KindString), Nullable: true},
		}}},
		{Name: "arr", Type: sparkmerge.DataType{Kind: sparkmerge.KindArray, Elem: ptr(dt(sparkmerge.KindLong)), ContainsNull: true}},
		{Name: "m", Type: sparkmerge.DataType{Kind: sparkmerge.KindMap, Key: ptr(dt(sparkmerge.KindString)), Value: ptr(dt(sparkmerge.KindDouble))}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema (-want +got):\n%s", diff)
	}
	rows, err := f.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantRows := Rows{
		Columns: []string{"a", "b", "n", "ntz", "ym", "h", "s.t", "arr", "m"},
		Values: [][]any{{"1.5000", nil, nil, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), int32(14), 3 * time.Hour,
			map[string]any{"x": int32(1), "y z": nil}, []any{int64(1), nil}, []MapEntry{{"k", 2.5}}}},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("Collect (-want +got):\n%s", diff)
	}
}

func TestLiveReadFilesSelectExpr(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	ctx := context.Background()
	dir := sparktest.WorkDir(t)
	writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,ann\n2,bob\n")
	writeFile(t, filepath.Join(dir, "b.csv"), "id,name\n3,cy\n")
	writeFile(t, filepath.Join(dir, "c.json"), `{"id": 4, "amount": 1.25}`+"\n"+`{"id": 5}`+"\n")

	opts := map[string]string{"header": "true"}
	csv := s.Read(ReadSpec{Format: "csv", Paths: []string{filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")},
		Schema: "id INT, name STRING", Options: opts})
	opts["header"] = "false" // must not affect the frame
	rows, err := csv.SelectExpr("id", "name", "CAST(NULL AS decimal(12,4)) AS `amount`").Filter("id > 1").Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Rows{Columns: []string{"id", "name", "amount"}, Values: [][]any{{int32(2), "bob", nil}, {int32(3), "cy", nil}}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("csv rows (-want +got):\n%s", diff)
	}
	sch, err := csv.SelectExpr("CAST(NULL AS decimal(12,4)) AS `amount`").Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := sch.Fields[0].Type; got.Kind != sparkmerge.KindDecimal || got.Precision != 12 || got.Scale != 4 || !sch.Fields[0].Nullable {
		t.Errorf("typed null = %+v, want nullable decimal(12,4)", sch.Fields[0])
	}

	js := s.Read(ReadSpec{Format: "json", Paths: []string{filepath.Join(dir, "c.json")}})
	sch, err = js.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSch := sparkmerge.Schema{Fields: []sparkmerge.Field{
		{Name: "amount", Type: dt(sparkmerge.KindDouble), Nullable: true},
		{Name: "id", Type: dt(sparkmerge.KindLong), Nullable: true},
	}}
	if diff := cmp.Diff(wantSch, sch); diff != "" {
		t.Errorf("json schema (-want +got):\n%s", diff)
	}
	if n, err := js.Count(ctx); err != nil || n != 2 {
		t.Errorf("json Count = %d, %v; want 2", n, err)
	}
}

func TestLiveUnion600(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	ctx := context.Background()
	const n = 600
	frames := make([]Frame, n)
	for i := range frames {
		frames[i] = s.SQL(fmt.Sprintf("SELECT %d AS i", i%300)) // every value twice
	}
	u := UnionAll(frames)
	start := time.Now()
	sch, err := u.Schema(ctx)
	if err != nil {
		t.Fatalf("Schema of a balanced union of %d: %v", n, err)
	}
	t.Logf("balanced UnionAll of %d: analyze %v", n, time.Since(start))
	if len(sch.Fields) != 1 || sch.Fields[0].Name != "i" {
		t.Errorf("schema = %+v", sch)
	}
	start = time.Now()
	cnt, err := u.Count(ctx)
	if err != nil || cnt != n {
		t.Fatalf("Count = %d, %v; want %d (duplicates kept)", cnt, err, n)
	}
	t.Logf("balanced UnionAll of %d: count %v", n, time.Since(start))

	// A left-deep chain of the same inputs, as folding one frame at a time
	// builds it, nests past the server's protobuf recursion limit
	// (spark.connect.grpc.marshallerRecursionLimit, 1024): the reason
	// UnionAll builds a balanced tree.
	chain := frames[0]
	for _, f := range frames[1:] {
		chain = UnionAll([]Frame{chain, f})
	}
	if _, err := chain.Schema(ctx); err == nil {
		t.Errorf("Spark %s analysed a left-deep chain of %d unions: a balanced tree is no longer needed", s.SparkVersion(), n)
	} else {
		t.Logf("left-deep chain of %d: %v", n, err)
	}
}

func TestLiveDuplicatesSurviveUnions(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	ctx := context.Background()
	a := s.SQL("SELECT * FROM VALUES (1, 'x'), (1, 'x') AS t(id, v)")
	b := s.SQL("SELECT * FROM VALUES (2, 'y') AS t(id, v)")
	if n, err := UnionAll([]Frame{a, a}).Count(ctx); err != nil || n != 4 {
		t.Errorf("UnionAll Count = %d, %v; want 4", n, err)
	}
	rows, err := UnionAll([]Frame{a, b, a}).Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Rows{Columns: []string{"id", "v"}, Values: [][]any{{int32(1), "x"}, {int32(1), "x"}, {int32(2), "y"}, {int32(1), "x"}, {int32(1), "x"}}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("UnionAll (-want +got):\n%s", diff)
	}
}

func TestLiveWritePartitionedParquet(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	ctx := context.Background()
	out := filepath.Join(sparktest.WorkDir(t), "out")
	src := s.SQL("SELECT * FROM VALUES (1, 'a'), (2, 'b'), (3, 'a') AS t(id, p)")
	spec := WriteSpec{Format: "parquet", Path: out, PartitionBy: []string{"p"}, Options: map[string]string{"compression": "snappy"}}
	if err := src.Write(ctx, spec); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"p=a", "p=b"} {
		if _, err := os.Stat(filepath.Join(out, d)); err != nil {
			t.Errorf("partition directory: %v", err)
		}
	}
	// errorifexists (the default) refuses an existing path.
	err := src.Write(ctx, spec)
	var se *SparkError
	if !errors.As(err, &se) || se.ErrorClass != "PATH_ALREADY_EXISTS" {
		t.Errorf("second write: %v, want PATH_ALREADY_EXISTS", err)
	}
	spec.Mode = "append"
	if err := src.Write(ctx, spec); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Read(ReadSpec{Format: "parquet", Paths: []string{out}}).Aggregate([]string{"p"}, "count(1) AS n").Filter("p = 'a'").Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Rows{Columns: []string{"p", "n"}, Values: [][]any{{"a", int64(4)}}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

func TestLiveTablesAndDDL(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	ctx := context.Background()
	name := "connect_test_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	t.Cleanup(func() { _ = s.ExecSQL(context.Background(), "DROP TABLE IF EXISTS "+name) })
	if err := s.SQL("SELECT 1 AS id").Write(ctx, WriteSpec{Table: name, Format: "parquet"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecSQL(ctx, "ALTER TABLE "+name+" ADD COLUMNS (amount decimal(12,4))"); err != nil {
		t.Fatal(err)
	}
	// saveAsTable append matches columns by name.
	if err := s.SQL("SELECT CAST(2.5 AS decimal(12,4)) AS amount, 2 AS id").Write(ctx, WriteSpec{Table: name, Mode: "append"}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Table(name, nil).Filter("id = 2").Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Rows{Columns: []string{"id", "amount"}, Values: [][]any{{int32(2), "2.5000"}}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("table rows (-want +got):\n%s", diff)
	}
	if err := s.Table(name, nil).CreateTempView(ctx, name+"_v", false); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SQL("SELECT * FROM " + name + "_v").Count(ctx); err != nil || n != 2 {
		t.Errorf("view Count = %d, %v; want 2", n, err)
	}
	_, err = s.Table(name+"_missing", nil).Schema(ctx)
	var se *SparkError
	if !errors.As(err, &se) || se.ErrorClass != "TABLE_OR_VIEW_NOT_FOUND" {
		t.Errorf("missing table: %v, want TABLE_OR_VIEW_NOT_FOUND", err)
	}
}

func TestLiveErrors(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	ctx := context.Background()
	missing := filepath.Join(sparktest.WorkDir(t), "missing.csv")
	_, err := s.Read(ReadSpec{Format: "csv", Paths: []string{missing}}).Schema(ctx)
	var se *SparkError
	if !errors.As(err, &se) {
		t.Fatalf("missing path: %v (%T), want a *SparkError", err, err)
	}
	if se.ErrorClass != "PATH_NOT_FOUND" || se.SQLState != "42K03" || !strings.HasSuffix(se.Parameters["path"], missing) {
		t.Errorf("missing path: class %q state %q params %v", se.ErrorClass, se.SQLState, se.Parameters)
	}
	_, err = s.SQL("SELECT nope FROM VALUES (1) AS t(a)").Schema(ctx)
	if !errors.As(err, &se) || se.ErrorClass != "UNRESOLVED_COLUMN.WITH_SUGGESTION" {
		t.Errorf("unresolved column: %v", err)
	}
}

func TestLiveConcurrentSchemas(t *testing.T) {
	t.Parallel()
	s := liveSession(t)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sch, err := s.SQL(fmt.Sprintf("SELECT CAST(%d AS decimal(12,%d)) AS a", i, i%5)).Schema(context.Background())
			if err == nil && sch.Fields[0].Type.Scale != i%5 {
				err = fmt.Errorf("scale %d, want %d", sch.Fields[0].Type.Scale, i%5)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}

// InterruptAll stops a running Spark job of the session: the query fails
// at once instead of running to its end.
func TestLiveInterruptAll(t *testing.T) {
	t.Parallel()
	sess := liveSession(t)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		// Tens of seconds of work on two cores: enough to be running
		// when interrupted, and little for the server, shared by other
		// tests, if an interrupt comes while Spark plans the query
		// (it then cancels the operation, not the job submitted after).
		_, err := sess.SQL("SELECT sum(id % 7) FROM range(0, 20000000000, 1, 4)").Collect(context.Background())
		done <- err
	}()
	time.Sleep(3 * time.Second) // let the job start
	// Then interrupted every half second until it ends: on a loaded
	// machine the server may not have the operation yet.
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := sess.InterruptAll(context.Background()); err != nil {
			t.Fatalf("InterruptAll: %v", err)
		}
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("the interrupted query succeeded")
			}
			if msg := strings.ToLower(err.Error()); !strings.Contains(msg, "cancel") && !strings.Contains(msg, "interrupt") {
				t.Fatalf("the query failed, but not by the interrupt: %v", err)
			}
			t.Logf("interrupted after %s: %.150v", time.Since(start).Round(time.Millisecond), err)
			return
		case <-tick.C:
		}
	}
}

// The server ends a reattachable stream every senderMaxStreamDuration (the
// test server's is 5 s; 2 minutes by default): a query and a command that
// outlast it are picked up again and come back whole, the command run once.
func TestLiveReattach(t *testing.T) {
	t.Parallel()
	sess := liveSession(t)
	ctx := context.Background()
	const key = "spark.connect.execute.reattachable.senderMaxStreamDuration"
	conf, err := sess.Conf(ctx, key)
	if err != nil {
		t.Fatalf("Conf: %v", err)
	}
	if d, err := time.ParseDuration(conf[key]); err != nil || d > 5*time.Second {
		msg := fmt.Sprintf("the server's %s is %q: start it with --conf %s=5s (sparktest does) for this test", key, conf[key], key)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	// 40 rows, a quarter second each, on one task: about 10 s.
	slow := "SELECT id, reflect('java.lang.Thread', 'sleep', CAST(250 AS BIGINT)) AS slept FROM range(0, 40, 1, 1)"
	before := sess.reattaches.Load()
	// count(slept) keeps the sleeps in the plan.
	rows, err := sess.SQL("SELECT count(*), sum(id), count(slept) FROM (" + slow + ")").Collect(ctx)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	if got := fmt.Sprint(rows.Values); got != "[[40 780 40]]" {
		t.Errorf("query result %s, want [[40 780 40]]", got)
	}
	if sess.reattaches.Load() == before {
		t.Errorf("a 10 s query was never reattached: the server did not end its stream, or the client did not notice")
	}

	table := "reattached_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	t.Cleanup(func() { _ = sess.ExecSQL(context.Background(), "DROP TABLE IF EXISTS "+table) })
	before = sess.reattaches.Load()
	if err := sess.ExecSQL(ctx, "CREATE TABLE "+table+" USING parquet AS "+slow); err != nil {
		t.Fatalf("command: %v", err)
	}
	if sess.reattaches.Load() == before {
		t.Errorf("a 10 s command was never reattached")
	}
	rows, err = sess.SQL("SELECT count(*) FROM " + table).Collect(ctx)
	if err != nil || fmt.Sprint(rows.Values) != "[[40]]" {
		t.Errorf("the table holds %v (%v), want 40 rows: the command ran once", rows.Values, err)
	}
}

// A released session is gone from the server: its temporary view with it,
// and its id is refused, while a session that was not released keeps its
// view for the next client that joins it.
func TestLiveReleaseEndsTheSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote, err := ParseRemote(sparktest.Remote(t))
	if err != nil {
		t.Fatal(err)
	}
	dial := func(id string) (*Session, error) {
		r := remote
		r.SessionID = id
		return Dial(ctx, r, Options{UserAgent: "sparkmerge-connect-test", Retry: RetryPolicy{MaxAttempts: 2}})
	}
	withView := func(id string) {
		t.Helper()
		s, err := dial(id)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Started() {
			t.Errorf("Started() for the session id %s it was given", id)
		}
		if err := s.SQL("SELECT 1 AS one").CreateTempView(ctx, "witness", false); err != nil {
			t.Fatal(err)
		}
	}
	kept, released := uuid.NewString(), uuid.NewString()
	withView(kept)
	withView(released)
	s, err := dial(released)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	s.Close()

	if s, err := dial(released); err == nil {
		s.Close()
		t.Errorf("the server accepted the released session %s again", released)
	} else if !strings.Contains(err.Error(), "SESSION_CLOSED") {
		t.Errorf("joining the released session: %v, want INVALID_HANDLE.SESSION_CLOSED", err)
	}
	s, err = dial(kept)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.SQL("SELECT one FROM witness").Collect(ctx)
	if err != nil {
		t.Fatalf("the session that was not released lost its view: %v", err)
	}
	if want := (Rows{Columns: []string{"one"}, Values: [][]any{{int32(1)}}}); !cmp.Equal(want, rows) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}

// Conf gives the settings that have a value (a default counts) and leaves
// out an optional one unset, ConfOption any unset; a frame's Explain is its physical plan's
// text: a range without a number of partitions has the session's
// leafNodeDefaultParallelism of them. Neither runs a Spark job.
func TestLiveConfAndExplain(t *testing.T) {
	t.Parallel()
	sess := liveSession(t)
	ctx := context.Background()
	const set, unset = "spark.sql.files.maxPartitionBytes", "spark.sql.files.minPartitionNum"
	values, err := sess.Conf(ctx, set, unset)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := values[unset]; ok || values[set] == "" {
		t.Errorf("Conf: %v, want %s and no %s", values, set, unset)
	}
	// ConfOption leaves out a Spark setting without a value, where
	// Conf's get fails on it.
	const master, cores = "spark.master", "spark.executor.cores"
	if _, err := sess.Conf(ctx, master, cores); err == nil {
		t.Errorf("Conf of %s, which the server has no value for, did not fail", cores)
	}
	options, err := sess.ConfOption(ctx, master, cores)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := options[cores]; ok || !strings.HasPrefix(options[master], "local") {
		t.Errorf("ConfOption: %v, want %s local and no %s", options, master, cores)
	}
	plan, err := sess.SQL("SELECT * FROM range(1)").Explain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "Range (0, 1, step=1, splits=") {
		t.Errorf("the plan of a range: %q", plan)
	}
}
