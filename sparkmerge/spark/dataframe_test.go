package spark

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/spark-connect-go/spark/sql"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// frameSetup is mergeSetup's client, fake and sources with a job that
// writes nothing.
func frameSetup(t *testing.T) (*Client, *sparkFake, []string, Job) {
	t.Helper()
	c, f, paths, job := mergeSetup(t)
	job.Target = Target{}
	return c, f, paths, job
}

// MergeFrame gives the merged rows as a DataFrame of the caller's
// spark-connect-go session: its plan reads every source, and nothing runs
// until the caller acts on it.
func TestMergeFrame(t *testing.T) {
	c, f, paths, job := frameSetup(t)
	ctx := context.Background()
	session, err := sql.NewSessionBuilder().Remote("sc://" + f.addr).Build(ctx) // connects lazily
	if err != nil {
		t.Fatal(err)
	}
	df, planned, err := c.MergeFrame(ctx, job, session)
	if err != nil {
		t.Fatal(err)
	}
	if got := planned.Plan.Target.Names(); !slices.Equal(got, []string{"id", "name", "amount"}) {
		t.Errorf("planned columns %v", got)
	}
	rel, err := connect.RelationOf(df)
	if err != nil {
		t.Fatal(err)
	}
	if got := pathsRead(rel.ProtoReflect()); !slices.Equal(got, paths) {
		t.Errorf("the DataFrame reads %v, want both sources %v", got, paths)
	}
	if n := len(f.recorded("ExecutePlan")); n != 0 {
		t.Errorf("%d plans executed before the caller acted", n)
	}
}

// MergeView registers the merged rows as a temporary view (replacing one
// of that name) in the client's session.
func TestMergeView(t *testing.T) {
	for _, global := range []bool{false, true} {
		c, f, paths, job := frameSetup(t)
		planned, err := c.MergeView(context.Background(), job, "merged", global)
		if err != nil {
			t.Fatal(err)
		}
		if planned == nil || len(planned.Reads) == 0 {
			t.Fatalf("no plan returned")
		}
		views := f.recorded("view")
		if len(views) != 1 {
			t.Fatalf("%d views created, want 1", len(views))
		}
		v := pmsg(views[0].plan(), "command", "create_dataframe_view")
		if pstr(v, "name") != "merged" || v.Get(field(v, "is_global")).Bool() != global || !v.Get(field(v, "replace")).Bool() {
			t.Errorf("view %v, want merged (global %v) replacing any", v, global)
		}
		if got := pathsRead(pmsg(v, "input")); !slices.Equal(got, paths) {
			t.Errorf("the view reads %v, want both sources %v", got, paths)
		}
	}
}

// Close leaves a session holding a temporary view of MergeView (it exists
// to be read from the session afterwards), and releases one whose only
// view is global (global_temp outlives sessions).
func TestCloseKeepsASessionWithAView(t *testing.T) {
	for _, global := range []bool{false, true} {
		c, f, _, job := frameSetup(t)
		if _, err := c.MergeView(context.Background(), job, "merged", global); err != nil {
			t.Fatal(err)
		}
		c.Close()
		released := len(f.recorded("ReleaseSession"))
		if want := map[bool]int{false: 0, true: 1}[global]; released != want {
			t.Errorf("global %v: %d sessions released on Close, want %d", global, released, want)
		}
	}
}

// A view the server refuses fails with Spark's error, naming the view.
func TestMergeViewRefused(t *testing.T) {
	c, f, _, job := frameSetup(t)
	f.failOn("INVALID_VIEW_NAME", func(call sparkCall) bool { return call.what == "view" })
	_, err := c.MergeView(context.Background(), job, "bad name", false)
	wantSparkError(t, err, "INVALID_VIEW_NAME")
	if !strings.HasPrefix(err.Error(), "merge to view bad name: ") {
		t.Errorf("error %q does not name the view", err)
	}
}

// A merge whose result is not written refuses a target, Verify, a missing
// session or view name, before asking the server anything.
func TestMergeWithoutWriteRefusesWhatWrites(t *testing.T) {
	c, f, _, job := frameSetup(t)
	ctx := context.Background()
	session, err := sql.NewSessionBuilder().Remote("sc://" + f.addr).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	withTarget, withVerify := job, job
	withTarget.Target = Target{Table: "db.t"}
	withVerify.Verify = true
	calls := len(f.recorded(""))
	for _, tt := range []struct {
		name string
		run  func() error
		want string
	}{
		{"frame with a target", func() error { _, _, err := c.MergeFrame(ctx, withTarget, session); return err }, `merge to a DataFrame: the job has a target (table "db.t")`},
		{"view with a target", func() error { _, err := c.MergeView(ctx, withTarget, "v", false); return err }, "merge to a view: the job has a target"},
		{"frame with verify", func() error { _, _, err := c.MergeFrame(ctx, withVerify, session); return err }, "merge to a DataFrame: Verify counts the rows written"},
		{"view with verify", func() error { _, err := c.MergeView(ctx, withVerify, "v", false); return err }, "merge to a view: Verify counts the rows written"},
		{"no session", func() error { _, _, err := c.MergeFrame(ctx, job, nil); return err }, "no session given"},
		{"no view name", func() error { _, err := c.MergeView(ctx, job, "", false); return err }, "no view name given"},
	} {
		if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	if n := len(f.recorded("")); n != calls {
		t.Errorf("%d calls to the server for refused merges", n-calls)
	}
}
