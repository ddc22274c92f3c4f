package watchable_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// fill returns a map holding n entries.
func fill(n int) *watchable.Map[int, int] {
	m := new(watchable.Map[int, int])
	m.Batch(func(b *watchable.Batch[int, int]) {
		for i := range n {
			b.Store(i, i)
		}
	})
	return m
}

// BenchmarkStore measures one effective Store into a map of 10,000 entries,
// with subscribers that read as fast as they can (each on its own goroutine)
// or that never read.
func BenchmarkStore(b *testing.B) {
	const n = 10_000
	for _, tc := range []struct {
		subs    int
		reading bool
	}{{0, false}, {8, true}, {8, false}} {
		name := fmt.Sprintf("subs=%d", tc.subs)
		if tc.subs > 0 && !tc.reading {
			name += ",unread"
		}
		b.Run(name, func(b *testing.B) {
			m := fill(n)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range tc.subs {
				ch := m.Subscribe(ctx)
				if !tc.reading {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range ch {
					}
				}()
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				m.Store(i%n, -i) // always a change
			}
			b.StopTimer()
			cancel()
			wg.Wait()
		})
	}
}

// BenchmarkStoreWindows measures a Store into a map of 10,000 string keys
// with eight subscribers that read every k Stores, so each write merges
// into eight windows of up to k pending keys. The benchmark's own goroutine
// does the reading, so the figure moves little with the scheduler: it is
// the writers' cost of subscribers' windows, plus 1/k of eight reads.
func BenchmarkStoreWindows(b *testing.B) {
	const n, subs = 10_000, 8
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	for _, k := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("every=%d", k), func(b *testing.B) {
			var m watchable.Map[string, int]
			m.Batch(func(b *watchable.Batch[string, int]) {
				for i, key := range keys {
					b.Store(key, i)
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			chs := make([]<-chan watchable.Snapshot[string, int], subs)
			for i := range chs {
				chs[i] = m.Subscribe(ctx)
				<-chs[i]
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				m.Store(keys[(i*7919)%n], n+i) // always a change, keys spread
				if i%k == 0 {
					for _, ch := range chs {
						<-ch
					}
				}
			}
		})
	}
}

// BenchmarkStoreEqual measures a Store that changes nothing.
func BenchmarkStoreEqual(b *testing.B) {
	m := fill(10_000)
	b.ReportAllocs()
	for b.Loop() {
		m.Store(42, 42)
	}
}

func BenchmarkLoad(b *testing.B) {
	m := fill(10_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		m.Load(i % 10_000)
	}
}

func BenchmarkState(b *testing.B) {
	m := fill(10_000)
	b.ReportAllocs()
	for b.Loop() {
		if m.State().Len() != 10_000 {
			b.Fatal("wrong size")
		}
	}
}

// BenchmarkReplaceUnchanged measures a provider re-listing 10,000 entries
// of which none changed: the common case of mark-and-sweep.
func BenchmarkReplaceUnchanged(b *testing.B) {
	b.Run("int", func(b *testing.B) {
		m := fill(10_000)
		entries := m.LoadAll()
		b.ReportAllocs()
		for b.Loop() {
			m.Replace(entries)
		}
	})
	b.Run("DeepCopy method", func(b *testing.B) {
		var m watchable.Map[int, *item]
		entries := map[int]*item{}
		for i := range 10_000 {
			entries[i] = &item{Name: fmt.Sprint(i), Tags: []string{"a", "b"}}
		}
		m.Replace(entries)
		b.ReportAllocs()
		for b.Loop() {
			m.Replace(entries)
		}
	})
}

// BenchmarkLargeReplace measures a provider re-listing 100,000 entries,
// a map large enough that each entry's lookup misses the cache (see
// replaceAhead): unchanged, where Replace compares every entry and writes
// nothing, and changed, where every value differs from the map's (two
// listings taking turns).
func BenchmarkLargeReplace(b *testing.B) {
	const n = 100_000
	b.Run("unchanged", func(b *testing.B) {
		m := fill(n)
		entries := m.LoadAll()
		b.ReportAllocs()
		for b.Loop() {
			m.Replace(entries)
		}
	})
	b.Run("changed", func(b *testing.B) {
		m := fill(n)
		var lists [2]map[int]int
		for j := range lists {
			lists[j] = make(map[int]int, n)
			for i := range n {
				lists[j][i] = i + 1 + j
			}
		}
		b.ReportAllocs()
		j := 0
		for b.Loop() {
			m.Replace(lists[j])
			j ^= 1
		}
	})
}

// BenchmarkSmallBatch measures a Batch of k Stores into a map of 10,000
// entries, for the small batches translators and providers make: holding
// Stores back, which helps large batches into large maps (see
// storesAhead), must not cost them. val=big stores a 256-byte struct by
// value.
func BenchmarkSmallBatch(b *testing.B) {
	const n = 10_000
	for _, k := range []int{1, 4, 20} {
		b.Run(fmt.Sprintf("val=int/k=%d", k), func(b *testing.B) {
			m := fill(n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m.Batch(func(tx *watchable.Batch[int, int]) {
					for range k {
						i++
						tx.Store(i%n, -i)
					}
				})
			}
		})
		b.Run(fmt.Sprintf("val=big/k=%d", k), func(b *testing.B) {
			var m watchable.Map[int, bigValue]
			m.Batch(func(tx *watchable.Batch[int, bigValue]) {
				for i := range n {
					tx.Store(i, bigValue{})
				}
			})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m.Batch(func(tx *watchable.Batch[int, bigValue]) {
					for range k {
						i++
						tx.Store(i%n, bigValue{A: [31]int{i}})
					}
				})
			}
		})
	}
}

// BenchmarkFill measures a provider's first load: a Batch of n Stores of
// distinct keys into an empty map, which grows the table as it goes and
// holds its Stores back once the table is large (see storesAhead), and
// walking the map it made (State().All()), whose speed depends on how its
// entries lie in memory.
func BenchmarkFill(b *testing.B) {
	for _, n := range []int{10, 1000, 100_000, 1_000_000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("ns-%d/svc-%06d", i%20, i)
		}
		fill := func() *watchable.Map[string, int] {
			m := new(watchable.Map[string, int])
			m.Batch(func(tx *watchable.Batch[string, int]) {
				for i, k := range keys {
					tx.Store(k, i)
				}
			})
			return m
		}
		b.Run(fmt.Sprintf("op=batch/N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fill()
			}
		})
		b.Run(fmt.Sprintf("op=all/N=%d", n), func(b *testing.B) {
			m := fill()
			sum := 0
			for b.Loop() {
				for _, v := range m.State().All() {
					sum += v
				}
			}
			if sum < 0 {
				b.Fatal("negative sum")
			}
		})
	}
}

type bigValue struct {
	A [31]int
	S string
}

// BenchmarkUpdatesSince measures what a lazy reader pays to claim the
// changes since its last State: changed distinct keys written into a map
// of n entries between the two States. With notify=yes the reader is a
// lazy reader that has claimed changes before: a Notify registration,
// and an UpdatesSince before the older State, which makes the map log the
// keys each write changes from then on; UpdatesSince reads those instead
// of the whole table, when the log holds few enough entries since the
// older State.
func BenchmarkUpdatesSince(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, changed := range []int{1, 100, 10_000} {
			for _, notify := range []string{"no", "yes"} {
				b.Run(fmt.Sprintf("N=%d/changed=%d/notify=%s", n, changed, notify), func(b *testing.B) {
					benchUpdatesSince(b, n, changed, notify == "yes")
				})
			}
		}
	}
}

func benchUpdatesSince(b *testing.B, n, changed int, notify bool) {
	m := fill(n)
	if notify {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		m.Notify(ctx, make(chan struct{}, 1))
		before := m.State()
		m.Store(0, -n)                 // a change: fill stores no negative value
		m.State().UpdatesSince(before) // reads the table, and asks for the log
	}
	old := m.State()
	for i := range changed {
		m.Store(i*(n/changed), -i-1)
	}
	cur := m.State()
	if got := len(cur.UpdatesSince(old)); got != changed {
		b.Fatalf("%d updates, want %d", got, changed)
	}
	b.ReportAllocs()
	for b.Loop() {
		cur.UpdatesSince(old)
	}
}

// BenchmarkPartitionFanOut measures a per-node fan-out starting up: one op
// indexes a map of 10,000 entries by partition and subscribes to each of
// its 1,000 partitions (ten entries each), taking every first snapshot.
func BenchmarkPartitionFanOut(b *testing.B) {
	const n, parts = 10_000, 1_000
	m := fill(n)
	defer m.Close()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		p := watchable.PartitionBy(ctx, m.View(), func(_, v int) int { return v % parts })
		for part := range parts {
			if s := <-p.Subscribe(ctx, part); s.State.Len() != n/parts {
				b.Fatalf("partition %d's first snapshot has %d entries, want %d", part, s.State.Len(), n/parts)
			}
		}
		cancel()
	}
}
