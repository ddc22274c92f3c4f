package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

func keyOf(i *Instance) DiscoveryKey {
	return DiscoveryKey{ServiceID: i.ServiceID, EnvTag: i.EnvTag, Protocol: i.Protocol}
}

// node is inst as a DiscoverySnapshot lists it: without LastSeenAt. Tags
// stay shared with inst; the snapshots map deep-copies what it stores.
func node(inst *Instance) Instance {
	n := *inst
	n.LastSeenAt = time.Time{}
	return n
}

// groupSnapshots derives the DiscoverySnapshots from the instances from
// scratch: one per (serviceId, envTag, protocol), nodes sorted. It is the
// definition that deriveSnapshots maintains incrementally.
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

// sameNode reports whether a and b list as the same node: equal but for
// LastSeenAt, which heartbeats move.
func sameNode(a, b *Instance) bool {
	x, y := node(a), node(b)
	return x.Equal(&y)
}

// deriveSnapshots keeps r.snapshots equal to groupSnapshots of r.instances
// until ctx is done. It works incrementally: subscriptions coalesce, so a
// burst of writes costs one pass, the pass rebuilds only the snapshots whose
// nodes changed, and an update that only moves LastSeenAt (a heartbeat)
// costs a comparison.
//
// This is what translator.Compute over the instances would do, without
// rebuilding every snapshot on every heartbeat.
func (r *Registry) deriveSnapshots(ctx context.Context) {
	var prev watchable.State[string, *Instance]
	members := make(map[DiscoveryKey]map[string]*Instance)
	first := true
	for snap := range r.instances.Subscribe(ctx) {
		dirty := make(map[DiscoveryKey]bool)
		for _, u := range snap.Updates {
			old, hadOld := prev.Get(u.Key)
			if !u.Delete && hadOld && sameNode(old, u.Value) {
				members[keyOf(old)][u.Key] = u.Value
				continue
			}
			if hadOld {
				k := keyOf(old)
				delete(members[k], u.Key)
				dirty[k] = true
			}
			if !u.Delete {
				k := keyOf(u.Value)
				if members[k] == nil {
					members[k] = make(map[string]*Instance)
				}
				members[k][u.Key] = u.Value
				dirty[k] = true
			}
		}
		prev = snap.State
		if len(dirty) > 0 {
			r.snapshots.Batch(func(b *watchable.Batch[DiscoveryKey, *DiscoverySnapshot]) {
				for k := range dirty {
					if len(members[k]) == 0 {
						delete(members, k)
						b.Delete(k)
						continue
					}
					s := &DiscoverySnapshot{ServiceID: k.ServiceID, EnvTag: k.EnvTag, Protocol: k.Protocol,
						Nodes: make([]Instance, 0, len(members[k]))}
					for _, inst := range members[k] {
						s.Nodes = append(s.Nodes, node(inst))
					}
					sortNodes(s.Nodes)
					b.Store(k, s)
				}
			})
		}
		if first {
			close(r.ready)
			first = false
		}
	}
}

// encodings caches the JSON of watch answers, so that a change watched by a
// hundred watchers is encoded once. Entries are keyed by the query and
// valid for the exact snapshot values (immutable, compared by pointer) they
// were made from.
type encodings struct {
	mu sync.Mutex
	m  map[DiscoveryKey]encoded
}

type encoded struct {
	parts []*DiscoverySnapshot
	data  []byte
}

const maxEncodings = 1024

// encode returns the JSON of the merged snapshot for query q over st,
// which holds only snapshots that q matches.
func (e *encodings) encode(q DiscoveryKey, st watchable.State[DiscoveryKey, *DiscoverySnapshot]) ([]byte, error) {
	parts := make([]*DiscoverySnapshot, 0, st.Len())
	for _, s := range st.All() {
		parts = append(parts, s)
	}
	slices.SortFunc(parts, func(a, b *DiscoverySnapshot) int { return compareKeys(a, b) })
	e.mu.Lock()
	c, ok := e.m[q]
	e.mu.Unlock()
	if ok && slices.Equal(c.parts, parts) {
		return c.data, nil
	}
	out := DiscoverySnapshot{ServiceID: q.ServiceID, EnvTag: q.EnvTag, Protocol: q.Protocol, Nodes: []Instance{}}
	for _, p := range parts {
		out.Nodes = append(out.Nodes, p.Nodes...) // shared, only encoded
	}
	if len(parts) > 1 {
		sortNodes(out.Nodes)
	}
	data, err := json.Marshal(&out)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.m == nil || len(e.m) >= maxEncodings {
		e.m = make(map[DiscoveryKey]encoded)
	}
	e.m[q] = encoded{parts: parts, data: data}
	e.mu.Unlock()
	return data, nil
}

func compareKeys(a, b *DiscoverySnapshot) int {
	return cmp.Or(cmp.Compare(a.EnvTag, b.EnvTag), cmp.Compare(a.Protocol, b.Protocol))
}
