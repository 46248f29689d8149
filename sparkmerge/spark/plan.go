package spark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
	"github.com/sparkmerge/sparkmerge/spark/internal/infer"
)

// Plan reads every source's schema (no rows, except what schema inference
// needs), groups sources per the job's strategy and computes the merge plan.
// It writes nothing.
func (c *Client) Plan(ctx context.Context, job Job) (*Planned, error) {
	start := time.Now()
	traffic := &connect.Traffic{}
	ctx = connect.WithTraffic(ctx, traffic)
	ctx, progress := withProgress(ctx, job)
	if err := checkJobReaderOptions(job); err != nil {
		return nil, err
	}
	job, err := c.resolveJobPaths(ctx, job)
	if err != nil {
		return nil, err
	}
	if job, err = checkIncremental(job); err != nil {
		return nil, err
	}
	unmatch, err := c.matchNames(ctx, job.Policy)
	if err != nil {
		return nil, err
	}
	defer unmatch()
	restore, err := c.tune(ctx, tuning{fewListingTasks: listsOnServer(job.Sources)})
	if err != nil {
		return nil, err
	}
	defer restore()
	progress.report(Progress{Phase: PhaseList})
	in, err := c.expand(ctx, job, true)
	if err != nil {
		return nil, err
	}
	progress.report(Progress{Phase: PhaseList, Finished: true, Done: int64(len(in.reads))})
	if err := c.checkInputs(ctx, job.Target, in.reads, job.Sources); err != nil {
		return nil, err
	}
	var run *IncrementalRun
	if job.Incremental != nil {
		if in.reads, run, err = c.selectIncremental(ctx, job, in.reads, in.listed); err != nil {
			return nil, err
		}
		run.Unlisted = in.unlisted
		if run.NothingNew {
			planned := &Planned{Strategy: job.Strategy, Incremental: run, Skipped: in.skipped, Discovery: time.Since(start), Requests: planRequests(traffic.Counts())}
			progress.report(Progress{Phase: PhasePlan, Finished: true, Planned: planned})
			return planned, nil
		}
	}
	var empty []*Read
	in.reads, empty = withoutEmptyFiles(in.reads)
	if len(in.reads) == 0 && run != nil {
		// New files, all empty: recorded, and nothing to write.
		run.NothingNew = true
		planned := &Planned{Strategy: job.Strategy, Incremental: run, Skipped: in.skipped, Empty: emptyNames(empty), Discovery: time.Since(start), Requests: planRequests(traffic.Counts())}
		progress.report(Progress{Phase: PhasePlan, Finished: true, Planned: planned})
		return planned, nil
	}
	if len(in.reads) == 0 {
		return nil, nothingToMerge(empty)
	}
	progress.report(Progress{Phase: PhaseDiscover, Total: int64(len(in.reads))})
	found, err := c.discover(ctx, job, in)
	if err != nil {
		return nil, err
	}
	var columnless []*Read
	if found.reads, columnless, err = c.withoutColumnlessFiles(ctx, found.reads, job.Parallelism); err != nil {
		return nil, err
	}
	if empty = append(empty, columnless...); len(found.reads) == 0 {
		return nil, nothingToMerge(empty)
	}
	progress.report(Progress{Phase: PhaseDiscover, Finished: true, Done: int64(len(in.reads)), Total: int64(len(in.reads))})
	if err := addPartitionColumns(found.reads); err != nil {
		return nil, err
	}
	applyHints(found.reads, job.Policy, !strings.HasPrefix(c.SparkVersion(), "3."))
	planned, err := c.planReads(ctx, job, pinSchemas(groupDiscovered(job, found.reads)))
	if err != nil {
		return nil, err
	}
	checkParses(planned.Reads, planned.Plan)
	planned.Skipped, planned.InferenceNote = in.skipped, found.note
	planned.Incremental = run
	planned.Empty = emptyNames(empty)
	planned.RemoteTyped, planned.RemoteFetchJobs, planned.PastFetchLimit = found.remoteTyped, found.fetchJobs, found.pastFetchLimit
	planned.TypedTogether, planned.TogetherRequests = found.typedTogether, found.togetherRequests
	planned.TypedByHeader, planned.ByHeaderRequests = found.typedByHeader, found.byHeaderRequests
	planned.Discovery, planned.Inference = time.Since(start), found.inference
	if err := checkPartitionColumns(job.Target, planned); err != nil {
		return nil, err
	}
	if err := c.checkWheres(ctx, planned.Reads, job.Parallelism); err != nil {
		return nil, err
	}
	scans := planScans(planned.Reads, planned.Plan)
	planned.scans = &scans
	planned.Requests = planRequests(traffic.Counts())
	progress.report(Progress{Phase: PhasePlan, Finished: true, Planned: planned})
	return planned, nil
}

// checkJobReaderOptions refuses reader options, the job's and each
// source's, that Spark would silently replace (see [CheckReaderOptions]):
// before anything is asked of the server, so that a typo costs no Spark
// job.
func checkJobReaderOptions(job Job) error {
	if err := CheckReaderOptions(job.ReaderOptions); err != nil {
		return err
	}
	for _, s := range job.Sources {
		if err := CheckReaderOptions(s.Options); err != nil {
			return fmt.Errorf("source %s: %w", s.DisplayName(), err)
		}
	}
	return nil
}

// listsOnServer says whether a source names files the client cannot see,
// which Spark lists (see [Client.expandSources]).
func listsOnServer(specs []SourceSpec) bool {
	for _, spec := range specs {
		for _, p := range spec.Paths {
			if !spec.relational() && !locate(p).client {
				return true
			}
		}
	}
	return false
}

// expanded are a job's inputs once its sources are expanded.
type expanded struct {
	// reads are one per source, in input order (see [Read.order]).
	reads []*Read
	// skipped are files of directory sources not read (see
	// [Planned.Skipped]).
	skipped []string
	// listed are the files only the server sees, by path, as Spark listed
	// them: client-side inference fetches the small ones.
	listed map[string]remoteFile
	// unlisted are the sources of an incremental run that list no file
	// (see [IncrementalRun.Unlisted]).
	unlisted []string
}

// expand turns the job's sources into the reads of single sources: a
// directory or pattern becomes one read per file (see expandSources), so
// that each file's schema is learnt, and each CSV header applied, on its
// own.
func (c *Client) expand(ctx context.Context, job Job, typing bool) (expanded, error) {
	var heads *headBudget
	if typing && typesOnClient(job) {
		heads = newHeadBudget(c.SparkVersion())
	}
	var unlisted *[]string
	if job.Incremental != nil {
		// A landing directory emptied after its files were merged (or
		// a pattern that matches nothing) is a night with nothing new.
		unlisted = new([]string)
	}
	specs, skipped, listed, where, parts, err := c.expandSources(ctx, job.Sources, job.Format, job.ReaderOptions, heads, unlisted)
	if err != nil {
		return expanded{}, err
	}
	if unlisted != nil && len(*unlisted) > 0 && len(specs) == 0 {
		return expanded{skipped: skipped, listed: listed, unlisted: *unlisted}, nil
	}
	sources, err := resolveSources(specs, job.Format, job.ReaderOptions)
	if err != nil {
		return expanded{}, err
	}
	reads := make([]*Read, len(sources))
	for i, s := range sources {
		r := newRead(s)
		r.order = i
		if len(r.Paths) == 1 && !r.relational() {
			if f, ok := listed[r.Paths[0]]; ok {
				r.listedSize, r.listed = f.size, true
			}
			r.real = []string{where[r.Paths[0]].real}
			r.partition = parts[r.Paths[0]]
		}
		reads[i] = r
	}
	withoutPartitionRoot(reads)
	if err := c.typePartitions(ctx, reads); err != nil {
		return expanded{}, err
	}
	var none []string
	if unlisted != nil {
		none = *unlisted
	}
	return expanded{reads: reads, skipped: skipped, listed: listed, unlisted: none}, nil
}

// typesOnClient reports whether planning job types files on the client
// (discoverEach's inferOnClient, on a server whose rules it has), so that
// listings bring the heads of files only the server sees (listingHeads):
// not for Spark's inference, multipath's groups, nor an incremental
// run's listing, most of whose files it does not read.
func typesOnClient(job Job) bool {
	return !job.SparkInference && job.Incremental == nil && (job.Strategy == StrategyAuto || job.Strategy == StrategyUnion)
}

// discovered is what discovery learnt.
type discovered struct {
	// reads carry their schemas, in input order.
	reads []*Read
	// note is [Planned.InferenceNote].
	note string
	// inference is the time the client spent typing files (see
	// [Planned.Inference]).
	inference time.Duration
	// remoteTyped and fetchJobs are [Planned.RemoteTyped] and
	// [Planned.RemoteFetchJobs].
	remoteTyped, fetchJobs int
	// pastFetchLimit is [Planned.PastFetchLimit]; restBytes, the bytes
	// of rests fetched, counted against Job.FetchLimit.
	pastFetchLimit int
	restBytes      int64
	// typedTogether and togetherRequests are [Planned.TypedTogether] and
	// [Planned.TogetherRequests].
	typedTogether, togetherRequests int
	// typedByHeader and byHeaderRequests are [Planned.TypedByHeader] and
	// [Planned.ByHeaderRequests].
	typedByHeader, byHeaderRequests int
}

// without are the reads of all that are not among some, in order.
func without(all, some []*Read) []*Read {
	in := make(map[*Read]bool, len(some))
	for _, r := range some {
		in[r] = true
	}
	var out []*Read
	for _, r := range all {
		if !in[r] {
			out = append(out, r)
		}
	}
	return out
}

// discover gives every read its schema as the strategy reads it. Auto and
// union read each file alone, so each file is typed on its own
// (discoverEach); multipath reads a group of files in one load, whose
// schema is Spark's merge over the group (discoverGroups).
func (c *Client) discover(ctx context.Context, job Job, in expanded) (discovered, error) {
	switch job.Strategy {
	case StrategyUnion, StrategyAuto:
		return c.discoverEach(ctx, job, in)
	case StrategyMultipath:
		reads, err := c.discoverGroups(ctx, job, in.reads)
		return discovered{reads: reads}, err
	}
	return discovered{}, fmt.Errorf("unknown strategy %v", job.Strategy)
}

// discoverEach types every file read alone: on the client where it can
// and may (by the server's own rules, without a Spark job per file; see
// inferOnClient), by Spark for the rest.
func (c *Client) discoverEach(ctx context.Context, job Job, in expanded) (discovered, error) {
	var found discovered
	remote := in.reads
	// The session's split decides both which files the client's types
	// hold for and which files Spark types together: asked once.
	split := c.splitOncePerPlan()
	switch {
	case job.SparkInference:
	case !clientRulesMatch(c.SparkVersion()):
		// The client has the inference rules of some Spark lines only:
		// another server might type the same file otherwise.
		found.note = fmt.Sprintf("the server runs Spark %s and the client has the inference rules of Spark %s only: Spark infers every schema", c.SparkVersion(), clientRulesVersions())
	default:
		var err error
		if found, remote, err = c.inferOnClient(ctx, in, split, fetchLimits{wholeBytes: wholeFetchLimit(job.FetchLimit), holdGroups: !job.InferEachFileAlone && typesTogether(c.SparkVersion())}); err != nil {
			return discovered{}, err
		}
	}
	if err := checkEncodings(remote); err != nil {
		return discovered{}, err
	}
	if err := checkNesting(remote); err != nil {
		return discovered{}, err
	}
	if !job.InferEachFileAlone {
		// CSV files Spark splits (the lanes would need witnesses) or of a
		// MiB or more (a lane batch each): one inference per header line,
		// where that is each file's own.
		rest, byHeader, err := c.typeCSVByHeader(ctx, remote, in.listed, job.Parallelism, split)
		unproven := heldBack(rest, in.listed)
		for _, r := range in.reads {
			r.fetchedHead = nil // (the client holds no more of it)
		}
		if err == nil {
			remote, err = c.keepTyped(ctx, &found, remote, rest)
		}
		if err == nil && len(unproven) > 0 {
			remote, err = c.fetchHeldRests(ctx, job, in, split, &found, remote, unproven)
		}
		if err != nil {
			return discovered{}, err
		}
		// CSV, then JSON files Spark types in a few inferences, each
		// file as alone.
		rest, csvTogether, err := c.typeCSVTogether(ctx, remote, job.Parallelism, split)
		if err == nil {
			remote, err = c.keepTyped(ctx, &found, remote, rest)
		}
		if err != nil {
			return discovered{}, err
		}
		rest, jsonTogether, err := c.typeJSONTogether(ctx, remote, job.Parallelism)
		if err == nil {
			remote, err = c.keepTyped(ctx, &found, remote, rest)
		}
		if err == nil {
			// (The CSV header lines' read or the JSON inference found
			// a file's line that is not UTF-8.)
			err = checkEncodings(remote)
		}
		if err != nil {
			return discovered{}, err
		}
		found.typedByHeader, found.byHeaderRequests = byHeader.files, byHeader.requests
		found.typedTogether = csvTogether.files + jsonTogether.files
		found.togetherRequests = csvTogether.requests + jsonTogether.requests
	}
	// The JSON files Spark is to type alone, measured first (typed
	// together, a file's lines were measured by the inference's read).
	if err := c.checkNestingOnServer(ctx, remote); err != nil {
		return discovered{}, err
	}
	// Every file the client did not read whole (nor typed together
	// with JSON files: that read checked it) is checked for bytes that
	// are not UTF-8, before Spark types the rest alone (its JSON reader
	// would fail on such a record without saying why).
	if err := c.checkUTF8(ctx, append(slices.Clip(found.reads), remote...)); err != nil {
		return discovered{}, err
	}
	// Every other file's own schema, as Spark reads the file alone.
	if len(found.reads) > 0 {
		progressIn(ctx).report(Progress{Phase: PhaseDiscover, Done: int64(len(found.reads)), Total: int64(len(in.reads))})
	}
	if err := c.fetchSchemas(ctx, remote, job.Parallelism, progressIn(ctx).discovered(len(found.reads), len(in.reads))); err != nil {
		return discovered{}, err
	}
	if err := c.markHeaderOnly(ctx, remote, job.Parallelism); err != nil {
		return discovered{}, err
	}
	found.reads = append(found.reads, remote...)
	// Back in input order, for first-seen column order.
	sort.SliceStable(found.reads, func(i, j int) bool { return found.reads[i].order < found.reads[j].order })
	return found, nil
}

// heldBack are the reads of rest held for their header line's inference
// (see heldForHeader) that it did not type, their listing's heads given
// back their heads for a fetch of their rests (fetchHeldRests).
func heldBack(rest []*Read, listed map[string]remoteFile) []*Read {
	var out []*Read
	for _, r := range rest {
		if !r.heldForHeader {
			continue
		}
		r.heldForHeader = false
		if f, ok := listed[r.Paths[0]]; ok && f.head != nil && r.fetchedHead != nil {
			f.head.content = r.fetchedHead
			out = append(out, r)
		}
	}
	return out
}

// fetchHeldRests fetches the rests of the held files their group's
// inference did not prove (unproven, see heldBack) and types them on the
// client, as the plan's first fetch would have, within what is left of
// the plan's limit, and returns remote without those it typed.
func (c *Client) fetchHeldRests(ctx context.Context, job Job, in expanded, split *planSplit, found *discovered, remote, unproven []*Read) ([]*Read, error) {
	limit := max(wholeFetchLimit(job.FetchLimit)-found.restBytes, 0)
	more, left, err := c.inferOnClient(ctx, expanded{reads: unproven, listed: in.listed}, split, fetchLimits{wholeBytes: limit})
	if err != nil {
		return nil, err
	}
	found.reads = append(found.reads, more.reads...)
	found.remoteTyped += more.remoteTyped
	found.fetchJobs += more.fetchJobs
	found.pastFetchLimit += more.pastFetchLimit
	found.restBytes += more.restBytes
	found.inference += more.inference
	return append(without(remote, unproven), left...), nil
}

// keepTyped keeps in found the reads of remote a discovery stage typed
// by Spark inferences over many files (those not in rest), the header
// names of CSV ones checked as fetchSchemas checks those of a file typed
// alone, and returns rest.
func (c *Client) keepTyped(ctx context.Context, found *discovered, remote, rest []*Read) ([]*Read, error) {
	typed := without(remote, rest)
	for _, r := range typed {
		if err := c.checkCSVHeaderNames(ctx, r, r.Schema); err != nil {
			return nil, sourceError(r, err)
		}
	}
	found.reads = append(found.reads, typed...)
	return rest, nil
}

// inferOnClient types the reads the client can by the server's rules:
// local files, and copies of small files only the server sees, fetched
// into a temporary directory removed on return (see fetchRemoteCopies and
// typeLocallyWithin), save the files whose types Spark's split may change
// (keepUnsplit). It returns those reads in found.reads, and the reads left
// to Spark.
func (c *Client) inferOnClient(ctx context.Context, in expanded, split *planSplit, limits fetchLimits) (found discovered, remote []*Read, err error) {
	began := time.Now()
	dir, err := os.MkdirTemp("", "sparkmerge-remote-")
	if err != nil {
		return discovered{}, nil, err
	}
	defer os.RemoveAll(dir)
	rules, _ := infer.RulesFor(c.SparkVersion()) // clientRulesMatch held
	fetched, err := c.fetchRemoteCopies(ctx, in.reads, in.listed, dir, rules, limits)
	if err != nil {
		return discovered{}, nil, err
	}
	found.fetchJobs, found.pastFetchLimit, found.restBytes = fetched.jobs, fetched.pastLimit, fetched.restBytes
	typings := typeLocallyWithin(in.reads, rules, c.footerConfFor(ctx, in.reads), maxLocalInferTotal)
	found.reads, remote = applyTypings(in.reads, keepUnsplit(ctx, split, typings))
	for _, r := range in.reads {
		if r.copy != nil && r.InferredLocally {
			found.remoteTyped++
		}
		r.copy = nil // removed with dir
	}
	found.inference = time.Since(began)
	return found, remote, nil
}

// checkEncodings refuses a file the client found is not UTF-8 while no
// encoding was given: Spark would read it without an error, every such
// byte as U+FFFD.
func checkEncodings(reads []*Read) error {
	for _, r := range reads {
		if r.encodingProblem != "" {
			return fmt.Errorf("source %q is %s: Spark would read every such byte as U+FFFD; give the file's encoding, e.g. the reader option encoding=ISO-8859-1 (Job.ReaderOptions or SourceSpec.Options)", r.Name, r.encodingProblem)
		}
	}
	return nil
}

// checkNesting refuses a JSON file the client (or Spark reading it as
// text: checkNestingOnServer) found nests deeper than Spark reads safely,
// before Spark infers or reads it: Spark's inference or read of it would
// end the server (a fatal error on a task's thread), or take the record
// for a malformed one.
func checkNesting(reads []*Read) error {
	for _, r := range reads {
		if r.nestingProblem != "" {
			return fmt.Errorf("source %q: %s (a record of 400 levels ran a Spark server out of stack, which ended it, and Spark takes one of more than 1,000 for a malformed record): flatten such records before merging; Spark was not asked to infer or read the file", r.Name, r.nestingProblem)
		}
	}
	return nil
}

// discoverGroups is multipath's discovery: files of one format and options
// are grouped first (groupReads), since Spark's merge over a group's files
// is the group's schema. Parquet and ORC groups merge their files' schemas
// (mergeSchema), which Spark does not by default; CSV groups whose files'
// headers differ are refused (checkCSVHeaders), before Spark types them.
func (c *Client) discoverGroups(ctx context.Context, job Job, reads []*Read) ([]*Read, error) {
	reads = groupReads(reads, groupKey)
	if err := c.checkNestingOnServer(ctx, reads); err != nil {
		return nil, err
	}
	for _, r := range reads {
		if r.multiFile() && (r.Format == "parquet" || r.Format == "orc") {
			if _, set := r.Options["mergeSchema"]; !set {
				r.Options = withOption(r.Options, "mergeSchema", "true")
			}
		}
		if err := c.checkCSVHeaders(ctx, r, job.Parallelism); err != nil {
			return nil, err
		}
	}
	if err := c.checkUTF8(ctx, reads); err != nil {
		return nil, err
	}
	if err := c.fetchSchemas(ctx, reads, job.Parallelism, progressIn(ctx).discovered(0, len(reads))); err != nil {
		return nil, err
	}
	return c.readAloneHidingFileMetadata(ctx, reads, job.Parallelism)
}

// readAloneHidingFileMetadata splits each group of reads whose schema has
// a _metadata column, which would hide each row's file (see
// hidesFileMetadata), back into its files, each read and typed alone.
func (c *Client) readAloneHidingFileMetadata(ctx context.Context, reads []*Read, parallelism int) ([]*Read, error) {
	var out, alone []*Read
	for _, r := range reads {
		if !r.multiFile() || !hidesFileMetadata(r.Schema) {
			out = append(out, r)
			continue
		}
		for _, m := range r.parts() {
			one := *m
			out = append(out, &one)
			alone = append(alone, &one)
		}
	}
	if len(alone) == 0 {
		return reads, nil
	}
	if err := c.fetchSchemas(ctx, alone, parallelism, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// groupDiscovered groups auto's files once their schemas are known: those
// whose one load reads each file's rows as the file alone (groupExact), so
// that Spark runs fewer scans. Union reads every file alone; multipath
// grouped before discovery. With a reference source every source stays a
// read of its own, for the plan to find the reference by its name.
func groupDiscovered(job Job, reads []*Read) []*Read {
	if job.Strategy == StrategyAuto && job.Policy.ReferenceSource == "" {
		return groupExact(reads, job.Policy)
	}
	return reads
}

// pinSchemas pins every file read's discovered schema: sent with the read
// when it runs, so that Spark does not infer it a second time. A CSV read
// with a header then has Spark check every file's header against the
// discovered names instead of mapping columns by position: a file
// rewritten since discovery fails, never shifts.
func pinSchemas(reads []*Read) []*Read {
	for _, r := range reads {
		if r.relational() || r.UserSchema != "" {
			continue
		}
		schema := r.Schema
		if r.overlapExprs != nil {
			schema = r.dataSchema // read without its partition columns
		}
		r.pinned = r.exactSchema(schema).String()
		if r.Format == "csv" && r.Options["header"] == "true" && !namedByPosition(schema) {
			if _, set := r.Options["enforceSchema"]; !set {
				r.Options = withOption(r.Options, "enforceSchema", "false")
			}
		}
	}
	return reads
}

// appendExtraError says, of an append whose sources bring columns the
// target lacks, what the user can do: the planner's own message calls the
// target "the reference" and offers only dropping the columns.
func appendExtraError(t Target, e *sparkmerge.MissingColumnsError) error {
	return &appendColumnsError{target: targetName(t), overwrite: strings.EqualFold(t.Mode, "overwrite"), columns: e}
}

// appendColumnsError is the planner's MissingColumnsError (errors.As
// finds it) in an append's terms.
type appendColumnsError struct {
	target    string
	overwrite bool // an overwrite of a table, which keeps its columns
	columns   *sparkmerge.MissingColumnsError
}

func (e *appendColumnsError) Error() string {
	var parts []string
	for _, s := range e.columns.Sources {
		parts = append(parts, fmt.Sprintf("source %d %q has %s", s.Index+1, s.Source, quotedNames(s.Extra)))
	}
	for _, near := range e.columns.Near {
		parts = append(parts, near.Hint())
	}
	if e.overwrite {
		return fmt.Sprintf("overwrite %s: sources have columns it lacks: %s; an overwrite keeps the table and its columns: add them to it first (Target.Evolve), drop them (Options.DropExtra), or rename them (Options.Renames)",
			e.target, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("append to %s: sources have columns it lacks: %s; add them to it first (Target.Evolve), drop them (Options.DropExtra), or rename them (Options.Renames)",
		e.target, strings.Join(parts, "; "))
}

func (e *appendColumnsError) Unwrap() error { return e.columns }

// planReads computes the merge plan over the reads under the job's policy,
// aligned to the schema of its reference table, or of the target it
// appends to (planAppend), which the server gives, with the target
// table described first (describeTarget).
func (c *Client) planReads(ctx context.Context, job Job, reads []*Read) (*Planned, error) {
	policy := job.Policy
	planned := &Planned{Strategy: job.Strategy, Reads: reads}
	if job.ReferenceTable != "" {
		ref, _, err := c.server.tableSchema(ctx, job.ReferenceTable)
		if err != nil {
			return nil, fmt.Errorf("read reference table %q: %w", job.ReferenceTable, err)
		}
		policy.Reference = &ref
	}
	tt, err := c.describeTarget(ctx, job.Target)
	if err != nil {
		return nil, err
	}
	planned.Table = tt
	// An overwrite of an existing table keeps the table, so its schema:
	// it is aligned to it as an append is (Target.Evolve evolves it).
	appending := strings.EqualFold(job.Target.Mode, "append") || keepsTable(job.Target, tt)
	if appending {
		err := c.planAppend(ctx, job, &policy, planned)
		var conflict *sparkmerge.EvolutionConflictError
		switch {
		case job.DryRun && errors.As(err, &conflict):
			// Shown, not raised: the plan says what the table cannot
			// take (Planned.Err), over the sources merged alone.
			policy = job.Policy
		case err != nil:
			return nil, err
		}
	}
	var reference []sparkmerge.Schema
	if policy.Reference != nil {
		reference = append(reference, *policy.Reference)
	}
	if err := c.markNoValues(ctx, reads, policy, reference...); err != nil {
		return nil, err
	}
	plan, err := sparkmerge.NewPlan(planSources(reads), policy)
	var extra *sparkmerge.MissingColumnsError
	if appending && job.ReferenceTable == "" && errors.As(err, &extra) && extra.Policy == sparkmerge.MissingReference {
		return nil, appendExtraError(job.Target, extra)
	}
	if err != nil {
		return nil, withTokenAdvice(err, reads, policy)
	}
	if appending && planned.Table != nil && planned.Table.Exists {
		if err := unfilledColumnsError(job.Target, planned.Table, plan); err != nil {
			return nil, err
		}
	}
	planned.Plan = plan
	planned.Warnings = slices.Concat(sourceWarnings(reads), nameWarnings(plan), zeroWarnings(plan, reads), roundedWarnings(plan, reads), pastMicrosWarnings(plan, reads), tokenWarnings(plan, reads), keptPropertiesWarnings(job.Target, planned.Table))
	if policy.Missing == sparkmerge.MissingReference {
		planned.NullColumns = columnsInNoSource(plan)
	}
	return planned, nil
}

// columnsInNoSource are the target columns of p that no source has (the
// provenance and rescue columns, which the merge fills, aside).
func columnsInNoSource(p *sparkmerge.Plan) Columns {
	var out Columns
	for j, f := range p.Target.Fields {
		if f.Name == p.SourceColumn || f.Name == p.Rescue {
			continue
		}
		inSome := false
		for _, s := range p.Sources {
			if j < len(s.Columns) && s.Columns[j] >= 0 {
				inSome = true
				break
			}
		}
		if !inSome {
			out = append(out, f)
		}
	}
	return out
}

// checkWheres has Spark parse and resolve every read's row filter
// (SourceSpec.Where) against the read's own columns, before any row is
// read: Spark's parser takes the predicate alone, as one expression, so
// that text after it (a second statement, a closing parenthesis) is a
// syntax error here, not SQL run elsewhere; and a column a file lacks is
// named with the file.
func (c *Client) checkWheres(ctx context.Context, reads []*Read, parallelism int) error {
	var filtered []*Read
	for _, r := range reads {
		if r.Where != "" {
			filtered = append(filtered, r)
		}
	}
	if len(filtered) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallelism, 1))
	for _, r := range filtered {
		g.Go(func() error {
			if _, err := r.filtered(readFrame(c.sess, r)).Schema(gctx); err != nil {
				return fmt.Errorf("source %q: where %q: %w\n  hint: where is one SQL predicate over the source's own column names (before renames), e.g. \"amount > 0 AND region <> 'test'\"", r.Name, r.Where, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// keepUnsplit leaves to Spark the CSV files the client typed whose types
// hold only if Spark reads each in one partition (a year after a date or
// timestamp: infer.CSVFile.SplitSensitive) and that the session's split
// (fileSplitBytes: 4 MiB by default, smaller when openCostInBytes or
// maxPartitionBytes is) may cut, or all of them when the server does not
// say its split: it returns typings with theirs left to Spark. It asks
// the server only when there is such a file.
func keepUnsplit(ctx context.Context, sessionSplit *planSplit, typings []*localTyping) []*localTyping {
	if !slices.ContainsFunc(typings, func(t *localTyping) bool { return t != nil && t.splitSensitive > 0 }) {
		return typings
	}
	split, _, ok := sessionSplit.get(ctx)
	kept := slices.Clone(typings)
	for i, t := range kept {
		if t != nil && t.splitSensitive > 0 && (!ok || t.splitSensitive > split) {
			kept[i] = t.leftToSpark()
		}
	}
	return kept
}

// quotedNames are names quoted (a name's white space shows), comma-separated.
func quotedNames(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = quoteName(n)
	}
	return strings.Join(quoted, ", ")
}

// keptPropertiesWarnings warn of what a merge into an existing table
// does not apply, as the table keeps its own: the table properties asked
// for (which apply to a table the merge creates; found in the field,
// silently ignored).
func keptPropertiesWarnings(t Target, tt *TargetTable) []string {
	if tt == nil || !tt.Exists || len(t.Properties) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("table %s exists, and keeps its own properties: %s not set (Target.Properties apply to a table the merge creates; set them with ALTER TABLE ... SET TBLPROPERTIES)",
		tt.Name, strings.Join(sortedKeys(t.Properties), ", "))}
}
