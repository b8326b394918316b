package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// On-disk layout, all inside the top-level bucket (Options.Bucket):
//
//	seen/<url>            state byte + text: 'p' pending, 'i' in flight,
//	                      'd'+outcome done, 'f'+reason failed
//	queue/<host>/<qkey>   item, qkey = depth uint32 BE | seq uint64 BE, so a
//	                      cursor walks one host breadth-first, FIFO per depth
//	retry/<rkey>          item, rkey = not-before unix ns uint64 BE | seq
//	inflight/<url>        qkey + item (qkey puts it back where it was on resume)
//	failed/<url>          reason
//	meta/counts           pending, inflight, done, failed as uint64 BE
//
// The sequence is the top-level bucket's NextSequence, so it survives
// restarts and FIFO order holds across them.

var (
	bSeen     = []byte("seen")
	bQueue    = []byte("queue")
	bRetry    = []byte("retry")
	bInflight = []byte("inflight")
	bFailed   = []byte("failed")
	// bFailedItem keeps a failed URL's item (depth, source, attempts) so
	// that RetryFailedTx can queue it again where it was.
	bFailedItem = []byte("failed-item")
	bMeta       = []byte("meta")
	kCounts     = []byte("counts")
)

const (
	stPending  = 'p'
	stInflight = 'i'
	stDone     = 'd'
	stFailed   = 'f'
)

const itemVersion = 1

var errCorrupt = errors.New("frontier: corrupt record")

// qkey is the position of an item in its host queue.
type qkey struct {
	depth uint32
	seq   uint64
}

func (k qkey) less(o qkey) bool {
	return k.depth < o.depth || k.depth == o.depth && k.seq < o.seq
}

func (k qkey) bytes() []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b, k.depth)
	binary.BigEndian.PutUint64(b[4:], k.seq)
	return b
}

func parseQkey(b []byte) (qkey, error) {
	if len(b) != 12 {
		return qkey{}, fmt.Errorf("%w: queue key of %d bytes", errCorrupt, len(b))
	}
	return qkey{binary.BigEndian.Uint32(b), binary.BigEndian.Uint64(b[4:])}, nil
}

func retryKey(notBefore int64, seq uint64) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(notBefore))
	binary.BigEndian.PutUint64(b[8:], seq)
	return b
}

func encodeItem(it Item) []byte {
	b := make([]byte, 0, 16+len(it.URL)+len(it.Source)+len(it.LastError))
	b = append(b, itemVersion)
	b = binary.AppendUvarint(b, uint64(it.Depth))
	b = binary.AppendUvarint(b, uint64(it.Attempts))
	var flags byte
	if it.Seed {
		flags |= 1
	}
	b = append(b, flags)
	for _, s := range []string{it.URL, it.Source, it.LastError} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeItem copies everything it keeps: b may be bbolt memory.
func decodeItem(b []byte) (Item, error) {
	var it Item
	if len(b) < 1 || b[0] != itemVersion {
		return it, fmt.Errorf("%w: unknown item version", errCorrupt)
	}
	b = b[1:]
	u := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	it.Depth = int(u())
	it.Attempts = int(u())
	if len(b) < 1 {
		return it, fmt.Errorf("%w: short item", errCorrupt)
	}
	it.Seed = b[0]&1 != 0
	b = b[1:]
	for _, s := range []*string{&it.URL, &it.Source, &it.LastError} {
		n := u()
		if n > uint64(len(b)) {
			return it, fmt.Errorf("%w: short item", errCorrupt)
		}
		*s = string(b[:n])
		b = b[n:]
	}
	return it, nil
}

// counts are the persisted totals; they are exact at every commit.
type counts struct {
	pending, inflight, done, failed int64
}

func (c counts) bytes() []byte {
	b := make([]byte, 32)
	binary.BigEndian.PutUint64(b, uint64(c.pending))
	binary.BigEndian.PutUint64(b[8:], uint64(c.inflight))
	binary.BigEndian.PutUint64(b[16:], uint64(c.done))
	binary.BigEndian.PutUint64(b[24:], uint64(c.failed))
	return b
}

func parseCounts(b []byte) (counts, error) {
	if b == nil {
		return counts{}, nil
	}
	if len(b) != 32 {
		return counts{}, fmt.Errorf("%w: counts of %d bytes", errCorrupt, len(b))
	}
	return counts{
		int64(binary.BigEndian.Uint64(b)),
		int64(binary.BigEndian.Uint64(b[8:])),
		int64(binary.BigEndian.Uint64(b[16:])),
		int64(binary.BigEndian.Uint64(b[24:])),
	}, nil
}

func (c *counts) add(d counts) {
	c.pending += d.pending
	c.inflight += d.inflight
	c.done += d.done
	c.failed += d.failed
}
