package registry

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/switchyard-go/switchyard/watchable"
)

// serviceIndex lists the runtimeInstanceIds of each service, so that a
// lookup reads the instances of its service only, however many others the
// registry holds.
//
// It may list ids that are gone, or that now belong to another service: a
// lookup loads every id it lists from the instances map and keeps only
// those that are there and match. What it must never miss is an instance
// that Register has returned: register adds the id before it returns, and
// follow adds what reaches the map otherwise (from a shared store) and
// removes what leaves it, a little later. Until follow has read the map
// once, lookups read the whole map.
//
// It is safe for concurrent use.
type serviceIndex struct {
	mu        sync.RWMutex
	byService map[string]map[string]struct{}
	following atomic.Bool // follow has read the whole map once
}

func (x *serviceIndex) add(serviceID, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byService == nil {
		x.byService = make(map[string]map[string]struct{})
	}
	ids := x.byService[serviceID]
	if ids == nil {
		ids = make(map[string]struct{})
		x.byService[serviceID] = ids
	}
	ids[id] = struct{}{}
}

func (x *serviceIndex) remove(serviceID, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids := x.byService[serviceID]
	delete(ids, id)
	if len(ids) == 0 {
		delete(x.byService, serviceID)
	}
}

// ids returns the ids listed for serviceID, and false when the index
// cannot be trusted yet.
func (x *serviceIndex) ids(serviceID string) ([]string, bool) {
	if !x.following.Load() {
		return nil, false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.byService[serviceID]))
	for id := range x.byService[serviceID] {
		out = append(out, id)
	}
	return out, true
}

// follow keeps the index in step with instances until ctx is done.
func (x *serviceIndex) follow(ctx context.Context, instances watchable.View[string, *Instance]) {
	for snap := range instances.Subscribe(ctx) {
		for _, u := range snap.Updates {
			if u.Delete {
				x.remove(u.Value.ServiceID, u.Key)
			} else {
				x.add(u.Value.ServiceID, u.Key)
			}
		}
		x.following.Store(true)
	}
}

// register stores a validated registration, as store.register does, and
// indexes it before returning.
func (r *Registry) register(reg Registration, owner *session) (string, error) {
	id, err := r.store.register(reg, owner)
	if err == nil {
		r.index.add(reg.ServiceID, id)
	}
	return id, err
}

// instancesOf returns the instances of st that lookup k selects: from the
// ids the index lists for k's service, or from the whole map while the
// index is not following it yet.
func (r *Registry) instancesOf(st watchable.State[string, *Instance], k DiscoveryKey) []*Instance {
	var out []*Instance
	ids, ok := r.index.ids(k.ServiceID)
	if !ok {
		for _, inst := range st.All() {
			if k.matches(keyOf(inst)) {
				out = append(out, inst)
			}
		}
		return out
	}
	for _, id := range ids {
		if inst, ok := st.Get(id); ok && k.matches(keyOf(inst)) {
			out = append(out, inst)
		}
	}
	return out
}
