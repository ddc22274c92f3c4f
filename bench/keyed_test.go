package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// keyedMap is the map size of the keyed-subscription scenario.
const keyedMap = 10000

// BenchmarkKeyedSubscribers measures a Store when S subscribers each watch
// one key of a map of 10,000 entries, and every Store changes a watched key
// (the Stores cycle over the S watched keys), so that each Store concerns
// exactly one subscriber whatever S is. The subscribers never read, so that
// the figure is the writer's work alone, not the scheduling of S reader
// goroutines: merging into the concerned subscriber's pending snapshot, and
// whatever it costs to find it.
//
// how=keys subscribes with SubscribeKeys, which indexes subscriptions by
// key: the cost should not grow with S. how=lazy registers NotifyKeys per
// subscriber instead, a lazy keyed reader between reads: its signal
// pending, and holding the State it took (State.KeyUpdatesSince is its
// read). how=part subscribes to partitions: one PartitionBy whose
// partition function gives each key its own partition, and a
// Partitions.Subscribe per subscriber, the per-node fan-out's shape with a
// node per key. how=lazypart follows those partitions lazily instead: a
// Partitions.Notify registration per subscriber, its signal pending, and
// the partition's State it took last (Partitions.State, then
// State.UpdatesSince, is its read). how=subset subscribes with
// SubscribeSubset and a predicate per subscriber, which every Store asks
// of every subscriber: O(S). how=none makes the same Stores (cycling over
// S keys) without any subscription: a control, since cycling over more
// keys also makes the map's own part of a Store meet colder memory, which
// has nothing to do with subscriptions.
// switchyard only: the peer's per-subscriber goroutine and map copy make S
// in the thousands impractical.
//
// With S above one, each sample also times the same Stores with one
// subscriber of the same kind, on a map of its own, in blocks of
// pairedBlock Stores alternating with its own: ns/op is S's Stores alone,
// and S1-ns/op the one subscriber's, taken over the same second. Target 6
// divides the two. This machine runs at one speed for seconds and then at
// about half of it, for everything alike (a Store without subscribers:
// 70 or 130 ns), and the S=1 and S=10,000 samples a round takes seconds
// apart fell in either: the quotient of those moved from 1.2 to 2.4 from
// one round to the next with the code unchanged.
func BenchmarkKeyedSubscribers(b *testing.B) {
	lib := libNames[0]
	b.Run("lib="+lib+"/val="+ints.name+fmt.Sprintf("/N=%d", keyedMap), func(b *testing.B) {
		for _, how := range []string{"keys", "lazy", "part", "lazypart", "subset", "none"} {
			for _, s := range []int{1, 1000, 10000} {
				if how == "subset" && s > 1000 {
					continue // ten million predicate calls per thousand Stores
				}
				b.Run(fmt.Sprintf("how=%s/S=%d", how, s), func(b *testing.B) {
					benchKeyed(b, how, s)
				})
			}
		}
	})
}

// pairedBlock is how many Stores one side of a paired sample (here, and in
// BenchmarkIdleSubscriber) makes before the other takes its turn: a few hundred microseconds, short against the
// seconds the machine keeps one speed, and long against the dozen cache
// misses that bring the one subscriber's Stores back to their hot state
// after the other side's turn (under a nanosecond a Store, well under 1%).
const pairedBlock = 1000

// benchKeyed runs one scenario of BenchmarkKeyedSubscribers. Each side of
// a paired sample has a map of its own, filled alike (milliseconds at
// 10,000 ints), rather than the map filled keeps for other scenarios: one
// that earlier scenarios' subscriptions and partition indexes came and
// went on is not the fresh map the other side gets. (A lazy reader's Store
// cost 15-30 ns more on the kept map than on a fresh one, until keyed
// indexes left the map with their last registration.)
func benchKeyed(b *testing.B, how string, s int) {
	keys := keysFor(keyedMap)
	o := &ours[int]{}
	fill[int](o, keys, ints)
	ctx, cancel := context.WithCancel(context.Background())
	var one *ours[int] // the paired single subscriber's map, if S > 1
	defer func() {
		cancel()
		// The next scenario's Stores must not run beside these
		// subscriptions' removals, which context.AfterFunc runs in
		// goroutines of their own.
		settled(&o.m)
		if one != nil {
			settled(&one.m)
		}
	}()
	held := keyedReaders(ctx, &o.m, how, s, keys)
	if s > 1 {
		one = &ours[int]{}
		fill[int](one, keys, ints)
		held = append(held, keyedReaders(ctx, &one.m, how, 1, keys)...)
	}
	// The subscriptions are tens of megabytes at S=10,000: a collection
	// their allocation starts would otherwise mark them while the Stores
	// run, which allocate nothing.
	runtime.GC()
	tt := newTurns(one != nil)
	b.ReportAllocs()
	for b.Loop() {
		// Values past the fill's, all different: every Store is a change.
		i := tt.next()
		if tt.side == 0 {
			o.Store(keys[i%s], ringSize+1+i)
		} else {
			one.Store(keys[0], ringSize+1+i)
		}
		tt.done()
	}
	tt.stop()
	tt.report(b, "S1-ns/op")
	runtime.KeepAlive(held)
}

// keyedReaders attaches s keyed readers of kind how to m, the i-th on
// keys[i], and returns the States that the lazy ones hold.
func keyedReaders(ctx context.Context, m *watchable.Map[string, int], how string, s int, keys []string) []watchable.State[string, int] {
	var held []watchable.State[string, int]
	var parts *watchable.Partitions[string, int, string]
	if how == "part" || how == "lazypart" {
		parts = watchable.PartitionBy(ctx, m.View(), func(k string, _ int) string { return k })
	}
	for i := range s {
		switch how {
		case "keys":
			m.SubscribeKeys(ctx, keys[i])
		case "lazy":
			// A lazy reader between reads: its registration, with its
			// signal pending, and the State it took last.
			ch := make(chan struct{}, 1)
			m.NotifyKeys(ctx, ch, keys[i])
			held = append(held, m.State())
		case "part":
			parts.Subscribe(ctx, keys[i])
		case "lazypart":
			// A lazy partition reader between reads, as how=lazy is.
			ch := make(chan struct{}, 1)
			parts.Notify(ctx, keys[i], ch)
			held = append(held, parts.State(keys[i]))
		case "subset":
			k := keys[i]
			m.SubscribeSubset(ctx, func(key string, _ int) bool { return key == k })
		}
	}
	return held
}

// settled returns once m has no subscriptions or registrations left.
func settled(m *watchable.Map[string, int]) {
	for m.Subscribers() > 0 || m.Notifiers() > 0 {
		time.Sleep(time.Millisecond)
	}
}
