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

// ErrNoToken is returned by New when Options.Token is empty, and by
// TokenFromEnv when the variable is unset or empty.
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

// Default values used for zero Options and Limits fields.
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

// Options configure a Registry. The zero value of every field but Token
// selects a safe default.
type Options struct {
	// Token authorizes registration, heartbeats and deregistration. It is
	// required; it is compared in constant time and never logged.
	Token Secret
	// DiscoveryToken, when set, is required for lookups and watches (the
	// registration Token is accepted there too). When empty, discovery is
	// open to anyone who can reach the handler.
	DiscoveryToken Secret
	// Lease is how long an instance registered over HTTP stays connected
	// without a heartbeat; after three leases it is removed. An instance
	// registered over a WebSocket is connected while its socket is open and
	// removed one Lease after the socket closes. Default 15 s.
	Lease time.Duration
	// Logger receives registrations, removals and failures (never tokens,
	// never heartbeats). Default: discard.
	Logger *slog.Logger
	// Limits bound what clients can make the registry hold.
	Limits Limits
}

// Limits bound the input the registry accepts. Zero fields select the
// Default... constants.
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

func (o Options) withDefaults() Options {
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &o.Limits
	setDefault(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	setDefault(&l.MaxTags, DefaultMaxTags)
	setDefault(&l.MaxStringLength, DefaultMaxStringLength)
	setDefault(&l.MaxInstancesPerService, DefaultMaxInstancesPerService)
	setDefault(&l.MaxSubscriptionsPerConn, DefaultMaxSubscriptionsPerConn)
	setDefault(&l.WriteTimeout, DefaultWriteTimeout)
	setDefault(&l.KeepAlive, DefaultKeepAlive)
	return o
}

func setDefault[T int | int64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// String describes the options with both tokens masked.
func (o Options) String() string {
	return fmt.Sprintf("{Token:%s DiscoveryToken:%s Lease:%s Limits:%+v}",
		o.Token.masked(), o.DiscoveryToken.masked(), o.Lease, o.Limits)
}

// LogValue describes the options for log/slog with both tokens masked.
func (o Options) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("token", o.Token.masked()),
		slog.String("discoverytoken", o.DiscoveryToken.masked()),
		slog.Duration("lease", o.Lease),
		slog.Any("limits", o.Limits),
	)
}
