package registrystore_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/registrystore"
	"github.com/switchyard-go/switchyard/provider/registry"
)

// BenchmarkHeartbeat measures heartbeats per second through
// Registry.Heartbeat: of one registry in memory, and of three registry
// replicas sharing one etcd, each heartbeat sent to the next replica in
// turn, as a load balancer would. 100 instances, registered through the
// first replica; heartbeats from as many goroutines as GOMAXPROCS × 4.
func BenchmarkHeartbeat(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		benchHeartbeats(b, []*registry.Registry{newRegistry(b, nil)})
	})
	b.Run("etcd-3-replicas", func(b *testing.B) {
		srv := etcdtest.StartEmbedded(b)
		var regs []*registry.Registry
		for range 3 {
			regs = append(regs, newRegistry(b, registrystore.New(etcdtest.NewClient(b, srv.Endpoints), "/bench")))
		}
		benchHeartbeats(b, regs)
	})
}

func newRegistry(b *testing.B, st registry.Store) *registry.Registry {
	b.Helper()
	opts := []registry.Option{registry.WithToken("bench-token"), registry.WithLease(lease), registry.WithLogger(etcdtest.Logger(b))}
	if st != nil {
		opts = append(opts, registry.WithStore(st))
	}
	r, err := registry.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	etcdtest.Run(b, r)
	<-r.Ready()
	return r
}

func benchHeartbeats(b *testing.B, regs []*registry.Registry) {
	ids := make([]string, 100)
	for i := range ids {
		id, err := regs[0].Register(registry.Registration{ServiceID: "bench", Protocol: "http", Address: "10.0.0.1", Port: 1 + i})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = id
	}
	var next atomic.Uint64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			r, id := regs[n%uint64(len(regs))], ids[n%uint64(len(ids))]
			if err := r.Heartbeat(id); err != nil {
				panic(fmt.Sprintf("heartbeat %s: %v", id, err))
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "heartbeats/s")
}
