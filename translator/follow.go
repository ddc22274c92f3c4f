package translator

import (
	"context"

	"github.com/switchyard-go/switchyard/watchable"
)

// follow is the loop Derive and GroupBy share: it hands every snapshot of in
// to apply until ctx is done, and calls initialized (the output's
// initializer) once it has applied a snapshot taken while in was
// initialized. Snapshots of an uninitialized input are applied as they come,
// so a partial output is published early, but the output is not initialized
// before its input. apply reports false when ctx ended its work part way
// through a snapshot; follow then returns, and nothing half-done has been
// published.
//
// A map closed before Run delivers no snapshot, but its contents are final
// and still readable, so follow applies them once as a first snapshot. A
// closed input whose initialization completes later (its initializer may
// finish after Close) still initializes the output: the contents applied
// were final.
func follow[K comparable, V any](ctx context.Context, in watchable.View[K, V], apply func(ctx context.Context, snap watchable.Snapshot[K, V], first bool) bool, initialized func()) {
	sub := in.Subscribe(ctx)
	first, marked := true, false
	for {
		select {
		case <-ctx.Done():
			return
		case snap, ok := <-sub:
			if !ok { // closed by ctx, or the input map was closed
				if ctx.Err() != nil {
					return
				}
				if first {
					snap = initial(in)
					if !apply(ctx, snap, true) {
						return
					}
					marked = snap.Initialized
					if marked {
						initialized()
					}
				}
				if !marked {
					select {
					case <-ctx.Done():
						return
					case <-in.Initialized():
						initialized()
					}
				}
				<-ctx.Done()
				return
			}
			if !apply(ctx, snap, first) {
				return
			}
			first = false
			if snap.Initialized && !marked {
				marked = true
				initialized()
			}
		}
	}
}

// initial is the snapshot a subscription to the closed map m would deliver
// first.
func initial[K comparable, V any](m watchable.View[K, V]) watchable.Snapshot[K, V] {
	st := m.State()
	snap := watchable.Snapshot[K, V]{State: st, Revision: st.Revision()}
	select {
	case <-m.Initialized():
		snap.Initialized = true
	default:
	}
	snap.Updates = make([]watchable.Update[K, V], 0, st.Len())
	for k, v := range st.All() {
		snap.Updates = append(snap.Updates, watchable.Update[K, V]{Key: k, Value: v})
	}
	return snap
}
