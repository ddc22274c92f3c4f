package hamt

import (
	"maps"
	"slices"
	"testing"
)

func TestTxnBasic(t *testing.T) {
	base := buildMap(slices.Collect(intRange(100)), func(k int) int { return k })
	tx := base.Txn()
	for i := range 50 {
		tx.Set(i, -i)
	}
	for i := 100; i < 150; i++ {
		tx.Set(i, i)
	}
	for i := 50; i < 60; i++ {
		if !tx.Delete(i) {
			t.Fatalf("Delete(%d) = false", i)
		}
	}
	if tx.Delete(1000) {
		t.Fatal("Delete of absent key = true")
	}
	if tx.Len() != 140 {
		t.Fatalf("Txn.Len = %d", tx.Len())
	}
	if v, ok := tx.Get(3); !ok || v != -3 {
		t.Fatalf("Txn.Get(3) = %v, %v", v, ok)
	}
	if _, ok := tx.Get(55); ok {
		t.Fatal("Txn.Get sees deleted key")
	}
	m := tx.Commit()

	want := map[int]int{}
	for i := range 150 {
		switch {
		case i < 50:
			want[i] = -i
		case i >= 60:
			want[i] = i
		}
	}
	checkMap(t, m, want)
	checkMap(t, base, maps.Collect(func(yield func(int, int) bool) {
		for i := range 100 {
			yield(i, i)
		}
	}))
	if !sameShape(m, buildMap(slices.Collect(maps.Keys(want)), func(k int) int { return want[k] })) {
		t.Fatal("Txn result differs in shape from a fresh build")
	}
}

func TestTxnWithoutChangesIsSame(t *testing.T) {
	base := Map[int, int]{}.Set(1, 1)
	tx := base.Txn()
	tx.Get(1)
	tx.Delete(2)
	if m := tx.Commit(); !m.Same(base) {
		t.Fatal("unchanged Txn committed a new version")
	}
}

func TestTxnFromEmptyToEmpty(t *testing.T) {
	tx := Map[int, int]{}.Txn()
	tx.Set(1, 1)
	tx.Set(2, 2)
	tx.Delete(1)
	tx.Delete(2)
	if m := tx.Commit(); m.Len() != 0 || !m.Same(Map[int, int]{}) {
		t.Fatal("Txn emptied to a non-zero Map")
	}
}

func TestTxnUseAfterCommitPanics(t *testing.T) {
	uses := map[string]func(*Txn[int, int]){
		"Get":    func(tx *Txn[int, int]) { tx.Get(1) },
		"Set":    func(tx *Txn[int, int]) { tx.Set(1, 1) },
		"Delete": func(tx *Txn[int, int]) { tx.Delete(1) },
		"Len":    func(tx *Txn[int, int]) { tx.Len() },
		"Commit": func(tx *Txn[int, int]) { tx.Commit() },
	}
	for name, use := range uses {
		t.Run(name, func(t *testing.T) {
			tx := Map[int, int]{}.Set(1, 1).Txn()
			tx.Commit()
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			use(tx)
		})
	}
}

// A committed map must not be changed by a later Txn started from it, even
// though that Txn edits nodes in place.
func TestTxnCommittedIsFrozen(t *testing.T) {
	tx := Map[int, int]{}.Txn()
	for i := range 1000 {
		tx.Set(i, i)
	}
	m1 := tx.Commit()
	want := toGoMap(m1)

	tx2 := m1.Txn()
	for i := range 1000 {
		tx2.Set(i, i+1)
		if i%3 == 0 {
			tx2.Delete(i)
		}
	}
	m2 := tx2.Commit()
	checkMap(t, m1, want)
	m3 := m1.Set(5, 50)
	checkMap(t, m1, want)
	if v, _ := m3.Get(5); v != 50 {
		t.Fatal("Set after Txn lost")
	}
	if v, _ := m2.Get(5); v != 6 {
		t.Fatal("second Txn lost")
	}
}

func TestTxnAllocatesLess(t *testing.T) {
	base := buildMap(slices.Collect(intRange(10000)), func(k int) int { return k })
	keys := slices.Collect(intRange(1000))
	viaSet := testing.AllocsPerRun(5, func() {
		m := base
		for _, k := range keys {
			m = m.Set(k+20000, k)
		}
	})
	viaTxn := testing.AllocsPerRun(5, func() {
		tx := base.Txn()
		for _, k := range keys {
			tx.Set(k+20000, k)
		}
		tx.Commit()
	})
	t.Logf("1000 inserts: %v allocs with Set, %v with Txn", viaSet, viaTxn)
	if viaTxn > viaSet*6/10 {
		t.Fatalf("Txn allocates %v times, Set %v", viaTxn, viaSet)
	}
}

// TestTxnReadsItsChanges checks that a Txn's Get sees its earlier Sets
// while the map it started from does not, on ordinary paths, on paths
// ending in collision nodes, on an empty Txn and with entries of size
// zero.
func TestTxnReadsItsChanges(t *testing.T) {
	run := func(t *testing.T) {
		base := buildMap(slices.Collect(intRange(200)), func(k int) int { return k })
		want := toGoMap(base)
		tx := base.Txn()
		for round := range 20 {
			for i := range 19 {
				k := (round*31 + i*7) % 260
				got, ok := tx.Get(k)
				w, had := want[k]
				if got != w || ok != had {
					t.Fatalf("Get(%d) = %d, %v; want %d, %v", k, got, ok, w, had)
				}
				tx.Set(k, -k-round)
				want[k] = -k - round
			}
		}
		m := tx.Commit()
		checkMap(t, m, want)
		if err := invariants(m); err != nil {
			t.Fatal(err)
		}
		checkMap(t, base, toGoMap(buildMap(slices.Collect(intRange(200)), func(k int) int { return k })))

		empty := Map[int, int]{}.Txn()
		empty.Set(1, 1)
		if v, ok := empty.Get(1); !ok || v != 1 {
			t.Fatalf("Get after Set on an empty Txn = %d, %v", v, ok)
		}
	}
	t.Run("spread", run)
	t.Run("collisions", func(t *testing.T) {
		useHash(t, func(k int) uint64 { return uint64(k % 3) })
		run(t)
	})
	t.Run("zero-size", func(t *testing.T) {
		type z struct{}
		tx := Map[z, z]{}.Set(z{}, z{}).Txn()
		if _, ok := tx.Get(z{}); !ok {
			t.Fatal("zero-size key not found")
		}
	})
}

// TestTxnCopiesSharedEntriesBeforeChange checks a Txn's own nodes that
// share their entries with the map it started from: changing a child does
// not copy the entries, changing an entry does, and the original map never
// changes.
func TestTxnCopiesSharedEntriesBeforeChange(t *testing.T) {
	// Key 1 sits alone at the root; 2 and 34 share the root's slot 2 and
	// so a child below it.
	useHash(t, func(k int) uint64 { return uint64(k) })
	m := buildMap([]int{1, 2, 34}, func(k int) int { return k })
	txn := m.Txn()
	txn.Set(2, -2)
	if txn.root.ents != m.root.ents {
		t.Fatalf("changing a child copied the root's entries")
	}
	txn.Set(34, -34) // the root is the Txn's now: edited in place
	if txn.root.ents != m.root.ents {
		t.Fatalf("changing a child of the Txn's own root copied its entries")
	}
	txn.Set(1, -1)
	if txn.root.ents == m.root.ents {
		t.Fatalf("a changed entry was written into the array the original map shares")
	}
	// With the root's entries its own now, the next change to them is
	// made in place, as before any sharing.
	ents := txn.root.ents
	txn.Set(1, -10)
	if txn.root.ents != ents {
		t.Fatalf("changing an entry of the Txn's own array copied it again")
	}
	got := txn.Commit()
	checkMap(t, m, map[int]int{1: 1, 2: 2, 34: 34})
	checkMap(t, got, map[int]int{1: -10, 2: -2, 34: -34})
}
