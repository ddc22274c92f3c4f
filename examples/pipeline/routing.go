package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/gateway"
	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// Source names the resolution step that gave a route its targets (see
// discovery.Resolve). The gateway sends it in the X-Switchyard-Source
// response header.
type Source = discovery.Step

// The resolution steps, in the order they are tried.
const (
	SourceDirectURL      = discovery.StepDirectURL      // the route's own directUrl
	SourceDirectRegistry = discovery.StepDirectRegistry // a DirectRegistry entry
	SourceDiscovery      = discovery.StepDiscovery      // registered instances
	SourceStaticTargets  = discovery.StepStaticTargets  // the route's staticTargets
	SourceNone           = discovery.StepNone           // nothing usable is known
)

// RouteEntry is one resolved route of the route table, keyed by route name.
type RouteEntry struct {
	Name        string `json:"name"`
	PathPrefix  string `json:"pathPrefix"`
	ServiceID   string `json:"serviceId"`
	EnvTag      string `json:"envTag,omitempty"`
	StripPrefix bool   `json:"stripPrefix,omitempty"`
	// Source is the step that produced Targets.
	Source Source `json:"source"`
	// SourceKey says which entry of the source was used: the DirectRegistry
	// key ("serviceId|envTag" or "serviceId"); empty for the other sources.
	SourceKey string `json:"sourceKey,omitempty"`
	// Targets are the base URLs (scheme://host:port) requests go to, sorted,
	// each with the runtimeInstanceId of its instance when discovered (the
	// pool's key); empty when Source is SourceNone.
	Targets []discovery.Target `json:"targets"`
	// Policy is how the gateway forwards the route's requests: the route's
	// resilience settings, whose zero fields keep the gateway's defaults.
	Policy gateway.Policy `json:"policy,omitzero"`
	// Error is set for a route whose spec is invalid; the gateway answers
	// its requests with 503 and this message rather than letting a shorter
	// prefix take them.
	Error string `json:"error,omitempty"`
}

// routeName is how a route is named in the table, logs and headers.
func routeName(n types.NamespacedName) string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

// computeRouteTable resolves every route against the direct URLs and the
// discovery snapshots. It is a pure function of its inputs. The errors it
// returns are problems it worked around (conflicting direct URLs, invalid
// routes), for the caller to report.
func computeRouteTable(
	routes watchable.State[types.NamespacedName, file.Object[Route]],
	directs watchable.State[types.NamespacedName, file.Object[DirectRegistry]],
	discovery watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot],
) (map[string]*RouteEntry, error) {
	direct, errs := mergeDirectURLs(directs)

	byService := make(map[string][]*registry.DiscoverySnapshot)
	for k, s := range discovery.All() {
		byService[k.ServiceID] = append(byService[k.ServiceID], s)
	}

	table := make(map[string]*RouteEntry, routes.Len())
	for n, doc := range routes.All() {
		r := doc.Spec // shares StaticTargets, which resolveRoute does not modify
		e := resolveRoute(routeName(n), &r, direct, byService[r.ServiceID])
		if e.Error != "" {
			errs = append(errs, fmt.Errorf("route %s: %s", e.Name, e.Error))
		}
		table[e.Name] = e
	}
	errs = append(errs, prefixConflicts(table)...)
	slices.SortFunc(errs, func(a, b error) int { return cmp.Compare(a.Error(), b.Error()) })
	return table, errors.Join(errs...)
}

// prefixConflicts reports routes that share a pathPrefix. The gateway
// sends their requests to the first by name; the others get none, which is
// surely not what their author meant.
func prefixConflicts(table map[string]*RouteEntry) []error {
	byPrefix := make(map[string][]string)
	for name, e := range table {
		byPrefix[e.PathPrefix] = append(byPrefix[e.PathPrefix], name)
	}
	var errs []error
	for prefix, names := range byPrefix {
		if len(names) > 1 {
			slices.Sort(names)
			errs = append(errs, fmt.Errorf("routes %s share pathPrefix %q: only %s gets its requests", strings.Join(names, ", "), prefix, names[0]))
		}
	}
	return errs
}

// mergeDirectURLs merges the DirectRegistry documents in name order. When
// two define the same key, the first in name order wins and the conflict is
// returned as an error.
func mergeDirectURLs(directs watchable.State[types.NamespacedName, file.Object[DirectRegistry]]) (map[string]string, []error) {
	names := slices.SortedFunc(directs.Keys(), func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	merged := make(map[string]string)
	from := make(map[string]string)
	var errs []error
	for _, n := range names {
		doc, _ := directs.Get(n)
		d := doc.Spec
		if err := d.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("DirectRegistry %s ignored: %w", routeName(n), err))
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(d.DirectURLs)) {
			if prev, ok := from[k]; ok {
				if merged[k] != d.DirectURLs[k] {
					errs = append(errs, fmt.Errorf("DirectRegistry %s: key %q already set by %s; keeping %s", routeName(n), k, prev, merged[k]))
				}
				continue
			}
			merged[k] = d.DirectURLs[k]
			from[k] = routeName(n)
		}
	}
	return merged, errs
}

// resolveRoute picks the targets of one route with discovery.Resolve,
// trying in order: the route's directUrl; the direct URL for
// "serviceId|envTag", then for "serviceId"; the usable discovered instances
// (connected, non-zero port, a protocol the gateway can proxy, matching the
// route's envTag and protocol when set); the route's staticTargets.
func resolveRoute(name string, r *Route, direct map[string]string, discovered []*registry.DiscoverySnapshot) *RouteEntry {
	e := &RouteEntry{
		Name:        name,
		PathPrefix:  r.PathPrefix,
		ServiceID:   r.ServiceID,
		EnvTag:      r.EnvTag,
		StripPrefix: r.StripPrefix,
		Source:      SourceNone,
	}
	if err := r.Validate(); err != nil {
		e.Error = "invalid route: " + err.Error()
		return e
	}
	protocols := []string{"http", "https"} // what the gateway can proxy
	if r.Protocol != "" {
		protocols = []string{r.Protocol}
	}
	res := discovery.Resolve(
		discovery.Query{ServiceID: r.ServiceID, EnvTag: r.EnvTag, Protocols: protocols},
		discovery.Sources{DirectURL: r.DirectURL, DirectURLs: direct, Discovered: discovered, Static: r.StaticTargets})
	e.Source, e.SourceKey, e.Targets = res.Step, res.Key, res.Targets
	e.Policy = r.Resilience.Policy()
	return e
}
