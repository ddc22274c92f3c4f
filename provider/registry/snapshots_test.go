package registry

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// groupSnapshots derives the DiscoverySnapshots from the instances from
// scratch: one per (serviceId, envTag, protocol), nodes sorted. It is the
// definition that the registry's translator maintains incrementally.
func groupSnapshots(instances watchable.State[string, *Instance]) map[DiscoveryKey]*DiscoverySnapshot {
	out := make(map[DiscoveryKey]*DiscoverySnapshot)
	for _, inst := range instances.All() {
		k := keyOf(inst)
		s := out[k]
		if s == nil {
			s = &DiscoverySnapshot{ServiceID: k.ServiceID, EnvTag: k.EnvTag, Protocol: k.Protocol}
			out[k] = s
		}
		s.Nodes = append(s.Nodes, node(inst))
	}
	for _, s := range out {
		sortNodes(s.Nodes)
	}
	return out
}

// TestSnapshotsFollowInstances drives random registrations, heartbeats,
// disconnections and deregistrations and checks that the incrementally
// derived Snapshots always settle on groupSnapshots of the Instances.
func TestSnapshotsFollowInstances(t *testing.T) {
	f := start(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []string
	owners := make(map[string]*session) // what holds the instances registered over a "socket"
	for round := range 20 {
		for range 25 {
			switch op := rng.IntN(10); {
			case op < 4 || len(ids) == 0:
				reg := Registration{
					ServiceID: fmt.Sprintf("svc-%d", rng.IntN(3)), EnvTag: []string{"", "prod", "dev"}[rng.IntN(3)],
					Protocol: []string{"http", "grpc"}[rng.IntN(2)], Address: "10.0.0.1", Port: 1 + rng.IntN(20),
					Version: fmt.Sprint(rng.IntN(3)),
				}
				// Half of them as a WebSocket registers them, held by
				// their socket.
				var owner *session
				if rng.IntN(2) == 0 {
					owner = &session{}
				}
				id, err := f.r.register(reg, owner) // what Register and the socket do
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
				owners[id] = owner
			case op < 7:
				_ = f.r.Heartbeat(ids[rng.IntN(len(ids))])
			case op < 8:
				// What a closed socket does (nothing for an instance
				// that no socket holds).
				id := ids[rng.IntN(len(ids))]
				f.r.store.disconnect(id, owners[id])
			default:
				_ = f.r.Deregister(ids[rng.IntN(len(ids))])
			}
		}
		want := groupSnapshots(f.r.Instances().State())
		f.waitSnapshots(fmt.Sprintf("round %d: snapshots match the instances", round), func(got map[DiscoveryKey]*DiscoverySnapshot) bool {
			return cmp.Equal(want, got)
		})
		// Lookup agrees with the snapshots for exact keys (an empty envTag
		// in a lookup matches every envTag).
		for k, s := range want {
			if k.EnvTag == "" {
				continue
			}
			if diff := cmp.Diff(s, f.r.Lookup(k)); diff != "" {
				t.Fatalf("Lookup(%v) (-snapshot +lookup):\n%s", k, diff)
			}
		}
	}
}
