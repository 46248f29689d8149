package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkmerge/sparkmerge/spark"
)

// version and revision are stamped by the build (scripts/lib.sh's
// build_sparkmerge, `make build`) with -ldflags "-X main.version=...
// -X main.revision=...": the machine's Go may build without VCS stamping
// (GOFLAGS=-buildvcs=false), and a binary must name what it was built from
// whatever that setting.
var (
	version  = ""
	revision = ""
)

// versionProbeTimeout bounds how long `sparkmerge version` waits for a
// server: the command answers at once, with or without one.
const versionProbeTimeout = 5 * time.Second

// buildInfo is what this binary is built from, for `version` and
// --version.
type buildInfo struct {
	Version        string `json:"version"`
	Revision       string `json:"revision"`
	Modified       bool   `json:"modified"`
	Go             string `json:"go"`
	SparkConnectGo string `json:"spark_connect_go"`
}

// readBuildInfo is the stamped version and revision, else what the Go
// toolchain recorded (a `go install` of a tagged module, or a build with
// VCS stamping on), else "dev" and "unknown".
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: revision, Go: runtime.Version(), SparkConnectGo: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Revision == "" {
					b.Revision = s.Value
				}
			case "vcs.modified":
				if revision == "" {
					b.Modified = s.Value == "true"
				}
			}
		}
		for _, d := range info.Deps {
			if d.Path == "github.com/apache/spark-connect-go" {
				b.SparkConnectGo = d.Version
				if d.Replace != nil {
					b.SparkConnectGo = d.Replace.Path + " " + d.Replace.Version
				}
			}
		}
	}
	// A stamped revision ends in "-dirty" when the tree had changes.
	if r, dirty := strings.CutSuffix(b.Revision, "-dirty"); dirty {
		b.Revision, b.Modified = r, true
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}

// short is the one line --version prints.
func (b buildInfo) short() string {
	rev := b.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if b.Modified {
		rev += "-dirty"
	}
	return fmt.Sprintf("sparkmerge %s (revision %s, %s, spark-connect-go %s)", b.Version, rev, b.Go, b.SparkConnectGo)
}

// serverInfo is what `version` learnt of the Spark Connect server.
type serverInfo struct {
	Remote       string `json:"remote"`
	Reachable    bool   `json:"reachable"`
	SparkVersion string `json:"spark_version,omitempty"`
	// ClientRules: the client types small files itself by this server's
	// inference rules (see spark.ClientRulesApply).
	ClientRules bool   `json:"client_rules"`
	Error       string `json:"error,omitempty"`
}

type versionOptions struct {
	global *globalOptions
	// offline: print the client's versions only, asking no server.
	offline bool
}

func newVersionCmd(g *globalOptions) *cobra.Command {
	opts := &versionOptions{global: g}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print sparkmerge's version, and the Spark version of the server if it answers",
		Long: `version prints the version and source revision of this binary and the
spark-connect-go it was built with, then asks the Spark Connect server
(--remote, else $SPARK_REMOTE, else sc://localhost:15002) for its Spark
version, waiting at most 5 seconds: whether the client's own schema
inference (fast, by Spark's rules) applies to that version, or every schema
is asked of Spark.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return opts.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&opts.offline, "offline", false, "ask no server")
	return cmd
}

func (opts *versionOptions) run(ctx context.Context, stdout io.Writer) error {
	doc := struct {
		buildInfo
		Server *serverInfo `json:"server,omitempty"`
	}{buildInfo: readBuildInfo()}
	if !opts.offline {
		doc.Server = opts.global.probeServer(ctx)
	}
	return writeOutput(stdout, opts.global.output, doc, func() string {
		var b strings.Builder
		fmt.Fprintln(&b, doc.short())
		if s := doc.Server; s != nil {
			switch {
			case !s.Reachable:
				fmt.Fprintf(&b, "server %s: not reached (%s)\n", s.Remote, s.Error)
			case s.ClientRules:
				fmt.Fprintf(&b, "server %s: Spark %s; the client types small CSV, JSON, Parquet and ORC files itself, by this version's rules\n", s.Remote, s.SparkVersion)
			default:
				fmt.Fprintf(&b, "server %s: Spark %s; the client has no inference rules for this version, so Spark types every file (slower)\n", s.Remote, s.SparkVersion)
			}
		}
		return b.String()
	})
}

// probeServer asks the server the flags and environment name for its
// Spark version, for at most versionProbeTimeout.
func (g *globalOptions) probeServer(ctx context.Context) *serverInfo {
	remote, err := g.remoteAddress()
	if err != nil {
		return &serverInfo{Remote: "(invalid)", Error: err.Error()}
	}
	info := &serverInfo{Remote: spark.RedactRemote(remote)}
	ctx, cancel := context.WithTimeout(ctx, versionProbeTimeout)
	defer cancel()
	opts, err := g.connectOptions(remote, nil)
	if err != nil {
		info.Error = withFlagHints(err.Error())
		return info
	}
	client, err := spark.Connect(ctx, remote, opts)
	if err != nil {
		info.Error = withFlagHints(firstLine(err.Error()))
		return info
	}
	defer client.Close()
	info.Reachable = true
	info.SparkVersion = client.SparkVersion()
	info.ClientRules = spark.ClientRulesApply(info.SparkVersion)
	return info
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
