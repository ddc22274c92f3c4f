package registry

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"

	"github.com/switchyard-go/switchyard/watchable"
)

// DiscoveryDelta is what a delta watch (SSE with delta=true, or
// discovery/subscribe with "delta": true) sends after its first snapshot:
// what changed since the previous event, instead of the whole snapshot
// again. A client keeps the snapshot of the first event and applies each
// delta to it, in order (see Apply).
type DiscoveryDelta struct {
	ServiceID string `json:"serviceId"`
	EnvTag    string `json:"envTag"`
	Protocol  string `json:"protocol"`
	// Upserts are the nodes added or changed since the previous event, in
	// the order of a snapshot's nodes: each replaces the node with its
	// runtimeInstanceId, or is added.
	Upserts []Instance `json:"upserts"`
	// Removes are the runtimeInstanceIds of the nodes gone since the
	// previous event, sorted.
	Removes []string `json:"removes"`
}

// Apply applies d to s, which holds what the watch sent before d: it
// removes the nodes d removes, replaces or adds those it upserts, and
// sorts the nodes as a snapshot's are.
func (d *DiscoveryDelta) Apply(s *DiscoverySnapshot) {
	gone := make(map[string]bool, len(d.Removes)+len(d.Upserts))
	for _, id := range d.Removes {
		gone[id] = true
	}
	for i := range d.Upserts {
		gone[d.Upserts[i].RuntimeInstanceID] = true
	}
	s.Nodes = slices.DeleteFunc(s.Nodes, func(n Instance) bool { return gone[n.RuntimeInstanceID] })
	s.Nodes = append(s.Nodes, d.Upserts...)
	sortNodes(s.Nodes)
}

// diff returns the delta that turns the merged snapshot of from into that
// of to, for the query q. Both are sorted slices of immutable snapshots.
func diff(q DiscoveryKey, from, to []*DiscoverySnapshot) *DiscoveryDelta {
	d := &DiscoveryDelta{ServiceID: q.ServiceID, EnvTag: q.EnvTag, Protocol: q.Protocol, Upserts: []Instance{}, Removes: []string{}}
	old := make(map[string]*Instance)
	for _, p := range from {
		for i := range p.Nodes {
			old[p.Nodes[i].RuntimeInstanceID] = &p.Nodes[i]
		}
	}
	for _, p := range to {
		if slices.Contains(from, p) {
			for i := range p.Nodes { // unchanged: nothing to say of its nodes
				delete(old, p.Nodes[i].RuntimeInstanceID)
			}
			continue
		}
		for i := range p.Nodes {
			n := &p.Nodes[i]
			if was, ok := old[n.RuntimeInstanceID]; !ok || !was.Equal(n) {
				d.Upserts = append(d.Upserts, *n) // shared, only encoded
			}
			delete(old, n.RuntimeInstanceID)
		}
	}
	for id := range old {
		d.Removes = append(d.Removes, id)
	}
	slices.Sort(d.Removes)
	sortNodes(d.Upserts)
	return d
}

// deltas caches the JSON of the latest delta of each query, so that a
// change seen by a hundred delta watchers that were all up to date is
// diffed and encoded once.
type deltas struct {
	mu sync.Mutex
	m  map[DiscoveryKey]encodedDelta
}

type encodedDelta struct {
	from, to []*DiscoverySnapshot
	data     []byte // nil for an empty delta
}

// encode returns the JSON of the delta from from to to, or nil when
// nothing a watcher sees changed.
func (c *deltas) encode(q DiscoveryKey, from, to []*DiscoverySnapshot) ([]byte, error) {
	c.mu.Lock()
	e, ok := c.m[q]
	c.mu.Unlock()
	if ok && slices.Equal(e.from, from) && slices.Equal(e.to, to) {
		return e.data, nil
	}
	d := diff(q, from, to)
	var data []byte
	if len(d.Upserts) > 0 || len(d.Removes) > 0 {
		var err error
		if data, err = json.Marshal(d); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxEncodings {
		c.m = make(map[DiscoveryKey]encodedDelta)
	}
	c.m[q] = encodedDelta{from: from, to: to, data: data}
	c.mu.Unlock()
	return data, nil
}

// partsOf returns the snapshots of st, which a watch of q selected, in the
// order of their keys.
func partsOf(st watchable.State[DiscoveryKey, *DiscoverySnapshot]) []*DiscoverySnapshot {
	parts := make([]*DiscoverySnapshot, 0, st.Len())
	for _, s := range st.All() {
		parts = append(parts, s)
	}
	slices.SortFunc(parts, func(a, b *DiscoverySnapshot) int {
		return cmp.Or(cmp.Compare(a.EnvTag, b.EnvTag), cmp.Compare(a.Protocol, b.Protocol))
	})
	return parts
}
