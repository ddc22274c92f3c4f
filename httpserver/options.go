package httpserver

import (
	"log/slog"
	"net/http"
	"time"
)

// The defaults of a Server's options.
const (
	// DefaultShutdownGrace is how long requests in flight may take to
	// finish once the server is stopped. It is shorter than
	// runner.DefaultGrace, so that a server using all of it is not taken
	// for stuck by its runner group.
	DefaultShutdownGrace = 5 * time.Second
	// DefaultReadHeaderTimeout is how long a client has to send a request's
	// headers, from the moment the connection is accepted or, on a
	// keep-alive connection, from the end of the previous response.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may stay idle
	// between requests. It is longer than the 90 s after which Go's
	// http.Transport closes an idle connection itself, so that clients,
	// not the server, normally close them.
	DefaultIdleTimeout = 2 * time.Minute
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
	maxHeaderBytes    int
}

func newConfig(opts []Option) config {
	c := config{
		shutdownGrace:     DefaultShutdownGrace,
		readHeaderTimeout: DefaultReadHeaderTimeout,
		idleTimeout:       DefaultIdleTimeout,
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
// the server's name: the address it listens on (info), a shutdown that ran
// out of grace (warn), and what net/http reports (a panic in a handler at
// error, anything else at warn). Without it, or with a nil l, they go to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithShutdownGrace sets how long the requests in flight when the server is
// stopped may take to finish (default DefaultShutdownGrace). Keep it below
// the grace of the runner group (runner.WithGrace), which otherwise gives up
// on the server first. Zero or less closes every connection at once.
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

// WithReadTimeout sets how long reading a whole request, body included, may
// take (default: no limit). It bounds slow uploads, and so also limits how
// long a request may stream its body.
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
