package registry

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// next returns the next snapshot from sub, failing the test after waitFor.
func next[K comparable, V any](t *testing.T, sub <-chan watchable.Snapshot[K, V]) watchable.Snapshot[K, V] {
	t.Helper()
	select {
	case snap, ok := <-sub:
		if !ok {
			t.Fatal("subscription closed")
		}
		return snap
	case <-time.After(waitFor):
		t.Fatal("no snapshot")
	}
	panic("unreachable")
}

func updatedKeys[K comparable, V any](snap watchable.Snapshot[K, V]) []K {
	keys := []K{}
	for _, u := range snap.Updates {
		keys = append(keys, u.Key)
	}
	return keys
}

// TestHeartbeatWakesNobody checks that a heartbeat, which moves only
// LastSeenAt, is no change to the maps: no subscriber of Instances (the
// translator deriving Snapshots is one) nor of Snapshots is woken, and no
// revision is made; yet Load, and the State of the next snapshot an
// Instances subscriber receives, show the new LastSeenAt. A heartbeat that
// reconnects an instance is a change.
func TestHeartbeatWakesNobody(t *testing.T) {
	const lease = time.Minute
	clock := newFakeClock()
	f := start(t, WithLease(lease), withClock(clock))
	id := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 80})
	apiKey := DiscoveryKey{ServiceID: "api", Protocol: "http"}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	instances := f.r.Instances().Subscribe(ctx)
	snapshots := f.r.Snapshots().Subscribe(ctx)
	next(t, instances)
	for snap := next(t, snapshots); ; snap = next(t, snapshots) {
		if _, ok := snap.State.Get(apiKey); ok {
			break
		}
	}
	instRev, snapRev := f.r.Instances().Revision(), f.r.Snapshots().Revision()

	clock.advance(time.Second)
	if err := f.r.Heartbeat(id); err != nil {
		t.Fatal(err)
	}
	beat := clock.now()
	if inst, _ := f.r.Instances().Load(id); !inst.LastSeenAt.Equal(beat) {
		t.Errorf("Load after the heartbeat: lastSeenAt %v, want %v", inst.LastSeenAt, beat)
	}
	if got := f.r.Instances().Revision(); got != instRev {
		t.Errorf("the heartbeat made Instances revision %d, want %d still", got, instRev)
	}

	// The next change is the next snapshot: nothing came for the heartbeat.
	other := f.register(Registration{ServiceID: "billing", Protocol: "http", Address: "10.0.0.2", Port: 80})
	snap := next(t, instances)
	if diff := cmp.Diff([]string{other}, updatedKeys(snap)); diff != "" || snap.Revision != instRev+1 {
		t.Errorf("Instances: next snapshot at revision %d (want %d) updates (-want +got):\n%s", snap.Revision, instRev+1, diff)
	}
	if inst, _ := snap.State.Get(id); !inst.LastSeenAt.Equal(beat) {
		t.Errorf("Instances: next snapshot's state has lastSeenAt %v, want %v", inst.LastSeenAt, beat)
	}
	ssnap := next(t, snapshots)
	if diff := cmp.Diff([]DiscoveryKey{{ServiceID: "billing", Protocol: "http"}}, updatedKeys(ssnap)); diff != "" || ssnap.Revision != snapRev+1 {
		t.Errorf("Snapshots: next snapshot at revision %d (want %d) updates (-want +got):\n%s", ssnap.Revision, snapRev+1, diff)
	}

	// A lease runs out, and a heartbeat reconnects: two changes.
	clock.advance(lease)
	f.r.store.expire()
	if inst, _ := next(t, instances).State.Get(id); inst.Connected {
		t.Fatal("instance still connected one lease after its heartbeat")
	}
	if err := f.r.Heartbeat(id); err != nil {
		t.Fatal(err)
	}
	snap = next(t, instances)
	if inst, _ := snap.State.Get(id); !inst.Connected || !cmp.Equal([]string{id}, updatedKeys(snap)) {
		t.Errorf("after a reconnecting heartbeat: %+v, updates %v; want connected, updated", inst, updatedKeys(snap))
	}
}

// expire runs the memory store's expiry now, as its ticker would.
func (s *instanceStore) expire() { s.st.(*memoryStore).expire() }
