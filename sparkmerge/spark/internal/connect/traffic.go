package connect

import (
	"context"
	"sync/atomic"
)

// Traffic counts the requests a caller's work sent the server and the
// result bytes it got back: what planning costs the server, which a plan
// reports so that a discovery that grew from a few requests to one per
// file shows in its output, not only in its time.
type Traffic struct {
	analyses, executions, settings, resultBytes atomic.Int64
}

// TrafficCounts are a [Traffic]'s counts at one moment.
type TrafficCounts struct {
	// Analyses are AnalyzePlan requests: schemas (Spark's schema
	// inference runs a Spark job in one) and input file lists.
	Analyses int64
	// Executions are ExecutePlan operations: queries and commands, each
	// one or more Spark jobs.
	Executions int64
	// Settings are Config requests (read, set or unset session settings):
	// no Spark job.
	Settings int64
	// ResultBytes are the bytes of the Arrow batches executions sent back.
	ResultBytes int64
}

// Counts are t's counts so far.
func (t *Traffic) Counts() TrafficCounts {
	return TrafficCounts{
		Analyses:    t.analyses.Load(),
		Executions:  t.executions.Load(),
		Settings:    t.settings.Load(),
		ResultBytes: t.resultBytes.Load(),
	}
}

type trafficKey struct{}

// WithTraffic returns a context whose requests (of any session) t
// counts, from any goroutine.
func WithTraffic(ctx context.Context, t *Traffic) context.Context {
	return context.WithValue(ctx, trafficKey{}, t)
}

// trafficOf is ctx's Traffic, or nil.
func trafficOf(ctx context.Context) *Traffic {
	t, _ := ctx.Value(trafficKey{}).(*Traffic)
	return t
}

// countRequest adds a request of the Spark Connect method to ctx's
// Traffic, if it has one. Interrupts and releases are not counted: they
// end work, and a release runs after its caller has returned.
func countRequest(ctx context.Context, method string) {
	t := trafficOf(ctx)
	if t == nil {
		return
	}
	switch method {
	case "AnalyzePlan":
		t.analyses.Add(1)
	case "ExecutePlan":
		t.executions.Add(1)
	case "Config":
		t.settings.Add(1)
	}
}

// countResultBytes adds n bytes of results to t, if not nil.
func (t *Traffic) countResultBytes(n int) {
	if t != nil {
		t.resultBytes.Add(int64(n))
	}
}
