package hamt

import (
	"testing"
	"unsafe"
)

// TestReviewInPlaceWordIsAligned checks that every value a Live map's writer
// replaces with an atomic 64-bit store (and Get reads with an atomic 64-bit
// load) is 8-byte aligned. complex64 has shapeWord but only 4-byte
// alignment: next to a 4-byte key, the value sits at 4 mod 8, which faults
// on arm64 (LDAR/STLR need natural alignment), panics on 386/arm
// ("unaligned 64-bit atomic operation"), and on amd64 is not atomic when it
// straddles a cache line.
func TestReviewInPlaceWordIsAligned(t *testing.T) {
	var l Live[int32, complex64]
	for i := range int32(200) {
		c := l.Find(i)
		c.Set(complex(float32(i), 0), uint64(i+1))
	}
	for i := range int32(200) {
		c := l.Find(i)
		n := c.nodes[c.depth]
		if n.owner != c.v.epoch || shapeOf[complex64]() == shapeOther {
			continue // would be copied, not stored in place
		}
		p := uintptr(unsafe.Pointer(&entryAt(n.ents, c.pos).val))
		if p%8 != 0 {
			t.Fatalf("key %d: the value the writer stores in place with atomic.StoreUint64 is at %#x, not 8-byte aligned (shape %d, align %d)",
				i, p, shapeOf[complex64](), unsafe.Alignof(complex64(0)))
		}
	}
}
