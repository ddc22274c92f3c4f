package gateway

import "time"

// The defaults of Policy's fields.
const (
	// DefaultConnectTimeout bounds making a connection to a target.
	DefaultConnectTimeout = 3 * time.Second
	// DefaultResponseHeaderTimeout bounds an attempt from its start until
	// the response headers arrive: as long as the grace of a draining
	// httpserver.Server, so that a request the gateway waits for is one a
	// shutdown waits for too.
	DefaultResponseHeaderTimeout = 15 * time.Second
	// DefaultRetries is how many times a request that did not reach its
	// target is tried on another one.
	DefaultRetries = 2
	// DefaultEjectAfter is how many failures in a row eject a target.
	DefaultEjectAfter = 5
	// DefaultEjectFor is how long a first ejection lasts.
	DefaultEjectFor = 10 * time.Second
)

// maxEjectDoublings caps how long a target that keeps failing stays out:
// EjectFor times 2^5.
const maxEjectDoublings = 5

// Policy is how a route forwards: the Proxy's (WithPolicy) for every
// route, and an Upstream's for its own; the zero fields of an Upstream's
// policy keep the Proxy's, whose zero fields keep the Default... values.
type Policy struct {
	// ConnectTimeout bounds making a connection to a target. A timeout
	// counts as a failure to reach it: the request may be retried.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds an attempt from its start until the
	// response headers arrive; then the answer is 504.
	ResponseHeaderTimeout time.Duration
	// Retries is how many times an idempotent request without a body that
	// did not reach its target is tried on another one. Negative: never.
	Retries int
	// EjectAfter is how many failures in a row eject a target. Negative:
	// targets are never ejected.
	EjectAfter int
	// EjectFor is how long a first ejection lasts; each ejection in a row
	// doubles it, up to 32 times.
	EjectFor time.Duration
}

// over returns p with its zero fields taken from base.
func (p Policy) over(base Policy) Policy {
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = base.ConnectTimeout
	}
	if p.ResponseHeaderTimeout == 0 {
		p.ResponseHeaderTimeout = base.ResponseHeaderTimeout
	}
	if p.Retries == 0 {
		p.Retries = base.Retries
	}
	if p.EjectAfter == 0 {
		p.EjectAfter = base.EjectAfter
	}
	if p.EjectFor == 0 {
		p.EjectFor = base.EjectFor
	}
	return p
}

// defaultPolicy is what a Proxy's zero fields stand for.
var defaultPolicy = Policy{
	ConnectTimeout:        DefaultConnectTimeout,
	ResponseHeaderTimeout: DefaultResponseHeaderTimeout,
	Retries:               DefaultRetries,
	EjectAfter:            DefaultEjectAfter,
	EjectFor:              DefaultEjectFor,
}
