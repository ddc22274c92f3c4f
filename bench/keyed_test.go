package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"

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
// State.UpdatesSince, is its read). how=subset subscribes with SubscribeSubset and a predicate per
// subscriber, which every Store asks of every subscriber: O(S). how=none
// makes the same Stores (cycling over S keys) without any subscription: a
// control, since cycling over more keys also makes the map's own part of a
// Store meet colder memory, which has nothing to do with subscriptions. switchyard only: the peer's
// per-subscriber goroutine and map copy make S in the thousands
// impractical.
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

func benchKeyed(b *testing.B, how string, s int) {
	keys := keysFor(keyedMap)
	o := filled(libNames[0], ints, keyedMap).(*ours[int])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var held []watchable.State[string, int]
	var parts *watchable.Partitions[string, int, string]
	if how == "part" || how == "lazypart" {
		parts = watchable.PartitionBy(ctx, o.m.View(), func(k string, _ int) string { return k })
	}
	for i := range s {
		switch how {
		case "keys":
			o.m.SubscribeKeys(ctx, keys[i])
		case "lazy":
			// A lazy reader between reads: its registration, with its
			// signal pending, and the State it took last.
			ch := make(chan struct{}, 1)
			o.m.NotifyKeys(ctx, ch, keys[i])
			held = append(held, o.m.State())
		case "part":
			parts.Subscribe(ctx, keys[i])
		case "lazypart":
			// A lazy partition reader between reads, as how=lazy is.
			ch := make(chan struct{}, 1)
			parts.Notify(ctx, keys[i], ch)
			held = append(held, parts.State(keys[i]))
		case "subset":
			k := keys[i]
			o.m.SubscribeSubset(ctx, func(key string, _ int) bool { return key == k })
		}
	}
	first := ops(o, 0)
	i := first
	b.ReportAllocs()
	for b.Loop() {
		// Values past the ring's, all different: every Store is a change.
		o.Store(keys[i%s], ringSize+1+i)
		i++
	}
	ops(o, i-first)
	runtime.KeepAlive(held)
}
