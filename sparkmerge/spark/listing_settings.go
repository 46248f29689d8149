package spark

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Spark lists the files of a read that names more than parallelListingKey
// paths (a directory counts one, a pattern one per match) with a Spark job
// of its own, of up to listingTasksKey tasks: by default a task per path.
// Scheduling a task costs more than listing a file on the driver or
// fetching its status from cluster storage, so a merge sets both for its
// session while it plans and runs (see listingSettings), and restores
// them after.
const (
	parallelListingKey = "spark.sql.sources.parallelPartitionDiscovery.threshold"
	listingTasksKey    = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
	masterKey          = "spark.master"
)

// listingSettings changes the session's listing settings until restore is
// called. serially raises parallelListingKey to maxBatchFiles: a
// positional batch names up to that many local files, which Spark listed
// with a Spark job of about 0.7 s each (15 s of a 38 s merge of 2,000
// files), where the driver lists them in milliseconds. fewTasks lowers
// listingTasksKey to listingTasks: planning 2,000 CSV files only the
// server sees, given as a pattern, took 30-65 s with a task per file,
// 9-12 s with 8 tasks and 8-10 s with 2 (Spark 4.0.1, local[2], two runs
// each).
//
// They are only optimisations: a server that refuses them
// (CONFIG_NOT_AVAILABLE on Databricks serverless and shared clusters)
// lists as it would anyway, and a setting the session already has at a
// better value is left alone.
func (c *Client) listingSettings(ctx context.Context, serially, fewTasks bool) (restore func(), err error) {
	restore = func() {}
	if !serially && !fewTasks {
		return restore, nil
	}
	values, err := c.server.conf(ctx, parallelListingKey, listingTasksKey, masterKey)
	if err != nil {
		return restore, optionalSetting(err)
	}
	want := map[string]string{}
	if n, err := strconv.Atoi(values[parallelListingKey]); serially && (err != nil || n < maxBatchFiles) {
		want[parallelListingKey] = strconv.Itoa(maxBatchFiles)
	}
	tasks := listingTasks(values[masterKey])
	if n, err := strconv.Atoi(values[listingTasksKey]); fewTasks && (err != nil || n > tasks) {
		want[listingTasksKey] = strconv.Itoa(tasks)
	}
	if len(want) == 0 {
		return restore, nil
	}
	if err := c.server.setConf(ctx, want); err != nil {
		return restore, optionalSetting(err)
	}
	// Spark reports a default for both settings: the values to restore.
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

// listingSettings says which listing settings p's merge wants (see
// [Client.listingSettings]): serially when it reads positional batches
// and no other read names more paths than Spark lists on the driver by
// default (they may be remote, and slow to list one by one); fewTasks
// when one does.
func (p *Planned) listingSettings() (serially, fewTasks bool) {
	scans := p.scanPlan()
	for _, i := range scans.rest {
		if len(p.Reads[i].Paths) > defaultListingThreshold {
			return false, true
		}
	}
	return len(scans.batches) > 0, false
}

// defaultListingThreshold is Spark's default parallelListingKey.
const defaultListingThreshold = 32

// optionalSetting is the error to stop for when the server refused an
// optional session setting: none, unless the server is gone or the merge
// was cancelled.
func optionalSetting(err error) error {
	if errors.Is(err, ErrUnreachable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("session settings %s, %s: %w", parallelListingKey, listingTasksKey, err)
	}
	return nil
}
