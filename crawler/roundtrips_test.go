package crawler

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simcrawl/simcrawl/contentseen"
	"github.com/simcrawl/simcrawl/contentseen/redisindex"
	"github.com/simcrawl/simcrawl/internal/demosite"
	"github.com/simcrawl/simcrawl/internal/redisconn"
	"github.com/simcrawl/simcrawl/internal/redistest"
)

// maxRoundTripsPerPage is what a worker may spend talking to Redis per
// page fetched, its frontier and index on one client, open and leave
// included (see README, Many machines): the target. A new page
// costs 2 (its look-up and claim; its confirm and finish with the next
// Next), a near copy 3 and more while it waits for the page it copies.
const maxRoundTripsPerPage = 3.0

// A worker on Redis spends at most maxRoundTripsPerPage round trips per
// page on a small crawl with copies (exact and near). It is the only
// worker: its frontier never needs to poll for other workers' URLs (a
// worker's own completions wake its Next), so the count does not depend
// on timing.
func TestDistributedRoundTripsPerPage(t *testing.T) {
	srv := redistest.Start(t)
	g := &demosite.Generated{N: 150, DupEvery: 5, IndexPage: true}
	site := httptest.NewServer(g)
	defer site.Close()
	rt := &redisconn.RoundTrips{}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(rt)
	idx, err := redisindex.Open(context.Background(), rdb, redisindex.Options{Name: "t-rt", SharedOptions: contentseen.SharedOptions{K: 6}})
	if err != nil {
		t.Fatalf("redisindex.Open: %v", err)
	}
	t.Cleanup(func() { idx.Close() })
	c := distWorkerOn(t, rdb, time.Minute, "t-rt", "worker-a", idx, site.URL+"/")
	sum := runWorkers(t, context.Background(), c)[0]
	r := sum.Run
	if r.Stored == 0 || r.DroppedExact+r.DroppedNear == 0 {
		t.Fatalf("stored %d, dropped %d: want a crawl with copies", r.Stored, r.DroppedExact+r.DroppedNear)
	}
	per := float64(rt.N()) / float64(r.Fetched)
	t.Logf("%d round trips for %d pages fetched (%d stored, %d dropped): %.2f per page",
		rt.N(), r.Fetched, r.Stored, r.DroppedExact+r.DroppedNear, per)
	if per > maxRoundTripsPerPage {
		t.Errorf("%.2f redis round trips per page, want at most %.2f", per, maxRoundTripsPerPage)
	}
}
