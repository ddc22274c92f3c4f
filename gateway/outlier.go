package gateway

import (
	"sync"
	"time"
)

// outliers keeps the health of the targets that failed recently, keyed by
// target (its instance, or its URL). A target that succeeds is forgotten,
// so the map holds only targets that are failing or ejected.
type outliers struct {
	mu sync.Mutex
	m  map[string]*health
}

type health struct {
	failures  int       // in a row, since the last success or ejection
	ejections int       // in a row, since the last success
	until     time.Time // ejected until then
}

// succeeded forgets key's failures, and reports whether it had been
// ejected: it is readmitted.
func (o *outliers) succeeded(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	h, ok := o.m[key]
	if !ok {
		return false
	}
	delete(o.m, key)
	return h.ejections > 0
}

// failed counts a failure of key under p, and returns how long it is
// ejected for when this failure ejects it, or 0. A target back from an
// ejection is ejected again at its first failure.
func (o *outliers) failed(key string, now time.Time, p Policy) time.Duration {
	if p.EjectAfter < 0 {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[string]*health)
	}
	h, ok := o.m[key]
	if !ok {
		h = &health{}
		o.m[key] = h
	}
	if now.Before(h.until) {
		return 0 // already ejected: a request sent before the ejection failing late
	}
	h.failures++
	if h.failures < p.EjectAfter && h.ejections == 0 {
		return 0
	}
	d := p.EjectFor << min(h.ejections, maxEjectDoublings)
	h.ejections++
	h.failures = 0
	h.until = now.Add(d)
	return d
}
