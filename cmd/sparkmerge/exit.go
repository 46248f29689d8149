package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sparkmerge/sparkmerge"
	"github.com/sparkmerge/sparkmerge/spark"
)

// Exit codes, documented in docs/cli.md.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitConflict    = 3
	exitUnreachable = 4
)

// usageError marks a mistake in the command line itself.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// run executes the CLI and maps its error to an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	g := &globalOptions{getenv: getenv}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if g.output == "json" {
		// One JSON document on stdout, also for errors.
		writeJSONError(stdout, err, code)
	}
	fmt.Fprintf(stderr, "sparkmerge: %s\n", withFlagHints(err.Error()))
	return code
}

// jsonError is what -o json prints for a failed command.
type jsonError struct {
	Error struct {
		Message    string `json:"message"`
		ExitCode   int    `json:"exit_code"`
		ErrorClass string `json:"error_class,omitempty"`
		SQLState   string `json:"sql_state,omitempty"`
	} `json:"error"`
}

func writeJSONError(w io.Writer, err error, code int) {
	var doc jsonError
	doc.Error.Message, doc.Error.ExitCode = withFlagHints(err.Error()), code
	var se *spark.SparkError
	if errors.As(err, &se) {
		doc.Error.ErrorClass, doc.Error.SQLState = se.ErrorClass, se.SQLState
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(doc)
}

func exitCode(err error) int {
	var usage *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.Is(err, sparkmerge.ErrSchemaConflict):
		return exitConflict
	case errors.Is(err, spark.ErrUnreachable):
		return exitUnreachable
	default:
		return exitError
	}
}
