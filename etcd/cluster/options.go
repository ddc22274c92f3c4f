package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// DefaultTTL is the time to live of a session unless WithTTL says
// otherwise.
const DefaultTTL = 10 * time.Second

// Option configures an Elector or a ShardEngine.
type Option func(*config)

type config struct {
	ttl time.Duration
	id  string
	log *slog.Logger
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.id == "" {
		c.id = defaultID()
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	return c
}

// WithTTL sets the time to live of the sessions (DefaultTTL when zero or
// less): how long after a process stops renewing, as when it crashes, the
// others can take over what it held. etcd counts it in whole seconds (it is
// rounded up) and raises it to its own minimum (about 2 s with the default
// election timeout); the granted value is what the session uses.
func WithTTL(d time.Duration) Option {
	return func(c *config) { c.ttl = d }
}

// WithIdentity sets the name of the candidate or member, stored as the
// leader key's value and as the member's key (default: host name, process
// id and a random suffix). Two live members of one ShardEngine prefix
// cannot have the same identity: Join fails with ErrIdentityInUse.
func WithIdentity(id string) Option {
	return func(c *config) { c.id = id }
}

// WithLogger sends the engine's records (sessions lost, watches restarted)
// to l; without it, or with a nil l, they go to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}

func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "process"
	}
	b := make([]byte, 3)
	rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// ttlSeconds rounds d up to whole seconds, at least one.
func ttlSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}
