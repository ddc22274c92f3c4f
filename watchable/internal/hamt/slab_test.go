package hamt

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// slabItems returns n items over about 3n/4 distinct string keys, some set
// twice, with the seeded hash.
func slabItems(n int) []Item[string, int] {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	items := make([]Item[string, int], n)
	for i := range items {
		k := fmt.Sprint("key-", r.IntN(n*3/4))
		items[i] = Item[string, int]{Key: k, Hash: Hash(k), Val: i}
	}
	return items
}

// TestFillInSlabs fills past slabFill and wants the trie that Sets make,
// built from far fewer allocations than it has nodes.
func TestFillInSlabs(t *testing.T) {
	items := slabItems(slabFill + slabFill/2)
	fill := Map[string, int]{}.Txn()
	fill.Fill(items, nil)
	set := Map[string, int]{}.Txn()
	for _, it := range items {
		set.SetHashedUnless(it.Key, it.Hash, it.Val, nil)
	}
	got, want := fill.Commit(), set.Commit()
	if err := invariants(got); err != nil {
		t.Fatal(err)
	}
	if !sameShape(got, want) || !slices.Equal(inOrder(got), inOrder(want)) {
		t.Fatal("Fill in slabs made another trie than Sets")
	}

	nodes := 0
	var count func(*node[string, int])
	count = func(x *node[string, int]) {
		nodes++
		for _, c := range x.children() {
			count(c)
		}
	}
	count(got.root)
	allocs := testing.AllocsPerRun(3, func() {
		tx := Map[string, int]{}.Txn()
		tx.Fill(items, nil)
	})
	// One allocation per node would be nodes or more; slabs of 4 KiB hold
	// tens of blocks each.
	if allocs > float64(nodes)/8 {
		t.Fatalf("Fill of %d items (%d nodes) allocated %v times, want far fewer than one per node", len(items), nodes, allocs)
	}
}

// TestSlabFilledChanges changes a trie filled in slabs, both in place (the
// Txn that filled it owns its nodes) and by copying (a Txn of the
// committed map), and wants each change right and the committed map
// untouched by the later Txn: blocks that share an array are still
// separate nodes.
func TestSlabFilledChanges(t *testing.T) {
	items := slabItems(slabFill + 1000)
	tx := Map[string, int]{}.Txn()
	tx.Fill(items, nil)
	model := map[string]int{}
	for _, it := range items {
		model[it.Key] = it.Val
	}
	r := rand.New(rand.NewPCG(5, 6))
	change := func(tx *Txn[string, int], model map[string]int) {
		for i := range 5000 {
			k := fmt.Sprint("key-", r.IntN(len(items)))
			if r.IntN(3) == 0 {
				tx.Delete(k)
				delete(model, k)
			} else {
				tx.Set(k, -i)
				model[k] = -i
			}
		}
	}
	change(tx, model) // in place
	first := tx.Commit()
	checkMap(t, first, model)
	if err := invariants(first); err != nil {
		t.Fatal(err)
	}

	before := maps.Clone(model)
	later := first.Txn()
	change(later, model) // copying
	checkMap(t, later.Commit(), model)
	checkMap(t, first, before)
}
