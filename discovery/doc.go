// Package discovery turns what a service registry knows into places to
// send requests: which discovered instances are usable, which of the ways of
// finding a service answers (a fixed URL, a table of direct URLs, discovery,
// static targets), which target one request goes to, and one connection per
// instance, opened, replaced and closed as instances come, move and go.
//
// Its inputs are the DiscoverySnapshots of provider/registry, as a Registry
// in the same process publishes them (Registry.Snapshots) or as a client of
// a remote registry mirrors them (provider/registry/client): code written
// with this package works with either.
//
//	q := discovery.Query{ServiceID: "billing", EnvTag: "prod", Protocols: []string{"https", "http"}}
//	res := discovery.Resolve(q, discovery.Sources{
//		DirectURLs: map[string]string{"billing|canary": "http://10.0.0.9:8080"},
//		Discovered: snapshotsOfBilling,
//		Static:     []string{"http://billing.fallback:8080"},
//	})
//	// res.Step says which source answered; res.Targets are sorted.
//	target, ok := policy.Pick(res.Targets) // a *RoundRobin, or PreferHTTPS(...)
//
// Everything here but Pool is a pure function or a small value safe for
// concurrent use; Pool is a runner that follows a view of snapshots.
package discovery
