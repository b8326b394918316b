package boltcheck

import (
	"bytes"
	"errors"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// fixture writes a bbolt file with what a crawl has: nested buckets, inline
// buckets, values spanning overflow pages, deletions (free pages), many
// keys (branch pages), and returns its bytes.
func fixture(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 4 {
		err = db.Update(func(tx *bolt.Tx) error {
			top, err := tx.CreateBucketIfNotExists([]byte("pages"))
			if err != nil {
				return err
			}
			for _, name := range []string{"meta", "text", "url", "tiny"} {
				if _, err := top.CreateBucketIfNotExists([]byte(name)); err != nil {
					return err
				}
			}
			for i := range 400 {
				k := binary.BigEndian.AppendUint64(nil, uint64(round*400+i))
				v := bytes.Repeat([]byte{byte(i)}, r.IntN(300))
				if err := top.Bucket([]byte("meta")).Put(k, v); err != nil {
					return err
				}
				if err := top.Bucket([]byte("url")).Put([]byte(fmt.Sprintf("http://h/%d/%d", round, i)), k); err != nil {
					return err
				}
			}
			big := make([]byte, 20000)
			for i := range big {
				big[i] = byte(r.Uint32())
			}
			if err := top.Bucket([]byte("text")).Put([]byte{byte(round)}, big); err != nil {
				return err
			}
			if err := top.Bucket([]byte("tiny")).Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			if round == 2 {
				c := top.Bucket([]byte("meta")).Cursor()
				for k, _ := c.First(); k != nil; k, _ = c.Next() {
					if k[7]%3 == 0 {
						if err := c.Delete(); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func walkBytes(t *testing.T, b []byte) *Report {
	t.Helper()
	rep, err := Walk(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return rep
}

func TestSoundFile(t *testing.T) {
	b := fixture(t)
	rep := walkBytes(t, b)
	if !rep.OK() {
		t.Fatalf("sound file: %v", rep.Err())
	}
	if rep.Buckets != 6 || rep.Keys < 1600 || rep.Pages < 20 {
		t.Errorf("report %+v: want 6 buckets, 1600+ keys, 20+ pages", rep)
	}
}

func TestCutShort(t *testing.T) {
	b := fixture(t)
	rep := walkBytes(t, b[:len(b)/2])
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("half a file: %v, want cut short", err)
	}
	if rep := walkBytes(t, nil); !strings.Contains(fmt.Sprint(rep.Err()), "empty") {
		t.Fatalf("empty file: %v", rep.Err())
	}
}

// TestDamageNeverReachesBbolt is the package's contract: on any file Walk
// passes, bbolt opens, runs Tx.Check and reads every key without a panic
// (Tx.Check may still report what Walk does not look at, such as pages
// neither reachable nor free). Damage is a truncation, zeroed pages or
// flipped bytes, from seeded generators; the seed is in the subtest name.
func TestDamageNeverReachesBbolt(t *testing.T) {
	orig := fixture(t)
	dir := t.TempDir()
	detected := 0
	const variants = 120
	for seed := range uint64(variants) {
		r := rand.New(rand.NewPCG(seed, 13))
		b := bytes.Clone(orig)
		kind := []string{"truncate", "zero", "flip"}[seed%3]
		switch kind {
		case "truncate":
			b = b[:r.IntN(len(b))]
		case "zero":
			ps := 4096
			p := r.IntN(len(b) / ps)
			n := 1 + r.IntN(3)
			clear(b[p*ps : min(len(b), (p+n)*ps)])
		case "flip":
			for range 1 + r.IntN(40) {
				b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			}
		}
		rep := walkBytes(t, b)
		if !rep.OK() {
			detected++
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("v%d.db", seed))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := openAndRead(path); err != nil {
			t.Errorf("seed %d (%s): Walk passed the file, then bbolt: %v", seed, kind, err)
		}
	}
	t.Logf("%d of %d damaged variants detected by Walk; the rest bbolt reads without a panic", detected, variants)
	if detected < variants/3 {
		t.Errorf("only %d of %d damaged variants detected", detected, variants)
	}
}

// openAndRead opens path read-only, runs Tx.Check and reads every bucket
// and key, turning a panic or fault into an error.
func openAndRead(path string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return nil // a clean error is fine
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		for range tx.Check() {
		}
		var walk func(b *bolt.Bucket) error
		walk = func(b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					if c := b.Bucket(k); c != nil {
						return walk(c)
					}
				}
				return nil
			})
		}
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
	})
}

// dump lists every bucket and key/value of a bbolt file as lines.
func dump(t *testing.T, path string) []string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		out = append(out, fmt.Sprintf("%s seq=%d", prefix, b.Sequence()))
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+"/"+string(k), b.Bucket(k))
			}
			out = append(out, fmt.Sprintf("%s %x=%x", prefix, k, v))
			return nil
		})
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(k []byte, b *bolt.Bucket) error { return walk(string(k), b) })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Salvage of a sound file visits exactly what bbolt reads.
func TestSalvageSoundFile(t *testing.T) {
	b := fixture(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	if err := os.WriteFile(src, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst.db")
	db, err := bolt.Open(dst, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		rep, err := Salvage(bytes.NewReader(b), int64(len(b)), func(path [][]byte, k, v []byte, seq uint64) error {
			if k == nil { // a bucket
				var bk *bolt.Bucket
				var err error
				if len(path) == 1 {
					bk, err = tx.CreateBucketIfNotExists(path[0])
				} else {
					parent := tx.Bucket(path[0])
					for _, p := range path[1 : len(path)-1] {
						parent = parent.Bucket(p)
					}
					bk, err = parent.CreateBucketIfNotExists(path[len(path)-1])
				}
				if err != nil {
					return err
				}
				return bk.SetSequence(seq)
			}
			bk := tx.Bucket(path[0])
			for _, p := range path[1:] {
				bk = bk.Bucket(p)
			}
			return bk.Put(k, v)
		})
		if err == nil && !rep.OK() {
			err = rep.Err()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := dump(t, src), dump(t, dst)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("salvaged copy differs: %d lines, want %d", len(got), len(want))
	}
}

// FuzzWalk: Walk never panics, and a file it passes bbolt reads without a
// panic.
func FuzzWalk(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		f.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("pages"))
		if err != nil {
			return err
		}
		inline, err := b.CreateBucket([]byte("inline"))
		if err != nil {
			return err
		}
		if err := inline.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		for i := range 40 {
			if err := b.Put([]byte(fmt.Sprint("key", i)), bytes.Repeat([]byte{byte(i)}, 90)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := errors.Join(err, db.Close()); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := Walk(bytes.NewReader(b), int64(len(b)))
		if err != nil || !rep.OK() {
			return
		}
		path := filepath.Join(dir, "f.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := openAndRead(path); err != nil {
			t.Fatalf("Walk passed the file, then bbolt: %v", err)
		}
	})
}
