package mvcc

import (
	"fmt"
	"testing"
)

// TestFindHashedFindsWhatFindFinds checks that a Ref from FindHashed, with
// the hash Prefetch returned or with 0, is Find's: for keys there and
// not, and for hashes taken before the table grew under them.
func TestFindHashedFindsWhatFindFinds(t *testing.T) {
	tb := New[string, uint64](0)
	key := func(i int) string { return fmt.Sprint("k", i) }
	hashes := map[string]uint64{}
	tb.Store(key(0), 0)
	first := len(tb.meta.Load().arr.slots)
	for i := range 2000 {
		k := key(i)
		hashes[k] = tb.Prefetch(k) // before the growths that follow
		tb.Store(k, uint64(i))
	}
	if n := len(tb.meta.Load().arr.slots); n <= first {
		t.Fatalf("the table did not grow: %d slots, then %d", first, n)
	}
	for i := range 3000 {
		k := key(i)
		var want Ref[string, uint64]
		tb.Find(k, &want)
		for _, h := range []uint64{hashes[k], tb.Prefetch(k), 0} {
			var got Ref[string, uint64]
			tb.FindHashed(k, h, &got)
			if got != want {
				t.Fatalf("FindHashed(%s, %#x) = %+v; Find gives %+v", k, h, got, want)
			}
		}
		if v, ok := want.Value(); ok != (i < 2000) || (ok && v != uint64(i)) {
			t.Fatalf("%s = %d, %v", k, v, ok)
		}
	}
}

// TestLarge checks the size from which a table is Large.
func TestLarge(t *testing.T) {
	var empty Table[string, int]
	if empty.Large() {
		t.Error("a table not set up is Large")
	}
	tb := New[int, int](0)
	for i := 0; !tb.Large(); i++ {
		if i > 2*largeSlots {
			t.Fatalf("%d keys and not Large", i)
		}
		tb.Store(i, i)
	}
	if n := len(tb.meta.Load().arr.slots); n < largeSlots {
		t.Errorf("Large with %d slots, fewer than %d", n, largeSlots)
	}
}
