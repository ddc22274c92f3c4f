package httpserver

import (
	"log/slog"
	"net/http"
	"time"
)

// The defaults of a Server's options.
const (
	// DefaultShutdownGrace is how long requests in flight may take to
	// finish once the server is stopped: long enough for any request a
	// client would not have given up on. A Server is a runner.Drainer, so
	// its runner group waits for it that long (plus runner.DrainMargin)
	// even though runner.DefaultGrace is shorter.
	DefaultShutdownGrace = 15 * time.Second
	// DefaultReadHeaderTimeout is how long a client has to send a request's
	// headers, from the moment the connection is accepted or, on a
	// keep-alive connection, from the end of the previous response.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may stay idle
	// between requests. It is longer than the 90 s after which Go's
	// http.Transport closes an idle connection itself, so that clients,
	// not the server, normally close them.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultBodyTimeout is how long a client has to send a request's
	// body, from the end of its headers. It is what keeps a client that
	// trickles a body from holding a connection.
	DefaultBodyTimeout = 30 * time.Second
)

// Option configures a Server.
type Option func(*config)

type config struct {
	logger            *slog.Logger // nil: slog.Default(), looked up when logging
	shutdownGrace     time.Duration
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	bodyTimeout       time.Duration
	maxHeaderBytes    int
	maxConnections    int      // 0: the process budget only
	onShutdown        []func() // run when the shutdown begins
}

func newConfig(opts []Option) config {
	c := config{
		shutdownGrace:     DefaultShutdownGrace,
		readHeaderTimeout: DefaultReadHeaderTimeout,
		idleTimeout:       DefaultIdleTimeout,
		bodyTimeout:       DefaultBodyTimeout,
		maxHeaderBytes:    http.DefaultMaxHeaderBytes,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func (c *config) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// WithLogger sends the server's records to l, with the key "runner" set to
// the server's name: the address it listens on (info), a connection limit
// reached (warn, at most once a minute) and left (info), a shutdown that
// ran out of grace (warn), and what net/http reports (a panic in a handler
// at error, anything else at warn). Without it, or with a nil l, they go to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithShutdownGrace sets how long the requests in flight when the server is
// stopped may take to finish (default DefaultShutdownGrace). The server
// reports it as a runner.Drainer, so a runner group waits for it at least
// that long. Zero or less closes every connection at once.
func WithShutdownGrace(d time.Duration) Option {
	return func(c *config) { c.shutdownGrace = max(d, 0) }
}

// WithReadHeaderTimeout sets how long a client has to send a request's
// headers (default DefaultReadHeaderTimeout); it is what keeps a client that
// opens connections and sends nothing from holding them. Zero or less
// means no limit.
func WithReadHeaderTimeout(d time.Duration) Option {
	return func(c *config) { c.readHeaderTimeout = max(d, 0) }
}

// WithBodyTimeout sets how long a client has to send a request's body,
// from the end of its headers (default DefaultBodyTimeout). Reading the
// body after that fails with an error that is ErrBodyTimeout, and the
// connection is closed after the response. The deadline is lifted once the
// body is read to its end, so a response may stream for as long as it
// likes; requests without a body (WebSocket upgrades included) have none.
// A handler that answers without reading the body to its end (a refusal)
// also ends the reading: the server does not wait for the rest, which a
// hostile client would send as slowly as it could, and closes the
// connection after the response. Zero or less means no limit, and no
// such ending.
func WithBodyTimeout(d time.Duration) Option {
	return func(c *config) { c.bodyTimeout = max(d, 0) }
}

// WithMaxConnections caps the connections the server holds open at n
// (default: no cap of its own). Every Server of the process also draws on
// one budget (ProcessMaxConnections), so that together they never run the
// process out of file descriptors. While either is full the server stops
// accepting: new connections wait in the listen queue until one closes,
// and the server logs a warning. Give each server of a program a share,
// so that a flood on one (a public gateway) leaves room for another (the
// control plane). Zero or less means no cap of its own.
func WithMaxConnections(n int) Option {
	return func(c *config) { c.maxConnections = max(n, 0) }
}

// WithOnShutdown adds f to the functions run, each in its own goroutine,
// when the server begins to shut down: the place to tell long-lived
// connections (hijacked ones, such as WebSockets, which the server no
// longer tracks) to close. Handlers can instead select on Draining.
func WithOnShutdown(f func()) Option {
	return func(c *config) {
		if f != nil {
			c.onShutdown = append(c.onShutdown, f)
		}
	}
}

// WithReadTimeout sets how long reading a whole request, body included, may
// take (default: no limit). Prefer WithBodyTimeout: this deadline stays
// set while the handler runs, and net/http ends the request's context when
// it passes, which cuts long responses such as Server-Sent Events.
func WithReadTimeout(d time.Duration) Option {
	return func(c *config) { c.readTimeout = max(d, 0) }
}

// WithWriteTimeout sets how long writing a response may take, from the end
// of the request's headers (default: no limit). It ends long-lived streams
// (Server-Sent Events, profiles) at that time too, unless their handler
// extends its deadline with http.ResponseController.
func WithWriteTimeout(d time.Duration) Option {
	return func(c *config) { c.writeTimeout = max(d, 0) }
}

// WithIdleTimeout sets how long a keep-alive connection may stay idle
// between requests (default DefaultIdleTimeout). Zero or less means no
// limit.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idleTimeout = max(d, 0) }
}

// WithMaxHeaderBytes sets the largest request header the server reads
// (default http.DefaultMaxHeaderBytes, 1 MiB); a larger one is answered
// with 431. Zero or less means the default.
func WithMaxHeaderBytes(n int) Option {
	return func(c *config) {
		if n <= 0 {
			n = http.DefaultMaxHeaderBytes
		}
		c.maxHeaderBytes = n
	}
}
