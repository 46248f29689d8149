package spark

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/spark-connect-go/spark/sql"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A merge need not end in a write: for Go pipelines that keep working in
// Spark, the merged result can be a spark-connect-go DataFrame of the
// caller's session, or a temporary view. Both are lazy: nothing is read
// until the caller acts on them, and every check that runs with the rows
// (Spark's header checks, the positional scans' file checks, the
// lossless-widening checks) runs then, failing the caller's action.

// MergeFrame plans job and returns its merged result as a DataFrame of
// session (a spark-connect-go session on the same server), lazily. The job
// must have no target and no Verify (nothing is written). Session settings
// made on this client (ConnectOptions.Conf) do not apply to session unless
// both share a session (ConnectOptions.SessionID). A case-sensitive job's
// result whose names are apart by case alone (c and C) needs
// spark.sql.caseSensitive=true in session to run.
func (c *Client) MergeFrame(ctx context.Context, job Job, session sql.SparkSession) (sql.DataFrame, *Planned, error) {
	if session == nil {
		return nil, nil, errors.New("merge to a DataFrame: no session given")
	}
	planned, err := c.planResult(ctx, job, "a DataFrame")
	if err != nil {
		return nil, nil, err
	}
	merged, _ := c.merged(planned)
	if err := merged.Err(); err != nil {
		return nil, nil, err
	}
	df, err := connect.NewUpstreamDataFrame(session, merged.Proto())
	if err != nil {
		return nil, nil, fmt.Errorf("merge to a DataFrame: %w", err)
	}
	return df, planned, nil
}

// MergeView plans job and registers its merged result as the temporary
// view name in this client's session (global: in global_temp, seen by
// every session of the server), replacing a view of that name. Nothing is
// read until the view is queried. The job must have no target and no
// Verify. A case-sensitive job's view is made with spark.sql.caseSensitive
// on; a query of a view whose names are apart by case alone needs it on
// too (ConnectOptions.Conf).
func (c *Client) MergeView(ctx context.Context, job Job, name string, global bool) (*Planned, error) {
	if name == "" {
		return nil, errors.New("merge to a view: no view name given")
	}
	planned, err := c.planResult(ctx, job, "a view")
	if err != nil {
		return nil, err
	}
	merged, _ := c.merged(planned)
	unmatch, err := c.matchNames(ctx, job.Policy)
	if err != nil {
		return nil, err
	}
	defer unmatch()
	if !global {
		c.keepSession.Store(true) // the view is read from the session later
	}
	if err := merged.CreateTempView(ctx, name, global); err != nil {
		return nil, fmt.Errorf("merge to view %s: %w", name, err)
	}
	return planned, nil
}

// planResult plans a job whose result is not written.
func (c *Client) planResult(ctx context.Context, job Job, result string) (*Planned, error) {
	if job.Target.Path != "" || job.Target.Table != "" {
		return nil, fmt.Errorf("merge to %s: the job has a target (%s); a merge to %s writes nothing", result, targetName(job.Target), result)
	}
	if job.Verify {
		return nil, fmt.Errorf("merge to %s: Verify counts the rows written, and nothing is written", result)
	}
	// Its rows are read: the directories of relative paths are checked
	// as a merge's are (a probe the server must list), unlike a plan's.
	return c.Plan(withSharedDirs(ctx), job)
}
