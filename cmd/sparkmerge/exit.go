package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

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

// reportedError is an error the command's output already shows (a plan
// with its conflicts): it sets the exit code, and -o json prints no
// second document for it.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

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
	var reported *reportedError
	if (g.output == "json" || asksJSON(args)) && !errors.As(err, &reported) {
		// One JSON document on stdout, also for errors.
		writeJSONError(stdout, err, code)
	}
	fmt.Fprintf(stderr, "sparkmerge: %s\n", withFlagHints(err.Error()))
	return code
}

// asksJSON reports whether the command line asks for -o json: a flag
// error stops parsing before the flag is read, and the error must still
// be the one JSON document asked for.
func asksJSON(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-ojson" || a == "--output=json" || a == "-o=json":
			return true
		case (a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// jsonError is what -o json prints for a failed command: Spark's error
// class and SQL state when Spark raised it, the message, and the hint
// (what to do) apart from it.
type jsonError struct {
	Error struct {
		Class    string `json:"class,omitempty"`
		SQLState string `json:"sql_state,omitempty"`
		Message  string `json:"message"`
		Hint     string `json:"hint,omitempty"`
		ExitCode int    `json:"exit_code"`
	} `json:"error"`
}

// writeJSONError writes err as one JSON document, indented at a terminal
// and compact (one line) otherwise, as every -o json output.
func writeJSONError(w io.Writer, err error, code int) {
	var doc jsonError
	doc.Error.Message, doc.Error.Hint = splitHint(withFlagHints(err.Error()))
	doc.Error.ExitCode = code
	var se *spark.SparkError
	if errors.As(err, &se) {
		doc.Error.Class, doc.Error.SQLState = se.ErrorClass, se.SQLState
	}
	_ = writeOutput(w, "json", doc, nil)
}

// splitHint parts a message from its hints: the lines that start with
// "hint:" (the library's "\n  hint: ..."), joined by a line break.
func splitHint(msg string) (message, hint string) {
	var kept, hints []string
	for _, line := range strings.Split(msg, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "hint: "); ok {
			hints = append(hints, h)
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n"), strings.Join(hints, "\n")
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
