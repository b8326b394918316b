package contentseen

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
)

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestZZMirrorMemory(t *testing.T) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	x := mustOpenBolt(t, path, BoltOptions{NoSync: true})
	ids := make([]uint64, n)
	fps := make([]Fingerprint, n)
	for i := range fps {
		ids[i], fps[i] = uint64(i+1), Fingerprint(rng.Uint64())
	}
	if err := x.AddBatch(ctx, ids, fps); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	ids, fps = nil, nil
	before := heapNow()
	x = mustOpenBolt(t, path, BoltOptions{NoSync: true, MemoryLimit: 1 << 30})
	after := heapNow()
	m := x.mirror()
	t.Logf("n=%d layout=%s: heap after open %+d MB, mirrorBytes estimate %d MB", n, x.layout.Name(), (int64(after)-int64(before))>>20, mirrorBytes(x.layout, n)>>20)
	// a merge of n/64 into the mirror
	x.minDelta = 1 << 30
	for i := range n / 64 {
		add(t, x, uint64(n+i+1), Fingerprint(rng.Uint64()))
	}
	mid := heapNow()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peakBefore := ms.HeapSys
	if err := x.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	end := heapNow()
	runtime.ReadMemStats(&ms)
	t.Logf("before merge %+d MB (delta), after merge %+d MB vs open; HeapSys %d -> %d MB; mirror len %d", (int64(mid)-int64(after))>>20, (int64(end)-int64(after))>>20, peakBefore>>20, ms.HeapSys>>20, m.Len())
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	closed := heapNow()
	t.Logf("after close %+d MB vs before open", (int64(closed)-int64(before))>>20)
}
