package message

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Loop names a handling loop in logs (keys "runner" and "message") and in
// metrics (labels of the same names).
type Loop struct {
	// Runner is the component that consumes the subscription. When it is
	// empty, the name of the runner whose context the loop runs with is
	// used (see runner.NameOf).
	Runner string
	// Message is what the subscription carries, such as the name of the map.
	Message string
}

// Option configures HandleSubscription and HandleSnapshots.
type Option func(*options)

type options struct {
	logger  *slog.Logger
	metrics *Metrics
}

// WithLogger sends the records about handler errors and panics to l.
// Without it, or with a nil l, they go to slog.Default(): a failing handler
// is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithMetrics records the loop's metrics in m. A nil m records nothing,
// which is the default.
func WithMetrics(m *Metrics) Option {
	return func(o *options) { o.metrics = m }
}

// HandleSubscription calls handle for every update the subscription sub
// delivers, one at a time, in the order they are delivered: first one per
// entry of the initial contents, then the net change of every key that
// changed between two snapshots (see watchable.Snapshot; updates of one
// snapshot come in no particular order). The Value of an update is shared
// with the map and must not be mutated.
//
// An error from handle is logged and counted, and a panic in handle is
// recovered, logged with its stack and counted; either way the next update
// is handled as usual. Retrying is up to handle: the map delivers a key
// again only when it changes again.
//
// HandleSubscription blocks until sub is closed (its context is done or the
// map is closed), after handling what sub still held, or until ctx is done,
// which stops it before the next update. ctx is passed to handle.
func HandleSubscription[K comparable, V any](ctx context.Context, loop Loop, sub <-chan watchable.Snapshot[K, V], handle func(ctx context.Context, u watchable.Update[K, V]) error, opts ...Option) {
	h := newHandler(ctx, loop, opts)
	for {
		snap, ok := receive(ctx, sub)
		if !ok {
			return
		}
		h.delivered(len(snap.Updates))
		handled := 0
		for _, u := range snap.Updates {
			if ctx.Err() != nil {
				break
			}
			if p, err := call(ctx, h, handle, u); p != nil || err != nil {
				h.failed(p, err, "key", u.Key, "delete", u.Delete, "revision", snap.Revision)
			}
			handled++
		}
		h.handled(handled)
	}
}

// HandleSnapshots is HandleSubscription for handlers that want each
// snapshot whole (typically to recompute something from snapshot.State):
// handle is called once per delivered snapshot, in order, the first holding
// the initial contents. Errors and panics are treated as in
// HandleSubscription.
func HandleSnapshots[K comparable, V any](ctx context.Context, loop Loop, sub <-chan watchable.Snapshot[K, V], handle func(ctx context.Context, s watchable.Snapshot[K, V]) error, opts ...Option) {
	h := newHandler(ctx, loop, opts)
	for {
		snap, ok := receive(ctx, sub)
		if !ok {
			return
		}
		h.delivered(len(snap.Updates))
		if p, err := call(ctx, h, handle, snap); p != nil || err != nil {
			h.failed(p, err, "revision", snap.Revision, "updates", len(snap.Updates))
		}
		h.handled(len(snap.Updates))
	}
}

// receive returns the next snapshot, or false when sub is closed or ctx is
// done. A done ctx wins over a readable sub.
func receive[K comparable, V any](ctx context.Context, sub <-chan watchable.Snapshot[K, V]) (watchable.Snapshot[K, V], bool) {
	if ctx.Err() != nil {
		return watchable.Snapshot[K, V]{}, false
	}
	select {
	case <-ctx.Done():
		return watchable.Snapshot[K, V]{}, false
	case snap, ok := <-sub:
		return snap, ok
	}
}

// handler holds one loop's logger and metrics, resolved once so that
// handling an update costs no label lookups.
type handler struct {
	meta     Loop
	log      *slog.Logger
	metrics  bool
	updates  prometheus.Counter
	errors   prometheus.Counter
	panics   prometheus.Counter
	duration prometheus.Observer
	batch    prometheus.Observer
}

func newHandler(ctx context.Context, meta Loop, opts []Option) *handler {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if meta.Runner == "" {
		meta.Runner = runner.NameOf(ctx)
	}
	h := &handler{meta: meta, log: o.logger}
	if h.log == nil {
		h.log = slog.Default()
	}
	if m := o.metrics; m != nil {
		h.metrics = true
		h.updates = m.updates.WithLabelValues(meta.Runner, meta.Message)
		h.errors = m.errors.WithLabelValues(meta.Runner, meta.Message)
		h.panics = m.panics.WithLabelValues(meta.Runner, meta.Message)
		h.duration = m.duration.WithLabelValues(meta.Runner, meta.Message)
		h.batch = m.batch.WithLabelValues(meta.Runner, meta.Message)
	}
	return h
}

// delivered records the size of a snapshot received from the subscription.
func (h *handler) delivered(updates int) {
	if h.metrics {
		h.batch.Observe(float64(updates))
	}
}

// handled counts updates passed to the handler, once per snapshot rather
// than per update to keep the loop cheap.
func (h *handler) handled(updates int) {
	if h.metrics && updates > 0 {
		h.updates.Add(float64(updates))
	}
}

// recovered is a panic in a handler.
type recovered struct {
	value any
	stack []byte
}

// call runs fn(ctx, arg) and returns its error, or the panic it recovered.
// It is generic rather than taking a closure so that handling an update
// allocates nothing.
func call[T any](ctx context.Context, h *handler, fn func(context.Context, T) error, arg T) (p *recovered, err error) {
	var start time.Time
	if h.metrics {
		start = time.Now()
	}
	defer func() {
		if v := recover(); v != nil {
			p = &recovered{value: v, stack: debug.Stack()}
		}
		if h.metrics {
			h.duration.Observe(time.Since(start).Seconds())
		}
	}()
	return nil, fn(ctx, arg)
}

// failed logs and counts a handler's panic or error; attrs identify what it
// was handling.
func (h *handler) failed(p *recovered, err error, attrs ...any) {
	if p != nil {
		if h.metrics {
			h.panics.Inc()
		}
		attrs = append([]any{"runner", h.meta.Runner, "message", h.meta.Message, "panic", fmt.Sprint(p.value), "stack", string(p.stack)}, attrs...)
		h.log.Error("message handler panicked", attrs...)
		return
	}
	if h.metrics {
		h.errors.Inc()
	}
	attrs = append([]any{"runner", h.meta.Runner, "message", h.meta.Message, "error", err}, attrs...)
	h.log.Error("message handler failed", attrs...)
}
