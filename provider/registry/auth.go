package registry

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// credential is a registration token, kept as its digest, with the
// services it may act for.
type credential struct {
	digest [sha256.Size]byte
	// all: every service; otherwise exact serviceIds and prefixes (from
	// "prefix*" entries).
	all      bool
	services map[string]bool
	prefixes []string
}

// newCredentials takes the digests of the registration tokens of cfg.
func newCredentials(cfg config) []*credential {
	var creds []*credential
	byDigest := make(map[[sha256.Size]byte]*credential)
	if cfg.token != "" {
		c := &credential{digest: sha256.Sum256([]byte(cfg.token)), all: true}
		creds = append(creds, c)
		byDigest[c.digest] = c
	}
	for _, st := range cfg.scoped {
		d := sha256.Sum256([]byte(st.token))
		c, ok := byDigest[d]
		if !ok {
			c = &credential{digest: d, services: make(map[string]bool)}
			creds = append(creds, c)
			byDigest[d] = c
		}
		for _, s := range st.services {
			if p, ok := strings.CutSuffix(s, "*"); ok {
				c.prefixes = append(c.prefixes, p)
			} else {
				c.services[s] = true
			}
		}
	}
	return creds
}

// allows reports whether the credential may act for serviceID.
func (c *credential) allows(serviceID string) bool {
	if c.all || c.services[serviceID] {
		return true
	}
	for _, p := range c.prefixes {
		if strings.HasPrefix(serviceID, p) {
			return true
		}
	}
	return false
}

// checkToken compares a presented token with a stored digest in constant
// time (digests have a fixed length, so the token's length leaks nothing).
func checkToken(presented string, want [sha256.Size]byte) bool {
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// registrant returns the credential of a registration token, or nil. Every
// credential is compared, so that the time taken says nothing about which
// one matched.
func (r *Registry) registrant(token string) *credential {
	if token == "" {
		return nil
	}
	got := sha256.Sum256([]byte(token))
	var found *credential
	for _, c := range r.creds {
		if subtle.ConstantTimeCompare(got[:], c.digest[:]) == 1 {
			found = c
		}
	}
	return found
}

// authorizeDiscovery reports whether token may look up and watch: the
// discovery token or any registration token, or anything when no discovery
// token is set.
func (r *Registry) authorizeDiscovery(token string) bool {
	if !r.hasDisc {
		return true
	}
	return token != "" && (checkToken(token, r.discovery) || r.registrant(token) != nil)
}

// Counters are running totals of what the registry refused, for metrics
// and tests. Read them with Registry.Counters.
type Counters struct {
	// AuthFailures counts requests and calls refused for a missing or
	// wrong token, over HTTP and WebSocket.
	AuthFailures uint64
	// Forbidden counts requests and calls refused because the token may
	// not act for the service (WithServiceToken) or the address policy
	// refuses the address (WithAddressPolicy).
	Forbidden uint64
	// AuthTimeouts counts WebSockets closed for not presenting a token
	// within Limits.AuthTimeout.
	AuthTimeouts uint64
	// LimitRefusals counts requests and calls refused by a cap of Limits:
	// instances, watchers, sockets, subscriptions per socket.
	LimitRefusals uint64
	// InvalidInput counts requests and calls refused for bad input (400,
	// 413, 415, or a JSON-RPC error other than the above).
	InvalidInput uint64
}

// counters are the atomic Counters.
type counters struct {
	authFailures, forbidden, authTimeouts, limitRefusals, invalidInput atomic.Uint64
}

// Counters returns the running totals of refusals. It is safe for
// concurrent use.
func (r *Registry) Counters() Counters {
	return Counters{
		AuthFailures:  r.counts.authFailures.Load(),
		Forbidden:     r.counts.forbidden.Load(),
		AuthTimeouts:  r.counts.authTimeouts.Load(),
		LimitRefusals: r.counts.limitRefusals.Load(),
		InvalidInput:  r.counts.invalidInput.Load(),
	}
}

// refusal describes one refused request or call, for the log. It never
// holds a token.
type refusal struct {
	remote    string // the client's address
	transport string // "http" or "websocket"
	path      string
	reason    string
}

// authFailed counts and logs a refused token.
func (r *Registry) authFailed(f refusal) {
	r.counts.authFailures.Add(1)
	r.authLog.log(r.cfg.logger, "refused a token", f)
}

// forbidden counts and logs a request refused by a token's scope or the
// address policy.
func (r *Registry) forbidden(f refusal) {
	r.counts.forbidden.Add(1)
	r.forbidLog.log(r.cfg.logger, "refused a request: forbidden", f)
}

// limitReached counts and logs a refusal by a cap of Limits.
func (r *Registry) limitReached(f refusal) {
	r.counts.limitRefusals.Add(1)
	r.limitLog.log(r.cfg.logger, "refused a request: limit reached", f)
}

// remoteOf names the client of req for the log.
func remoteOf(req *http.Request) string { return req.RemoteAddr }

// sampledLog logs at most one record a second, saying how many it left
// out: a client hammering the registry with a wrong token must be visible,
// but must not flood the log.
type sampledLog struct {
	mu      sync.Mutex
	last    time.Time
	dropped int
}

func (s *sampledLog) log(l *slog.Logger, msg string, f refusal) {
	s.mu.Lock()
	now := time.Now()
	if now.Sub(s.last) < time.Second {
		s.dropped++
		s.mu.Unlock()
		return
	}
	dropped := s.dropped
	s.last, s.dropped = now, 0
	s.mu.Unlock()
	l.Warn(msg, "remote", f.remote, "transport", f.transport, "path", f.path, "reason", f.reason, "alsoRefusedSinceLastRecord", dropped)
}
