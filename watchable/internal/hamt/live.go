package hamt

import (
	"sync/atomic"
	"unsafe"
)

// Live is the current version of a map: one writer at a time changes it,
// any number of goroutines read it without locks, and any of them may take
// an immutable snapshot of it (Freeze) in O(1).
//
// A persistent map pays for every change with a copy of the path from the
// root, because an older version may be in use. Live avoids that cost while
// nobody holds the current version: nodes that the current version created
// (its epoch) are changed in place, and only the first change after a
// snapshot copies a path, into a new version whose nodes are then the
// writer's to change in place in turn.
//
// Readers never wait for the writer, and never see a half-made change,
// because a change in place is always a single atomic store of one word:
// the pointer to a child (the new child being a fresh node, built before it
// becomes reachable), the root pointer, or an entry's value when it fits in
// a word (see shape). Values of other types are replaced by replacing the
// node that holds them. So a Get that runs concurrently with a change sees
// the map either before it or after it.
//
// A snapshot must never change afterwards, though, and a change in place
// may be under way when Freeze is called on another goroutine. The writer
// therefore announces each change in place in the version's status before
// making it, and Freeze marks the version frozen with a compare-and-swap on
// that status: if it finds a change announced, it makes that change's store
// itself (the store is idempotent, and the writer makes it too) and freezes
// the version with that change included. Once the status is frozen, the
// writer makes no further change in place to that version. Freeze never
// waits for the writer.
//
// One change may also be many stores, each of a final value into a word of
// its own (Live.Put: a batch of overwrites). A reader must see all of them
// or none, and seeing some would be possible, so the status says that such
// a change is under way, and a Get that sees it settles the version as
// Freeze does and makes the stores itself before it reads. It still never
// waits; it does at most the work of the change. The first change after
// that copies a path, as after any Freeze.
//
// The zero Live is empty and ready to use. A Live must not be copied after
// first use.
type Live[K comparable, V any] struct {
	cur atomic.Pointer[version[K, V]] // nil: empty, stamp 0

	// The writer's own state; readers never look at it.

	// seals counts the snapshots of the current version that the writer
	// handed out with Seal and has not taken back with Unseal. While it is
	// not zero, changes copy as they do after Freeze.
	seals int
}

// version is one version of a Live map's contents. Its nodes owned by epoch
// may be changed in place while its status is open; see Live.
type version[K comparable, V any] struct {
	root  unsafe.Pointer // *node[K, V]; read and written atomically
	size  atomic.Int64
	epoch uint64
	shape shape // V's, asked once per version rather than once per Get

	// state holds the version's stamp above statusBits bits of status:
	// statusOpen while changes in place are allowed, statusChanging while
	// the writer makes the change described in in, statusFrozen once
	// frozen, and statusSettled when a Freeze found the change in in under
	// way and froze the version with it. One word for both lets the
	// compare-and-swap that ends a change publish its stamp too: on amd64
	// every atomic store is a locked instruction, and a Store without
	// subscribers made four of them besides its mutex's.
	state atomic.Uint64
	in    intent
	// many points to the stores of a change announced with statusMany
	// (see Live.Put). A pointer rather than a slice: with three more words
	// the version would take the next size class, 112 bytes, and in some
	// processes half of all Stores then took a fifth longer.
	many *[]Put
}

// The values of a version's status, the low statusBits bits of its state.
const (
	statusOpen uint64 = iota
	statusChanging
	statusFrozen
	statusSettled

	// statusMany is set beside statusChanging, and kept when a Freeze
	// settles the version, while the change is several stores (Live.Put):
	// readers that see it finish the change before they read (see Get).
	statusMany uint64 = 1 << 2

	statusBits = 3
	statusMask = 1<<2 - 1
)

// packState returns the state holding stamp and status. Stamps count
// changes from zero, so the 62 bits left for them do not run out.
func packState(stamp, status uint64) uint64 { return stamp<<statusBits | status }

// intent is one change in place: a single store into a pointer or a word
// (or none, when only the stamp changes), and the size and stamp the
// version has after it. A change of many stores (statusMany) keeps them in
// the version's many.
type intent struct {
	Put
	size  int64
	stamp uint64
}

// apply makes the stores of the change announced in the state s. Making
// them twice, or on several goroutines at once, is harmless: each stores a
// final value into a word that nothing else writes meanwhile (see
// version.freeze).
func (v *version[K, V]) apply(s uint64) {
	v.in.apply()
	if s&statusMany != 0 {
		v.applyMany()
	}
}

func (v *version[K, V]) rootNode() *node[K, V] {
	return (*node[K, V])(atomic.LoadPointer(&v.root))
}

// begin announces the change in in, and reports false if the version is
// frozen (then nothing may be changed in place). Writer only.
func (v *version[K, V]) begin(in intent) bool {
	s := v.state.Load()
	if s&statusMask != statusOpen {
		return false
	}
	// No reader looks at v.in while the status is not changing.
	v.in = in
	return v.state.CompareAndSwap(s, s|statusChanging)
}

// applyMany makes the stores of a change announced with statusMany: a
// map of words without pointers makes them all in one loop (storeWords),
// others one Put.apply each.
func (v *version[K, V]) applyMany() {
	if v.shape == shapeWord {
		storeWords(*v.many)
		return
	}
	for i := range *v.many {
		(*v.many)[i].apply()
	}
}

// beginMany is begin for a change of many stores, the puts. Writer only.
func (v *version[K, V]) beginMany(in intent, puts *[]Put) bool {
	s := v.state.Load()
	if s&statusMask != statusOpen {
		return false
	}
	// No reader looks at v.in or v.many while the status is not changing.
	v.in, v.many = in, puts
	return v.state.CompareAndSwap(s, s|statusChanging|statusMany)
}

// finish makes the announced change and ends it. It reports whether the
// change ended without a Freeze settling it, in which case no other
// goroutine reads v.in again. Writer only.
func (v *version[K, V]) finish() bool {
	v.in.apply()
	if v.many != nil { // this change is a Live.Put
		v.applyMany()
	}
	if v.size.Load() != v.in.size { // an overwrite keeps it: spare the store
		v.size.Store(v.in.size)
	}
	s := v.state.Load()
	if s&statusMask != statusChanging || !v.state.CompareAndSwap(s, packState(v.in.stamp, statusOpen)) {
		// A Freeze settled the version with this change included; mark it
		// plainly frozen, so that later Freezes need not apply it again.
		v.state.Store(packState(v.in.stamp, statusFrozen))
		return false
	}
	return true
}

// freeze makes sure the version never changes again and returns its final
// contents. Any goroutine; it never waits.
func (v *version[K, V]) freeze() (Map[K, V], uint64) {
	for {
		s := v.state.Load()
		switch s & statusMask {
		case statusOpen:
			if v.state.CompareAndSwap(s, s&^statusMask|statusFrozen) {
				return Map[K, V]{root: v.rootNode(), size: int(v.size.Load())}, s >> statusBits
			}
		case statusFrozen:
			return Map[K, V]{root: v.rootNode(), size: int(v.size.Load())}, s >> statusBits
		case statusChanging:
			// A change is under way: settle the version with it. After
			// this compare-and-swap the writer will not touch v.in again.
			if v.state.CompareAndSwap(s, s&^statusMask|statusSettled) {
				v.apply(s)
				return Map[K, V]{root: v.rootNode(), size: int(v.in.size)}, v.in.stamp
			}
		case statusSettled:
			v.apply(s)
			return Map[K, V]{root: v.rootNode(), size: int(v.in.size)}, v.in.stamp
		}
	}
}

// Get returns the value stored for k in the current version. Any
// goroutine; it never waits.
func (l *Live[K, V]) Get(k K) (V, bool) {
	v := l.cur.Load()
	if v == nil {
		var zero V
		return zero, false
	}
	if v.state.Load()&statusMany != 0 {
		// A change of several words is under way: a Get that saw some
		// of them and missed others would break its atomicity, so make
		// them all first (see Live.Put).
		v.freeze()
	}
	n := v.rootNode()
	if n == nil {
		var zero V
		return zero, false
	}
	return n.get(k, hashOf(k), v.shape)
}

// Len returns the number of entries in the current version. Any goroutine.
func (l *Live[K, V]) Len() int {
	if v := l.cur.Load(); v != nil {
		return int(v.size.Load())
	}
	return 0
}

// Stamp returns the current version's stamp: a number the writer sets with
// each change (watchable uses it for the revision). Any goroutine.
func (l *Live[K, V]) Stamp() uint64 {
	if v := l.cur.Load(); v != nil {
		return v.state.Load() >> statusBits
	}
	return 0
}

// Freeze returns the current contents as an immutable Map, and their stamp,
// in O(1). Later changes copy what they change instead of changing it in
// place, so the Map never changes. Any goroutine; it never waits.
func (l *Live[K, V]) Freeze() (Map[K, V], uint64) {
	v := l.cur.Load()
	if v == nil {
		return Map[K, V]{}, 0
	}
	return v.freeze()
}

// Sealed is a snapshot the writer handed out with Seal.
type Sealed[K comparable, V any] struct {
	Map   Map[K, V]
	Stamp uint64
	v     *version[K, V]
}

// Seal returns the current contents and their stamp as Freeze does, for a
// snapshot the writer hands out but may take back: until a matching Unseal,
// changes copy as they do after Freeze. Writer only.
func (l *Live[K, V]) Seal() Sealed[K, V] {
	v := l.cur.Load()
	if v == nil {
		return Sealed[K, V]{}
	}
	l.seals++
	return Sealed[K, V]{Map: Map[K, V]{root: v.rootNode(), size: int(v.size.Load())}, Stamp: v.state.Load() >> statusBits, v: v}
}

// Unseal undoes a Seal of the current version, whose snapshot the writer
// took back before anyone could see it. Unsealing a snapshot of an older
// version does nothing: changes never reach those in place. Writer only.
func (l *Live[K, V]) Unseal(s Sealed[K, V]) {
	if s.v != nil && s.v == l.cur.Load() && l.seals > 0 {
		l.seals--
	}
}

// Txn starts a batch of changes based on the current version. Apply
// publishes it. Writer only.
func (l *Live[K, V]) Txn() *Txn[K, V] {
	v := l.cur.Load()
	if v == nil {
		return Map[K, V]{}.Txn()
	}
	return Map[K, V]{root: v.rootNode(), size: int(v.size.Load())}.Txn()
}

// Apply commits t, which Txn started and no other change has followed, and
// publishes its contents with the given stamp as a new version, whose nodes
// the Txn created are the writer's to change in place. Writer only.
func (l *Live[K, V]) Apply(t *Txn[K, V], stamp uint64) {
	own := t.own
	m := t.Commit()
	l.publish(m.root, m.size, stamp, own)
}

// Restamp changes the current version's stamp, and nothing else. Writer
// only.
func (l *Live[K, V]) Restamp(stamp uint64) {
	v := l.cur.Load()
	if v != nil && l.seals == 0 && v.begin(intent{size: v.size.Load(), stamp: stamp}) {
		v.finish()
		return
	}
	var root *node[K, V]
	var size int64
	if v != nil {
		root, size = v.rootNode(), v.size.Load()
	}
	l.publish(root, int(size), stamp, newOwner())
}

func (l *Live[K, V]) publish(root *node[K, V], size int, stamp uint64, epoch uint64) {
	v := &version[K, V]{root: unsafe.Pointer(root), epoch: epoch, shape: shapeOf[V]()}
	v.size.Store(int64(size))
	v.state.Store(packState(stamp, statusOpen))
	l.cur.Store(v)
	l.seals = 0
}

// maxDepth is the most nodes a path can hold: one per level of five hash
// bits, and a collision node below them.
const maxDepth = (hashBits+bitsPerLevel-1)/bitsPerLevel + 1

// Cursor is one key's place in a Live map's current version, found by a
// single descent: Value reads what is there, and Set or Delete change it
// without descending again. Writer only; a Cursor is valid until the next
// change to the map.
type Cursor[K comparable, V any] struct {
	l     *Live[K, V]
	v     *version[K, V] // nil when the map has never had a version
	key   K
	hash  uint64
	depth int // index in nodes of the node where the key is or would go; -1 when empty
	pos   int // the key's index in that node's entries, when found
	found bool
	nodes [maxDepth]*node[K, V]
}

// Find returns the cursor for k. Writer only.
func (l *Live[K, V]) Find(k K) Cursor[K, V] {
	var c Cursor[K, V]
	c.Seek(l, k, hashOf(k))
	return c
}

// Seek moves c to the place in l of k, whose hash, Hash(k), is h: c
// becomes the cursor Find(k) returns.
// It is Find for callers on a hot path: a cursor holds a path of up to
// maxDepth nodes, and returning one copies it twice, in wider loads than
// the stores that wrote it, which the processor cannot forward (a seventh
// of a Store into a small map). Writer only.
func (c *Cursor[K, V]) Seek(l *Live[K, V], k K, h uint64) {
	// Field by field, for the same reason; the path beyond depth is
	// never read, so it is left as it is.
	v := l.cur.Load()
	c.l, c.v, c.key, c.hash, c.depth, c.pos, c.found = l, v, k, h, -1, 0, false
	if v == nil {
		return
	}
	// One loop, no call per level: a call per level cost a single Store a
	// sixth of its time.
	n := v.rootNode()
	for shift := uint(0); n != nil; shift += bitsPerLevel {
		c.depth++
		c.nodes[c.depth] = n
		if shift >= hashBits {
			es := n.entries()
			for i := range es {
				if es[i].key == k {
					c.pos, c.found = i, true
					break
				}
			}
			return
		}
		bit := bitpos(h, shift)
		if n.dataMap&bit != 0 {
			i := index(n.dataMap, bit)
			if entryAt(n.ents, i).key == k {
				c.pos, c.found = i, true
			}
			return
		}
		if n.nodeMap&bit == 0 {
			return
		}
		n = loadChild(childAt(n.kids, index(n.nodeMap, bit)))
	}
}

// FindGroup sets ss[i] to the spot of ks[i], whose hash is hs[i], for up to
// WarmGroup keys, making the descents together level by level: in a large
// map each descent is a chain of loads from cold memory, and in lockstep
// the processor fetches one level's nodes for the whole group at once (see
// Txn.Warm). It finds what Cursor.Seek finds, without the path: a Spot is
// all a batch of overwrites needs, and writing no path saved about a
// tenth of such a batch. Writer only.
func (l *Live[K, V]) FindGroup(ks []K, hs []uint64, ss []Spot[K, V]) {
	v := l.cur.Load()
	ss = ss[:min(len(ss), WarmGroup)]
	var next [WarmGroup]*node[K, V]
	for i := range ss {
		// Field by field: a composite literal was built on the stack and
		// then copied in wider loads than the stores that built it, which
		// the processor cannot forward (a sixth of a batch's time).
		s := &ss[i]
		s.l, s.v, s.n, s.key, s.hash, s.pos, s.found = l, v, nil, ks[i], hs[i], 0, false
	}
	if v == nil {
		return
	}
	root := v.rootNode()
	for i := range ss {
		next[i] = root
	}
	for shift, more := uint(0), root != nil; more; shift += bitsPerLevel {
		more = false
		for i, n := range next[:len(ss)] {
			if n == nil {
				continue
			}
			next[i] = nil
			if shift >= hashBits {
				es := n.entries()
				for j := range es {
					if es[j].key == ks[i] {
						ss[i].n, ss[i].pos, ss[i].found = n, j, true
						break
					}
				}
				continue
			}
			bit := bitpos(hs[i], shift)
			if n.dataMap&bit != 0 {
				j := index(n.dataMap, bit)
				if entryAt(n.ents, j).key == ks[i] {
					ss[i].n, ss[i].pos, ss[i].found = n, j, true
				}
				continue
			}
			if n.nodeMap&bit != 0 {
				next[i] = loadChild(childAt(n.kids, index(n.nodeMap, bit)))
				more = true
			}
		}
	}
}

// Value returns the value at the cursor, and whether there is one.
func (c *Cursor[K, V]) Value() (V, bool) {
	if !c.found {
		var zero V
		return zero, false
	}
	return loadValAs(&entryAt(c.nodes[c.depth].ents, c.pos).val, c.v.shape), true
}

// Len returns the number of entries before the change at the cursor.
func (c *Cursor[K, V]) Len() int {
	if c.v == nil {
		return 0
	}
	return int(c.v.size.Load())
}

// mode returns whether the change may be made in place, and the epoch the
// nodes it creates belong to.
func (c *Cursor[K, V]) mode() (inPlace bool, epoch uint64) {
	if c.v != nil && c.l.seals == 0 && c.v.state.Load()&statusMask == statusOpen {
		return true, c.v.epoch
	}
	return false, newOwner()
}

// Set stores val at the cursor and gives the version the stamp stamp. It
// reports whether the key was new.
func (c *Cursor[K, V]) Set(val V, stamp uint64) (added bool) {
	size := int64(c.Len())
	if !c.found {
		size++
	}
	for {
		inPlace, own := c.mode()
		d := c.depth
		var repl *node[K, V]
		e := entry[K, V]{c.key, val}
		switch {
		case d < 0:
			repl = single(own, c.hash, e)
		case c.found:
			n := c.nodes[d]
			if inPlace && n.editsEntries(own) && c.v.shape != shapeOther {
				in := intent{size: size, stamp: stamp}
				p := unsafe.Pointer(&entryAt(n.ents, c.pos).val)
				if c.v.shape == shapePointer {
					in.slot, in.ptr = (*unsafe.Pointer)(p), *(*unsafe.Pointer)(unsafe.Pointer(&val))
				} else {
					in.word, in.val = (*uint64)(p), *(*uint64)(unsafe.Pointer(&val))
				}
				if c.v.begin(in) {
					c.v.finish()
					return false
				}
				continue // frozen meanwhile: copy instead
			}
			// A fresh copy with entries of its own, changed before anyone
			// can reach it. (A node own edits but whose entries another
			// version shares comes here too: readers may be reading it.)
			repl = n.copiedWith(own, c.pos, e)
		case uint(d)*bitsPerLevel >= hashBits:
			repl = c.nodes[d].withCollisionAppended(own, e)
		default:
			n, shift := c.nodes[d], uint(d)*bitsPerLevel
			bit := bitpos(c.hash, shift)
			if n.dataMap&bit != 0 {
				// Another key holds the slot: push both one level down.
				old := loadEntry(entryAt(n.ents, index(n.dataMap, bit)))
				sub := pair(own, old, hashOf(old.key), e, c.hash, shift+bitsPerLevel)
				repl = n.withEntryPushedDown(own, bit, sub)
			} else {
				repl = n.withEntryInserted(own, bit, e)
			}
		}
		if c.link(repl, d, inPlace, own, size, stamp) {
			return !c.found
		}
	}
}

// Delete removes the key at the cursor, which must be there, and gives the
// version the stamp stamp.
func (c *Cursor[K, V]) Delete(stamp uint64) {
	if !c.found {
		panic("hamt: Cursor.Delete of a missing key")
	}
	size := int64(c.Len()) - 1
	for {
		inPlace, own := c.mode()
		d := c.depth
		var repl *node[K, V]
		if uint(d)*bitsPerLevel >= hashBits {
			repl = c.nodes[d].withCollisionRemoved(own, c.pos)
		} else {
			repl = c.nodes[d].withEntryRemoved(own, bitpos(c.hash, uint(d)*bitsPerLevel))
		}
		// Keep the shape canonical: a node left with a single entry and no
		// children moves that entry up into its parent, level after level.
		for d > 0 && repl.singleton() {
			p, bit := c.nodes[d-1], bitpos(c.hash, uint(d-1)*bitsPerLevel)
			repl, d = p.withChildPulledUp(own, bit, *repl.ents), d-1
		}
		if d == 0 && repl.ents == nil && repl.kids == nil {
			repl = nil
		}
		if c.link(repl, d, inPlace, own, size, stamp) {
			return
		}
	}
}

// link makes repl take the place of the node at depth d: in place in the
// nearest ancestor the current version may change in place, copying the
// ones below it, or in a new version when none may be. It reports false if
// the version was frozen before the change could be made in place; nothing
// has changed then.
func (c *Cursor[K, V]) link(repl *node[K, V], d int, inPlace bool, own uint64, size int64, stamp uint64) bool {
	for lvl := d - 1; lvl >= 0; lvl-- {
		p := c.nodes[lvl]
		j := index(p.nodeMap, bitpos(c.hash, uint(lvl)*bitsPerLevel))
		if inPlace && p.edits(own) {
			in := intent{Put: Put{slot: (*unsafe.Pointer)(unsafe.Pointer(childAt(p.kids, j))), ptr: unsafe.Pointer(repl)}, size: size, stamp: stamp}
			if !c.v.begin(in) {
				return false
			}
			c.v.finish()
			return true
		}
		pc := p.copyFor(own)
		*childAt(pc.kids, j) = repl
		repl = pc
	}
	if inPlace {
		if !c.v.begin(intent{Put: Put{slot: &c.v.root, ptr: unsafe.Pointer(repl)}, size: size, stamp: stamp}) {
			return false
		}
		c.v.finish()
		return true
	}
	c.l.publish(repl, int(size), stamp, own)
	return true
}

// Hash returns the cursor's key's hash, Hash(Key()).
func (c *Cursor[K, V]) Hash() uint64 { return c.hash }

// Key returns the key the cursor was found for.
func (c *Cursor[K, V]) Key() K { return c.key }

// Peek returns the current contents without freezing them: the Map is
// valid only until the next change, which may change it in place. It is for
// the writer's own reading between changes, never to hand out. Writer only.
func (l *Live[K, V]) Peek() Map[K, V] {
	v := l.cur.Load()
	if v == nil {
		return Map[K, V]{}
	}
	return Map[K, V]{root: v.rootNode(), size: int(v.size.Load())}
}
