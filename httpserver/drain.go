package httpserver

import "context"

// contextKey is the type of this package's context keys.
type contextKey int

const drainingKey contextKey = iota

// Draining returns a channel that is closed once the Server that received
// the request of ctx has begun to shut down, or nil when ctx is not a
// request context of a Server. Handlers of long-lived streams select on
// it to end them at once (a WebSocket with close status 1001, going away)
// rather than hold the shutdown for its whole grace.
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainingKey).(chan struct{})
	return ch
}
