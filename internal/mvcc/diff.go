package mvcc

import "runtime"

// Same reports whether s and o are snapshots of one table. A zero
// Snapshot is of no table: Same is false when either is zero.
func (s Snapshot[K, V]) Same(o Snapshot[K, V]) bool {
	return s.snapshot != nil && o.snapshot != nil && s.t == o.t
}

// Diff calls fn once with each key whose presence or value differs
// between from and to: with its value at from (had false: the key is not
// there) and at to (has false: it is not there), until fn returns false.
// It keeps no state, unlike a Cursor: the two may be any snapshots of one
// table, in either order (to older than from gives the changes undone),
// and a zero Snapshot is empty, so that from a zero one every key of to
// is given as added, and to a zero one every key of from as removed.
//
// Values are compared by the word a slot keeps, as Cursor.Changes
// compares them: a value of one word (an integer, a float, a pointer) by
// that word, so that a key stored again with the same word is unchanged;
// any other value by its box, which every Store allocates anew, so that
// such a key stored again is given even if the value is equal. The caller
// filters those with its own comparison.
//
// For two snapshots of one table it walks the slots of the newer one's
// array once, and passes over a slot last written at or before the older
// one's version after reading its word; when the table grew between them
// it also walks the older one's array for the keys that the growth
// dropped, unless the keys counted in the first walk already account for
// all of the older one's Len. It costs O(slots of the arrays) and, beyond
// what fn's values need, allocates nothing. Snapshots of two different
// tables are compared whole: each key of either is looked up in the
// other.
func Diff[K comparable, V any](from, to Snapshot[K, V], fn func(k K, old V, had bool, new V, has bool) bool) {
	d := differ[K, V]{fn: fn}
	switch {
	case from.snapshot == nil && to.snapshot == nil:
		return
	case from.snapshot == nil || to.snapshot == nil, !from.Same(to):
		// Walk to and look each key up in from, or walk the one that
		// is not zero.
		d.a, d.b = from, to
		if to.snapshot == nil {
			d.a, d.b, d.flip = to, from, true
		}
	case from.ver == to.ver:
		return // one version of one table: the same contents
	default:
		d.same = true
		d.a, d.b = from, to
		if from.ver > to.ver {
			d.a, d.b, d.flip = to, from, true
		}
	}
	d.run()
	runtime.KeepAlive(from.snapshot)
	runtime.KeepAlive(to.snapshot)
}

// differ is one call of Diff. It walks b's array and looks its keys up in
// a; then, if a has keys the walk did not meet, a's array for them.
type differ[K comparable, V any] struct {
	// a and b are the older and the newer snapshot of one table (same),
	// or from and to of two tables, or the zero Snapshot and the other.
	a, b Snapshot[K, V]
	same bool // a and b are of one table, and a's version is older
	flip bool // a is to: fn takes the values the other way round
	fn   func(k K, old V, had bool, new V, has bool) bool
}

// give calls fn with k's value at a, was, and at b, is, in the order
// Diff's caller gave its snapshots, and returns what fn returns.
func (d *differ[K, V]) give(k K, was raw, had bool, is raw, has bool) bool {
	var av, bv V
	if had {
		av = d.a.t.fromRaw(was)
	}
	if has {
		bv = d.b.t.fromRaw(is)
	}
	if d.flip {
		return d.fn(k, bv, has, av, had)
	}
	return d.fn(k, av, had, bv, has)
}

// run gives every key that differs between a and b.
//
// Within one table, a slot of b's array whose word has a version at or
// before a's holds the last write to its key up to b's version (later
// writes up to b's version would have moved the word on, in this array or
// in the one it was grown from), so the key is the same in both. Any
// other slot is read at b's version (the list of older values gives a
// word newer than b) and its key looked up at a's, in the same slot when
// the two share their array. A slot that holds no write up to b's version
// (its key came later: at gives version 0) is left to the walk of a's
// array, where the key is looked up in b again, with the same answer
// whatever the writer did meanwhile, since b's older values are kept
// while b is held. That walk is needed only when the table grew between
// the two, and stops once it has given as many keys as a's Len leaves
// unaccounted for by the first walk.
func (d *differ[K, V]) run() {
	b := d.b
	a := d.a
	sameArr := a.snapshot != nil && a.arr == b.arr
	seen := 0 // keys of a met in the walk of b's array
	for i := range b.arr.slots {
		sl := &b.arr.slots[i]
		w := sl.word.Load()
		if w == 0 {
			continue
		}
		if d.same && w&verMask <= a.ver {
			if w&deleted == 0 {
				seen++
			}
			continue
		}
		is, has, _, ver := b.t.at(b.arr, sl, w, b.ver)
		if d.same && ver == 0 || !d.same && !has {
			continue
		}
		k := key[K](sl, w)
		var was raw
		var had bool
		switch {
		case a.snapshot == nil:
		case sameArr:
			was, had, _, _ = a.t.at(a.arr, sl, w, a.ver)
		default:
			was, had, _ = a.lookup(k)
		}
		if had {
			seen++
		}
		if (had != has || had && was != is) && !d.give(k, was, had, is, has) {
			return
		}
	}
	if a.snapshot == nil || sameArr || seen >= a.size {
		return
	}
	// The keys of a the walk did not meet: in b's array, they have no
	// write up to b's version (one table: the growth dropped them), or
	// are not there at all (two tables).
	left := a.size - seen
	for i := range a.arr.slots {
		sl := &a.arr.slots[i]
		w := sl.word.Load()
		if w == 0 {
			continue
		}
		was, had, _, _ := a.t.at(a.arr, sl, w, a.ver)
		if !had {
			continue
		}
		k := key[K](sl, w)
		if _, has, ver := b.lookup(k); d.same && ver != 0 || !d.same && has {
			continue
		}
		if !d.give(k, was, true, raw{}, false) {
			return
		}
		if left--; left == 0 {
			return
		}
	}
}
