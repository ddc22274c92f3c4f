package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

func keyOf(i *Instance) DiscoveryKey {
	return DiscoveryKey{ServiceID: i.ServiceID, EnvTag: i.EnvTag, Protocol: i.Protocol}
}

// node is inst as a DiscoverySnapshot lists it: without LastSeenAt, which
// would be stale there (heartbeats do not reach the translator). Tags stay
// shared with inst; the snapshots map deep-copies what it stores.
func node(inst *Instance) Instance {
	n := *inst
	n.LastSeenAt = time.Time{}
	return n
}

// snapshotGrouping is the translator that derives the snapshots from the
// instances.
type snapshotGrouping = translator.Grouping[string, *Instance, DiscoveryKey, *DiscoverySnapshot]

// newSnapshots returns the translator that keeps its output equal to the
// instances grouped by (serviceId, envTag, protocol): one DiscoverySnapshot
// per group, nodes sorted.
//
// It needs no input equality to skip heartbeats: a heartbeat only moves
// LastSeenAt, which Instance.Equal ignores, so the instances map does not
// even wake the translator for it (see BenchmarkHeartbeat).
func newSnapshots(instances watchable.View[string, *Instance], logger *slog.Logger) *snapshotGrouping {
	return translator.GroupBy("registry/snapshots", instances,
		func(_ string, inst *Instance) (DiscoveryKey, bool) { return keyOf(inst), true },
		buildSnapshot,
		translator.WithLogger(logger))
}

// buildSnapshot lists members as the nodes of the snapshot for k.
func buildSnapshot(_ context.Context, k DiscoveryKey, members iter.Seq2[string, *Instance]) (*DiscoverySnapshot, error) {
	s := &DiscoverySnapshot{ServiceID: k.ServiceID, EnvTag: k.EnvTag, Protocol: k.Protocol}
	for _, inst := range members {
		s.Nodes = append(s.Nodes, node(inst))
	}
	sortNodes(s.Nodes)
	return s, nil
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
