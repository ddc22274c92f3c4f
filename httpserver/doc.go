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
// When the context of Run is done, the server stops accepting connections,
// closes idle ones, and lets the requests in flight finish, for up to the
// shutdown grace (WithShutdownGrace). Their contexts stay alive meanwhile;
// once the grace is over the remaining connections are closed and the
// contexts of their requests cancelled. Handlers of long-lived streams
// (Server-Sent Events, WebSockets) should therefore end on a signal of
// their own, as the registry's do when the registry stops, or they hold
// the shutdown for the whole grace.
//
// The defaults suit a server exposed to clients it does not control:
// request headers must arrive within DefaultReadHeaderTimeout, and idle
// keep-alive connections are closed after DefaultIdleTimeout. Request
// bodies and responses have no deadline by default, since streams and
// uploads may legitimately take long; WithReadTimeout and WithWriteTimeout
// set one. Records (the address it listens on, a shutdown that ran out of
// grace, the server's own errors such as a panicking handler) go to
// slog.Default() unless WithLogger says otherwise.
package httpserver
