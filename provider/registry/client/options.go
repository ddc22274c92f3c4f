package client

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// Default values used for absent options.
const (
	DefaultInitialWait = 10 * time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultKeepAlive   = 15 * time.Second
	DefaultName        = "registry-client"
)

// Option configures a Client or a Registrar. Options are applied in order,
// so a later one overrides an earlier one of the same kind. An option that
// does not apply to what it is given to (WithServices to a Registrar, say)
// makes the constructor fail, naming it.
type Option func(*config)

type config struct {
	name           string
	token          registry.Secret
	register       func(context.Context) (registry.Registration, error)
	registerOpt    string // the option that set register, for errors
	services       []string
	servicesSet    bool
	tls            *tls.Config
	backoff        Backoff
	startOnFailure bool
	initialWait    time.Duration
	timeout        time.Duration
	keepAlive      time.Duration
	logger         *slog.Logger
	metrics        prometheus.Registerer
	readLimit      int64
	socketOnly     []string // options given that only a Client takes
}

func newConfig(opts []Option) config {
	c := config{startOnFailure: true, readLimit: 16 << 20}
	for _, o := range opts {
		o(&c)
	}
	if c.name == "" {
		c.name = DefaultName
	}
	if c.initialWait <= 0 {
		c.initialWait = DefaultInitialWait
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.keepAlive <= 0 {
		c.keepAlive = DefaultKeepAlive
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.backoff = c.backoff.withDefaults()
	return c
}

// WithName sets the runner name, which also labels log records, health
// problems and metrics (default "registry-client").
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithToken sets the token sent as "Authorization: Bearer" to the
// controller: the registration token (which discovery accepts too), or a
// discovery token for a Client that does not register. Read it with
// registry.TokenFromEnv. It never appears in a log record, an error, a
// status or a metric.
func WithToken(token registry.Secret) Option { return func(c *config) { c.token = token } }

// WithRegistration makes a Client register reg on every connection (over
// /ws/microservice) before it discovers. Without it, or
// WithRegistrationFunc, a Client only discovers (over /ws/discovery).
// reg.RuntimeInstanceID is ignored: the client proposes the id the
// controller gave it last.
func WithRegistration(reg registry.Registration) Option {
	return func(c *config) {
		c.register = func(context.Context) (registry.Registration, error) { return reg, nil }
		c.registerOpt = "WithRegistration"
	}
}

// WithRegistrationFunc is WithRegistration for a registration known only
// later, such as the port of a server that has yet to listen: the Client
// calls f before registering on each connection, and f may block until
// it knows (it must return when ctx is done). An error from f fails that
// connection attempt.
func WithRegistrationFunc(f func(ctx context.Context) (registry.Registration, error)) Option {
	return func(c *config) { c.register, c.registerOpt = f, "WithRegistrationFunc" }
}

// WithServices sets the services whose snapshots a Client mirrors, as
// SetServices does, and says that the set is known from the start (see
// Client.Snapshots). Only a Client takes it.
func WithServices(serviceIDs ...string) Option {
	return func(c *config) {
		c.services, c.servicesSet = append([]string(nil), serviceIDs...), true
		c.socketOnly = append(c.socketOnly, "WithServices")
	}
}

// WithTLSConfig sets the TLS configuration for https:// and wss://
// controllers: a custom CA (RootCAs), a client certificate. It is cloned.
// Host names are verified unless cfg says otherwise; without it the
// system's roots are used.
func WithTLSConfig(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg.Clone() } }

// WithBackoff sets how long the client waits between attempts to connect
// or register; see Backoff.
func WithBackoff(b Backoff) Option { return func(c *config) { c.backoff = b } }

// WithStartOnRegistryFailure says what happens when the controller cannot
// be reached, or refuses the registration, at start. With true (the
// default), Ready is closed after the initial wait (WithInitialWait) all
// the same, the Client's Snapshots are then initialized with what it has
// (nothing), and it keeps trying in the background. With false, Run fails
// with an error naming the controller when the first registration has not
// succeeded within the initial wait.
func WithStartOnRegistryFailure(start bool) Option {
	return func(c *config) { c.startOnFailure = start }
}

// WithInitialWait bounds the wait for the first registration (and, for a
// Client, the first snapshots) at start; see WithStartOnRegistryFailure.
// Without it, or with d <= 0, it is DefaultInitialWait (10 s).
func WithInitialWait(d time.Duration) Option { return func(c *config) { c.initialWait = d } }

// WithTimeout bounds each exchange with the controller: a connection, a
// call, a request. Without it, or with d <= 0, it is DefaultTimeout (10 s).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithKeepAlive sets how often a Client pings the controller over its
// socket, so that a controller gone without closing the connection is
// noticed within about twice that. Without it, or with d <= 0, it is
// DefaultKeepAlive (15 s). Only a Client takes it.
func WithKeepAlive(d time.Duration) Option {
	return func(c *config) {
		c.keepAlive = d
		c.socketOnly = append(c.socketOnly, "WithKeepAlive")
	}
}

// WithLogger sends the client's records (connected, disconnected with the
// reason, registered again) to l. Without it, or with a nil l, they go to
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithMetrics registers the client's metrics with reg, labelled
// client=<name>: switchyard_registry_client_connected (1 while connected
// and registered), switchyard_registry_client_reconnects_total,
// switchyard_registry_client_errors_total and
// switchyard_registry_client_last_error_timestamp_seconds.
func WithMetrics(reg prometheus.Registerer) Option { return func(c *config) { c.metrics = reg } }

// Backoff is the schedule of retries: the first wait is Initial, each
// failure doubles it up to Max, and success resets it. Each wait is drawn
// at random from [d × (1 − Jitter), d], so that clients of a controller
// that restarts do not all come back at once. Zero fields take the
// defaults: Initial 200 ms, Max 15 s, Jitter 0.5. Tests set short ones.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	// Jitter is the fraction of each wait that is random, in [0, 1].
	Jitter float64
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = 200 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 15 * time.Second
	}
	b.Max = max(b.Max, b.Initial)
	if b.Jitter <= 0 || b.Jitter > 1 {
		b.Jitter = 0.5
	}
	return b
}

// wait returns the wait after the given number of consecutive failures
// (1 for the first).
func (b Backoff) wait(failures int) time.Duration {
	d := b.Initial
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d - time.Duration(rand.Float64()*b.Jitter*float64(d))
}
