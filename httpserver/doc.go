// Package httpserver runs an HTTP server as a runner: it listens when it
// runs, says when it is ready and which address it got, and shuts down
// gracefully when its context is done.
//
//	srv := httpserver.New("api", "127.0.0.1:8080", mux)
//	err := runner.Run(ctx, srv, ...) // until ctx is done
//
// A Server is a runner.Runner and a runner.Readier: it is ready once it
// listens, and Addr then reports the address it is bound to, so an address
// with port 0 works for tests and for a program that prints where it
// listens.
//
// # Shutdown
//
// When the context of Run is done, the server stops accepting connections,
// closes idle ones, and lets the requests in flight finish, for up to the
// shutdown grace (WithShutdownGrace, DefaultShutdownGrace: 15 s). Their
// contexts stay alive meanwhile; once the grace is over the remaining
// connections are closed and the contexts of their requests cancelled.
// A Server is a runner.Drainer: a runner group waits for it that long,
// although the group's default grace (runner.DefaultGrace) is shorter.
//
// Hijacked connections (WebSockets), which net/http's Shutdown forgets,
// are waited for too, within the same grace: their requests' contexts are
// cancelled only once they have closed, so that they can end with a close
// frame. Handlers of long-lived streams (Server-Sent Events, WebSockets)
// should therefore end as soon as the shutdown begins, or they hold it for
// the whole grace: Draining(r.Context()) is closed then, and
// WithOnShutdown runs functions then. A WebSocket ends with close status
// 1001 (going away), as the registry's do.
//
// # Limits
//
// The defaults suit a server exposed to clients it does not control, and
// are what a production server keeps:
//
//   - request headers must arrive within DefaultReadHeaderTimeout (10 s),
//     and a request's body within DefaultBodyTimeout (30 s) after them;
//   - idle keep-alive connections are closed after DefaultIdleTimeout
//     (2 min);
//   - the server holds at most the connections its own cap allows
//     (WithMaxConnections; none by default) and the process's budget
//     leaves (ProcessMaxConnections: half the descriptor limit, shared by
//     every Server of the process). At either limit it stops accepting,
//     and logs it, rather than run the process out of descriptors.
//
// Responses have no deadline by default, since streams may legitimately
// take long; WithWriteTimeout sets one. Records (the address it listens
// on, a connection limit reached, a shutdown that ran out of grace, the
// server's own errors such as a panicking handler) go to slog.Default()
// unless WithLogger says otherwise.
package httpserver
