package redisfrontier

import (
	"context"
	"strings"
	"testing"

	"github.com/simcrawl/simcrawl/frontier"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// Open loads the scripts, so every operation is one EVALSHA: never an EVAL
// that sends the script's source (a second round trip after NOSCRIPT, and
// several kilobytes per call).
func TestOperationsRunLoadedScripts(t *testing.T) {
	s := redistest.Start(t)
	rdb := redistest.Client(t, s.Addr())
	ctx := context.Background()
	f := open(t, rdb, fast(newName(t)))
	if _, err := f.Add(ctx, frontier.Item{URL: u("a.example", "1"), Seed: true}); err != nil {
		t.Fatal(err)
	}
	it, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Done(ctx, it, "stored"); err != nil {
		t.Fatal(err)
	}
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var evalsha bool
	for line := range strings.Lines(stats) {
		if strings.HasPrefix(line, "cmdstat_eval:") {
			t.Errorf("scripts were sent as EVAL: %s", strings.TrimSpace(line))
		}
		evalsha = evalsha || strings.HasPrefix(line, "cmdstat_evalsha:")
	}
	if !evalsha {
		t.Errorf("no EVALSHA in INFO commandstats:\n%s", stats)
	}
}
