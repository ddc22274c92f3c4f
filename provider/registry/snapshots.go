package registry

import (
	"context"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// groupSnapshots derives the DiscoverySnapshots from the instances: one per
// (serviceId, envTag, protocol), nodes sorted, LastSeenAt left out so that
// heartbeats change nothing here.
func groupSnapshots(instances watchable.State[string, *Instance]) map[DiscoveryKey]*DiscoverySnapshot {
	out := make(map[DiscoveryKey]*DiscoverySnapshot)
	for _, inst := range instances.All() {
		k := DiscoveryKey{ServiceID: inst.ServiceID, EnvTag: inst.EnvTag, Protocol: inst.Protocol}
		s := out[k]
		if s == nil {
			s = &DiscoverySnapshot{ServiceID: k.ServiceID, EnvTag: k.EnvTag, Protocol: k.Protocol}
			out[k] = s
		}
		node := *inst // Tags stay shared: Replace deep-copies
		node.LastSeenAt = time.Time{}
		s.Nodes = append(s.Nodes, node)
	}
	for _, s := range out {
		sortNodes(s.Nodes)
	}
	return out
}

// deriveSnapshots keeps r.snapshots equal to groupSnapshots of r.instances
// until ctx is done. Subscriptions coalesce, so a burst of writes costs one
// recomputation; Replace publishes only the snapshots that changed.
//
// This is the translator.Compute pattern, written inline until the
// translator package lands.
func (r *Registry) deriveSnapshots(ctx context.Context) {
	first := true
	for snap := range r.instances.Subscribe(ctx) {
		r.snapshots.Replace(groupSnapshots(snap.State))
		if first {
			close(r.ready)
			first = false
		}
	}
}
