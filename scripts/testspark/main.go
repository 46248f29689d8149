// Command testspark starts the Spark server (and S3 object store) that
// every test binary of a scripts/test.sh run shares, writes the
// environment that names it to a file, and stops both when it is
// interrupted or terminated, or when the process that started it exits.
//
//	testspark -env FILE [-mount DIR]...
//
// FILE receives "export KEY='VALUE'" lines for a shell to source; it is
// written only once the server is ready. Should Spark stop on its own,
// this process prints how, with the end of Spark's log, and exits 1. Under CI=true a Spark or object
// store that cannot start is an error; elsewhere too (the caller decides).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sparkmerge/sparkmerge/localspark/sparktest"
)

type mounts []string

func (m *mounts) String() string     { return strings.Join(*m, ",") }
func (m *mounts) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var dirs mounts
	envFile := flag.String("env", "", "file to write the environment to once the server is ready")
	flag.Var(&dirs, "mount", "host directory the server sees at the same path (repeatable)")
	flag.Parse()
	if *envFile == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: testspark -env FILE [-mount DIR]...")
		os.Exit(2)
	}
	os.Exit(run(*envFile, dirs))
}

func run(envFile string, dirs []string) int {
	// The reaper image cannot be pulled everywhere; this process stops the
	// container itself.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	parent := os.Getppid()
	startCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	shared, err := sparktest.StartShared(startCtx, dirs)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testspark:", err)
		return 1
	}
	defer shared.Stop()
	var b strings.Builder
	for _, kv := range shared.Env() {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	// Written whole, then renamed: a reader never sees half of it.
	if err := os.WriteFile(envFile+".tmp", []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "testspark:", err)
		return 1
	}
	if err := os.Rename(envFile+".tmp", envFile); err != nil {
		fmt.Fprintln(os.Stderr, "testspark:", err)
		return 1
	}
	// A parent killed outright (SIGKILL) sends no signal: this process is
	// then handed to another parent, which is the sign to stop.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "testspark: stopping Spark")
			return 0
		case <-tick.C:
			if os.Getppid() != parent {
				fmt.Fprintln(os.Stderr, "testspark: the run that started this server ended; stopping Spark")
				return 0
			}
			if exited, how := shared.Exited(ctx); exited {
				// Said at once: the tests still running fail as
				// unreachable from now on, and this says why.
				fmt.Fprintf(os.Stderr, "testspark: the shared Spark server stopped on its own (%s)\n", how)
				return 1
			}
		}
	}
}
