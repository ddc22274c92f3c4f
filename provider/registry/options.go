package registry

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// Secret is a token. Every way of printing it — fmt verbs, log/slog, JSON
// and text encoding — shows "[redacted]" (or "" when it is empty), so a
// Secret can sit in a struct that gets logged or dumped for debugging
// without leaking. Use string(s) to get the value.
type Secret string

const redacted = "[redacted]"

func (s Secret) masked() string {
	if s == "" {
		return ""
	}
	return redacted
}

// String returns "[redacted]", or "" for an empty Secret.
func (s Secret) String() string { return s.masked() }

// GoString returns the masked value quoted, for %#v.
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.masked()) }

// Format prints the masked value for every verb, so that neither %x nor %q
// nor %d reveals the token.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.masked())
}

// LogValue masks the token in log/slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.masked()) }

// MarshalText masks the token in encoders (encoding/json included).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.masked()), nil }

// ErrNoToken is what the errors of New (given no registration token, see
// WithToken) and of TokenFromEnv (when the variable is unset or empty)
// wrap; test for it with errors.Is.
var ErrNoToken = errors.New("registry: no registration token")

// TokenFromEnv reads a token from the environment variable name. Tokens
// belong in the environment or a configuration file, never in a command
// line flag, where anyone can read them with ps. It fails with ErrNoToken
// when the variable is unset or empty.
func TokenFromEnv(name string) (Secret, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return "", fmt.Errorf("read token from environment variable %s: %w", name, ErrNoToken)
	}
	return Secret(v), nil
}

// Default values used for an absent WithLease and for zero Limits fields.
const (
	DefaultLease                   = 15 * time.Second
	DefaultMaxBodyBytes            = 64 << 10
	DefaultMaxMessageBytes         = 64 << 10
	DefaultMaxTags                 = 32
	DefaultMaxStringLength         = 256
	DefaultMaxInstancesPerService  = 4096
	DefaultMaxSubscriptionsPerConn = 16
	DefaultWriteTimeout            = 10 * time.Second
	DefaultKeepAlive               = 25 * time.Second
)

// Option configures a Registry; see New. Options are applied in order, so a
// later one overrides an earlier one of the same kind.
type Option func(*config)

// config is what the options set. The tokens in it live only until New has
// taken their digests.
type config struct {
	token, discoveryToken Secret
	lease                 time.Duration
	logger                *slog.Logger
	limits                Limits
	now                   func() time.Time // the lease clock; tests set it
	store                 Store            // nil: in memory
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.lease <= 0 {
		c.lease = DefaultLease
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.limits = c.limits.withDefaults()
	return c
}

// WithToken sets the token that authorizes registration, heartbeats and
// deregistration. It is required: New fails with ErrNoToken without it (or
// with an empty token). The registry keeps only its SHA-256 digest,
// compares presented tokens with it in constant time, and never logs it.
func WithToken(token Secret) Option {
	return func(c *config) { c.token = token }
}

// WithDiscoveryToken makes token required for lookups and watches (the
// registration token is accepted there too). Without it, or with an empty
// token, discovery is open to anyone who can reach the handler.
func WithDiscoveryToken(token Secret) Option {
	return func(c *config) { c.discoveryToken = token }
}

// WithLease sets how long an instance registered over HTTP stays connected
// without a heartbeat; after three leases it is removed. An instance
// registered over a WebSocket is connected while its socket is open and
// removed one lease after the socket closes. Without it, or with d <= 0,
// the lease is DefaultLease (15 s).
func WithLease(d time.Duration) Option {
	return func(c *config) { c.lease = d }
}

// WithLogger sends the registry's log records to l: registrations,
// deregistrations and expired leases (keys "instance", "service"), and
// failures of the translator deriving Snapshots. Tokens and heartbeats are
// never logged. Without it, or with a nil l, records go to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithLimits bounds what clients can make the registry hold. Zero fields of
// l select the Default... constants, so WithLimits(Limits{MaxTags: 8})
// changes only the number of tags. Without it every limit is its default.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// Limits bound the input the registry accepts; pass them with WithLimits.
// Zero (or negative) fields select the Default... constants.
type Limits struct {
	// MaxBodyBytes bounds an HTTP request body (413 beyond).
	MaxBodyBytes int64
	// MaxMessageBytes bounds one WebSocket message; a bigger one closes
	// the socket with status 1009 (message too big).
	MaxMessageBytes int64
	// MaxTags bounds the number of tags of an instance.
	MaxTags int
	// MaxStringLength bounds serviceId, envTag, version, address and each
	// tag key and value, in bytes.
	MaxStringLength int
	// MaxInstancesPerService bounds the instances registered under one
	// serviceId.
	MaxInstancesPerService int
	// MaxSubscriptionsPerConn bounds discovery/subscribe calls live on one
	// WebSocket.
	MaxSubscriptionsPerConn int
	// WriteTimeout bounds one write to a watcher (SSE event or WebSocket
	// message); a watcher that cannot take a write in time is disconnected.
	WriteTimeout time.Duration
	// KeepAlive is the interval of SSE comment lines and WebSocket pings
	// that detect dead watchers.
	KeepAlive time.Duration
}

// withDefaults returns l with its zero (or negative) fields set to their
// defaults.
func (l Limits) withDefaults() Limits {
	setDefault(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	setDefault(&l.MaxTags, DefaultMaxTags)
	setDefault(&l.MaxStringLength, DefaultMaxStringLength)
	setDefault(&l.MaxInstancesPerService, DefaultMaxInstancesPerService)
	setDefault(&l.MaxSubscriptionsPerConn, DefaultMaxSubscriptionsPerConn)
	setDefault(&l.WriteTimeout, DefaultWriteTimeout)
	setDefault(&l.KeepAlive, DefaultKeepAlive)
	return l
}

func setDefault[T int | int64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}
