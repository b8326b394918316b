package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"regexp"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
)

// configFlags are the flags every command that reads config.yaml shares.
type configFlags struct {
	config string
	data   dirFlag
	dirs   dirList // --data of the reading commands (addReadFlags), repeatable
	sets   stringList
}

func (m *Main) addConfigFlags(fsys *flag.FlagSet, cf *configFlags) {
	fsys.StringVar(&cf.config, "config", "", "config file (default: ./config.yaml when it exists, else built-in defaults)")
	fsys.Var(&cf.data, "data", "data `directory` (overrides the config's data key)")
	fsys.Var(&cf.sets, "set", "override a config key, e.g. --set fetch.delay=250ms (repeatable)")
}

// load reads the configuration with the usual precedence: --set and named
// flags > config file > built-in defaults.
func (cf *configFlags) load() (Config, error) {
	path := cf.config
	if path == "" {
		if _, err := os.Stat("config.yaml"); err == nil {
			path = "config.yaml"
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Config{}, fmt.Errorf("config.yaml: %w", err)
		}
	}
	cfg, err := loadConfig(path, cf.sets)
	if err != nil {
		return cfg, err
	}
	if cf.data != "" {
		// --data=~/x reaches us unexpanded: the shell expands ~ only
		// at the start of a word.
		if cfg.Data, err = expandHome(string(cf.data)); err != nil {
			return cfg, fmt.Errorf("--data: %w", err)
		}
	}
	return cfg, nil
}

// crawlFlags are the crawl's flags.
type crawlFlags struct {
	cf          configFlags
	seeds       *string
	retryFailed *bool
	metrics     *string
	ui          *string
	backend     *string
}

// crawlFlagSet returns the crawl's flags, which `crawl --help` lists too.
func (m *Main) crawlFlagSet() (*flag.FlagSet, *crawlFlags) {
	fset := m.newFlagSet("crawl")
	a := &crawlFlags{}
	a.seeds = fset.String("seeds", "", "seeds file: one URL per line, # comments (required, except for a worker joining a crawl on --backend)")
	a.backend = fset.String("backend", "", "share the crawl with other workers through the redis server at this URL, e.g. redis://host:6379/0 (overrides the config's backend key)")
	a.retryFailed = fset.Bool("retry-failed", false, "queue the URLs earlier runs gave up on (crawl failed lists them) again")
	a.ui = fset.String("ui", "", "serve the web view of this crawl at ADDR while it runs, e.g. "+defaultUIAddr+" (crawl serve shows it afterwards)")
	a.metrics = fset.String("metrics", "", "serve Prometheus metrics at http://ADDR/metrics while crawling, e.g. 127.0.0.1:9090 (overrides the config's metrics key)")
	m.addConfigFlags(fset, &a.cf)
	return fset, a
}

func (m *Main) runCrawl(ctx context.Context, args []string) error {
	fset, a := m.crawlFlagSet()
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErrorf(fset, "unexpected argument %q (the crawl takes its URLs from --seeds FILE)", fset.Arg(0))
	}
	if *a.ui != "" {
		if err := checkListenAddr(*a.ui); err != nil {
			return usageErrorf(fset, "--ui: %v", err)
		}
	}
	cfg, err := a.cf.load()
	if errors.Is(err, errBadBackend) {
		return &usageError{cmd: "crawl", err: err}
	}
	if err != nil {
		return err
	}
	if flagSet(fset, "backend") {
		cfg.Backend = *a.backend
		if _, err := parseBackend(cfg.Backend); cfg.Backend != "" && err != nil {
			return usageErrorf(fset, "--backend: %v", err)
		}
	}
	if *a.seeds == "" && cfg.Backend == "" {
		return usageErrorf(fset, "--seeds FILE is required (one URL per line)")
	}
	if flagSet(fset, "metrics") {
		cfg.Metrics = *a.metrics // even "": --metrics "" turns the config's off
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
	}
	var seeds []string
	if *a.seeds != "" {
		if seeds, err = readSeeds(*a.seeds); err != nil {
			return err
		}
	}
	m.uiAddr = *a.ui
	return m.crawl(ctx, cfg, seeds, func(o *crawler.Options) { o.RetryFailed = *a.retryFailed })
}

// crawl runs one crawl and prints its summary. tweak, when not nil, adjusts
// the crawler options (the demo uses it). With m.uiAddr set it serves the
// web view of the crawl while it runs.
func (m *Main) crawl(ctx context.Context, cfg Config, seeds []string, tweak func(*crawler.Options)) (err error) {
	opts, err := crawlerOptions(cfg, seeds, m.Stderr)
	if err != nil {
		return err
	}
	if tweak != nil {
		tweak(&opts)
	}
	// The view's address is taken before the data directory is opened
	// (and maybe created), so a busy or bad one fails with nothing written.
	var ln net.Listener
	if m.uiAddr != "" {
		if ln, err = listenUI(m.uiAddr, m.Stderr); err != nil {
			return fmt.Errorf("--ui: %w", err)
		}
	}
	var be *backend
	if cfg.Backend != "" {
		if be, err = openBackend(ctx, cfg, &opts); err != nil {
			if ln != nil {
				err = errors.Join(err, ln.Close())
			}
			return err
		}
	}
	c, err := crawler.Open(opts)
	if err != nil {
		if ln != nil {
			err = errors.Join(err, ln.Close())
		}
		if be != nil {
			// Not Leave: the data directory may be another live worker's
			// (ErrLocked), whose URLs are leased under the same name.
			err = errors.Join(err, be.close(context.WithoutCancel(ctx), false))
		}
		return err
	}
	lost := false // Redis lost the crawl's keys: nothing to leave
	if be != nil {
		defer func() {
			// Leave: this worker's URLs go back to the queue at once.
			if cerr := be.close(context.WithoutCancel(ctx), !lost); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}()
	}
	stopUI := func() error { return nil }
	if ln != nil {
		if stopUI, err = m.startUI(ctx, c, cfg, ln); err != nil {
			return errors.Join(err, ln.Close(), c.Close())
		}
	}
	sum, runErr := c.Run(ctx)
	if be != nil && backendLost(runErr) {
		lost = true
		runErr = firstLoss(runErr)
		if sum != nil {
			sum.QueueLost = true
		}
	}
	if err := stopUI(); err != nil { // before Close: the view reads the crawl's database
		runErr = errors.Join(runErr, err)
	}
	if err := c.Close(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if sum != nil {
		sum.Print(m.Stdout)
		if runErr == nil && sum.Run.Fetched == 0 && sum.Run.Errors > 0 && sum.Pages+sum.Drops == 0 {
			return errNothingFetched
		}
	}
	return runErr
}

// errNothingFetched ends a crawl in which every URL failed and whose data
// directory holds no page at all (a seed whose host does not resolve, a
// site that is down): exit status 3, so that a script can tell it from a
// crawl that found its work already done. A later run that finds only
// dead links left is a finished crawl.
var errNothingFetched = errors.New("nothing fetched: every URL of this run failed (crawl failed lists them; a rerun with --retry-failed tries them again)")

func crawlerOptions(cfg Config, seeds []string, stderr io.Writer) (crawler.Options, error) {
	if err := checkDataDir(cfg.Data); err != nil {
		return crawler.Options{}, err
	}
	feat, err := contentseen.ParseOptions(cfg.ContentSeen.Features)
	if err != nil {
		return crawler.Options{}, fmt.Errorf("config: contentseen.features: %w", err)
	}
	if cfg.ContentSeen.MinFeatures > 0 {
		feat.MinFeatures = cfg.ContentSeen.MinFeatures
	}
	// Empty AllowDomains: the crawler takes the seeds' hosts, and the host
	// a seed redirects to within its site.
	scope := crawler.Scope{AllowDomains: cfg.Scope.AllowDomains, DenyDomains: cfg.Scope.DenyDomains}
	for _, re := range cfg.Scope.Include {
		scope.Include = append(scope.Include, regexp.MustCompile(re)) // validated by Config.Validate
	}
	for _, re := range cfg.Scope.Exclude {
		scope.Exclude = append(scope.Exclude, regexp.MustCompile(re))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Log.Level)); err != nil {
		return crawler.Options{}, fmt.Errorf("config: log.level: %w", err)
	}
	tty := isTerminal(stderr)
	logOut := stderr
	if tty {
		logOut = clearLineWriter{stderr}
	}
	return crawler.Options{
		Seeds:          seeds,
		DataDir:        cfg.Data,
		DropLog:        cfg.DropLog,
		Scope:          scope,
		MaxDepth:       cfg.Scope.MaxDepth,
		MaxPages:       cfg.Scope.MaxPages,
		FollowNoFollow: cfg.Scope.FollowNoFollow,
		Parallelism:    cfg.Fetch.Parallelism,
		PerHost:        cfg.Fetch.PerHost,
		Delay:          time.Duration(cfg.Fetch.Delay),
		MaxCrawlDelay:  time.Duration(cfg.Fetch.MaxCrawlDelay),
		Retries:        cfg.Fetch.Retries,
		RetryBackoff:   time.Duration(cfg.Fetch.RetryBackoff),
		Fetch: crawler.FetchOptions{
			UserAgent:     cfg.Fetch.UserAgent,
			Timeout:       time.Duration(cfg.Fetch.Timeout),
			MaxBodySize:   int64(cfg.Fetch.MaxBodySize),
			RespectRobots: cfg.Fetch.RespectRobots,
			MaxRedirects:  cfg.Fetch.MaxRedirects,
		},
		K:             cfg.ContentSeen.K,
		ShortK:        cfg.ContentSeen.ShortK,
		ShortFeatures: cfg.ContentSeen.ShortFeatures,
		Thresholds: contentseen.Thresholds{
			Similarity:  cfg.ContentSeen.Similarity,
			Containment: cfg.ContentSeen.Containment,
			SizeRatio:   cfg.ContentSeen.SizeRatio,
		},
		Layout:         cfg.ContentSeen.Layout,
		ExpectedPages:  cfg.ContentSeen.ExpectedPages,
		IndexMemory:    int64(cfg.ContentSeen.IndexMemory),
		Features:       feat,
		KeepDropText:   cfg.Store.KeepDropText,
		Logger:         slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level})),
		Status:         stderr,
		StatusTTY:      tty,
		StatusInterval: time.Duration(cfg.Log.StatusInterval),
		MetricsAddr:    cfg.Metrics,
	}, nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fset *flag.FlagSet, name string) bool {
	set := false
	fset.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// clearLineWriter clears the terminal's status line before each log line,
// which slog writes with one Write call; the status line is redrawn below
// it a moment later.
type clearLineWriter struct{ w io.Writer }

func (c clearLineWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, "\r\033[K"); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
