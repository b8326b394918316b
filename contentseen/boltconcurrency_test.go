package contentseen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestBoltStaleReadAcrossMerges opens a read transaction in the middle of
// a merge (after table 0's step: its snapshot has a fingerprint E in table
// 0's blocks only) and queries in it after that merge and a second one
// (Checkpoint runs two) have ended and dropped E from the mirror: the
// query must still find E, from the snapshot's delta bucket.
func TestBoltStaleReadAcrossMerges(t *testing.T) {
	for _, mem := range []int64{0, 1 << 30} { // the tables read from the blocks, then held in memory
		t.Run(fmt.Sprintf("memory=%d", mem), func(t *testing.T) { testStaleReadAcrossMerges(t, mem) })
	}
}

func testStaleReadAcrossMerges(t *testing.T, memoryLimit int64) {
	rng := rand.New(rand.NewPCG(testSeed(t), 28))
	ctx := context.Background()
	// The stale read stays open through the merges: a merge that grew
	// the file would wait for it to remap (bbolt remaps only with no read
	// open), so the mapping starts big enough.
	x := openIndexWith(t, &bolt.Options{NoSync: true, InitialMmapSize: 64 << 20}, BoltOptions{MemoryLimit: memoryLimit})
	x.minDelta = 1 << 30
	l := x.layout
	for i := range 1000 {
		add(t, x, uint64(i+1), Fingerprint(rng.Uint64()))
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	e := Fingerprint(rng.Uint64())
	seen(t, x, 5000, e, false, Match{})
	// q: 3 bits from e, in another table-0 prefix, so that only a later
	// table finds e.
	var q Fingerprint
	for {
		q = plant(rng, e, 3)
		lo, hi := l.prefixRange(0, l.Permute(0, q))
		if pe := l.Permute(0, e); pe < lo || pe > hi {
			break
		}
	}
	var stale *bolt.Tx
	x.afterMergeStep = func(table int) {
		if table == 0 && stale == nil {
			var err error
			if stale, err = x.db.Begin(false); err != nil {
				t.Error(err)
				return
			}
			// Something for Checkpoint's second merge.
			seen(t, x, 6000, Fingerprint(rng.Uint64()), false, Match{})
		}
	}
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	x.afterMergeStep = nil
	if stale == nil {
		t.Fatal("no merge step ran")
	}
	defer stale.Rollback()
	if x.merges.Load() < 3 {
		t.Fatalf("%d merges, want the stale read to span two", x.merges.Load())
	}
	ms, err := x.NearTx(stale, q, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Fingerprint != e || ms[0].ID != 5000 {
		t.Errorf("NearTx in a read begun mid-merge = %v, want %v (id 5000)", ms, e)
	}
}

// TestBoltGroupFailureCancelled fails a group's transaction (a corrupt
// block) while one of its requests' contexts is cancelled after its
// look-up: that request must not report "recorded" with a nil error.
func TestBoltGroupFailureCancelled(t *testing.T) {
	x := mustOpenBolt(t, filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true})
	defer x.Close()
	l := x.layout
	err := x.db.Update(func(tx *bolt.Tx) error {
		top, err := x.top(tx)
		if err != nil {
			return err
		}
		return top.Bucket(tablesBucket).Put(blockKey(0, 0xf000_0000_0000_0000), []byte{0, 0, 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	fp1 := l.Unpermute(0, 0x0000_1234_5678_9abc) // below the corrupt block
	fp2 := l.Unpermute(0, 0xf000_0000_0000_1234) // reads it: the group fails
	c1 := &cancelAfterFirst{Context: context.Background()}
	r1 := &request{ctx: c1, id: 1, fp: fp1, done: make(chan struct{})}
	r2 := &request{ctx: context.Background(), id: 2, fp: fp2, done: make(chan struct{})}
	x.commit([]*request{r1, r2})
	if r2.err == nil {
		t.Fatal("the corrupt block did not fail the group")
	}
	if r1.err == nil {
		t.Errorf("request 1 of a failed group: found %v, err nil; its fingerprint was not recorded", r1.found)
	}
}

// cancelAfterFirst reports no error on its first Err call and Canceled
// after: a context cancelled while its group's transaction runs.
type cancelAfterFirst struct {
	context.Context
	calls atomic.Int32
}

func (c *cancelAfterFirst) Err() error {
	if c.calls.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

// TestBoltCloseUnderLoad closes an index while more callers wait in Seen
// than the committer's queue and group hold: Close must return (a hang
// here fails the run by its timeout) and every caller must end.
//
// It runs in a child process of the test binary: under the race detector
// its 5,600 goroutines leave the race runtime's memory large for the rest
// of the process, which made the tests after it use 600 MB more and
// slower (the package peaked at 900 MB; alone, no test passes 280 MB).
func TestBoltCloseUnderLoad(t *testing.T) {
	if os.Getenv(closeUnderLoadChild) != "1" {
		runInChild(t, "TestBoltCloseUnderLoad", closeUnderLoadChild)
		return
	}
	x, err := OpenBolt(filepath.Join(t.TempDir(), "x.db"), BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const callers = maxGroup + 1024 + 512 // queue and a group full, and more
	var wg sync.WaitGroup
	var done atomic.Int64
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 29))
			for {
				if _, _, err := x.Seen(context.Background(), rng.Uint64(), Fingerprint(rng.Uint64())); err != nil {
					return // ErrClosed
				}
				done.Add(1)
			}
		}()
	}
	for done.Load() < 2*callers {
		runtime.Gosched()
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// closeUnderLoadChild is set in the environment of the child process that
// runs TestBoltCloseUnderLoad's body.
const closeUnderLoadChild = "SIMCRAWL_TEST_CLOSE_UNDER_LOAD_CHILD"

// childEnv is this process's environment plus extra, for a child process
// of the test binary, with the race detector's pause at exit turned off:
// a binary built with -race sleeps GORACE's atexit_sleep_ms (1 s by
// default) as it exits, to let other threads finish their reports. The
// child still reports every race it finds and exits with status 66 then.
func childEnv(extra ...string) []string {
	env := append([]string(nil), os.Environ()...)
	gorace := "atexit_sleep_ms=0"
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace = strings.TrimSpace(v + " " + gorace) // the last setting wins
			env = append(env[:i], env[i+1:]...)
			break
		}
	}
	return append(append(env, "GORACE="+gorace), extra...)
}

// runInChild runs test (a top-level test of this binary) in a child
// process of the same test binary with env=1 set, and fails t with the
// child's output if the child fails. The child inherits the test
// deadline, so a hang still fails the run.
func runInChild(t *testing.T, test, env string) {
	t.Helper()
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = childEnv(env + "=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a child process: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s in a child process did not run:\n%s", test, out)
	}
}
