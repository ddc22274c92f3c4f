package hamt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// keepCall is one call of a keep function: the item held and the later one.
type keepCall struct{ held, later int }

// TestFillMatchesSets fills a Txn and sets the same items one by one into
// another, under every degenerate hash, with keys set several times and a
// keep that keeps some of them, and wants the same trie (down to the order
// of collision lists), the same size and the same questions asked of keep.
func TestFillMatchesSets(t *testing.T) {
	for _, hf := range hashes {
		for _, n := range []int{1, 2, 3, 33, 1000, 20000} {
			t.Run(fmt.Sprintf("%s/n=%d", hf.name, n), func(t *testing.T) {
				useHash(t, hf.f)
				r := rand.New(rand.NewPCG(uint64(n), 7))
				items := make([]Item[int, int], n)
				for i := range items {
					k := r.IntN(n/2 + 1) // about half the keys are set again
					items[i] = Item[int, int]{Key: k, Hash: Hash(k), Val: i}
				}
				keeps := func(held, later int) bool { return (held+later)%3 == 0 }

				var filledCalls []keepCall
				fill := Map[int, int]{}.Txn()
				fill.Fill(items, func(held, later int) bool {
					filledCalls = append(filledCalls, keepCall{held, later})
					return keeps(held, later)
				})
				var setCalls []keepCall
				set := Map[int, int]{}.Txn()
				for i, it := range items {
					set.SetHashedUnless(it.Key, it.Hash, it.Val, func(old int) bool {
						setCalls = append(setCalls, keepCall{old, i}) // values are indices
						return keeps(old, i)
					})
				}
				if fill.Len() != set.Len() {
					t.Fatalf("Fill made %d entries, Sets %d", fill.Len(), set.Len())
				}
				got, want := fill.Commit(), set.Commit()
				if err := invariants(got); err != nil {
					t.Fatal(err)
				}
				if !sameShape(got, want) {
					t.Fatal("Fill made another trie than Sets")
				}
				if !slices.Equal(inOrder(got), inOrder(want)) {
					t.Fatal("Fill's entries are in another order than Sets'")
				}
				byPair := func(a, b keepCall) int {
					if a.held != b.held {
						return a.held - b.held
					}
					return a.later - b.later
				}
				slices.SortFunc(filledCalls, byPair)
				slices.SortFunc(setCalls, byPair)
				if !slices.Equal(filledCalls, setCalls) {
					t.Fatalf("keep asked %d times by Fill, %d by Sets, or about other items", len(filledCalls), len(setCalls))
				}
			})
		}
	}
}

// inOrder returns m's entries in the order All yields them.
func inOrder[K comparable, V any](m Map[K, V]) []entry[K, V] {
	var es []entry[K, V]
	for k, v := range m.All() {
		es = append(es, entry[K, V]{k, v})
	}
	return es
}

// TestFillNilKeep wants the last value of a key set again when keep is nil.
func TestFillNilKeep(t *testing.T) {
	items := []Item[string, int]{{"a", Hash("a"), 1}, {"b", Hash("b"), 2}, {"a", Hash("a"), 3}}
	tx := Map[string, int]{}.Txn()
	tx.Fill(items, nil)
	checkMap(t, tx.Commit(), map[string]int{"a": 3, "b": 2})
}

// TestFillOwnsItsNodes wants every node Fill made tagged with the Txn, so
// that the Txn's later changes edit them in place, and those changes to
// be right.
func TestFillOwnsItsNodes(t *testing.T) {
	const n = 5000
	items := make([]Item[int, int], n)
	for i := range items {
		items[i] = Item[int, int]{Key: i, Hash: Hash(i), Val: i}
	}
	tx := Map[int, int]{}.Txn()
	tx.Fill(items, nil)
	var foreign int
	var visit func(*node[int, int])
	visit = func(x *node[int, int]) {
		if x.owner != tx.own {
			foreign++
		}
		for _, c := range x.children() {
			visit(c)
		}
	}
	visit(tx.root)
	if foreign != 0 {
		t.Fatalf("%d nodes of the filled trie are not the Txn's", foreign)
	}
	if allocs := testing.AllocsPerRun(100, func() { tx.Set(17, -17) }); allocs != 0 {
		t.Fatalf("overwriting a filled key allocated %v times, want 0 (in place)", allocs)
	}
	tx.Set(n, n)
	tx.Delete(3)
	want := map[int]int{}
	for i := range n + 1 {
		want[i] = i
	}
	want[17] = -17
	delete(want, 3)
	checkMap(t, tx.Commit(), want)
}

// TestFillNeedsAnEmptyTxn wants Fill of a Txn that holds entries to panic
// and leave them as they were.
func TestFillNeedsAnEmptyTxn(t *testing.T) {
	tx := Map[int, int]{}.Set(1, 1).Txn()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Fill of a Txn that is not empty did not panic")
			}
		}()
		tx.Fill([]Item[int, int]{{2, Hash(2), 2}}, nil)
	}()
	checkMap(t, tx.Commit(), map[int]int{1: 1})
}

// TestFillEmpty wants Fill of no items to leave the Txn empty.
func TestFillEmpty(t *testing.T) {
	tx := Map[int, int]{}.Txn()
	tx.Fill(nil, nil)
	if m := tx.Commit(); m.Len() != 0 || m.root != nil {
		t.Fatalf("Fill of nothing made a map of %d entries", m.Len())
	}
}
