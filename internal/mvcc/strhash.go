package mvcc

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// hashKeys are the random constants strHash mixes short keys with, drawn
// afresh in each process, as maphash's seed is.
var hashKeys = [3]uint64{rand.Uint64() | 1, rand.Uint64(), rand.Uint64() | 1}

// strHash is the hash of a string key, as good as maphash.String's for
// the table and faster for the short keys most maps have: a key of up to
// 16 bytes is read in at most two words, which hold every byte of it, and
// mixed by two 128-bit multiplications with random constants, where
// maphash.String takes three calls to reach the runtime's hash. Longer
// keys go to maphash.
func strHash(s string) uint64 {
	n := len(s)
	if n > 16 {
		return maphash.String(seed, s)
	}
	b := unsafe.Slice(unsafe.StringData(s), n)
	var x, y uint64
	switch {
	case n >= 8: // the first and the last eight bytes, overlapping below 16
		x = binary.LittleEndian.Uint64(b)
		y = binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4: // the first and the last four
		x = uint64(binary.LittleEndian.Uint32(b))
		y = uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0: // one, two or three bytes: all of them
		x = uint64(b[0])<<16 | uint64(b[n/2])<<8 | uint64(b[n-1])
	}
	// The length goes into the second round: in the first, a short key's
	// words, which leave high bytes free, could cancel it.
	hi, lo := bits.Mul64(x^hashKeys[0], y^hashKeys[1])
	hi, lo = bits.Mul64(hi^lo^uint64(n), hashKeys[2])
	return hi ^ lo
}
