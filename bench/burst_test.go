package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

const (
	burstKeys   = 100
	burstStores = 1000
	burstWork   = time.Millisecond
)

// BenchmarkBurst measures a burst of 1,000 Stores on 100 keys while one
// subscriber spends 1 ms (sleeping, so it does not take the CPU from the
// publisher) on every snapshot. One op is one burst, until the subscriber
// has handled the burst's last Store.
//
// Metrics: publish-ns/op is the publisher's time for the 1,000 Stores alone;
// snapshots/op is how many snapshots the subscriber handled per burst;
// updates/snapshot is how many updates each carried on average (switchyard
// coalesces to at most one per key, the peer lists every Store).
func BenchmarkBurst(b *testing.B) {
	forEachLib(b, func(b *testing.B, lib string) {
		b.Run("val="+services.name, func(b *testing.B) {
			benchBurst(b, newKV[*Service](lib), services)
		})
	})
}

func benchBurst[V any](b *testing.B, m kv[V], vk valueKind[V]) {
	keys := keysFor(burstKeys)
	w := newWatcher(keys, vk.ring(), vk)
	defer m.Close()
	fill(m, keys, vk)
	var snapshots, updates atomic.Int64
	stop := subscribers(m, 1, func(sub int, v view[V]) {
		snapshots.Add(1)
		updates.Add(int64(v.Updates()))
		time.Sleep(burstWork)
		w.check(sub, v)
	})
	defer stop()

	var publish time.Duration
	snapshots.Store(0)
	updates.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for op := range b.N {
		first := op * burstStores
		w.expect(first + burstStores - 1)
		start := time.Now()
		for i := first; i < first+burstStores; i++ {
			k, v := w.value(i)
			m.Store(k, v)
		}
		publish += time.Since(start)
		w.wait(b)
	}
	b.StopTimer()
	b.ReportMetric(float64(publish.Nanoseconds())/float64(b.N), "publish-ns/op")
	b.ReportMetric(float64(snapshots.Load())/float64(b.N), "snapshots/op")
	b.ReportMetric(float64(updates.Load())/float64(snapshots.Load()), "updates/snapshot")
}
