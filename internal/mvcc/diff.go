package mvcc

import (
	"runtime"
	"sort"
)

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
// what fn's values need, allocates nothing. While the table offers Diff
// its change log (LogForDiff), two snapshots of versions taken since the
// writer began logging are compared through the log instead, in O(Stores
// between them), when there are few enough of those (see viaLog); a Diff
// that walks the slots then asks the writer to begin. Snapshots of two different
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
	if d.same && d.viaLog() {
		return
	}
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
		is, has, _, ver := b.t.heldAt(b.arr, sl, w, b.ver)
		if d.same && ver == 0 || !d.same && !has {
			continue
		}
		k := key[K](sl, w)
		var was raw
		var had bool
		switch {
		case a.snapshot == nil:
		case sameArr:
			was, had, _, _ = a.t.heldAt(a.arr, sl, w, a.ver)
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
		was, had, _, _ := a.t.heldAt(a.arr, sl, w, a.ver)
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

// logShare bounds the log entries viaLog reads: at most the slots of the
// newer array over logShare. Each entry costs two lookups at random, where
// the walk reads the slots in order. Tests set it to 0, for no bound.
var logShare = 128

// onLogDiff, when not nil, is called by each Diff that viaLog answers.
var onLogDiff func()

// viaLog gives the keys that differ between a and b, of one table and a
// older, from the table's change log (see Table.LogForDiff), and reports
// whether it did: it does when the log holds every change after a's
// version, and not too many entries up to b's (see logShare). An entry
// up to b's version gives its key once, at the entry that wrote b's
// value; a key that b's array lacks (deleted, and dropped when the table
// grew) once as well, as deleted if a had it.
//
// dir is read before from, which the writer raises before it publishes a
// dir without the blocks it dropped, and zeroes before it lets go of dir:
// if from says the log reaches back to a, so does dir. Blocks are never
// changed once their entries are counted, so a dir the writer has since
// replaced reads as it did; it holds every change up to b's version,
// since a Store records its entry before a snapshot of its version can be
// taken.
func (d *differ[K, V]) viaLog() bool {
	l := &d.b.t.log
	dp := l.dir.Load()
	from := l.from.Load()
	lo, hi := d.a.ver, d.b.ver
	if dp == nil || from == 0 {
		l.ask() // the writer is not logging: the next Diff may read the log
		return false
	}
	if lo+1 < from {
		return false
	}
	dir := *dp
	// Start in the last block whose first entry is at or before lo.
	j := sort.Search(len(dir), func(j int) bool {
		c := dir[j]
		return c.n.Load() == 0 || c.e[0].Ver > lo
	})
	j = max(j-1, 0)
	// At most this many entries from block j on: every block but the
	// last is full.
	entries := (len(dir)-1-j)*chunkSize + int(dir[len(dir)-1].n.Load())
	if logShare > 0 && entries > len(d.b.arr.slots)/logShare {
		return false
	}
	if !l.read.Load() {
		l.read.Store(true) // the log is read: the writer goes on logging
	}
	if onLogDiff != nil {
		onLogDiff()
	}
	var r run[K]
	var lost map[K]struct{}
	for _, c := range dir[j:] {
		n := c.n.Load()
		for i := range n {
			e := &c.e[i]
			if e.Ver <= lo {
				continue
			}
			if e.Ver > hi {
				return true
			}
			is, has, ver := d.b.lookup(e.Key)
			switch {
			case ver == 0:
				// Not in b's array: deleted, and dropped when the
				// table grew. Given once, whatever its entries.
				if lost == nil {
					lost = map[K]struct{}{}
				}
				if _, dup := lost[e.Key]; dup {
					continue
				}
				lost[e.Key] = struct{}{}
			case ver != e.Ver || !r.add(e.Ver, e.Key):
				continue // another entry wrote b's value, or gave the key already
			}
			was, had, _ := d.a.lookup(e.Key)
			if had != has || has && was != is {
				if !d.give(e.Key, was, had, is, has) {
					return true
				}
			}
		}
	}
	return true
}
