package discovery

import (
	"strings"
	"sync/atomic"
)

// Policy chooses the target of one request among the targets of a
// resolution. Implementations must be safe for concurrent use: a gateway
// calls Pick from every request's goroutine. Weighted or zone-aware
// policies read Target.Tags.
type Policy interface {
	// Pick returns the target for one request, or false when there is
	// none to choose (targets is empty, or none is acceptable).
	Pick(targets []Target) (Target, bool)
}

// RoundRobin picks targets in turn. The zero value is ready to use; it is
// safe for concurrent use and must not be copied after first use. Use one
// per list of targets that should take turns (one per route, say): the
// turn survives changes of the list, so a target that appears joins the
// rotation at once.
type RoundRobin struct {
	next atomic.Uint64
}

// Pick returns the next target in turn.
func (r *RoundRobin) Pick(targets []Target) (Target, bool) {
	if len(targets) == 0 {
		return Target{}, false
	}
	n := r.next.Add(1) - 1
	return targets[n%uint64(len(targets))], true
}

// PreferHTTPS returns a policy that picks among the https targets when
// there is at least one, else among the http ones, and never a target of
// another scheme; within the preferred scheme, next chooses (a new
// RoundRobin when next is nil). This is how a client picks a server it
// must reach securely when it can, such as a token server.
func PreferHTTPS(next Policy) Policy {
	if next == nil {
		next = new(RoundRobin)
	}
	return preferHTTPS{next}
}

type preferHTTPS struct{ next Policy }

func (p preferHTTPS) Pick(targets []Target) (Target, bool) {
	for _, scheme := range []string{"https://", "http://"} {
		var these []Target
		for _, t := range targets {
			if strings.HasPrefix(t.URL, scheme) {
				these = append(these, t)
			}
		}
		if len(these) > 0 {
			return p.next.Pick(these)
		}
	}
	return Target{}, false
}
