package mvcc

import "testing"

type nodeID int32

// TestIntegerKeysOfEveryWidth stores every key of an 8-bit type, and a
// spread of a named 32-bit one, and reads each back: a table hashes an
// integer key by its bits (keyhash.IntBits), which must hold all of them.
func TestIntegerKeysOfEveryWidth(t *testing.T) {
	small := New[int8, uint64](0)
	for k := -128; k < 128; k++ {
		small.Store(int8(k), uint64(k+1000))
	}
	for k := -128; k < 128; k++ {
		if v, ok := small.Load(int8(k)); !ok || v != uint64(k+1000) {
			t.Fatalf("int8 key %d: %d, %v", k, v, ok)
		}
	}
	named := New[nodeID, uint64](0)
	for i := range 5000 {
		named.Store(nodeID(i*7919-20000), uint64(i))
	}
	for i := range 5000 {
		if v, ok := named.Load(nodeID(i*7919 - 20000)); !ok || v != uint64(i) {
			t.Fatalf("nodeID key %d: %d, %v", i*7919-20000, v, ok)
		}
	}
	if _, ok := named.Load(nodeID(1)); ok {
		t.Fatal("a key never stored is found")
	}
}

// TestIntegerKeysHashWithoutAllocating checks that a Store and a Load of
// an integer key, of a named type too, allocate nothing: with the purego
// build tag, which CI runs this package with, maphash.Comparable would
// allocate on every call.
func TestIntegerKeysHashWithoutAllocating(t *testing.T) {
	tb := New[nodeID, uint64](0)
	// Keys of 256 and over: an interface holding a smaller integer
	// needs no allocation, and would hide maphash's.
	key := func(i int) nodeID { return nodeID(1000 + 1000*(i%100)) }
	for i := range 100 {
		tb.Store(key(i), uint64(i))
	}
	i := 0
	n := testing.AllocsPerRun(200, func() {
		k := key(i)
		tb.Store(k, uint64(i))
		tb.Load(k)
		i++
	})
	if n != 0 {
		t.Errorf("a Store and a Load of an integer key allocate %v times", n)
	}
}
