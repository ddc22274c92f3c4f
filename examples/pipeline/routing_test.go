package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

func node(addr string, port int, proto string, connected bool) registry.Instance {
	return registry.Instance{RuntimeInstanceID: addr, Address: addr, Port: port, Protocol: proto, Connected: connected}
}

func snapshot(service, env, proto string, nodes ...registry.Instance) *registry.DiscoverySnapshot {
	return &registry.DiscoverySnapshot{ServiceID: service, EnvTag: env, Protocol: proto, Nodes: nodes}
}

func TestResolveRoute(t *testing.T) {
	direct := map[string]string{
		"billing|prod": "http://billing-prod:80",
		"billing":      "http://billing-any:80",
	}
	pets := []*registry.DiscoverySnapshot{
		snapshot("pets", "prod", "http", node("10.0.0.2", 8080, "http", true), node("10.0.0.1", 8080, "http", true)),
		snapshot("pets", "dev", "http", node("10.0.1.1", 8080, "http", true)),
		snapshot("pets", "prod", "grpc", node("10.0.0.9", 9000, "grpc", true)),
		snapshot("pets", "prod", "https", node("10.0.0.3", 8443, "https", true)),
	}
	tests := []struct {
		name       string
		route      Route
		discovered []*registry.DiscoverySnapshot
		want       RouteEntry
	}{{
		name:       "directUrl wins over everything",
		route:      Route{PathPrefix: "/b", ServiceID: "billing", EnvTag: "prod", DirectURL: "http://own:1", StaticTargets: []string{"http://static:1"}},
		discovered: []*registry.DiscoverySnapshot{snapshot("billing", "prod", "http", node("10.0.0.1", 80, "http", true))},
		want:       RouteEntry{Source: SourceDirectURL, Targets: targets("http://own:1")},
	}, {
		name:  "DirectRegistry serviceId|envTag before serviceId",
		route: Route{PathPrefix: "/b", ServiceID: "billing", EnvTag: "prod"},
		want:  RouteEntry{Source: SourceDirectRegistry, SourceKey: "billing|prod", Targets: targets("http://billing-prod:80")},
	}, {
		name:  "DirectRegistry serviceId when the envTag has no entry",
		route: Route{PathPrefix: "/b", ServiceID: "billing", EnvTag: "staging"},
		want:  RouteEntry{Source: SourceDirectRegistry, SourceKey: "billing", Targets: targets("http://billing-any:80")},
	}, {
		name:  "DirectRegistry serviceId for a route without envTag",
		route: Route{PathPrefix: "/b", ServiceID: "billing"},
		want:  RouteEntry{Source: SourceDirectRegistry, SourceKey: "billing", Targets: targets("http://billing-any:80")},
	}, {
		name:       "DirectRegistry wins over discovery",
		route:      Route{PathPrefix: "/b", ServiceID: "billing"},
		discovered: []*registry.DiscoverySnapshot{snapshot("billing", "", "http", node("10.0.0.1", 80, "http", true))},
		want:       RouteEntry{Source: SourceDirectRegistry, SourceKey: "billing", Targets: targets("http://billing-any:80")},
	}, {
		name:       "discovery: envTag and proxyable protocols, sorted",
		route:      Route{PathPrefix: "/p", ServiceID: "pets", EnvTag: "prod"},
		discovered: pets,
		want:       RouteEntry{Source: SourceDiscovery, Targets: discoveredTargets("http://10.0.0.1:8080", "http://10.0.0.2:8080", "https://10.0.0.3:8443")},
	}, {
		name:       "discovery: no envTag matches every environment",
		route:      Route{PathPrefix: "/p", ServiceID: "pets", Protocol: "http"},
		discovered: pets,
		want:       RouteEntry{Source: SourceDiscovery, Targets: discoveredTargets("http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.1.1:8080")},
	}, {
		name:       "discovery: protocol restricts",
		route:      Route{PathPrefix: "/p", ServiceID: "pets", Protocol: "https"},
		discovered: pets,
		want:       RouteEntry{Source: SourceDiscovery, Targets: discoveredTargets("https://10.0.0.3:8443")},
	}, {
		name:  "discovery: disconnected, zero-port and grpc nodes fall through to static targets",
		route: Route{PathPrefix: "/p", ServiceID: "pets", StaticTargets: []string{"http://s2:1", "http://s1:1", "http://s2:1"}},
		discovered: []*registry.DiscoverySnapshot{
			snapshot("pets", "", "http", node("10.0.0.1", 8080, "http", false), node("10.0.0.2", 0, "http", true)),
			snapshot("pets", "", "grpc", node("10.0.0.3", 9000, "grpc", true)),
		},
		want: RouteEntry{Source: SourceStaticTargets, Targets: targets("http://s1:1", "http://s2:1")},
	}, {
		name:       "discovery: duplicate addresses count once",
		route:      Route{PathPrefix: "/p", ServiceID: "pets"},
		discovered: []*registry.DiscoverySnapshot{snapshot("pets", "", "http", node("10.0.0.1", 80, "http", true), node("10.0.0.1", 80, "http", true))},
		want:       RouteEntry{Source: SourceDiscovery, Targets: discoveredTargets("http://10.0.0.1:80")},
	}, {
		name:       "IPv6 addresses are bracketed",
		route:      Route{PathPrefix: "/p", ServiceID: "pets"},
		discovered: []*registry.DiscoverySnapshot{snapshot("pets", "", "http", node("::1", 80, "http", true))},
		want:       RouteEntry{Source: SourceDiscovery, Targets: discoveredTargets("http://[::1]:80")},
	}, {
		name:       "snapshots of another service are ignored",
		route:      Route{PathPrefix: "/p", ServiceID: "pets"},
		discovered: []*registry.DiscoverySnapshot{snapshot("cats", "", "http", node("10.0.0.1", 80, "http", true))},
		want:       RouteEntry{Source: SourceNone},
	}, {
		name:  "nothing known",
		route: Route{PathPrefix: "/p", ServiceID: "pets"},
		want:  RouteEntry{Source: SourceNone},
	}, {
		name:  "invalid route is kept with its error",
		route: Route{PathPrefix: "/p", ServiceID: "pets", DirectURL: "ftp://x"},
		want:  RouteEntry{Source: SourceNone, Error: `invalid route: directUrl: invalid URL "ftp://x": want http://host:port or https://host:port`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolveRoute("r", &tt.route, direct, tt.discovered)
			want := tt.want
			want.Name, want.PathPrefix, want.ServiceID, want.EnvTag, want.StripPrefix = "r", tt.route.PathPrefix, tt.route.ServiceID, tt.route.EnvTag, tt.route.StripPrefix
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("resolveRoute (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeRouteTable(t *testing.T) {
	var routes watchable.Map[types.NamespacedName, file.Object[Route]]
	var directs watchable.Map[types.NamespacedName, file.Object[DirectRegistry]]
	var discovery watchable.Map[registry.DiscoveryKey, *registry.DiscoverySnapshot]

	routes.Store(types.NamespacedName{Name: "pets"}, file.Object[Route]{Spec: Route{PathPrefix: "/pets", ServiceID: "pets", StripPrefix: true}})
	routes.Store(types.NamespacedName{Namespace: "team", Name: "cats"}, file.Object[Route]{Spec: Route{PathPrefix: "/cats", ServiceID: "cats"}})
	routes.Store(types.NamespacedName{Name: "bad"}, file.Object[Route]{Spec: Route{PathPrefix: "nope", ServiceID: "x"}})
	routes.Store(types.NamespacedName{Name: "kittens"}, file.Object[Route]{Spec: Route{PathPrefix: "/cats", ServiceID: "kittens", StaticTargets: []string{"http://kittens:1"}}})
	directs.Store(types.NamespacedName{Name: "a"}, file.Object[DirectRegistry]{Spec: DirectRegistry{DirectURLs: map[string]string{"cats": "http://cats-a:1"}}})
	directs.Store(types.NamespacedName{Name: "b"}, file.Object[DirectRegistry]{Spec: DirectRegistry{DirectURLs: map[string]string{"cats": "http://cats-b:1", "dogs": "http://dogs:1"}}})
	directs.Store(types.NamespacedName{Name: "c"}, file.Object[DirectRegistry]{Spec: DirectRegistry{DirectURLs: map[string]string{"x": "not a url"}}})
	discovery.Store(registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}, snapshot("pets", "", "http", node("127.0.0.1", 8081, "http", true)))

	got, err := computeRouteTable(routes.State(), directs.State(), discovery.State())
	want := map[string]*RouteEntry{
		"pets":      {Name: "pets", PathPrefix: "/pets", ServiceID: "pets", StripPrefix: true, Source: SourceDiscovery, Targets: discoveredTargets("http://127.0.0.1:8081")},
		"team/cats": {Name: "team/cats", PathPrefix: "/cats", ServiceID: "cats", Source: SourceDirectRegistry, SourceKey: "cats", Targets: targets("http://cats-a:1")},
		"kittens":   {Name: "kittens", PathPrefix: "/cats", ServiceID: "kittens", Source: SourceStaticTargets, Targets: targets("http://kittens:1")},
		"bad":       {Name: "bad", PathPrefix: "nope", ServiceID: "x", Source: SourceNone, Error: `invalid route: pathPrefix "nope" must start with /`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("computeRouteTable (-want +got):\n%s", diff)
	}
	for _, part := range []string{
		`DirectRegistry b: key "cats" already set by a; keeping http://cats-a:1`,
		`DirectRegistry c ignored`,
		`route bad: invalid route`,
		`routes kittens, team/cats share pathPrefix "/cats": only kittens gets its requests`,
	} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("computeRouteTable error = %v, want it to mention %q", err, part)
		}
	}
}
