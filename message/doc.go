// Package message consumes watchable subscriptions safely.
//
// HandleSubscription calls a handler once per changed key, and
// HandleSnapshots once per delivered snapshot, for the initial contents and
// every later change, until the subscription closes or the context is done.
// HandleLazily calls it once per changed key too, but claims the changes
// from the map when it is ready (watchable.State.UpdatesSince) instead of
// reading a subscription, so that a slow handler's backlog costs writers
// nothing; HandleKeysLazily and HandlePartitionLazily do the same for a few
// keys and for one partition, the per-node fan-out's loops.
// A handler that returns an error or panics does not end the loop: the error
// or the panic (with its stack) is logged and counted, and the next update is
// handled. Loop names the loop in logs and metrics. Records go to
// slog.Default() unless WithLogger says otherwise.
//
// Metrics are Prometheus metrics registered on a registry the program
// chooses (NewMetrics); nothing is registered globally. Besides the handler
// metrics, Metrics.ObserveMap exposes the size, revision, subscribers,
// notifiers and initialization of a watchable map, read only when Prometheus
// scrapes.
package message
