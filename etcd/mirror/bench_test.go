package mirror_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/mirror"
)

// BenchmarkPutToMirror measures how long a put takes to reach a mirror's
// subscriber, against how long it takes to reach a raw etcd watch of the
// same prefix on the same server, for the same puts: one at a time, each
// timed from the start of the Put to its arrival. It reports the
// percentiles of both and their ratio (the target: the mirror's p50 and
// p99 at most 1.2 times the raw watch's).
func BenchmarkPutToMirror(b *testing.B) {
	srv := etcdtest.StartEmbedded(b)
	writer := etcdtest.NewClient(b, srv.Endpoints)
	m := mirror.New[string, int](etcdtest.NewClient(b, srv.Endpoints), "/bench/", mirror.StringKey)
	etcdtest.Run(b, m)
	<-m.Ready()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	started := map[int]time.Time{}
	var viaMirror, viaWatch []time.Duration
	arrived := make(chan struct{}, 2)
	record := func(to *[]time.Duration, seq int, at time.Time) {
		mu.Lock()
		*to = append(*to, at.Sub(started[seq]))
		mu.Unlock()
		arrived <- struct{}{}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	// The mirror's subscriber.
	go func() {
		defer wg.Done()
		for snap := range m.Output().Subscribe(ctx) {
			at := time.Now()
			for _, u := range snap.Updates {
				if !snap.Initialized || u.Delete || u.Value < 0 {
					continue
				}
				record(&viaMirror, u.Value, at)
			}
		}
	}()
	raw := etcdtest.NewClient(b, srv.Endpoints)
	wch := raw.Watch(ctx, "/bench/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	<-wch // created
	// The raw watch.
	go func() {
		defer wg.Done()
		for resp := range wch {
			at := time.Now()
			for _, ev := range resp.Events {
				seq, _ := strconv.Atoi(string(ev.Kv.Value))
				record(&viaWatch, seq, at)
			}
		}
	}()

	b.ResetTimer()
	for i := range b.N {
		mu.Lock()
		started[i] = time.Now()
		mu.Unlock()
		if _, err := writer.Put(ctx, "/bench/k"+strconv.Itoa(i%100), strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		for range 2 {
			select {
			case <-arrived:
			case <-time.After(etcdtest.WaitTimeout):
				b.Fatalf("put %d did not arrive", i)
			}
		}
	}
	b.StopTimer()
	cancel()
	wg.Wait()

	pm, pw := percentiles(viaMirror), percentiles(viaWatch)
	b.ReportMetric(float64(pm[0].Microseconds()), "mirror-p50-µs")
	b.ReportMetric(float64(pm[1].Microseconds()), "mirror-p99-µs")
	b.ReportMetric(float64(pw[0].Microseconds()), "watch-p50-µs")
	b.ReportMetric(float64(pw[1].Microseconds()), "watch-p99-µs")
	b.ReportMetric(float64(pm[0])/float64(pw[0]), "ratio-p50")
	b.ReportMetric(float64(pm[1])/float64(pw[1]), "ratio-p99")
	if b.N >= 100 {
		verdict := func(r float64) string {
			if r <= 1.2 {
				return "PASS"
			}
			return "MISS"
		}
		b.Logf("%d puts: mirror p50 %v p99 %v; raw watch p50 %v p99 %v; ratio p50 %.2f (%s) p99 %.2f (%s)", b.N,
			pm[0], pm[1], pw[0], pw[1],
			float64(pm[0])/float64(pw[0]), verdict(float64(pm[0])/float64(pw[0])),
			float64(pm[1])/float64(pw[1]), verdict(float64(pm[1])/float64(pw[1])))
	}
}

// percentiles returns the 50th and 99th percentiles of ds.
func percentiles(ds []time.Duration) [2]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return [2]time.Duration{at(0.50), at(0.99)}
}
