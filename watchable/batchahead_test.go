package watchable

import (
	"fmt"
	"testing"

	"github.com/switchyard-go/switchyard/internal/mvcc"
)

// written is the value of k in m's table as its writer sees it, inside a
// batch with the batch's writes (0 if there is none): Map.Load and the
// table's Load read the version published before the batch.
func written(m *Map[string, int], k string) int {
	var c mvcc.Ref[string, int]
	m.tab.Find(k, &c)
	v, _ := c.Value()
	return v
}

// TestLargeBatchesHoldStoresBack checks when a Batch holds its Stores
// back (see storesAhead): in a large map, for small keys and values; not
// in a small map, nor for values too large to copy in and out. The tests
// of batch_test.go rely on it to run their batches with Stores held back.
func TestLargeBatchesHoldStoresBack(t *testing.T) {
	const large = 1<<16 + 100 // a table of at least 65,536 slots
	var small, big Map[string, int]
	var wide Map[string, [8]int]
	big.Batch(func(b *Batch[string, int]) {
		for i := range large {
			b.Store(fmt.Sprint("k", i), i)
		}
	})
	wide.Batch(func(b *Batch[string, [8]int]) {
		for i := range large {
			b.Store(fmt.Sprint("k", i), [8]int{i})
		}
	})
	small.Store("k0", 0)
	if !big.tab.Large() || !wide.tab.Large() || small.tab.Large() {
		t.Fatalf("Large: %v, %v and %v; want the two maps of %d entries large and the one of one entry not", big.tab.Large(), wide.tab.Large(), small.tab.Large(), large)
	}

	big.Batch(func(b *Batch[string, int]) {
		for i := range aheadStores { // applied at once: see newBatch
			b.Store(fmt.Sprint("k", i), -i)
		}
		if b.ahead != nil {
			t.Fatalf("a batch holds back %d Stores of its first %d; want none", b.ahead.n, aheadStores)
		}
		if v := written(&big, "k1"); v != -1 {
			t.Errorf("the batch's first Stores are not in the table: k1 = %d", v)
		}
		b.Store("k0", -1)
		b.Store("new", -2)
		if b.ahead == nil || b.ahead.n != 2 {
			t.Fatalf("a batch into a large map holds back %v Stores; want 2", b.ahead)
		}
		if v := written(&big, "new"); v != 0 {
			t.Errorf("a Store held back is in the table already: new = %d", v)
		}
		if v, ok := b.Load("new"); v != -2 || !ok || b.ahead.n != 0 {
			t.Errorf("Load(new) = %d, %v with %d Stores held back; want -2, true and none", v, ok, b.ahead.n)
		}
		for i := range 3 * aheadStores {
			b.Store(fmt.Sprint("k", i), -i)
		}
		if b.ahead.n != aheadStores {
			t.Errorf("%d Stores held back after many; want %d", b.ahead.n, aheadStores)
		}
	})
	if big.ahead == nil || big.ahead.n != 0 {
		t.Fatalf("after the batch the map's Stores held back: %v; want none", big.ahead)
	}
	for _, w := range big.ahead.waiting {
		if w != (waitingStore[string, int]{}) {
			t.Fatalf("after the batch a Store held back is kept: %+v", w)
		}
	}
	if v, _ := big.Load("k1"); v != -1 || big.Len() != large+1 {
		t.Errorf("after the batch k1 = %d and Len = %d; want -1 and %d", v, big.Len(), large+1)
	}

	small.Batch(func(b *Batch[string, int]) {
		b.Store("k0", 1)
		if b.ahead != nil {
			t.Error("a batch into a small map holds Stores back")
		}
	})
	wide.Batch(func(b *Batch[string, [8]int]) {
		b.Store("k0", [8]int{1})
		if b.ahead != nil {
			t.Error("a batch of 64-byte values holds Stores back")
		}
	})
}

// TestPanickingBatchDropsStoresHeldBack panics with Stores held back: none
// is applied, then or by the next batch, and the map lets go of them.
func TestPanickingBatchDropsStoresHeldBack(t *testing.T) {
	const large = 1<<16 + 100
	var m Map[string, *int]
	m.Batch(func(b *Batch[string, *int]) {
		for i := range large {
			b.Store(fmt.Sprint("k", i), nil)
		}
	})
	rev := m.Revision()
	func() {
		defer func() { _ = recover() }()
		m.Batch(func(b *Batch[string, *int]) {
			v := 1
			for range aheadStores + 1 {
				b.Store("k0", &v)
			}
			b.Store("held", &v)
			if b.ahead == nil || b.ahead.n != 2 {
				t.Fatalf("the batch holds back %v Stores; want 2", b.ahead)
			}
			panic("with Stores held back")
		})
	}()
	for _, w := range m.ahead.waiting {
		if w.value != nil || m.ahead.n != 0 {
			t.Fatalf("after a panicking batch the map keeps a Store held back: %+v, %d held", w, m.ahead.n)
		}
	}
	m.Batch(func(b *Batch[string, *int]) { b.Store("after", nil) })
	if _, ok := m.Load("held"); ok || m.Revision() != rev+1 {
		t.Fatalf("after a panicking batch and another: held there %v, revision %d; want not there and %d", ok, m.Revision(), rev+1)
	}
	if v, _ := m.Load("k0"); v != nil {
		t.Fatalf("after a panicking batch k0 = %v, want nil", v)
	}
}

// TestWhenReplaceHoldsEntriesBack checks replaceAhead: a Replace holds its
// entries back (and TestLargeReplaceIsOneWriteAfterAnother tests that
// way) into a large map, or with enough entries to make one, of small
// keys and values.
func TestWhenReplaceHoldsEntriesBack(t *testing.T) {
	var empty, big Map[string, int]
	var wide Map[string, [8]int]
	entries := map[string]int{}
	for i := range largeReplace {
		entries[fmt.Sprint("k", i)] = i
	}
	big.Replace(entries)
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"an empty map, one entry", replaceAhead(&empty, 1), false},
		{"an empty map, largeReplace entries", replaceAhead(&empty, largeReplace), true},
		{"a large map, one entry", replaceAhead(&big, 1), true},
		{"64-byte values, largeReplace entries", replaceAhead(&wide, largeReplace), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: replaceAhead = %v; want %v", c.name, c.got, c.want)
		}
	}
	if !big.tab.Large() {
		t.Errorf("a map of largeReplace (%d) entries is not large", largeReplace)
	}
}
