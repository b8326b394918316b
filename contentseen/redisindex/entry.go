package redisindex

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/simcrawl/simcrawl/contentseen"
)

// keys are the Redis keys of one crawl's index (see doc.go).
type keys struct {
	prefix  string
	meta    string   // hash: format, layout, k, lease, max_lag
	seq     string   // counter: the last seq given (the token)
	entries string   // hash: seq -> entry record
	pending string   // zset: seq of a pending entry -> lease end (ms)
	digests string   // hash: digest -> 8-byte seqs
	tables  []string // hash per table: bucket -> 16-byte (fingerprint, seq) records
	// all is every key above in the order the writing scripts take them,
	// lookup the keys of lookupScript.
	all, lookup []string
}

func newKeys(name string, tables int) keys {
	p := "simcrawl:{" + name + "}:cs:"
	k := keys{prefix: p, meta: p + "meta", seq: p + "seq", entries: p + "e", pending: p + "pend", digests: p + "d"}
	for t := range tables {
		k.tables = append(k.tables, p+"t"+strconv.Itoa(t))
	}
	k.all = append([]string{k.meta, k.seq, k.entries, k.pending, k.digests}, k.tables...)
	k.lookup = append([]string{k.meta, k.seq, k.digests, k.entries, k.pending}, k.tables...)
	return k
}

// An entry record, the value of P e, is binary (byte offsets; the scripts
// read it at the same offsets, 1-based):
//
//	0        version (1)
//	1:9      fingerprint, big-endian
//	9:25     digest
//	25:29    sketch size, big-endian
//	29:157   sketch bins
//	157      T, the number of tables
//	158      W, the bytes of a bucket name
//	159:     T bucket names of W bytes, one per table
//	then     2-byte length of the ID, the ID, the URL (the rest)
const (
	recVersion = 1
	recFixed   = 159
)

// bucket returns the name of the bucket of permuted key p in a table
// whose prefix has pbits bits: the prefix, big-endian in w bytes.
func bucket(p uint64, pbits, w int) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], p>>(64-pbits))
	return string(b[8-w:])
}

// encodeEntry returns e's record.
func (x *Index) encodeEntry(e contentseen.Entry) string {
	l := x.opts.Layout
	n := l.Tables()
	b := make([]byte, 0, recFixed+n*x.width+2+len(e.ID)+len(e.URL))
	b = append(b, recVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Fingerprint))
	b = append(b, e.Digest[:]...)
	b = binary.BigEndian.AppendUint32(b, e.Sketch.Size)
	b = append(b, e.Sketch.Bins[:]...)
	b = append(b, byte(n), byte(x.width))
	for t := range n {
		b = append(b, bucket(l.Permute(t, e.Fingerprint), l.PrefixBits(t), x.width)...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(e.ID)))
	b = append(b, e.ID...)
	b = append(b, e.URL...)
	return string(b)
}

// decodeEntry parses a record (Seq, Pending, Deadline, Distance left to
// the caller).
func decodeEntry(s string) (contentseen.Entry, error) {
	var e contentseen.Entry
	if len(s) < recFixed+2 || s[0] != recVersion {
		return e, fmt.Errorf("%w: entry record of %d bytes", errCorrupt, len(s))
	}
	e.Fingerprint = contentseen.Fingerprint(binary.BigEndian.Uint64([]byte(s[1:9])))
	copy(e.Digest[:], s[9:25])
	e.Sketch.Size = binary.BigEndian.Uint32([]byte(s[25:29]))
	copy(e.Sketch.Bins[:], s[29:157])
	at := recFixed + int(s[157])*int(s[158])
	if len(s) < at+2 {
		return e, fmt.Errorf("%w: entry record of %d bytes", errCorrupt, len(s))
	}
	n := int(binary.BigEndian.Uint16([]byte(s[at : at+2])))
	at += 2
	if len(s) < at+n {
		return e, fmt.Errorf("%w: entry record of %d bytes, id of %d", errCorrupt, len(s), n)
	}
	e.ID, e.URL = s[at:at+n], s[at+n:]
	return e, nil
}

// buckets returns, per table, the buckets a Lookup of fp reads: the
// fingerprint's own and, for a K above the layout's, the multi-probe
// neighbours (x.masks).
func (x *Index) buckets(fp contentseen.Fingerprint) [][]any {
	l := x.opts.Layout
	out := make([][]any, l.Tables())
	for t := range out {
		p := l.Permute(t, fp)
		pb := l.PrefixBits(t)
		fs := make([]any, len(x.masks[t]))
		for i, m := range x.masks[t] {
			fs[i] = bucket(p^m, pb, x.width)
		}
		out[t] = fs
	}
	return out
}

// near appends to seqs the seqs of the records of bucket value v whose
// fingerprint is within k of fp.
func near(seqs []uint64, v string, fp contentseen.Fingerprint, k int) ([]uint64, error) {
	if len(v)%16 != 0 {
		return seqs, fmt.Errorf("%w: bucket of %d bytes", errCorrupt, len(v))
	}
	for i := 0; i < len(v); i += 16 {
		f := binary.BigEndian.Uint64([]byte(v[i : i+8]))
		if bits.OnesCount64(f^uint64(fp)) <= k {
			seqs = append(seqs, binary.BigEndian.Uint64([]byte(v[i+8:i+16])))
		}
	}
	return seqs, nil
}
