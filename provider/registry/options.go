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
	DefaultMaxInstances            = 65536
	DefaultMaxWatchers             = 8192
	DefaultMaxSockets              = 8192
	DefaultMaxSubscriptionsPerConn = 16
	DefaultAuthTimeout             = 10 * time.Second
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
	scoped                []scopedToken
	addresses             AddressPolicy
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
// deregistration of instances of every service. New needs it, or at least
// one WithServiceToken: it fails with ErrNoToken otherwise (an empty token
// counts as none). The registry keeps only its SHA-256 digest, compares
// presented tokens with it in constant time, and never logs it.
func WithToken(token Secret) Option {
	return func(c *config) { c.token = token }
}

// scopedToken is a token of WithServiceToken, until New takes its digest.
type scopedToken struct {
	token    Secret
	services []string
}

// WithServiceToken adds a token that authorizes registration, heartbeats
// and deregistration of the instances of the services listed only: a team
// holding it cannot register, nor deregister, anyone else's instances.
// A service ending in "*" stands for every serviceId with what precedes
// the star as prefix ("billing-*"). Like every registration token, it also
// authorizes lookups and watches. The option may be given several times,
// one per token; giving the same token again adds services to it. An empty
// token, or no services, adds nothing.
//
// Refusals answer 403 (HTTP) or CodeForbidden (JSON-RPC), naming the
// service.
func WithServiceToken(token Secret, serviceIDs ...string) Option {
	return func(c *config) {
		if token != "" && len(serviceIDs) > 0 {
			c.scoped = append(c.scoped, scopedToken{token: token, services: serviceIDs})
		}
	}
}

// WithAddressPolicy sets which addresses instances may register; see
// AddressPolicy. Without it, the zero AddressPolicy applies.
func WithAddressPolicy(p AddressPolicy) Option {
	return func(c *config) { c.addresses = p }
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

// WithLogger sends the registry's log records to l: refused tokens (warn,
// at most one record a second, saying how many were left out), caps of
// Limits reached (warn, likewise), failures of the translator deriving
// Snapshots (error), and, at debug level only, a record per registration,
// deregistration and expired lease (keys "instance", "service"), which
// under churn would be too many for any other level. Tokens and
// heartbeats are never logged. Without it, or with a nil l, records go to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithLimits bounds what clients can make the registry hold. Zero fields of
// l select the Default... constants, so WithLimits(Limits{MaxTags: 8})
// changes only the number of tags. Without it every limit is its default.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// Limits bound the input the registry accepts and what clients can make it
// hold; pass them with WithLimits. Zero (or negative) fields select the
// Default... constants, which suit production: each is far above what a
// well-behaved deployment needs and far below what exhausts the process.
// Every refusal is counted (Counters.LimitRefusals).
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
	// serviceId (409 or CodeLimitExceeded beyond).
	MaxInstancesPerService int
	// MaxInstances bounds the instances registered in all (409 or
	// CodeLimitExceeded beyond).
	MaxInstances int
	// MaxWatchers bounds the watches live at once: SSE watches and
	// discovery/subscribe subscriptions together (503 with Retry-After, or
	// CodeLimitExceeded, beyond).
	MaxWatchers int
	// MaxSockets bounds the WebSockets open at once, of both endpoints
	// (503 with Retry-After before the upgrade, beyond).
	MaxSockets int
	// MaxSubscriptionsPerConn bounds discovery/subscribe calls live on one
	// WebSocket.
	MaxSubscriptionsPerConn int
	// AuthTimeout bounds how long a WebSocket may stay open without
	// presenting a valid token (in the upgrade request, or in the params of
	// its first call); it is then closed with status 1008 (policy
	// violation). Sockets that need no token (/ws/discovery without a
	// discovery token) have no such deadline.
	AuthTimeout time.Duration
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
	setDefault(&l.MaxInstances, DefaultMaxInstances)
	setDefault(&l.MaxWatchers, DefaultMaxWatchers)
	setDefault(&l.MaxSockets, DefaultMaxSockets)
	setDefault(&l.MaxSubscriptionsPerConn, DefaultMaxSubscriptionsPerConn)
	setDefault(&l.AuthTimeout, DefaultAuthTimeout)
	setDefault(&l.WriteTimeout, DefaultWriteTimeout)
	setDefault(&l.KeepAlive, DefaultKeepAlive)
	return l
}

func setDefault[T int | int64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}
