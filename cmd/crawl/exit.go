package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Exit statuses, documented in the README.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2 // a mistake in the command line, as Go's own tools do
	exitNothing   = 3 // every URL failed and the data directory holds no page
	exitInterrupt = 130
)

// errServeStopped is what serve returns when Ctrl-C (or SIGTERM) stopped
// it: exit 130, as for every interrupted command, with nothing to resume.
var errServeStopped = fmt.Errorf("web view stopped: %w", context.Canceled)

// usageError is a mistake in the command line: a flag the command does not
// have, a missing argument, a command that does not exist. It is printed
// with a hint where to read the usage, not the usage itself, and exits 2.
type usageError struct {
	cmd string // the command whose help to read ("index build"); "" for the list of commands
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf returns a usage error of the command whose flag set is fset.
func usageErrorf(fset *flag.FlagSet, format string, args ...any) error {
	return &usageError{cmd: fset.Name(), err: fmt.Errorf(format, args...)}
}

// flagError is a usage error for a failure the flag package reported
// while parsing fset: it names the command, and for a flag fset lacks, the
// flag it most likely meant.
func flagError(fset *flag.FlagSet, err error) error {
	prefix := ""
	if fset.Name() != "crawl" {
		prefix = fset.Name() + ": "
	}
	msg := prefix + err.Error()
	if bad, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		var names []string
		fset.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := suggest(strings.TrimLeft(bad, "-"), names); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return &usageError{cmd: fset.Name(), err: errors.New(msg)}
}

// report prints err for a person, as main does, and returns the exit
// status. Usage errors get a hint instead of the whole usage.
func report(w io.Writer, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case err == errServeStopped:
		fmt.Fprintln(w, "crawl: web view stopped")
		return exitInterrupt
	case errors.Is(err, context.Canceled):
		if err != context.Canceled { // something else went wrong on the way out
			fmt.Fprintln(w, "crawl:", errorText(err))
		}
		fmt.Fprintln(w, "crawl: interrupted; rerun the same command to resume")
		return exitInterrupt
	case errors.As(err, &ue):
		fmt.Fprintln(w, "crawl:", errorText(err))
		if ue.cmd == "" {
			fmt.Fprintln(w, "Run 'crawl help' for the commands.")
		} else {
			fmt.Fprintf(w, "Run 'crawl help %s' for usage.\n", ue.cmd)
		}
		return exitUsage
	case errors.Is(err, errNothingFetched):
		fmt.Fprintln(w, "crawl:", errorText(err))
		return exitNothing
	default:
		fmt.Fprintln(w, "crawl:", errorText(err))
		return exitError
	}
}

// rePackagePrefix matches the name of one of the repository's packages at
// the start of an error or of a wrapped part of one ("crawler: open ...:
// storage: ..."). Those name where in the code an error arose, which helps
// a Go caller of the package and tells a person nothing.
// "extract: " at the very start is the extract command's own.
var rePackagePrefix = regexp.MustCompile(`(^|: |\n)(?:crawler|storage|contentseen|frontier|warc|demosite): |(: |\n)extract: `)

// errorText is err's message for a person: without the repository's
// package names, and without a part said twice in a row once they are gone
// ("dedup: dedup: read" from the command and the package).
func errorText(err error) string {
	s := err.Error()
	for {
		t := rePackagePrefix.ReplaceAllString(s, "$1$2")
		if t == s {
			break
		}
		s = t
	}
	parts := strings.Split(s, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}

// stoppingMessage is what the first Ctrl-C prints for the command args
// run: a crawl (or dedup, demo) drains and saves; serve only stops serving.
func stoppingMessage(args []string) string {
	if len(args) > 0 && args[0] == "serve" {
		return "crawl: stopping the web view; Ctrl-C again to abort"
	}
	if len(args) > 0 && args[0] == "dedup" {
		// No requests: what is decided is committed, the rest is left
		// undecided for a rerun (the summary counts it).
		return "crawl: stopping: the records decided so far are saved, the rest left for a rerun; Ctrl-C again to abort"
	}
	return "crawl: stopping: requests in flight finish (at most fetch.timeout) and the work is saved; Ctrl-C again to abort"
}
