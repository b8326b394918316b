package webview

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/crawler"
	"github.com/simcrawl/simcrawl/storage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Live is what a running crawl tells its view beyond its data directory:
// *crawler.Crawler satisfies it with a small adapter (cmd/crawl's, which
// supplies the run's start time). Its methods must be safe for concurrent
// use.
type Live interface {
	// Stats returns this run's counters (crawler.Crawler.Stats).
	Stats() crawler.Stats
	// HostDelay returns the gap kept between requests to a host.
	HostDelay(host string) time.Duration
}

// Options configure a Server.
type Options struct {
	// Sources are the data directories shown, one for a single crawl,
	// several for a crawl split across processes. The Server reads them
	// and never closes them.
	Sources []*crawler.Data
	// Live is the running crawl serving this view, nil for a stopped one.
	Live Live
	// Config is the configuration in use as text (YAML), shown on the
	// overview.
	Config string
	// K is the threshold shown when no source records one.
	K int
	// Refresh is how old the snapshot of a live crawl may get, once the
	// crawl has moved on, before a request reads the data directory again;
	// default 2s. A snapshot read in under cheapRead is read again on the
	// first request after any progress. A stopped crawl's snapshot is read
	// once.
	Refresh time.Duration
	// Logger reports failed requests; default slog.Default().
	Logger *slog.Logger
}

// Server serves the view. It is an http.Handler, safe for concurrent use.
type Server struct {
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux

	setMu sync.Mutex       // guards set: a DataSet is for one goroutine
	set   *crawler.DataSet // the sources as one crawl, to find a drop's page in any of them

	mu      sync.Mutex // guards snap, mark and reading, and serialises cheap reads
	snap    *snapshot
	mark    int64 // a live crawl's progress (progress) when snap was read
	reading bool  // a background read of a live crawl is under way
	readErr error // the last background read's error, reported by the next request
	ctx     context.Context
	cancel  context.CancelFunc
	readers sync.WaitGroup // background reads; Close waits for them
	cheap   time.Duration  // cheapRead (tests lower it)

	fperOnce sync.Once // fper, scheme, fperErr: the first source's Fingerprinter
	fper     *contentseen.Fingerprinter
	scheme   string
	fperErr  error
}

// New reads the sources and returns a Server. Reading costs one pass over
// every page and drop header (BenchmarkNew: 6 s for 100,000 drops on the
// shared 2-core test machine at load 25, 190 MB allocated); after it every
// list page is served from memory.
func New(ctx context.Context, o Options) (*Server, error) {
	if len(o.Sources) == 0 {
		return nil, errors.New("webview: no data directory")
	}
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{opts: o, pages: map[string]*template.Template{}, mux: http.NewServeMux(), cheap: cheapRead,
		set: crawler.NewDataSet(o.Sources)}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("webview: %w", err)
	}
	for _, name := range []string{"overview", "dups", "pair", "distances", "failures", "labels", "error"} {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("webview: %w", err)
		}
		s.pages[name] = t
	}
	if o.Live != nil {
		s.mark = progress(o.Live.Stats()) // before the read: a change during it shows next time
	}
	if s.snap, err = build(ctx, s.set, &s.setMu, o.K); err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("webview: %w", err)
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.overview)
	s.mux.HandleFunc("GET /dups", s.dups)
	s.mux.HandleFunc("GET /pair", s.pair)
	s.mux.HandleFunc("GET /distances", s.distances)
	s.mux.HandleFunc("GET /failures", s.failures)
	s.mux.HandleFunc("GET /labels", s.labels)
	s.mux.HandleFunc("POST /pairs.jsonl", s.pairsFile)
	return s, nil
}

// ServeHTTP serves the view with headers that keep it to itself: no
// script, style or frame from elsewhere, and no inline script (page texts
// are escaped anyway; this is the second wall).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// cheapRead is the snapshot read time below which a live view reads
// again within the request after the crawl progressed: a small crawl's
// view is always current. A larger one is read again in the background,
// at most once per Options.Refresh, while requests get the last snapshot.
const cheapRead = 50 * time.Millisecond

// snapshot returns the current snapshot of the sources. For a live crawl
// that has progressed since the last read, it reads them again first when
// that is cheap, else starts a background read when the snapshot is older
// than Options.Refresh.
func (s *Server) snapshot(ctx context.Context) (*snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Live == nil {
		return s.snap, nil
	}
	if err := s.readErr; err != nil {
		s.readErr = nil
		return nil, err
	}
	mark := progress(s.opts.Live.Stats())
	switch {
	case mark == s.mark || s.reading:
	case s.snap.buildTime < s.cheap:
		snap, err := build(ctx, s.set, &s.setMu, s.opts.K)
		if err != nil {
			return nil, err
		}
		s.snap, s.mark = snap, mark
	case time.Since(s.snap.built) > s.opts.Refresh:
		s.reading = true
		s.readers.Add(1)
		go func() {
			defer s.readers.Done()
			snap, err := build(s.ctx, s.set, &s.setMu, s.opts.K)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reading = false
			if err != nil {
				if s.ctx.Err() == nil {
					s.readErr = err
				}
				return
			}
			s.snap, s.mark = snap, mark
		}()
	}
	return s.snap, nil
}

// Close stops a background read of a live crawl and waits for it; call it
// after the last request, before the sources are closed.
func (s *Server) Close() {
	s.cancel()
	s.readers.Wait()
}

// progress sums the counters a crawl moves after each commit, so that a
// change means the data directory changed.
func progress(st crawler.Stats) int64 {
	return st.Stored + st.DroppedExact + st.DroppedNear + st.Skipped + st.Errors + st.Retries + st.Held + int64(st.Queue)
}

// fingerprinter returns the Fingerprinter of the first source's index, to
// weigh the features of a pair as the crawl did.
func (s *Server) fingerprinter() (*contentseen.Fingerprinter, string, error) {
	s.fperOnce.Do(func() { s.fper, s.scheme, s.fperErr = s.opts.Sources[0].Fingerprinter() })
	return s.fper, s.scheme, s.fperErr
}

// keptPage returns the stored page that drop dr of source src duplicates
// and the index of the source storing it: in src itself, or, for a drop
// naming its page by URL (another worker stored it), in whichever source
// stores that URL. It fails wrapping storage.ErrNotFound when none does.
func (s *Server) keptPage(ctx context.Context, src int, dr *storage.Drop) (*storage.Page, int, error) {
	s.setMu.Lock()
	ref, ok, err := s.set.KeptPage(src, dr)
	s.setMu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, fmt.Errorf("%s is stored in none of the data directories read (%s): serve the directory of the worker that stored it too (--data): %w",
			dr.DuplicateOfURL, strings.Join(s.dirNames(), ", "), storage.ErrNotFound)
	}
	p, err := s.opts.Sources[ref.Dir].Store.Get(ctx, ref.ID)
	if err != nil {
		return nil, 0, fmt.Errorf("page %d: %w", ref.ID, err)
	}
	return p, ref.Dir, nil
}

// dirNames is the sources' directories, in order.
func (s *Server) dirNames() []string {
	names := make([]string, len(s.opts.Sources))
	for i, d := range s.opts.Sources {
		names[i] = d.Dir
	}
	return names
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string // the menu entry to mark
	Live  bool
	Built time.Time
	Body  any
}

// render executes the page template into a buffer first, so a failing
// template yields a clean error page rather than half a page.
func (s *Server) render(w http.ResponseWriter, name string, p page) {
	p.Live = s.opts.Live != nil
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, "layout.html", p); err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("render %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if _, err := b.WriteTo(w); err != nil {
		s.opts.Logger.Debug("webview: write", "err", err)
	}
}

// fail shows an error page with status code.
func (s *Server) fail(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		s.opts.Logger.Error("webview", "err", err)
	}
	var b bytes.Buffer
	if terr := s.pages["error"].ExecuteTemplate(&b, "layout.html", page{Title: http.StatusText(code), Body: err.Error(), Live: s.opts.Live != nil}); terr != nil {
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if _, werr := b.WriteTo(w); werr != nil {
		s.opts.Logger.Debug("webview: write", "err", werr)
	}
}
