package watchable_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// model checks a Map against a plain Go map over a sequence of operations
// decoded from bytes, and checks that subscribers which rebuild the map from
// Updates alone always equal its State; so does a lazy reader, which takes
// State.UpdatesSince on each Notify signal. (The comparison with
// github.com/telepresenceio/watchable on the operations both libraries
// share lives in the bench module, which may depend on it: bench/peer_test.go.)
type model struct {
	t      *testing.T
	m      watchable.Map[int, int]
	want   map[int]int
	rev    uint64
	subs   []*modelSub
	closed bool
	parts  *watchable.Partitions[int, int, int] // made by the first partition subscription

	lazy      chan struct{} // a Notify channel
	lazyState watchable.State[int, int]
	lazySeen  map[int]int // rebuilt from UpdatesSince only
}

type modelSub struct {
	ch      <-chan watchable.Snapshot[int, int]
	include func(int, int) bool // nil: whole map
	seen    map[int]int         // rebuilt from Updates only
	rev     uint64
	reads   int
	done    bool
}

func newModel(t *testing.T) *model {
	md := &model{t: t, want: map[int]int{}, lazy: make(chan struct{}, 1), lazySeen: map[int]int{}}
	md.m.Notify(t.Context(), md.lazy)
	return md
}

// run decodes and applies ops; every op consumes three bytes.
func (md *model) run(data []byte) {
	for len(data) >= 3 {
		op, a, b := data[0]%16, int(data[1]%8), int(data[2]%4)
		data = data[3:]
		md.step(op, a, b)
	}
	md.readAll()
	md.m.Close()
	md.readAll()
	for _, s := range md.subs {
		if !s.done {
			md.t.Fatalf("subscription still open after Close")
		}
	}
}

func (md *model) step(op byte, k, v int) {
	t := md.t
	t.Helper()
	switch op {
	case 0, 1, 2:
		md.m.Store(k, v)
		md.apply(k, v, true)
	case 3, 4:
		md.m.Delete(k)
		md.apply(k, 0, false)
	case 5:
		got, loaded := md.m.LoadOrStore(k, v)
		old, had := md.want[k]
		if !had {
			md.apply(k, v, true)
			old = v
		}
		md.agree("LoadOrStore", fmt.Sprint(old, had && !md.closed || had), fmt.Sprint(got, loaded))
	case 6:
		got, ok := md.m.LoadAndDelete(k)
		old, had := md.want[k]
		md.apply(k, 0, false)
		md.agree("LoadAndDelete", fmt.Sprint(old, had), fmt.Sprint(got, ok))
	case 7:
		old := v % 2
		swapped := md.m.CompareAndSwap(k, old, v)
		cur, had := md.want[k]
		want := had && cur == old && !md.closed
		if want {
			md.apply(k, v, true)
		}
		md.agree("CompareAndSwap", fmt.Sprint(want), fmt.Sprint(swapped))
	case 8:
		// A batch of up to three writes derived from k and v.
		md.m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range v + 1 {
				key := (k + i*3) % 8
				if (k+i)%3 == 0 {
					b.Delete(key)
				} else {
					b.Store(key, (v+i)%4)
				}
			}
		})
		changed := false
		for i := range v + 1 {
			key := (k + i*3) % 8
			if (k+i)%3 == 0 {
				changed = md.set(key, 0, false) || changed
			} else {
				changed = md.set(key, (v+i)%4, true) || changed
			}
		}
		if changed && !md.closed {
			md.rev++
		}
	case 9:
		// Replace with the keys selected by the bits of k, valued v.
		next := map[int]int{}
		for i := range 8 {
			if (k*37+v)>>i&1 == 1 {
				next[i] = (v + i) % 4
			}
		}
		md.m.Replace(next)
		if !md.closed && !maps.Equal(next, md.want) {
			md.want = next
			md.rev++
		}
	case 10:
		md.subs = append(md.subs, &modelSub{ch: md.m.Subscribe(t.Context()), seen: map[int]int{}})
	case 11:
		// A subscription to part of the map: a subset, two keys, or the
		// partition of values of one parity.
		var include func(key, val int) bool
		var ch <-chan watchable.Snapshot[int, int]
		switch v {
		case 0, 1:
			mod := v%2 + 2
			include = func(key, _ int) bool { return key%mod == 0 }
			ch = md.m.SubscribeSubset(t.Context(), include)
		case 2:
			a, b := k, (k+3)%8
			include = func(key, _ int) bool { return key == a || key == b }
			ch = md.m.SubscribeKeys(t.Context(), a, b, a)
		case 3:
			if md.parts == nil {
				md.parts = watchable.PartitionBy(t.Context(), md.m.View(), func(_, val int) int { return val % 2 })
			}
			part := k % 2
			include = func(_, val int) bool { return val%2 == part }
			ch = md.parts.Subscribe(t.Context(), part)
		}
		md.subs = append(md.subs, &modelSub{ch: ch, include: include, seen: map[int]int{}})
	case 12, 13:
		md.readAll()
	case 14:
		got, ok := md.m.Load(k)
		w, wok := md.want[k]
		md.agree("Load", fmt.Sprint(w, wok), fmt.Sprint(got, ok))
		md.agree("Len", fmt.Sprint(len(md.want)), fmt.Sprint(md.m.Len()))
	case 15:
		if k == 7 && v == 3 {
			md.m.Close()
			md.closed = true
		}
	}
	if diff := cmp.Diff(md.want, md.m.LoadAll()); diff != "" {
		t.Fatalf("op %d(%d,%d): contents (-want +got):\n%s", op, k, v, diff)
	}
	if md.m.Revision() != md.rev {
		t.Fatalf("op %d(%d,%d): Revision = %d; want %d", op, k, v, md.m.Revision(), md.rev)
	}
	if md.parts != nil && !md.closed {
		sizes := map[int]int{}
		for _, val := range md.want {
			sizes[val%2]++
		}
		if diff := cmp.Diff(sizes, md.parts.Sizes().LoadAll()); diff != "" {
			t.Fatalf("op %d(%d,%d): partition sizes (-want +got):\n%s", op, k, v, diff)
		}
	}
}

// apply records a single write in the model, counting a revision if it
// changed anything.
func (md *model) apply(k, v int, store bool) {
	if md.set(k, v, store) && !md.closed {
		md.rev++
	}
}

func (md *model) set(k, v int, store bool) bool {
	if md.closed {
		return false
	}
	old, had := md.want[k]
	if store {
		md.want[k] = v
		return !had || old != v
	}
	delete(md.want, k)
	return had
}

func (md *model) agree(what, want, got string) {
	md.t.Helper()
	if want != got {
		md.t.Fatalf("%s = %s; want %s", what, got, want)
	}
}

// readAll reads whatever each subscriber has pending and checks it.
func (md *model) readAll() {
	t := md.t
	t.Helper()
	md.readLazy()
	for i, s := range md.subs {
		if s.done {
			continue
		}
		select {
		case snap, ok := <-s.ch:
			if !ok {
				s.done = true
				continue
			}
			md.checkSnapshot(i, s, snap)
		default:
			if s.reads == 0 {
				t.Fatalf("sub %d: the first snapshot is not readable", i)
			}
			// Nothing pending: the subscriber's view must already be current.
			if w := md.visible(s); !maps.Equal(w, s.seen) {
				t.Fatalf("sub %d: nothing delivered, but its view %v is not the map's %v", i, s.seen, w)
			}
		}
	}
}

// readLazy takes the updates since the lazy reader's last State, if it was
// signalled, and checks them.
func (md *model) readLazy() {
	t := md.t
	t.Helper()
	select {
	case <-md.lazy:
	default:
		// No effective write since the last read: nothing changed.
		if !maps.Equal(md.want, md.lazySeen) {
			t.Fatalf("lazy reader: not signalled, but its view %v is not the map's %v", md.lazySeen, md.want)
		}
		return
	}
	state := md.m.State()
	if state.Revision() != md.rev {
		t.Fatalf("lazy reader: State().Revision() = %d; want %d", state.Revision(), md.rev)
	}
	updates := state.UpdatesSince(md.lazyState)
	prev := maps.Clone(md.lazySeen)
	keys := map[int]bool{}
	for _, u := range updates {
		if keys[u.Key] {
			t.Fatalf("lazy reader: key %d listed twice in %+v", u.Key, updates)
		}
		keys[u.Key] = true
		old, had := prev[u.Key]
		switch {
		case u.Delete && (!had || old != u.Value):
			t.Fatalf("lazy reader: delete of %d carries %d; the reader saw %d (present %v)", u.Key, u.Value, old, had)
		case u.Delete:
			delete(md.lazySeen, u.Key)
		case had && old == u.Value:
			t.Fatalf("lazy reader: update %d=%d changes nothing", u.Key, u.Value)
		default:
			md.lazySeen[u.Key] = u.Value
		}
	}
	if diff := cmp.Diff(state.Map(), md.lazySeen); diff != "" {
		t.Fatalf("lazy reader: view rebuilt from UpdatesSince differs from State (-state +rebuilt):\n%s", diff)
	}
	if diff := cmp.Diff(md.want, md.lazySeen); diff != "" {
		t.Fatalf("lazy reader: view is not the newest contents (-want +got):\n%s", diff)
	}
	md.lazyState = state
}

func (md *model) visible(s *modelSub) map[int]int {
	out := map[int]int{}
	for k, v := range md.want {
		if s.include == nil || s.include(k, v) {
			out[k] = v
		}
	}
	return out
}

func (md *model) checkSnapshot(i int, s *modelSub, snap watchable.Snapshot[int, int]) {
	t := md.t
	t.Helper()
	if snap.State.Revision() != snap.Revision {
		t.Fatalf("sub %d: State.Revision() = %d in a snapshot of revision %d", i, snap.State.Revision(), snap.Revision)
	}
	if snap.Revision < s.rev {
		t.Fatalf("sub %d: Revision went back from %d to %d", i, s.rev, snap.Revision)
	}
	if s.reads > 0 && len(snap.Updates) == 0 {
		t.Fatalf("sub %d: delivered a snapshot with no updates", i)
	}
	prev := maps.Clone(s.seen)
	keys := map[int]bool{}
	for _, u := range snap.Updates {
		if keys[u.Key] {
			t.Fatalf("sub %d: key %d listed twice in %+v", i, u.Key, snap.Updates)
		}
		keys[u.Key] = true
		old, had := prev[u.Key]
		if u.Delete {
			if !had || old != u.Value {
				t.Fatalf("sub %d: delete of %d carries %d; the subscriber saw %d (present %v)", i, u.Key, u.Value, old, had)
			}
			delete(s.seen, u.Key)
		} else {
			s.seen[u.Key] = u.Value
		}
	}
	state := snap.State.Map()
	if diff := cmp.Diff(state, s.seen); diff != "" {
		t.Fatalf("sub %d: view rebuilt from Updates differs from State (-state +rebuilt):\n%s", i, diff)
	}
	if diff := cmp.Diff(md.visible(s), state); diff != "" {
		t.Fatalf("sub %d: State is not the newest contents (-want +got):\n%s", i, diff)
	}
	for k, v := range state {
		if old, had := prev[k]; !keys[k] && (!had || old != v) {
			t.Fatalf("sub %d: key %d changed but is not in Updates", i, k)
		}
	}
	for k := range prev {
		if _, ok := state[k]; !ok && !keys[k] {
			t.Fatalf("sub %d: key %d vanished but is not in Updates", i, k)
		}
	}
	s.rev = snap.Revision
	s.reads++
	// A subset subscriber is not told of revisions that change nothing it
	// sees, so its newest snapshot may carry an older, equally true, revision.
	if snap.Revision > md.rev || (!md.closed && s.include == nil && snap.Revision != md.rev) {
		t.Fatalf("sub %d: Revision = %d; want the newest, %d", i, snap.Revision, md.rev)
	}
}

func TestDifferential(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			data := make([]byte, 3*300)
			for i := range data {
				data[i] = byte(r.UintN(256))
			}
			newModel(t).run(data)
		})
	}
}

func FuzzMap(f *testing.F) {
	f.Add([]byte{10, 0, 0, 0, 1, 1, 0, 2, 2, 12, 0, 0, 3, 1, 0, 12, 0, 0})
	f.Add([]byte{0, 1, 1, 11, 0, 0, 0, 2, 2, 0, 4, 3, 8, 1, 2, 12, 0, 0, 9, 5, 1, 13, 0, 0})
	f.Add([]byte{10, 0, 0, 8, 0, 3, 8, 5, 2, 9, 2, 2, 6, 1, 1, 7, 1, 1, 5, 6, 2, 12, 0, 0, 15, 7, 3, 0, 1, 1})
	f.Add([]byte{11, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0, 2, 3, 0, 0, 12, 0, 0, 0, 2, 2, 4, 2, 0, 13, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		newModel(t).run(data)
	})
}
