package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
	"golang.org/x/term"
)

// Main is the crawl program: it parses the command line and runs one
// command. Its fields are the process's streams so tests can drive it end
// to end. A Main is used for one Run at a time.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// badFlags is the flag set whose parse failed in this Run, if any: the
	// command's error is then a usage error.
	badFlags *flag.FlagSet
	uiAddr   string // crawl --ui: where the crawl serves its web view, "" for none
}

// NewMain returns a Main wired to the process's standard streams.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

// command is one subcommand. The crawl itself is the command named "crawl",
// run when the first argument is a flag.
type command struct {
	name    string
	args    string // synopsis after the name
	summary string
	run     func(m *Main, ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"crawl", "--seeds FILE [--config FILE] [--data DIR] [--set key=value]... [--metrics ADDR] [--ui ADDR] [--retry-failed] [--backend URL]",
			"crawl from the seed URLs, dropping near-duplicate pages", (*Main).runCrawl},
		{"demo", "[--data DIR] [--keep]",
			"serve a small built-in site on 127.0.0.1 and crawl it", (*Main).runDemo},
		{"fingerprint", "[--features SPEC] [FILE...]",
			"print the SimHash fingerprint and feature count of files (stdin if none)", (*Main).runFingerprint},
		{"distance", "[--features SPEC] FILE_A FILE_B",
			"print the SimHash distance, the sketch similarity and containment of two files, and whether a crawl takes them for copies", (*Main).runDistance},
		{"extract", "[--json] [--base URL] FILE|URL...",
			"print what the crawler sees of a page: title, language, charset, text, links", (*Main).runExtract},
		{"failed", "[--data DIR]... [--json] [--skipped]",
			"list the URLs the crawl gave up on (or, with --skipped, skipped), with the reason", (*Main).runFailed},
		{"export", "[--data DIR]... [--format jsonl|warc] [--out FILE]",
			"write every stored page as JSON Lines, or as WARC/1.1 (.warc.gz) with its fingerprint", (*Main).runExport},
		{"eval", "--pairs FILE.jsonl [--features SPEC,...] [--json]",
			"precision, recall and F1 of each k on labelled duplicate pairs", (*Main).runEval},
		{"dups", "[--data DIR]... [--host H] [--reason exact|near] [--min-distance N] [--max-distance N] [--json] | show URL",
			"list dropped pages grouped under the page they duplicate; `dups show URL` diffs one drop against it", (*Main).runDups},
		{"stats", "[--data DIR]... [--json]",
			"counts, drop rate per host, histograms of near-drop and nearest-neighbour distances (to choose k)", (*Main).runStats},
		{"dedup", "--input PATH... [--data DIR] [--format auto|html|jsonl|warc] [--out FILE] [--batch N]",
			"run extraction and ContentSeen on pages on disk (HTML tree, JSON Lines, WARC) into a data directory", (*Main).runDedup},
		{"index", "build [--from DATA|FILE] [--data DIR] --out FILE [--layout NAME] | join --batch FILE|INDEX|DATA --stored FILE|INDEX|DATA [--k N] [--layout NAME] [--json] | migrate --data DIR --layout NAME",
			"bulk-build an index file from fingerprints, report all pairs within k between a batch and a stored set, or rebuild a data directory's index with another layout", (*Main).runIndex},
		{"check", "[--data DIR]",
			"verify a data directory read-only (bbolt structure, pages, index, drops, bodies, frontier, drop log); exit 1 if damaged", (*Main).runCheck},
		{"repair", "[--data DIR] --out NEWDIR",
			"write what can be read of a damaged data directory into a new, consistent one (the original is not touched)", (*Main).runRepair},
		{"serve", "[--data DIR]... [--addr 127.0.0.1:8080]",
			"show a stopped crawl in a web browser: overview, duplicates, pairs side by side, distances, failures", (*Main).runServe},
		{"help", "[COMMAND [SUBCOMMAND]]", "describe a command and its flags", (*Main).runHelp},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Run runs the command named by args[0]; `crawl --seeds ...` (a flag first)
// runs the crawl. A mistake in the command line is a *usageError.
func (m *Main) Run(ctx context.Context, args []string) error {
	routeRedisLogOnce.Do(func() { redis.SetLogger(redisLogger{}) })
	if len(args) == 0 {
		return &usageError{err: errors.New("no command given (try: crawl demo, or crawl --seeds seeds.txt)")}
	}
	name, rest := args[0], args[1:]
	switch {
	case isHelpFlag(name):
		m.usage(m.Stdout)
		return nil
	case isVersionFlag(name):
		return m.printVersion()
	case strings.HasPrefix(name, "-"):
		name, rest = "crawl", args
	}
	c, ok := findCommand(name)
	if !ok {
		return &usageError{err: fmt.Errorf("unknown command %q%s", name, guessCommand(name))}
	}
	m.badFlags = nil
	err := c.run(m, ctx, rest)
	var ue *usageError
	var ce *configError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil
	case err != nil && m.badFlags != nil && !errors.As(err, &ue):
		return flagError(m.badFlags, err)
	case errors.As(err, &ce) && !errors.As(err, &ue):
		// A mistake in config.yaml or --set: the command's help names
		// --config and --set.
		return &usageError{cmd: c.name, err: err}
	}
	return err
}

// go-redis logs what its connection pool retries ("failed to dial after 5
// attempts") to the process's stderr, before the client returns the error
// the program reports in its own words. Run routes those lines, once for
// the process, to the crawl's logger at debug level (redisLog; dropped
// while no crawl runs).
var (
	routeRedisLogOnce sync.Once
	redisLog          atomic.Pointer[slog.Logger] // the running crawl's; set by openBackend
)

// redisLogger is go-redis's logger (redis.SetLogger). It is safe for
// concurrent use.
type redisLogger struct{}

func (redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if l := redisLog.Load(); l != nil {
		l.DebugContext(ctx, "redis: "+strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
	}
}

// guessCommand returns "; did you mean X?" for the command a mistyped name
// most likely meant, or "".
func guessCommand(name string) string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if s := suggest(name, names); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprintln(w, "crawl: a web crawler that drops near-duplicate pages (SimHash, k-bit Hamming index)")
	fmt.Fprintln(w, "\nUsage:")
	cs := commands()
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].name == "crawl" && cs[j].name != "crawl" })
	for _, c := range cs {
		fmt.Fprintf(w, "  crawl %s %s\n      %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w, "\n`crawl --seeds FILE` is short for `crawl crawl --seeds FILE`. Its flags:")
	fset, _ := (&Main{Stdout: w, Stderr: w}).crawlFlagSet()
	fset.SetOutput(w)
	fset.PrintDefaults()
	fmt.Fprintln(w, "\nRun `crawl help COMMAND` for a command's flags; `crawl --version` prints the version.")
}

// subcommands are the words after a command that name a subcommand with
// flags of its own, for `crawl help dups show`.
var subcommands = map[string][]string{
	"dups":  {"show"},
	"index": {"build", "join", "migrate"},
}

func (m *Main) runHelp(ctx context.Context, args []string) error {
	// `crawl help "dups show"` and `crawl help dups show` mean the same.
	words := strings.Fields(strings.Join(args, " "))
	if len(words) == 0 || (len(words) == 1 && isHelpFlag(words[0])) {
		m.usage(m.Stdout)
		return nil
	}
	c, ok := findCommand(words[0])
	if !ok {
		return &usageError{err: fmt.Errorf("help: unknown command %q%s", strings.Join(words, " "), guessCommand(words[0]))}
	}
	run := []string{"-h"}
	switch {
	case len(words) == 1:
	case len(words) == 2 && slices.Contains(subcommands[c.name], words[1]):
		run = []string{words[1], "-h"}
	default:
		guess := ""
		if s := suggest(words[1], subcommands[c.name]); s != "" && len(words) == 2 {
			guess = fmt.Sprintf("; did you mean %q?", c.name+" "+s)
		}
		return &usageError{cmd: c.name, err: fmt.Errorf("help: unknown command %q%s", strings.Join(words, " "), guess)}
	}
	if c.name == "help" {
		fmt.Fprintf(m.Stdout, "Usage: crawl help [COMMAND [SUBCOMMAND]]\n\n%s\n", c.summary)
		return nil
	}
	// Each command prints its own flags on -h.
	return c.run(&Main{Stdin: m.Stdin, Stdout: m.Stdout, Stderr: m.Stdout}, ctx, run)
}

func isHelpFlag(s string) bool    { return s == "-h" || s == "--help" || s == "-help" }
func isVersionFlag(s string) bool { return s == "--version" || s == "-version" }

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage, with the command's synopsis, to m.Stderr.
func (m *Main) newFlagSet(name string) *flag.FlagSet {
	c, _ := findCommand(name)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(m.flagOutput(fs))
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: crawl %s %s\n\n%s\n\nFlags:\n", c.name, c.args, c.summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses fset's flags wherever they stand among args,
// since users write `crawl distance a.html b.html --features words` as
// readily as the flags first, and returns the other arguments in order.
// After "--" everything is an argument.
func parseInterspersed(fset *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fset.Parse(args); err != nil {
			return nil, err
		}
		left := fset.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if endedByDashDash(fset, args[:len(args)-len(left)]) {
			return append(rest, left...), nil
		}
		rest, args = append(rest, left[0]), left[1:]
	}
}

// endedByDashDash reports whether the flag set's parse of used stopped at
// a "--" that ends the flags, not at one that was a flag's value
// (--features --).
func endedByDashDash(fset *flag.FlagSet, used []string) bool {
	n := len(used)
	if n == 0 || used[n-1] != "--" {
		return false
	}
	if n >= 2 && strings.HasPrefix(used[n-2], "-") && !strings.Contains(used[n-2], "=") {
		if f := fset.Lookup(strings.TrimLeft(used[n-2], "-")); f != nil {
			b, ok := f.Value.(interface{ IsBoolFlag() bool })
			if !ok || !b.IsBoolFlag() {
				return false // "--" was this flag's value
			}
		}
	}
	return true
}

// flagOutput returns fs's output. For -h the flag package writes the
// usage, which it passes to m.Stderr. On a bad flag it writes the error and
// then the usage, and returns the error: flagOutput drops both and records
// fs in m.badFlags, so that Run returns a usage error, which main prints
// once, with a hint instead of the whole usage.
func (m *Main) flagOutput(fs *flag.FlagSet) io.Writer {
	return &flagOutput{w: m.Stderr, failed: func() { m.badFlags = fs }}
}

// flagOutput is a flag set's output (see Main.flagOutput). The usage
// always starts with "Usage:"; anything else written first is the flag
// package's error.
type flagOutput struct {
	w       io.Writer
	failed  func()
	started bool
	drop    bool
}

func (o *flagOutput) Write(p []byte) (int, error) {
	if !o.started {
		o.started = true
		if !bytes.HasPrefix(p, []byte("Usage:")) {
			o.drop = true
			o.failed()
		}
	}
	if o.drop {
		return len(p), nil
	}
	return o.w.Write(p)
}

// isTerminal reports whether w is a terminal, for the live status line and
// colour.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stringList is a repeatable string flag.
type stringList []string

// dirList is a repeatable --data. An empty value is refused: --data ""
// (a variable that was never set) would otherwise be taken for no --data
// at all, and the config's data directory read or crawled into instead.
type dirList []string

func (s *dirList) String() string { return strings.Join(*s, ", ") }
func (s *dirList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("want a data directory, got an empty string")
	}
	*s = append(*s, v)
	return nil
}

// dirFlag is a single --data, refusing an empty value as dirList does.
type dirFlag string

func (d *dirFlag) String() string { return string(*d) }
func (d *dirFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("want a data directory, got an empty string")
	}
	*d = dirFlag(v)
	return nil
}

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
