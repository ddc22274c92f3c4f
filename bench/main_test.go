package bench

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var sizesFlag = flag.String("sizes", "100,10000,100000",
	"comma-separated map sizes N for the scenarios (1000000 adds the largest, for the scenarios that have it); -short caps them at 10000")

// sizes returns the map sizes to run, from -sizes, and makes every size's
// keys (keysFor) before the first scenario runs, so that each scenario,
// whichever comes first, collects garbage against the same heap besides
// its map: at N=100 the first Store scenario ran with a smaller heap, and
// so with three times the collections, than the floor's that came after.
func sizes(b *testing.B) []int {
	b.Helper()
	var out []int
	for _, f := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("bad -sizes %q: %q is not a positive integer", *sizesFlag, f)
		}
		if testing.Short() && n > 10000 {
			continue
		}
		out = append(out, n)
	}
	for _, n := range out {
		keysFor(n)
	}
	return out
}

// subscriberCounts are the S values of the store scenario; -short drops 64.
func subscriberCounts() []int {
	if testing.Short() {
		return []int{0, 1, 8}
	}
	return []int{0, 1, 8, 64}
}

// forEachLib runs fn as a sub-benchmark lib=NAME for each library.
func forEachLib(b *testing.B, fn func(b *testing.B, lib string)) {
	forLibs(b, libNames, fn)
}

// withFloor is the libraries and the floor, for the scenarios whose targets
// are set against the floor.
var withFloor = append(append([]string(nil), libNames...), floorName)

var modelFlag = flag.Bool("model", false,
	"also run the multi-version table modelled in internal/mvcc (lib=mvcc) in the Store, Batch, latency, Load, Range, idle-subscriber and memory scenarios")

// withModel returns names, and the model after them when -model asks.
func withModel(names []string) []string {
	if !*modelFlag {
		return names
	}
	return append(append([]string(nil), names...), modelName)
}

// forLibs runs fn as a sub-benchmark lib=NAME for each of names. The map
// a library's scenarios filled is dropped before the next library's run:
// it cannot be reused there, and testing collects garbage before every
// sub-benchmark, which at a million entries takes seconds while it lives.
func forLibs(b *testing.B, names []string, fn func(b *testing.B, lib string)) {
	for _, name := range names {
		b.Run("lib="+name, func(b *testing.B) { fn(b, name) })
		dropFilled()
	}
}

// filledMap is the map reused, if it fits, by the next scenario that asks
// for a filled one.
var filledMap struct {
	lib, val string
	n        int
	m        any // kv[V]
	next     int // see ops
	// warm is set once overCycles has written through a whole collection
	// cycle of m at the program's GOGC (see overCycles).
	warm bool
}

// dropFilled closes and forgets the map filled keeps, so that a scenario
// measuring the heap does not count it, and does not compete with it for
// memory.
func dropFilled() {
	if old, ok := filledMap.m.(interface{ Close() }); ok {
		old.Close()
	}
	filledMap.m = nil
	runtime.GC()
}

// ops reserves count write indexes on m and returns the first. The i-th
// write of a scenario stores ring[i%ringSize] at keys[i%n]; numbering the
// writes to a reused map on from where the previous scenario stopped keeps
// every write a change (see ringSize), where starting again at 0 would
// store the values the keys already hold. A b.Loop loop, which does not
// know its count beforehand, takes the first with ops(m, 0) and reserves
// what it wrote with ops(m, written) after it.
func ops(m any, count int) int {
	if filledMap.m != m {
		return 0
	}
	first := filledMap.next
	filledMap.next += count
	return first
}

// filled returns a map of library lib holding vk's values at keys of n,
// made by fill, or the same one as the previous call if lib, vk and n are
// the same: filling a map of a million entries takes seconds, and the
// Store, latency and read scenarios only ever change the values of the
// keys it has. The caller must leave it without subscribers, and must not
// Close it. Every other map made this way is closed and dropped first, so
// at most one is alive.
func filled[V any](lib string, vk valueKind[V], n int) kv[V] {
	if filledMap.m != nil && filledMap.lib == lib && filledMap.val == vk.name && filledMap.n == n {
		if m, ok := filledMap.m.(kv[V]); ok {
			return m
		}
	}
	dropFilled()
	m := newKV[V](lib)
	fill(m, keysFor(n), vk)
	filledMap.lib, filledMap.val, filledMap.n, filledMap.m, filledMap.next, filledMap.warm = lib, vk.name, n, m, 0, false
	return m
}

// Why b.Loop: testing runs a b.N benchmark function twice for every
// sample, once with b.N=1 to probe and then with the count asked for, and
// forces a collection before each run. At a million Kubernetes-style
// entries a collection marks 1.5 GB, over a second, and at a hundred
// thousand the peer's subscribers copy the map again in every run's setup:
// the probes cost the report about a minute. A function that loops with
// b.Loop runs once a sample, its loop making the whole count. The
// scenarios with a large map or a costly setup loop so.

// loopCount returns the count a b.Loop loop will make when -test.benchtime
// fixes one ("20000x"), or def when it gives a duration: for sizing what
// the loop fills, which b.N does not say before the loop ends.
func loopCount(def int) int {
	if s, ok := strings.CutSuffix(flag.Lookup("test.benchtime").Value.String(), "x"); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// upTo returns the elements of ns that are at most limit.
func upTo(ns []int, limit int) []int {
	var out []int
	for _, n := range ns {
		if n <= limit {
			out = append(out, n)
		}
	}
	return out
}

var (
	keysMu     sync.Mutex
	keysBySize = map[int][]string{}
)

// keysFor returns n distinct keys, shaped like namespace/name, shared by
// every benchmark of that size so they are not part of any measurement.
func keysFor(n int) []string {
	keysMu.Lock()
	defer keysMu.Unlock()
	if k, ok := keysBySize[n]; ok {
		return k
	}
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("ns-%d/svc-%06d", i%20, i)
	}
	keysBySize[n] = k
	return k
}

// fill stores keys[i] = vk.make(i, 0) for every key, before any subscriber
// exists. For large maps a second goroutine makes the values, fillAhead at
// a time, while this one stores them (Fill asks for them in key order):
// filling a million Kubernetes-style values took 5.4 s for switchyard and
// 11.8 s for the peer made here, 3.0 and 7.4 s made beside, a third of the
// report's time at that size. The values made are garbage once stored (each
// library keeps its own copy) and now lie in that goroutine's spans rather
// than between the copies, as a provider's decoded objects do. That start
// made the Stores measured after it faster, the floor's more than ours
// with readers: docs/design.md, Measuring it, round fifty-two.
func fill[V any](m kv[V], keys []string, vk valueKind[V]) {
	if len(keys) <= fillAhead {
		m.Fill(keys, func(i int) V { return vk.make(i, 0) })
		return
	}
	made := make(chan []V, 2)
	go func() {
		defer close(made)
		for first := 0; first < len(keys); first += fillAhead {
			vs := make([]V, min(fillAhead, len(keys)-first))
			for j := range vs {
				vs[j] = vk.make(first+j, 0)
			}
			made <- vs
		}
	}()
	var vs []V // the values of keys[first:first+len(vs)]
	first := 0
	m.Fill(keys, func(i int) V {
		if i-first == len(vs) {
			first += len(vs)
			vs = <-made
		}
		v := vs[i-first]
		var zero V
		vs[i-first] = zero // garbage as soon as it is stored
		return v
	})
	for range made { // Fill asked for every value: this ends at once
	}
}

// fillAhead is how many values fill's second goroutine makes at a time.
const fillAhead = 4096

// subscribers attaches n subscribers to m, numbered 0..n-1, that call fn
// with their number and every snapshot (fn may be nil), and returns once
// each has handled its first snapshot. stop ends them and waits until they
// are gone.
func subscribers[V any](m subscribable[V], n int, fn func(sub int, v view[V])) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var first sync.WaitGroup
	first.Add(n)
	dones := make([]<-chan struct{}, n)
	for i := range dones {
		started := false
		dones[i] = m.Subscribe(ctx, func(v view[V]) {
			if fn != nil {
				fn(i, v)
			}
			if !started {
				started = true
				first.Done()
			}
		})
	}
	first.Wait()
	return func() {
		cancel()
		for _, d := range dones {
			<-d
		}
	}
}

// watcher lets a publisher wait until a subscriber has seen a particular
// Store: the publisher calls expect before the Store and wait after it; the
// subscriber calls check with every snapshot.
type watcher[V any] struct {
	keys  []string
	ring  []V
	rev   func(V) int
	want  atomic.Int64 // i+1 for the i-th store awaited; 0 for none
	seen  chan struct{}
	timer *time.Timer // reused, so waiting allocates nothing

	// With stamps, check records when it was called with the snapshot it
	// waited for (recv) and when it had looked the key up in it (got),
	// before it tells seen: BenchmarkLatencyPhases reads them.
	stamps    bool
	recv, got time.Time
}

func newWatcher[V any](keys []string, ring []V, vk valueKind[V]) *watcher[V] {
	return &watcher[V]{keys: keys, ring: ring, rev: vk.rev, seen: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
}

// value returns what the i-th store writes, and where.
func (w *watcher[V]) value(i int) (string, V) {
	return w.keys[i%len(w.keys)], w.ring[i%len(w.ring)]
}

func (w *watcher[V]) expect(i int) { w.want.Store(int64(i) + 1) }

func (w *watcher[V]) check(_ int, v view[V]) {
	var recv time.Time
	if w.stamps {
		recv = time.Now()
	}
	want := w.want.Load()
	if want == 0 {
		return
	}
	k, val := w.value(int(want - 1))
	if got, ok := v.Get(k); ok && w.rev(got) == w.rev(val) && w.want.CompareAndSwap(want, 0) {
		if w.stamps {
			w.recv, w.got = recv, time.Now()
		}
		w.seen <- struct{}{}
	}
}

// wait returns once check has seen the expected store, or fails b after a
// deadline generous enough for a loaded machine.
func (w *watcher[V]) wait(b *testing.B) {
	w.timer.Reset(awaitLimit)
	defer w.timer.Stop()
	select {
	case <-w.seen:
	case <-w.timer.C:
		b.Fatalf("subscriber never saw store %d", w.want.Load()-1)
	}
}

// awaitLimit is how long a benchmark waits for a subscriber before failing:
// generous, for a loaded machine.
const awaitLimit = 2 * time.Minute

// awaitSignal waits for a receive from ch, or fails b after awaitLimit. It
// allocates a timer: use watcher.wait in measured loops that must not.
func awaitSignal(b *testing.B, ch <-chan struct{}) {
	b.Helper()
	t := time.NewTimer(awaitLimit)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		b.Fatal("a subscriber never saw what the benchmark waited for")
	}
}
