package registry

import (
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// A lookup sees every registration that returned before it, at once: the
// index is filled before Register returns, not when its subscription
// catches up.
func TestLookupSeesItsOwnWrites(t *testing.T) {
	f := start(t)
	for i := range 200 {
		id, err := f.r.Register(Registration{ServiceID: fmt.Sprintf("s%d", i), Protocol: "http", Address: "10.0.0.1", Port: 1000 + i})
		if err != nil {
			t.Fatal(err)
		}
		got := f.r.Lookup(DiscoveryKey{ServiceID: fmt.Sprintf("s%d", i)})
		if len(got.Nodes) != 1 || got.Nodes[0].RuntimeInstanceID != id {
			t.Fatalf("lookup right after registering %s: %+v", id, got.Nodes)
		}
		if err := f.r.Deregister(id); err != nil {
			t.Fatal(err)
		}
		if got := f.r.Lookup(DiscoveryKey{ServiceID: fmt.Sprintf("s%d", i)}); len(got.Nodes) != 0 {
			t.Fatalf("lookup right after deregistering %s: %+v", id, got.Nodes)
		}
	}
}

// The index forgets instances that leave the map by themselves (leases
// that expire), and a lookup never shows an id that the index still lists
// but that is gone or now belongs to another service.
func TestLookupIndexFollowsTheMap(t *testing.T) {
	clock := newFakeClock()
	f := start(t, withClock(clock), WithLease(time.Minute))
	id := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 80})
	clock.advance(3 * time.Minute)
	f.r.store.expire()
	if got := f.r.Lookup(DiscoveryKey{ServiceID: "api"}); len(got.Nodes) != 0 {
		t.Fatalf("lookup after the lease expired: %+v", got.Nodes)
	}
	waitFor := time.Now().Add(waitFor)
	for {
		ids, _ := f.r.index.ids("api")
		if len(ids) == 0 {
			break
		}
		if time.Now().After(waitFor) {
			t.Fatalf("the index still lists %v after the instance expired", ids)
		}
		time.Sleep(time.Millisecond) // the index follows the map asynchronously
	}
	// A stale entry (the id listed under a service it does not belong to)
	// is ignored.
	other := f.register(Registration{ServiceID: "billing", Protocol: "http", Address: "10.0.0.2", Port: 80})
	f.r.index.add("api", other)
	f.r.index.add("api", id)
	if got := f.r.Lookup(DiscoveryKey{ServiceID: "api"}); len(got.Nodes) != 0 {
		t.Errorf("lookup with stale index entries: %+v", got.Nodes)
	}
}

// BenchmarkLookup looks up a service of one instance among many others:
// the cost does not grow with the others (issue 11: 36.6k/s with 1
// instance in the registry, 13.5k/s with 5,000).
func BenchmarkLookup(b *testing.B) {
	for _, others := range []int{0, 5000, 50000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			f := start(b, WithLease(time.Hour), WithLogger(slog.New(slog.DiscardHandler)), WithLimits(Limits{MaxInstancesPerService: others + 1, MaxInstances: others + 1}))
			for i := range others {
				if _, err := f.r.Register(Registration{ServiceID: "crowd", Protocol: "http",
					Address: fmt.Sprintf("10.%d.%d.%d", i/62500, i/250%250, i%250), Port: 8080}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := f.r.Register(Registration{ServiceID: "single", Protocol: "http", Address: "10.99.0.1", Port: 8080}); err != nil {
				b.Fatal(err)
			}
			k := DiscoveryKey{ServiceID: "single"}
			b.ResetTimer()
			for b.Loop() {
				if len(f.r.Lookup(k).Nodes) != 1 {
					b.Fatal("lookup lost the instance")
				}
			}
		})
	}
}
