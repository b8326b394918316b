package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// --batch N decides as one by one: same stored pages, same drop log, same
// kept records in --out, same summary counts; --batch 0 (the default)
// batches an input of 1 MiB or more (of 128 KiB here, 150 records of
// about 1 KB, to keep the test small; 1 MiB with SIMCRAWL_BIG=1). Bad
// values are refused.
func TestDedupBatchFlag(t *testing.T) {
	dir := t.TempDir()
	n := 1100
	if os.Getenv("SIMCRAWL_BIG") != "1" {
		defer func(was int64) { autoBatchBytes = was }(autoBatchBytes)
		autoBatchBytes, n = 128<<10, 150 // not a parallel test: nothing else runs
	}
	input := textInput(t, dir, n)
	if n := inputBytes([]string{input}); n < autoBatchBytes {
		t.Fatalf("test setup: input of %d bytes, want at least %d for automatic batches", n, autoBatchBytes)
	}
	outputs := map[string]string{}
	for _, batch := range []string{"1", "0", "64"} {
		data := filepath.Join(dir, "data"+batch)
		kept := filepath.Join(dir, "kept"+batch+".jsonl")
		out, _, err := run(t, "", "dedup", "--data", data, "--input", input, "--batch", batch, "--out", kept, "--set", "log.level=warn")
		if err != nil {
			t.Fatalf("--batch %s: %v", batch, err)
		}
		summary := out[:strings.Index(out, " in ")] // counts, without the time
		log, err := os.ReadFile(filepath.Join(data, "dropped.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		keptb, err := os.ReadFile(kept)
		if err != nil {
			t.Fatal(err)
		}
		ex := exported(t, data)
		var fps []string
		for u, p := range ex {
			fps = append(fps, u+" "+p.Fingerprint)
		}
		slices.Sort(fps)
		outputs[batch] = summary + "\n" + stripTimes(string(log)) + "\n" + stripTimes(string(keptb)) + "\n" + strings.Join(fps, "\n")
	}
	if !strings.Contains(outputs["1"], "dropped") || strings.Count(outputs["1"], "\"reason\"") < n/10 {
		t.Fatalf("test setup: few drops:\n%.500s", outputs["1"])
	}
	for _, batch := range []string{"0", "64"} {
		if outputs[batch] != outputs["1"] {
			t.Errorf("--batch %s differs from --batch 1:\n%.300s\nwant\n%.300s", batch, outputs[batch], outputs["1"])
		}
	}
	if _, _, err := run(t, "", "dedup", "--data", filepath.Join(dir, "bad"), "--input", input, "--batch", "-1"); err == nil || !strings.Contains(err.Error(), "--batch") {
		t.Errorf("--batch -1: err = %v, want a --batch error", err)
	}
}

// stripTimes blanks the times (when a record was read) of JSON lines.
func stripTimes(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		for _, f := range []string{`"time":"`, `"fetched_at":"`} {
			if a := strings.Index(l, f); a >= 0 {
				if b := strings.IndexByte(l[a+len(f):], '"'); b >= 0 {
					l = l[:a+len(f)] + l[a+len(f)+b:]
				}
			}
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// kill -9 in the middle of a batched dedup, then a rerun: the result is
// that of one uninterrupted run, and the drop log agrees with the store.
func TestDedupBatchKillNineThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dedup process")
	}
	t.Parallel()
	dir := t.TempDir()
	n := 500 // 8 batches of 64; the kill comes after the first drop line
	if os.Getenv("SIMCRAWL_BIG") == "1" {
		n = 3000
	}
	input := textInput(t, dir, n)
	args := func(data string) []string {
		return []string{"dedup", "--data", data, "--input", input, "--batch", "64", "--set", "log.level=warn"}
	}
	whole, killed, finished := killThenResume(t, dir, args, 1)
	if finished {
		t.Log("the dedup process finished before the kill: only the rerun is tested")
	}
	a, b := exported(t, whole), exported(t, killed)
	if len(a) != len(b) {
		t.Errorf("%d pages after kill and resume, %d uninterrupted", len(b), len(a))
	}
	for u, p := range a {
		if b[u].Fingerprint != p.Fingerprint {
			t.Errorf("%s: %q after resume, %s uninterrupted", u, b[u].Fingerprint, p.Fingerprint)
		}
	}
	wl, err := os.ReadFile(filepath.Join(whole, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	kl, err := os.ReadFile(filepath.Join(killed, "dropped.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if w, k := stripTimes(string(wl)), stripTimes(string(kl)); w != k {
		t.Errorf("drop logs differ: %d lines after kill and resume, %d uninterrupted", strings.Count(k, "\n"), strings.Count(w, "\n"))
	}
}
