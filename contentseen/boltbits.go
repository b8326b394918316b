package contentseen

import "encoding/binary"

// bitWriter appends bits, most significant first, to a byte slice.
type bitWriter struct {
	b   []byte
	acc uint64 // pending bits, left-aligned
	n   uint   // pending bits in acc, < 8 between calls
}

// write appends the low k bits of v (k <= 64).
func (w *bitWriter) write(v uint64, k uint) {
	for k > 0 {
		take := min(k, 64-w.n)
		bits := v >> (k - take)
		if take < 64 {
			bits &= 1<<take - 1
		}
		w.acc |= bits << (64 - w.n - take)
		w.n += take
		k -= take
		for w.n >= 8 {
			w.b = append(w.b, byte(w.acc>>56))
			w.acc <<= 8
			w.n -= 8
		}
	}
}

// flush writes the last partial byte, padded with zeros, and returns the
// bytes.
func (w *bitWriter) flush() []byte {
	if w.n > 0 {
		w.b = append(w.b, byte(w.acc>>56))
		w.acc, w.n = 0, 0
	}
	return w.b
}

// bitReader reads bits, most significant first. Past the end of its bytes
// it reads zeros, so a corrupt block decodes to wrong values (which the
// callers' checks catch) but never reads out of bounds.
type bitReader struct {
	b   []byte
	pos int    // next byte of b to load
	acc uint64 // unread bits, left-aligned
	n   uint   // unread bits in acc
}

// refill makes at least 56 bits available.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.b) {
		// Load 8 bytes and keep the whole ones that fit; the bits of the
		// byte that does not fit are ORed in again by the next refill with
		// the same values.
		r.acc |= binary.BigEndian.Uint64(r.b[r.pos:]) >> r.n
		r.pos += int(63-r.n) >> 3
		r.n |= 56
		return
	}
	for r.n <= 56 {
		var c byte
		if r.pos < len(r.b) {
			c = r.b[r.pos]
		}
		r.pos++
		r.acc |= uint64(c) << (56 - r.n)
		r.n += 8
	}
}

// read returns the next k bits (k <= 64).
func (r *bitReader) read(k uint) uint64 {
	if k > 32 {
		hi := r.read(k - 32)
		return hi<<32 | r.read(32)
	}
	if r.n < k {
		r.refill()
	}
	v := r.acc >> (64 - k) // k == 0: a shift by 64 gives 0
	r.acc <<= k
	r.n -= k
	return v
}
