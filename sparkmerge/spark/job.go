package spark

import (
	"fmt"
	"io"
	"strings"

	"github.com/sparkmerge/sparkmerge"
)

// Strategy is how sources are read and combined on Spark.
type Strategy int

const (
	// StrategyAuto groups sources by format and options, reads each group in
	// one multi-path load where that is safe, and unions the groups.
	StrategyAuto Strategy = iota
	// StrategyUnion reads every source on its own, projects it onto the
	// target schema and combines all of them with UNION ALL.
	StrategyUnion
	// StrategyMultipath reads all sources of one format in a single load
	// (JSON inference, Parquet/ORC mergeSchema). It refuses CSV files whose
	// headers differ.
	StrategyMultipath
)

var strategyNames = []string{"auto", "union", "multipath"}

func (s Strategy) String() string {
	if s >= 0 && int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// MarshalText writes the strategy's name, so that JSON output says "auto",
// not 0.
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a strategy's name.
func (s *Strategy) UnmarshalText(b []byte) error {
	v, err := ParseStrategy(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseStrategy reads "auto", "union" or "multipath".
func ParseStrategy(s string) (Strategy, error) {
	for i, name := range strategyNames {
		if strings.EqualFold(s, name) {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown strategy %q: use one of %s", s, strings.Join(strategyNames, ", "))
}

// Target is where merged rows are written: a path or a table.
//
// Its yaml keys are the target section of the CLI's job file, and its JSON
// keys the same (snake_case, as every JSON output of sparkmerge).
type Target struct {
	// Path is a directory on the cluster's filesystem.
	Path string `yaml:"path" json:"path,omitempty"`
	// Table is a catalog table name.
	Table string `yaml:"table" json:"table,omitempty"`
	// Format of the written files (default parquet) or of a created
	// table (default: its catalog's, Iceberg in an Iceberg catalog, else
	// spark.sql.sources.default); "delta" with a Path writes a Delta table
	// there.
	Format string `yaml:"format" json:"format,omitempty"`
	// Mode is errorifexists (default), overwrite, append or ignore.
	Mode string `yaml:"mode" json:"mode,omitempty"`
	// PartitionBy columns, in order.
	PartitionBy []string `yaml:"partition_by" json:"partition_by,omitempty"`
	// Options are writer options (compression, header, ...).
	Options map[string]string `yaml:"options" json:"options,omitempty"`
	// Properties are the table properties (TBLPROPERTIES) of a table the
	// merge creates; an existing table keeps its own.
	Properties map[string]string `yaml:"properties" json:"properties,omitempty"`
	// Evolve changes an existing table before appending, through its
	// format's own statements, instead of failing: it adds the columns
	// and nested fields the table lacks, and widens column types where
	// the format does so without rewriting data (Delta, Iceberg; see
	// [sparkmerge.PlanEvolution]).
	Evolve bool `yaml:"evolve" json:"evolve"`
	// Files caps the number of output files (partitions written, before
	// PartitionBy splits them): the merged rows are coalesced without a
	// shuffle. 0 means automatic: when every input's size is known (a
	// local file, or a file the server listed), about one file per 128
	// MiB of input and at least min(8, inputs), unless Spark's partitions
	// are large already (64 MiB or more on average, at up to 128 MiB
	// each); otherwise one file per input partition, as Spark writes them.
	Files int `yaml:"files" json:"files,omitempty"`
}

// Job is a whole merge: sources, how to unify them, how to run it and where
// the result goes.
type Job struct {
	Sources []SourceSpec
	// Format applies to every path source that sets none; empty means
	// inferred from file extensions.
	Format string
	// ReaderOptions apply to every source; per-source options win.
	ReaderOptions map[string]string
	// Policy is the planner's policy (types, missing columns, names, order,
	// provenance column).
	Policy sparkmerge.Options
	// ReferenceTable, when set, is a table whose schema is the planner's
	// reference (Policy.Reference).
	ReferenceTable string
	Strategy       Strategy
	Target         Target
	// DryRun plans and prints, reads no rows and writes nothing.
	DryRun bool
	// Verify counts rows per source after writing and fails when the rows
	// written differ from the rows read.
	Verify bool
	// Incremental, when set, merges only the files of the sources that
	// no earlier run recorded in its STATE, appends them to the target
	// (Target.Mode append, or none) and records them (see [Incremental]
	// and [IncrementalRun]). Every source must be files.
	Incremental *Incremental
	// Parallelism bounds concurrent schema requests (default 8).
	Parallelism int
	// SparkInference asks Spark for every file's schema. By default the
	// client infers the schemas of small CSV and JSON-lines files whose
	// values Spark's rules type without ambiguity, and of Parquet files
	// from their footers, as Spark would, without a Spark job per file
	// (see [Read.InferredLocally]).
	SparkInference bool
	// FetchLimit bounds the bytes of files only the server sees that
	// discovery fetches whole to type them on the client by Spark's rules
	// (CSV and JSON files whose heads the rules take), per plan: 0 is the
	// default, 512 MiB; a negative limit fetches none whole, only heads
	// and footers (at most 64 KiB a file). Files past it are typed by
	// Spark where they live: CSV files of a MiB or more by one inference
	// per header line where files share one (see [Planned.TypedByHeader]),
	// the others together or alone. Set it low where the client is far
	// from the data (a workspace across the internet), where fetching
	// costs more than Spark's inference there. Whatever the limit, CSV
	// files of a MiB or more whose header line files of 64 MiB or more
	// share are typed by that group's inference from their heads, and
	// fetched whole only where it does not prove their types.
	FetchLimit int64
	// InferEachFileAlone asks Spark for the schema of each file it types
	// in a request of its own (an inference of the file alone, a Spark
	// job or two per file). By default Spark types many small CSV files
	// in a few inferences, each file's columns apart, which gives every
	// file the schema its inference alone gives (see
	// [Planned.TypedTogether]).
	InferEachFileAlone bool
	// Progress, when set, receives progress lines for long schema discovery.
	Progress io.Writer
	// OnProgress, when set, receives the job's progress by phase (see
	// [Progress]): files found and typed, the plan before any row is
	// read, Spark's stages and tasks while it writes and verifies. Calls
	// come one at a time, from the job's goroutines: keep them short.
	// It replaces Progress's lines.
	OnProgress func(Progress)
}
