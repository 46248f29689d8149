package spark

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// Session settings a merge changes while it plans and runs, and restores
// after: only optimisations, each measured below. A server that refuses
// one (CONFIG_NOT_AVAILABLE on Databricks serverless and shared clusters)
// runs the merge without it, and a setting the session already has at a
// better value is left alone.
//
// Spark lists the files of a read that names more than parallelListingKey
// paths (a directory counts one, a pattern one per match) with a Spark job
// of its own, of up to listingTasksKey tasks: by default a task per path.
// Scheduling a task costs more than listing a file on the driver or
// fetching its status from cluster storage.
//
// Spark compiles code for each distinct projection of a plan (whole-stage
// code generation, then Janino): a merge of many reads, each projected its
// own way onto the target, compiles a class per read. Evaluating those
// projections interpreted instead (codegenFactoryKey = NO_CODEGEN) costs
// nothing per row that shows: one read of the benchmark's 200 MB of CSV
// took as long either way.
//
// Whole-stage code generation fuses a scan and the projections above it
// into one generated method. A positional scan's projection routes and
// casts every target column in that method, which grows past the 8,000
// bytes of bytecode that HotSpot compiles to machine code (a JVM default):
// the method then runs in the bytecode interpreter, and profiles of the
// benchmark's 2,000-file merge show half the scan's time in it. With
// hugeMethodKey at that limit, Spark generates such a subtree's code per
// operator instead, in methods small enough to be compiled (Spark's own
// advice for HotSpot, in the setting's documentation).
//
// Spark still generates and compiles that whole-stage code first (a
// 36,860-byte method, compiled by Janino on the driver, for the benchmark's
// 200 CSV files) and only then falls back to code per operator, which is
// what whole-stage generation off compiles from the start. So a merge
// whose every scan is positional switches it off (wholeStageKey; see
// tuning.operatorCode), and only a merge with other scans besides lowers
// the limit.
const (
	parallelListingKey = "spark.sql.sources.parallelPartitionDiscovery.threshold"
	listingTasksKey    = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
	codegenFactoryKey  = "spark.sql.codegen.factoryMode"
	hugeMethodKey      = "spark.sql.codegen.hugeMethodLimit"
	wholeStageKey      = "spark.sql.codegen.wholeStage"
	masterKey          = "spark.master"
)

// hotSpotHugeMethod is HotSpot's HugeMethodLimit: it leaves methods of
// more bytes of bytecode than this to the interpreter.
const hotSpotHugeMethod = 8000

// tuning is which session settings a merge wants changed.
type tuning struct {
	// listSerially raises parallelListingKey to maxBatchFiles: a
	// positional batch names up to that many local files, which Spark
	// listed with a Spark job each (much of a merge of 2,000 files),
	// where the driver lists them in milliseconds.
	listSerially bool
	// fewListingTasks lowers listingTasksKey to listingTasks: planning
	// 2,000 CSV files only the server sees, given as a pattern, took
	// several times longer with a task per file than with 8 or 2 tasks
	// (docs/benchmarks-history.md#measurements-behind-the-code).
	fewListingTasks bool
	// interpreted sets codegenFactoryKey to NO_CODEGEN: the benchmark's
	// 200 drifting CSV files of 1 MB, 199 reads, merged faster
	// interpreted than compiled (docs/benchmarks-history.md#measurements-behind-the-code).
	interpreted bool
	// compiledMethods lowers hugeMethodKey to hotSpotHugeMethod: the
	// benchmark's 2,000 drifting files of 100 KB, one positional scan,
	// merged faster with it than with Spark's default, CSV and JSON,
	// written or not (docs/benchmarks-history.md#measurements-behind-the-code).
	// Whole-stage code generation switched off for the merge did as well,
	// but for every operator of every merge:
	// for a merge with scans of its own (a Parquet file read alone, say)
	// besides its positional ones, the limit is lowered instead.
	compiledMethods bool
	// operatorCode sets wholeStageKey to false: for a merge whose every
	// scan is positional, whose whole-stage code Spark would compile and
	// then drop as too long (CSV) or whose fused method HotSpot compiles
	// late (JSON). On the benchmark's corpora at 2026-12-03, against the
	// lowered limit, it was faster in 9 of 12 interleaved pairs of whole
	// merges to Parquet, and in 6 of 7 (CSV) and 3 of 3 (JSON) writing
	// noop: a small gain (docs/benchmarks-history.md#measurements-behind-the-code).
	operatorCode bool
}

// tune changes the session's settings as t wants until restore is called.
func (c *Client) tune(ctx context.Context, t tuning) (restore func(), err error) {
	restore = func() {}
	if t == (tuning{}) {
		return restore, nil
	}
	values, err := c.server.conf(ctx, parallelListingKey, listingTasksKey, codegenFactoryKey, hugeMethodKey, wholeStageKey, masterKey)
	if err != nil {
		return restore, optionalSetting(err)
	}
	want := map[string]string{}
	if n, err := strconv.Atoi(values[parallelListingKey]); t.listSerially && (err != nil || n < maxBatchFiles) {
		want[parallelListingKey] = strconv.Itoa(maxBatchFiles)
	}
	tasks := listingTasks(values[masterKey])
	if n, err := strconv.Atoi(values[listingTasksKey]); t.fewListingTasks && (err != nil || n > tasks) {
		want[listingTasksKey] = strconv.Itoa(tasks)
	}
	if t.interpreted && !strings.EqualFold(values[codegenFactoryKey], "NO_CODEGEN") {
		want[codegenFactoryKey] = "NO_CODEGEN"
	}
	if n, err := strconv.Atoi(values[hugeMethodKey]); t.compiledMethods && (err != nil || n > hotSpotHugeMethod) {
		want[hugeMethodKey] = strconv.Itoa(hotSpotHugeMethod)
	}
	if t.operatorCode && !strings.EqualFold(values[wholeStageKey], "false") {
		want[wholeStageKey] = "false"
	}
	if len(want) == 0 {
		return restore, nil
	}
	if err := c.server.setConf(ctx, want); err != nil {
		return restore, optionalSetting(err)
	}
	// Spark reports a default for these settings: the values to restore.
	old := map[string]string{}
	for k := range want {
		if v, ok := values[k]; ok {
			old[k] = v
		}
	}
	if len(old) == 0 {
		return restore, nil
	}
	return func() { _ = c.server.setConf(context.WithoutCancel(ctx), old) }, nil
}

// caseSensitiveKey is the session's name resolution: false (Spark's
// default) takes c and C for one name.
const caseSensitiveKey = "spark.sql.caseSensitive"

// matchNames has the session resolve names as policy matches them until
// restore is called. A case-sensitive merge (Options.CaseSensitive) needs
// spark.sql.caseSensitive=true for every statement it sends: its target
// may hold columns apart by case alone (a, c, B, C), which Spark otherwise
// refuses as one column twice (COLUMN_ALREADY_EXISTS), and struct fields a
// and A, which it would otherwise take for one. The session's own value
// comes back afterwards, so that a session shared with other work
// (SessionID) resolves its names as before. A case-insensitive merge
// leaves the session as it is: its projections spell every name as its
// source does.
func (c *Client) matchNames(ctx context.Context, policy sparkmerge.Options) (restore func(), err error) {
	restore = func() {}
	if !policy.CaseSensitive {
		return restore, nil
	}
	values, err := c.server.conf(ctx, caseSensitiveKey)
	if err != nil {
		return restore, fmt.Errorf("case-sensitive names: read %s: %w", caseSensitiveKey, err)
	}
	old, ok := values[caseSensitiveKey]
	if strings.EqualFold(old, "true") {
		return restore, nil
	}
	if !ok {
		old = "false" // Spark's default
	}
	if err := c.server.setConf(ctx, map[string]string{caseSensitiveKey: "true"}); err != nil {
		return restore, fmt.Errorf("case-sensitive names (Options.CaseSensitive) need %s=true for the merge's statements, and the server refused it: %w", caseSensitiveKey, err)
	}
	return func() { _ = c.server.setConf(context.WithoutCancel(ctx), map[string]string{caseSensitiveKey: old}) }, nil
}

// localMaster matches a local master's number of cores (local[4]).
var localMaster = regexp.MustCompile(`^local\[(\d+)`)

// listingTasks is the number of listing tasks for a server: on a local
// master (one JVM) a task per core; on a cluster 64, which keeps tens of
// executors busy listing cluster storage (a status call of tens of
// milliseconds per file) without scheduling a task per file.
func listingTasks(master string) int {
	if m := localMaster.FindStringSubmatch(master); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n
		}
	}
	if strings.HasPrefix(master, "local") {
		return 8 // local[*]: the cores are not known here
	}
	return 64
}

// tuning is the session settings p's merge wants (see [tuning]): listing
// serially when it reads positional batches and no other read names more
// paths than Spark lists on the driver by default (they may be remote,
// and slow to list one by one); few listing tasks when one does;
// interpreted projections when it runs at least manyScans scans; code per
// operator when every scan is a positional batch, else methods small
// enough to compile when it has positional batches.
func (p *Planned) tuning() tuning {
	scans := p.scanPlan()
	t := tuning{
		interpreted:     len(scans.batches)+len(scans.rest) >= manyScans,
		compiledMethods: len(scans.batches) > 0 && len(scans.rest) > 0,
		operatorCode:    len(scans.batches) > 0 && len(scans.rest) == 0,
	}
	for _, i := range scans.rest {
		if len(p.Reads[i].Paths) > defaultListingThreshold {
			t.fewListingTasks = true
			return t
		}
	}
	t.listSerially = len(scans.batches) > 0
	return t
}

// manyScans is the number of scans from which a merge's projections are
// interpreted rather than compiled (see [tuning]). With few scans there is
// little to compile: one positional scan of the benchmark's 2,000 CSV
// files took about as long compiled as interpreted (three runs each, not
// clearly apart), so it stays compiled.
const manyScans = 32

// defaultListingThreshold is Spark's default parallelListingKey.
const defaultListingThreshold = 32

// optionalSetting is the error to stop for when the server refused an
// optional session setting: none, unless the server is gone or the merge
// was cancelled.
func optionalSetting(err error) error {
	if errors.Is(err, ErrUnreachable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("optional session settings: %w", err)
	}
	return nil
}
