package watchable

import "testing"

// TestReplaceOfNewKeysDeletesFirst re-lists a map with keys it has never
// held, as many as it holds: Replace must delete the old keys before it
// adds the new ones, as a Batch that deletes and then stores does, so that
// the table does not grow to hold both. It also checks the contents.
func TestReplaceOfNewKeysDeletesFirst(t *testing.T) {
	const n = 50_000
	old := make(map[int]int, n)
	renamed := make(map[int]int, n)
	for i := range n {
		old[i] = i
		renamed[n+i] = i
	}
	var replaced, batched Map[int, int]
	replaced.Replace(old)
	batched.Replace(old)
	replaced.Replace(renamed)
	batched.Batch(func(b *Batch[int, int]) {
		for k := range old {
			b.Delete(k)
		}
		for k, v := range renamed {
			b.Store(k, v)
		}
	})
	if got, want := replaced.tab.Slots(), batched.tab.Slots(); got > want {
		t.Errorf("after a Replace of %d new keys for %d old ones the table has %d slots; deleting first makes %d", n, n, got, want)
	}
	if got := replaced.Len(); got != n {
		t.Fatalf("the map has %d entries, want %d", got, n)
	}
	for k, v := range renamed {
		if got, ok := replaced.Load(k); !ok || got != v {
			t.Fatalf("Load(%d) = %d, %v; want %d", k, got, ok, v)
		}
	}
	for k := range old {
		if _, ok := replaced.Load(k); ok {
			t.Fatalf("old key %d is still there", k)
		}
	}
}
