package contentseen

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Restart points. A restart point is an entry written in full (64 bits)
// instead of coded from the entry before, so that decoding can start
// there; a block lists them with their bit offsets in its stream.
//
// Format 3 put one at every 128th entry of a block, wherever the query's
// prefix ranges fell: a query decoded on average 64 entries before each of
// its prefixes, and a k=7 query on 4x16 reads 68 of them (at 1M, where a
// 16-bit prefix holds 15 entries, four fifths of what it decoded). Format 4
// puts them at the first entry of a prefix range (the table's leading
// PrefixBits differ from the entry before) once minRestartGap entries have
// passed since the last one, and at every maxRestartGap-th entry where no
// prefix begins. At 10M (152 entries a prefix) every prefix range starts
// with one and a query decodes only its ranges; at 1M (15 a prefix) it
// decodes some 30 entries before each range instead of 64. A restart point
// costs its full entry (64 bits against about 47 coded), a one-byte gap
// from the one before and a two-byte offset: at one per 48 entries, 0.75
// bits per entry, against format 3's 0.22 at one per 128 (issue 6's
// budget of 3 bits over the floor had 0.7 left: TestBoltSpaceNearFloor).
//
// Format 4's restart section: the count r (2 bytes), then r records of
// the gap in entries from the restart point before (or the block's first
// entry), 1 byte, and 2 bytes: the top bit set when the restart point
// begins a prefix range, the other 15 the bit offset in the stream (a
// block's stream is under 4 KiB). A query for a prefix range starts from
// the last restart point at or below the range's first value, or from the
// one that begins the range (its value is above that, but every entry
// before it is in a lower range). Format 3's: r (1 byte, (n-1)/128), then
// r offsets of 2 bytes.

const (
	minRestartGap = 48
	maxRestartGap = 255 // the gap is one byte
)

// restartRule says where the blocks of one table put restart points.
type restartRule struct {
	v4  bool // format 4, else 3
	pre int  // the table's prefix bits (format 4)
}

// restartRule returns table t's rule in x's storage format.
func (x *BoltIndex) restartRule(t int) restartRule {
	return restartRule{v4: x.format >= 4, pre: x.layout.PrefixBits(t)}
}

// at reports whether entry i > 0 of a block is a restart point, last being
// the one before (0, the block's first entry, if none) and h the position
// of the first bit where entry i differs from entry i-1.
func (r restartRule) at(i, last int, h uint) bool {
	if !r.v4 {
		return i%restartEvery == 0
	}
	g := i - last
	return g >= maxRestartGap || g >= minRestartGap && int(h) < r.pre
}

// sectionBytes returns the bytes of a restart section listing nr points.
func (r restartRule) sectionBytes(nr int) int {
	if !r.v4 {
		return 1 + 2*nr
	}
	return 2 + 3*nr
}

// parseRestarts parses the restart section of a block of b.n entries at
// the start of v, sets b's restart fields and returns the section's bytes.
func (b *block) parseRestarts(v []byte, v4 bool) (int, error) {
	if !v4 {
		nr := (b.n - 1) / restartEvery
		if len(v) < 1+2*nr || int(v[0]) != nr {
			return 0, fmt.Errorf("corrupt block: restart points for %d entries", b.n)
		}
		b.restarts, b.nr = v[1:1+2*nr], nr
		return 1 + 2*nr, nil
	}
	if len(v) < 2 {
		return 0, fmt.Errorf("corrupt block: no restart section")
	}
	nr := int(binary.BigEndian.Uint16(v))
	if len(v) < 2+3*nr {
		return 0, fmt.Errorf("corrupt block: %d restart points in %d bytes", nr, len(v)-2)
	}
	rs := v[2 : 2+3*nr]
	at := 0
	for j := range nr {
		if at += int(rs[3*j]); rs[3*j] == 0 || at >= b.n {
			return 0, fmt.Errorf("corrupt block: restart point %d at entry %d of %d", j, at, b.n)
		}
	}
	b.restarts, b.nr, b.v4 = rs, nr, true
	return 2 + 3*nr, nil
}

// restartCursor is a decoder's next restart point in a block: number j,
// at entry next (the block's n past the last).
type restartCursor struct{ j, next int }

// restartAt returns the cursor on restart point j, the one before being
// at entry prev (0 for j = 0).
func (b *block) restartAt(j, prev int) restartCursor {
	switch {
	case j >= b.nr:
		return restartCursor{j, b.n}
	case b.v4:
		return restartCursor{j, prev + int(b.restarts[3*j])}
	default:
		return restartCursor{j, (j + 1) * restartEvery}
	}
}

// firstRestart returns the cursor on b's first restart point.
func (b *block) firstRestart() restartCursor { return b.restartAt(0, 0) }

// after returns the cursor on the restart point after rc's.
func (b *block) after(rc restartCursor) restartCursor { return b.restartAt(rc.j+1, rc.next) }

// rangeStartFlag marks, in a format 4 restart record's offset, a restart
// point that begins a prefix range.
const rangeStartFlag = 0x8000

// restartOff returns the bit offset of restart point j in b's stream.
func (b *block) restartOff(j int) uint {
	if b.v4 {
		return uint(binary.BigEndian.Uint16(b.restarts[3*j+1:]) &^ rangeStartFlag)
	}
	return uint(binary.BigEndian.Uint16(b.restarts[2*j:]))
}

// startFrom reports whether a decoder looking for the entries >= lo may
// start at restart point j, whose value is v: when v <= lo, or when the
// point begins a prefix range no higher than lo's (every entry before it
// is in a lower range, so below lo).
func (b *block) startFrom(j int, v, lo uint64) bool {
	if v <= lo {
		return true
	}
	return b.v4 && binary.BigEndian.Uint16(b.restarts[3*j+1:])&rangeStartFlag != 0 &&
		v>>(64-b.pre) <= lo>>(64-b.pre)
}

// restartPoints returns the entries of es (a block's) that rule makes
// restart points.
func restartPoints(es []entry, rule restartRule) []int {
	var at []int
	last := 0
	for i := 1; i < len(es); i++ {
		if rule.at(i, last, uint(bits.LeadingZeros64(es[i-1].p^es[i].p))) {
			at = append(at, i)
			last = i
		}
	}
	return at
}
