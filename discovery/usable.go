package discovery

import (
	"cmp"
	"net"
	"slices"
	"strconv"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// Query says which instances of a service qualify.
type Query struct {
	// ServiceID is the service; required.
	ServiceID string
	// EnvTag, when set, admits only instances registered with that envTag,
	// and selects the "serviceId|envTag" direct URL before the "serviceId"
	// one (see Resolve). When empty, every envTag qualifies.
	EnvTag string
	// Protocols, when set, admits only instances speaking one of them
	// (such as "http" and "https" for an HTTP proxy). When empty, every
	// protocol qualifies.
	Protocols []string
}

// Usable reports whether requests for q can go to n: n is an instance of
// q's service, connected, with a port, speaking an allowed protocol and,
// when q has an EnvTag, registered with it.
func (q Query) Usable(n *registry.Instance) bool {
	return n.ServiceID == q.ServiceID && n.Usable() &&
		(q.EnvTag == "" || n.EnvTag == q.EnvTag) &&
		(len(q.Protocols) == 0 || slices.Contains(q.Protocols, n.Protocol))
}

// Nodes returns the usable nodes (see Usable) of snapshots, sorted by URL,
// then runtimeInstanceId. Snapshots of other services may be passed: their
// nodes are not usable. A node whose serviceId, envTag or protocol is empty
// takes its snapshot's. The nodes share their Tags with the snapshots.
func (q Query) Nodes(snapshots ...*registry.DiscoverySnapshot) []registry.Instance {
	var nodes []registry.Instance
	for _, s := range snapshots {
		if s == nil || s.ServiceID != q.ServiceID {
			continue
		}
		for _, n := range s.Nodes {
			n.ServiceID = cmp.Or(n.ServiceID, s.ServiceID)
			n.EnvTag = cmp.Or(n.EnvTag, s.EnvTag)
			n.Protocol = cmp.Or(n.Protocol, s.Protocol)
			if q.Usable(&n) {
				nodes = append(nodes, n)
			}
		}
	}
	slices.SortFunc(nodes, func(a, b registry.Instance) int {
		return cmp.Or(cmp.Compare(URL(&a), URL(&b)), cmp.Compare(a.RuntimeInstanceID, b.RuntimeInstanceID))
	})
	return nodes
}

// Targets returns the targets of the usable nodes of snapshots, sorted by
// URL. Instances at the same URL count once: the target names the first of
// them by runtimeInstanceId.
func (q Query) Targets(snapshots ...*registry.DiscoverySnapshot) []Target {
	var targets []Target
	for _, n := range q.Nodes(snapshots...) {
		u := URL(&n)
		if len(targets) > 0 && targets[len(targets)-1].URL == u {
			continue
		}
		targets = append(targets, Target{URL: u, Instance: n.RuntimeInstanceID, Tags: n.Tags})
	}
	return targets
}

// URL returns the base URL of n: protocol://address:port, with an IPv6
// address in brackets.
func URL(n *registry.Instance) string {
	return n.Protocol + "://" + net.JoinHostPort(n.Address, strconv.Itoa(n.Port))
}

// Target is one place a request can go.
type Target struct {
	// URL is the base URL: scheme://host:port.
	URL string `json:"url"`
	// Instance is the runtimeInstanceId of the discovered instance at URL;
	// empty for a target that was not discovered (a direct URL, a static
	// target). Pool.Get takes it.
	Instance string `json:"instance,omitempty"`
	// Tags are the discovered instance's tags, for policies that weigh
	// targets or prefer a zone; nil for a target that was not discovered.
	// They are shared and must not be modified.
	Tags map[string]string `json:"tags,omitempty"`
}
