package bench

import (
	"context"
	"slices"
	"sync"

	peer "github.com/telepresenceio/watchable"

	"github.com/switchyard-go/switchyard/watchable"
)

// kv is the small common face of both libraries that every scenario drives,
// so the two run the same code on the same inputs. Keys are strings, as
// Kubernetes-style names are.
type kv[V any] interface {
	subscribable[V]
	Store(key string, v V)
	// Fill stores value(i) at keys[i] for every key of an empty map, asking
	// for the values in the order of keys. It is setup, never measured:
	// switchyard does it in one Batch, the peer, which has no batches, with
	// one Store per key.
	Fill(keys []string, value func(i int) V)
	Load(key string) (V, bool)
	LoadAll() map[string]V
	// SubscribeIdle subscribes and never reads the channel.
	SubscribeIdle(ctx context.Context)
	Close()
}

// subscribable is what a scenario needs of a map it only watches.
type subscribable[V any] interface {
	// Subscribe starts a goroutine that reads the library's subscription
	// channel as fast as it can and calls fn with each snapshot, in order.
	// The goroutine ends when ctx is done; the returned channel is closed
	// after it has.
	Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{}
}

// view is one received snapshot as a subscriber sees it. A view is only
// valid during the call it is passed to.
type view[V any] interface {
	// Updates is the number of updates the snapshot carries.
	Updates() int
	// Get reads key from the snapshot's state.
	Get(key string) (V, bool)
	// Len is the number of entries in the snapshot's state.
	Len() int
}

// libNames are the libraries every scenario runs, ours first. They are the
// values of the lib= key in benchmark names.
var libNames = []string{"switchyard", "peer"}

// floorName is the lib= of the floor: not a library but the reference the
// issue's targets judge Stores and reads against, a Go map under a mutex.
const floorName = "floor"

// newKV returns an empty map of the library called name.
func newKV[V any](name string) kv[V] {
	switch name {
	case "switchyard":
		return &ours[V]{}
	case "peer":
		return &theirs[V]{}
	case floorName:
		return &floor[V]{m: map[string]V{}}
	case modelName:
		return newModel[V]()
	}
	panic("bench: unknown library " + name)
}

// floor is the least a map that stores private copies can do: a Go map
// under a mutex, holding a deep copy of each value stored (made with
// watchable.DeepCopy, so the same copy as the libraries make) and handing
// out a deep copy on Load.
//
// Its subscribers are the least a plain map can give readers: a Store
// signals each of them (a buffered channel of one, so signals coalesce as
// snapshots do), and a woken subscriber reads the map itself, under the
// lock, as it is by then. There are no snapshots, no updates and no
// isolation from later Stores: it is the reference for what the
// libraries' subscriptions cost beyond telling readers, not a third
// library.
type floor[V any] struct {
	mu   sync.Mutex
	m    map[string]V
	subs []chan struct{} // one per subscriber, capacity one
}

func (f *floor[V]) Store(k string, v V) {
	v = watchable.DeepCopy(v)
	f.mu.Lock()
	f.m[k] = v
	f.tellAll()
	f.mu.Unlock()
}

// tellAll signals every subscriber. f.mu is held.
func (f *floor[V]) tellAll() {
	for _, c := range f.subs {
		tell(c)
	}
}

func (f *floor[V]) Load(k string) (V, bool) {
	f.mu.Lock()
	v, ok := f.m[k]
	f.mu.Unlock()
	if !ok {
		return v, false
	}
	return watchable.DeepCopy(v), true
}

func (f *floor[V]) Fill(keys []string, value func(int) V) {
	for i, k := range keys {
		f.Store(k, value(i))
	}
}

// StoreBatch stores every value under one hold of the lock, as a batch.
func (f *floor[V]) StoreBatch(keys []string, values []V) {
	copies := make([]V, len(values))
	for i, v := range values {
		copies[i] = watchable.DeepCopy(v)
	}
	f.mu.Lock()
	for i, k := range keys {
		f.m[k] = copies[i]
	}
	f.tellAll()
	f.mu.Unlock()
}

func (f *floor[V]) LoadAll() map[string]V {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]V, len(f.m))
	for k, v := range f.m {
		out[k] = watchable.DeepCopy(v)
	}
	return out
}

// Range calls fn with every entry, under the lock: what ranging a Go map
// costs.
func (f *floor[V]) Range(fn func(string, V)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range f.m {
		fn(k, v)
	}
}

// Subscribe starts a reader that calls fn once at once and then once per
// signal, until ctx is done.
func (f *floor[V]) Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{} {
	c := make(chan struct{}, 1)
	c <- struct{}{} // the first call, as the libraries' first snapshot
	f.mu.Lock()
	f.subs = append(f.subs, c)
	f.mu.Unlock()
	v := floorView[V]{f}
	return onSignal(ctx, c, func() { fn(v) }, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.subs = slices.DeleteFunc(f.subs, func(s chan struct{}) bool { return s == c })
	})
}

// onSignal starts a goroutine that calls read on each receive from signal
// until ctx is done, and then leave; the returned channel is closed after
// that. It is the reader of the floor's and the model's subscriptions.
func onSignal(ctx context.Context, signal <-chan struct{}, read, leave func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer leave()
		for {
			select {
			case <-ctx.Done():
				return
			case <-signal:
				read()
			}
		}
	}()
	return done
}

// tell signals c without waiting: a signal already pending stands for this
// one too, as a pending snapshot does for the libraries.
func tell(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (f *floor[V]) SubscribeIdle(context.Context) { panic("bench: the floor has no idle subscribers") }
func (f *floor[V]) Close()                        {}

// floorView reads the floor's map as it is when asked: under the lock, and
// without a copy, since the floor never changes a value it holds.
type floorView[V any] struct{ f *floor[V] }

func (v floorView[V]) Updates() int { return 0 } // it carries none
func (v floorView[V]) Len() int {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	return len(v.f.m)
}
func (v floorView[V]) Get(k string) (V, bool) {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	x, ok := v.f.m[k]
	return x, ok
}

// ours adapts switchyard's watchable.Map.
type ours[V any] struct{ m watchable.Map[string, V] }

func (o *ours[V]) Store(k string, v V)     { o.m.Store(k, v) }
func (o *ours[V]) Load(k string) (V, bool) { return o.m.Load(k) }

func (o *ours[V]) Fill(keys []string, value func(int) V) {
	o.m.Batch(func(b *watchable.Batch[string, V]) {
		for i, k := range keys {
			b.Store(k, value(i))
		}
	})
}

func (o *ours[V]) LoadAll() map[string]V             { return o.m.LoadAll() }
func (o *ours[V]) SubscribeIdle(ctx context.Context) { o.m.Subscribe(ctx) }

// WatchLazily registers a reader that Notify tells of changes and that
// claims them with State.UpdatesSince when it reads, and returns the State
// such a reader holds until its next read.
func (o *ours[V]) WatchLazily(ctx context.Context) watchable.State[string, V] {
	o.m.Notify(ctx, make(chan struct{}, 1))
	return o.m.State()
}
func (o *ours[V]) Close() { o.m.Close() }

// State is switchyard's O(1) view of the whole map; the peer has none.
func (o *ours[V]) State() watchable.State[string, V] { return o.m.State() }

func (o *ours[V]) Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{} {
	return ourSubscription(o.m.Subscribe(ctx), fn)
}

// ourReadOnly adapts a read-only switchyard map, such as a translator's output.
type ourReadOnly[V any] struct{ v watchable.View[string, V] }

func (o ourReadOnly[V]) Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{} {
	return ourSubscription(o.v.Subscribe(ctx), fn)
}

func ourSubscription[V any](ch <-chan watchable.Snapshot[string, V], fn func(view[V])) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		v := &ourView[V]{}
		for s := range ch {
			v.s = s
			fn(v)
		}
	}()
	return done
}

type ourView[V any] struct{ s watchable.Snapshot[string, V] }

func (v *ourView[V]) Updates() int           { return len(v.s.Updates) }
func (v *ourView[V]) Len() int               { return v.s.State.Len() }
func (v *ourView[V]) Get(k string) (V, bool) { return v.s.State.Get(k) }

// theirs adapts github.com/telepresenceio/watchable's Map.
type theirs[V any] struct{ m peer.Map[string, V] }

func (t *theirs[V]) Store(k string, v V)     { t.m.Store(k, v) }
func (t *theirs[V]) Load(k string) (V, bool) { return t.m.Load(k) }
func (t *theirs[V]) Fill(keys []string, value func(int) V) {
	for i, k := range keys {
		t.m.Store(k, value(i))
	}
}
func (t *theirs[V]) LoadAll() map[string]V { return t.m.LoadAll() }
func (t *theirs[V]) Close()                { t.m.Close() }

// SubscribeIdle subscribes without reading. The peer starts a goroutine per
// subscription that takes every update from Store; it ends when ctx is done.
func (t *theirs[V]) SubscribeIdle(ctx context.Context) { t.m.Subscribe(ctx) }

func (t *theirs[V]) Subscribe(ctx context.Context, fn func(view[V])) <-chan struct{} {
	ch := t.m.Subscribe(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		v := &peerView[V]{}
		for s := range ch {
			v.s = s
			fn(v)
		}
	}()
	return done
}

type peerView[V any] struct{ s peer.Snapshot[string, V] }

func (v *peerView[V]) Updates() int           { return len(v.s.Updates) }
func (v *peerView[V]) Len() int               { return len(v.s.State) }
func (v *peerView[V]) Get(k string) (V, bool) { x, ok := v.s.State[k]; return x, ok }
