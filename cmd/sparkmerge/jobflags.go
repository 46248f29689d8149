package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// jobFile is the YAML (or JSON) description of a whole job, read with -f.
// Command-line flags override it field by field.
type jobFile struct {
	Remote   string            `yaml:"remote"`
	Strategy string            `yaml:"strategy"`
	Format   string            `yaml:"format"`
	Options  map[string]string `yaml:"options"`
	Sources  []sourceFile      `yaml:"sources"`
	Policy   policyFile        `yaml:"policy"`
	Target   spark.Target      `yaml:"target"`
	Verify   bool              `yaml:"verify"`
	// Incremental is --incremental, --incremental-changed,
	// --incremental-lease and --incremental-new-state.
	Incremental incrementalFile `yaml:"incremental"`
}

// incrementalFile is the job file's incremental section: state is
// --incremental STATE, changed --incremental-changed, lease
// --incremental-lease, new_state --incremental-new-state.
type incrementalFile struct {
	State    string `yaml:"state"`
	Changed  string `yaml:"changed"`
	Lease    string `yaml:"lease"`
	NewState bool   `yaml:"new_state"`
}

// sourceFile is one entry of the job file's sources: a source with its own
// reader settings, whose files may also be given as one path.
type sourceFile struct {
	spark.SourceSpec `yaml:",inline"`
	// Path is one file, directory or pattern, read before Paths.
	Path string `yaml:"path"`
}

// policyFile is the job file's policy: each key is the flag of the same
// name (--types, --case-sensitive, ...), which overrides it when given
// (--case-sensitive=false too). --normalize replaces the list, and --rename
// entries are merged with renames, the flag winning for a name both give.
type policyFile struct {
	sparkmerge.Options `yaml:",inline"`
	Normalize          []string `yaml:"normalize"`
	// Hints are column: type, as --hint column=type.
	Hints map[string]string `yaml:"hints"`
	// Reference is source:NAME, table:NAME or a DDL schema, as --reference.
	Reference string `yaml:"reference"`
}

// jobCommand is what the plan, schema and merge commands share: the
// global options, the job flags, and the command line they ran with.
type jobCommand struct {
	global  *globalOptions
	job     jobFlags
	args    []string
	changed flagChanged
	// status shows the job's progress on stderr (nil: --progress never).
	status *progressView
}

// runE is a command's RunE: it records the command line, then calls run.
func (c *jobCommand) runE(run func(ctx context.Context, stdout, stderr io.Writer) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c.args = args
		c.changed = cmd.Flags().Changed
		return run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
}

// withClient builds the job from the command line and the job file, lets
// prepare complete it (nil: nothing to add), connects to Spark for it and
// calls use with the client and the job, closing the client after.
func (c *jobCommand) withClient(ctx context.Context, stderr io.Writer, prepare func(*spark.Job, *jobFile) error, use func(*spark.Client, spark.Job) error) error {
	job, jf, err := c.job.buildJob(c.args, c.changed)
	if err != nil {
		return err
	}
	if prepare != nil {
		if err := prepare(&job, jf); err != nil {
			return err
		}
	}
	c.global.useFileRemote(jf)
	view := newProgressView(c.global.progress, stderr)
	defer view.close()
	c.status = view
	if view != nil {
		job.OnProgress = view.report
	}
	view.start("connect")
	client, stop, err := c.global.connect(ctx, stderr, &job)
	if err != nil {
		view.close()
		return err
	}
	defer stop()
	view.finish("connect", fmt.Sprintf("%s, Spark %s", client.Remote(), client.SparkVersion()))
	return use(client, job)
}

// flagChanged reports whether a flag was given on the command line.
type flagChanged func(flag string) bool

// pick is a setting given both by a flag and by the job file: the flag's
// value if the flag was given or the file leaves the setting empty, else
// the file's.
func (changed flagChanged) pick(flag, flagValue, fileValue string) string {
	if changed(flag) || fileValue == "" {
		return flagValue
	}
	return fileValue
}

// pickBool is pick for a switch: set by the flag, or, when the flag was
// not given, by the file.
func (changed flagChanged) pickBool(flag string, flagValue, fileValue bool) bool {
	return flagValue || (!changed(flag) && fileValue)
}

// jobFlags are the flags that describe sources and policies, shared by
// plan, schema and merge.
type jobFlags struct {
	file     string
	strategy string
	format   string
	options  []string
	schema   string

	types         string
	missing       string
	order         string
	caseSensitive bool
	lossyWidening bool
	normalize     []string
	renames       []string
	sourceColumn  string
	reference     string
	dropExtra     bool
	parallelism   int
	sparkInfer    bool
	fetchLimit    string
	columns       []string
	exclude       []string
	distinct      bool
	hints         []string
	rescue        string
}

func (f *jobFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.file, "file", "f", "", "job file (YAML or JSON) describing sources, policies and target; flags override it")
	fs.StringVar(&f.strategy, "strategy", "auto", "how to read: auto, union or multipath")
	fs.StringVar(&f.format, "format", "", "input format for every path source (csv, json, parquet, orc, text, avro, ...); default: from the file extension")
	fs.StringArrayVar(&f.options, "option", nil, "reader option key=value for every source (repeatable), e.g. --option sep=';'")
	fs.StringVar(&f.schema, "schema", "", "user schema (DDL) for every path source, e.g. 'id bigint, name string'")
	fs.StringVar(&f.types, "types", "widen", "type conflicts: widen (Spark's union widening; string wins over numbers), strict (any difference is an error) or string")
	fs.StringVar(&f.missing, "missing", "fill", "missing columns: fill (typed nulls), fail, intersect (common columns only) or reference")
	fs.StringVar(&f.order, "order", "first-seen", "column order: first-seen, sorted or reference")
	fs.BoolVar(&f.caseSensitive, "case-sensitive", false, "match column names case-sensitively (default: case-insensitive, like Spark)")
	fs.BoolVar(&f.lossyWidening, "lossy-widening", false, "accept Spark's widening where it rounds values (decimals past 38 digits, bigint to double past 2^53), and a typed value's rounding into a narrower --hint type; by default such a merge fails naming the column or value")
	fs.StringSliceVar(&f.normalize, "normalize", nil, "normalise names before matching: trim, lower, snake_case (comma-separated, applied in order)")
	fs.StringArrayVar(&f.renames, "rename", nil, "rename a column before matching, old=new (repeatable), e.g. --rename hight=height")
	fs.StringVar(&f.sourceColumn, "source-column", "", "add a column with this name that holds each row's source")
	fs.StringVar(&f.reference, "reference", "", "reference schema for --missing reference / --order reference: a source name (source:NAME), a table (table:NAME) or DDL")
	fs.BoolVar(&f.dropExtra, "drop-extra", false, "with a reference schema: drop columns it lacks instead of failing")
	fs.IntVar(&f.parallelism, "parallelism", 8, "concurrent schema requests to Spark")
	fs.StringArrayVar(&f.columns, "columns", nil, "keep only these columns (names or patterns with * and ?, after --rename and --normalize; comma-separated, repeatable); a name matching no column is an error")
	fs.StringArrayVar(&f.exclude, "exclude", nil, "drop these columns (names or patterns with * and ?, after --rename and --normalize; comma-separated, repeatable)")
	fs.StringArrayVar(&f.hints, "hint", nil, "give a column a type, column=type (repeatable), e.g. --hint zip=string --hint 'amount=decimal(12,2)'; the other columns are inferred")
	fs.StringVar(&f.rescue, "rescue", "", "keep values that do not convert to their column's type in this JSON column (with their source) instead of failing the merge")
	fs.BoolVar(&f.distinct, "distinct", false, "combine the sources with UNION DISTINCT: drops duplicate rows (default: UNION ALL keeps every row)")
	fs.BoolVar(&f.sparkInfer, "spark-inference", false, "ask Spark for every file's schema (default: the client infers small CSV and JSON-lines files, and Parquet files from their footers, by Spark's rules)")
	fs.StringVar(&f.fetchLimit, "fetch-limit", "", "most bytes of files only the server sees fetched whole per plan to type them on the client, e.g. 64MiB (default 512MiB); past it Spark types them where they live; 0: heads and footers only (set it low when the client is far from the data)")
}

// parseKeyValues reads repeated key=value flags (keys trimmed). A
// malformed one is an error that shows example, if not "", as a good one.
func parseKeyValues(flag string, pairs []string, example string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			if example != "" {
				return nil, usagef("--%s %q: want key=value, e.g. --%s %s", flag, p, flag, example)
			}
			return nil, usagef("--%s %q: want key=value", flag, p)
		}
		out[k] = v
	}
	return out, nil
}

func mergeMaps(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func readJobFile(path string) (*jobFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("read job file: %w", err)
	}
	var jf jobFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&jf); err != nil {
		return nil, usagef("job file %s: %s", path, jobFileError(err))
	}
	return &jf, nil
}

// jobFileSections name, by the Go type the YAML decoder reports, each
// part of a job file as its user knows it, with its keys.
var jobFileSections = map[string]struct {
	section string
	of      reflect.Type
}{
	"main.jobFile":         {"the top level", reflect.TypeFor[jobFile]()},
	"main.sourceFile":      {"a source", reflect.TypeFor[sourceFile]()},
	"main.policyFile":      {"policy", reflect.TypeFor[policyFile]()},
	"spark.Target":         {"target", reflect.TypeFor[spark.Target]()},
	"main.incrementalFile": {"incremental", reflect.TypeFor[incrementalFile]()},
}

var unknownYAMLField = regexp.MustCompile(`line (\d+): field (\S+) not found in type (\S+)`)

// jobFileError says a job file's decoding error in the file's terms: an
// unknown key with its line, where it is, the closest known key and the
// keys there are, instead of Go's type names.
func jobFileError(err error) string {
	msg := err.Error()
	var lines []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "yaml: unmarshal errors:" {
			continue
		}
		m := unknownYAMLField.FindStringSubmatch(line)
		sec, known := jobFileSections[m2(m, 3)]
		if m == nil || !known {
			lines = append(lines, strings.TrimPrefix(line, "yaml: "))
			continue
		}
		keys := yamlKeys(sec.of)
		hint := ""
		if near := closest(m[2], keys); near != "" {
			hint = "did you mean " + near + "? "
		}
		lines = append(lines, fmt.Sprintf("line %s: unknown key %q in %s; %sknown keys: %s", m[1], m[2], sec.section, hint, strings.Join(keys, ", ")))
	}
	if len(lines) == 1 {
		return lines[0]
	}
	return "\n  " + strings.Join(lines, "\n  ")
}

// m2 is m[i], or "" when m did not match.
func m2(m []string, i int) string {
	if m == nil {
		return ""
	}
	return m[i]
}

// yamlKeys are the keys a struct type reads from YAML (inline structs'
// included), sorted.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case strings.Contains(opts, "inline"):
			keys = append(keys, yamlKeys(f.Type)...)
		case name != "":
			keys = append(keys, name)
		default:
			keys = append(keys, strings.ToLower(f.Name))
		}
	}
	sort.Strings(keys)
	return keys
}

// countTrue counts the conditions that hold.
func countTrue(conds ...bool) int {
	n := 0
	for _, c := range conds {
		if c {
			n++
		}
	}
	return n
}

// parseSourceArg reads a positional source: a path, directory or glob, or
// table:NAME for a catalog table.
func parseSourceArg(arg string) spark.SourceSpec {
	if name, ok := strings.CutPrefix(arg, "table:"); ok {
		return spark.SourceSpec{Table: name}
	}
	return spark.SourceSpec{Paths: []string{arg}}
}

// buildJob combines the job file (if any), flags that were set, and the
// positional sources into a spark.Job. changed reports whether a flag was
// given on the command line, so file values are only overridden by flags
// the user actually typed.
func (f *jobFlags) buildJob(args []string, changed flagChanged) (spark.Job, *jobFile, error) {
	jf := &jobFile{}
	if f.file != "" {
		var err error
		if jf, err = readJobFile(f.file); err != nil {
			return spark.Job{}, nil, err
		}
	}
	var job spark.Job
	var err error
	if job.Sources, err = f.sources(jf, args); err != nil {
		return job, nil, err
	}
	if err := f.readSettings(&job, jf, changed); err != nil {
		return job, nil, err
	}
	if job.Policy, err = f.policy(jf, changed); err != nil {
		return job, nil, err
	}
	if err := f.referenceSchema(&job, jf, changed); err != nil {
		return job, nil, err
	}
	return job, jf, nil
}

// sources are the job file's sources, then the positional ones, each path
// source given --schema unless it has its own.
func (f *jobFlags) sources(jf *jobFile, args []string) ([]spark.SourceSpec, error) {
	var sources []spark.SourceSpec
	for i, s := range jf.Sources {
		spec := s.SourceSpec
		if s.Path != "" {
			spec.Paths = append([]string{s.Path}, spec.Paths...)
		}
		if kinds := countTrue(len(spec.Paths) > 0, spec.Table != "", spec.Query != ""); kinds != 1 {
			return nil, usagef("job file source %d: give one of path (or paths), table and query", i+1)
		}
		sources = append(sources, spec)
	}
	for _, a := range args {
		sources = append(sources, parseSourceArg(a))
	}
	if len(sources) == 0 {
		return nil, usagef("no sources: give paths, globs, directories or table:NAME, or a job file with -f")
	}
	if f.schema == "" {
		return sources, nil
	}
	if _, err := sparkmerge.ParseSchema(f.schema); err != nil {
		return nil, usagef("--schema: %w", err)
	}
	for i := range sources {
		if len(sources[i].Paths) > 0 && sources[i].Schema == "" {
			sources[i].Schema = f.schema
		}
	}
	return sources, nil
}

// readSettings sets how the job reads: its strategy, format, reader
// options, parallelism and inference.
func (f *jobFlags) readSettings(job *spark.Job, jf *jobFile, changed flagChanged) error {
	var err error
	if job.Strategy, err = spark.ParseStrategy(changed.pick("strategy", f.strategy, jf.Strategy)); err != nil {
		return usagef("--strategy: %w", err)
	}
	job.Format = changed.pick("format", f.format, jf.Format)
	flagOptions, err := parseKeyValues("option", f.options, "")
	if err != nil {
		return err
	}
	job.ReaderOptions = mergeMaps(jf.Options, flagOptions)
	if err := spark.CheckReaderOptions(job.ReaderOptions); err != nil {
		return usagef("--option: %w", err)
	}
	if f.parallelism < 1 {
		return usagef("--parallelism %d: want 1 or more", f.parallelism)
	}
	job.Parallelism = f.parallelism
	job.SparkInference = f.sparkInfer
	if f.fetchLimit != "" {
		limit, err := spark.ParseByteSize(f.fetchLimit)
		if err != nil {
			return usagef("--fetch-limit: %w", err)
		}
		job.FetchLimit = limit
		if limit == 0 {
			job.FetchLimit = -1 // none (a job's 0 is the default)
		}
	}
	return nil
}

// policy is the job file's policy with the policy flags that were given
// over it.
func (f *jobFlags) policy(jf *jobFile, changed flagChanged) (sparkmerge.Options, error) {
	p := jf.Policy.Options
	var err error
	if changed("types") {
		if p.Types, err = sparkmerge.ParseTypePolicy(f.types); err != nil {
			return p, usagef("--types: %w", err)
		}
	}
	if changed("missing") {
		if p.Missing, err = sparkmerge.ParseMissingPolicy(f.missing); err != nil {
			return p, usagef("--missing: %w", err)
		}
	}
	if changed("order") {
		if p.Order, err = sparkmerge.ParseOrderPolicy(f.order); err != nil {
			return p, usagef("--order: %w", err)
		}
	}
	p.CaseSensitive = changed.pickBool("case-sensitive", f.caseSensitive, p.CaseSensitive)
	p.LossyWidening = changed.pickBool("lossy-widening", f.lossyWidening, p.LossyWidening)
	normalize := jf.Policy.Normalize
	if changed("normalize") {
		normalize = f.normalize
	}
	if p.Normalize, err = sparkmerge.ParseNameNormalizer(strings.Join(normalize, ",")); err != nil {
		return p, usagef("--normalize: %w", err)
	}
	flagRenames, err := sparkmerge.ParseRenames(f.renames)
	if err != nil {
		return p, usagef("--rename: %w", err)
	}
	p.Renames = mergeMaps(p.Renames, flagRenames)
	p.SourceColumn = changed.pick("source-column", f.sourceColumn, p.SourceColumn)
	p.DropExtra = changed.pickBool("drop-extra", f.dropExtra, p.DropExtra)
	if changed("columns") {
		p.Columns = sparkmerge.ParseColumnList(f.columns)
	}
	if changed("exclude") {
		p.Exclude = sparkmerge.ParseColumnList(f.exclude)
	}
	p.Distinct = changed.pickBool("distinct", f.distinct, p.Distinct)
	p.Rescue = changed.pick("rescue", f.rescue, p.Rescue)
	p.Hints, err = f.typeHints(jf)
	return p, err
}

// typeHints are the job file's hints with --hint's over them (the flag
// wins for a column both give).
func (f *jobFlags) typeHints(jf *jobFile) (map[string]sparkmerge.DataType, error) {
	var filePairs []string
	for _, k := range slices.Sorted(maps.Keys(jf.Policy.Hints)) {
		filePairs = append(filePairs, k+"="+jf.Policy.Hints[k])
	}
	hints, err := sparkmerge.ParseHints(filePairs)
	if err != nil {
		return nil, usagef("job file hints: %w", err)
	}
	flagHints, err := sparkmerge.ParseHints(f.hints)
	if err != nil {
		return nil, usagef("--hint: %w", err)
	}
	for k, v := range flagHints {
		if hints == nil {
			hints = map[string]sparkmerge.DataType{}
		}
		hints[k] = v
	}
	return hints, nil
}

// referenceSchema sets the job's reference schema from --reference or
// the job file: source:NAME, table:NAME or a DDL schema.
func (f *jobFlags) referenceSchema(job *spark.Job, jf *jobFile, changed flagChanged) error {
	ref := changed.pick("reference", f.reference, jf.Policy.Reference)
	switch {
	case ref == "":
	case strings.HasPrefix(ref, "source:"):
		job.Policy.ReferenceSource = strings.TrimPrefix(ref, "source:")
	case strings.HasPrefix(ref, "table:"):
		job.ReferenceTable = strings.TrimPrefix(ref, "table:")
	default:
		schema, err := sparkmerge.ParseSchema(ref)
		if err != nil {
			return usagef("--reference: not source:NAME, table:NAME or a DDL schema: %w", err)
		}
		job.Policy.Reference = &schema
	}
	return nil
}
