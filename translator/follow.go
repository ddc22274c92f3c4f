package translator

import (
	"context"

	"github.com/switchyard-go/switchyard/watchable"
)

// follow is the loop Derive and GroupBy share: it hands every snapshot of in
// to apply until ctx is done, and calls ready once the first has been
// applied. apply reports false when ctx ended its work part way through a
// snapshot; follow then returns without ready, and nothing half-done has
// been published.
//
// A map closed before Run delivers no snapshot, but its contents are final
// and still readable, so follow applies them once as a first snapshot.
func follow[K comparable, V any](ctx context.Context, in watchable.View[K, V], apply func(ctx context.Context, snap watchable.Snapshot[K, V], first bool) bool, ready func()) {
	sub := in.Subscribe(ctx)
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case snap, ok := <-sub:
			if !ok { // closed by ctx, or the input map was closed
				if ctx.Err() != nil {
					return
				}
				if first && apply(ctx, initial(in), true) {
					ready()
				}
				<-ctx.Done()
				return
			}
			if !apply(ctx, snap, first) {
				return
			}
			if first {
				first = false
				ready()
			}
		}
	}
}

// initial is the snapshot a subscription to the closed map m would deliver
// first.
func initial[K comparable, V any](m watchable.View[K, V]) watchable.Snapshot[K, V] {
	st := m.State()
	snap := watchable.Snapshot[K, V]{State: st, Revision: m.Revision()}
	snap.Updates = make([]watchable.Update[K, V], 0, st.Len())
	for k, v := range st.All() {
		snap.Updates = append(snap.Updates, watchable.Update[K, V]{Key: k, Value: v})
	}
	return snap
}
