package discovery_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/provider/registry"
)

func node(id, env, proto, addr string, port int, connected bool) registry.Instance {
	return registry.Instance{RuntimeInstanceID: id, ServiceID: "pets", EnvTag: env, Protocol: proto, Address: addr, Port: port, Connected: connected}
}

func snapshot(service, env, proto string, nodes ...registry.Instance) *registry.DiscoverySnapshot {
	for i := range nodes {
		nodes[i].ServiceID = service
	}
	return &registry.DiscoverySnapshot{ServiceID: service, EnvTag: env, Protocol: proto, Nodes: nodes}
}

func urls(us ...string) []discovery.Target {
	t := make([]discovery.Target, len(us))
	for i, u := range us {
		t[i] = discovery.Target{URL: u}
	}
	return t
}

func TestUsable(t *testing.T) {
	web := []string{"http", "https"}
	tests := []struct {
		name string
		q    discovery.Query
		n    registry.Instance
		want bool
	}{
		{"connected with a port", discovery.Query{ServiceID: "pets"}, node("a", "", "grpc", "h", 1, true), true},
		{"not connected", discovery.Query{ServiceID: "pets"}, node("a", "", "http", "h", 1, false), false},
		{"no port", discovery.Query{ServiceID: "pets"}, node("a", "", "http", "h", 0, true), false},
		{"another service", discovery.Query{ServiceID: "cats"}, node("a", "", "http", "h", 1, true), false},
		{"protocol allowed", discovery.Query{ServiceID: "pets", Protocols: web}, node("a", "", "https", "h", 1, true), true},
		{"protocol not allowed", discovery.Query{ServiceID: "pets", Protocols: web}, node("a", "", "grpc", "h", 1, true), false},
		{"envTag matches", discovery.Query{ServiceID: "pets", EnvTag: "prod"}, node("a", "prod", "http", "h", 1, true), true},
		{"envTag differs", discovery.Query{ServiceID: "pets", EnvTag: "prod"}, node("a", "dev", "http", "h", 1, true), false},
		{"no envTag in the query matches any", discovery.Query{ServiceID: "pets"}, node("a", "dev", "http", "h", 1, true), true},
	}
	for _, tt := range tests {
		if got := tt.q.Usable(&tt.n); got != tt.want {
			t.Errorf("%s: Usable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	direct := map[string]string{"billing|prod": "http://billing-prod:80", "billing": "http://billing-any:80"}
	pets := []*registry.DiscoverySnapshot{
		snapshot("pets", "prod", "http", node("i2", "prod", "http", "10.0.0.2", 8080, true), node("i1", "prod", "http", "10.0.0.1", 8080, true)),
		snapshot("pets", "dev", "http", node("i4", "dev", "http", "10.0.1.1", 8080, true)),
		snapshot("pets", "prod", "grpc", node("i9", "prod", "grpc", "10.0.0.9", 9000, true)),
		snapshot("pets", "prod", "https", node("i3", "prod", "https", "10.0.0.3", 8443, true)),
	}
	web := []string{"http", "https"}
	tests := []struct {
		name    string
		q       discovery.Query
		sources discovery.Sources
		want    discovery.Resolution
	}{{
		name:    "direct URL first",
		q:       discovery.Query{ServiceID: "billing", EnvTag: "prod"},
		sources: discovery.Sources{DirectURL: "http://own:1", DirectURLs: direct, Static: []string{"http://static:1"}},
		want:    discovery.Resolution{Step: discovery.StepDirectURL, Targets: urls("http://own:1")},
	}, {
		name:    "serviceId|envTag before serviceId",
		q:       discovery.Query{ServiceID: "billing", EnvTag: "prod"},
		sources: discovery.Sources{DirectURLs: direct},
		want:    discovery.Resolution{Step: discovery.StepDirectRegistry, Key: "billing|prod", Targets: urls("http://billing-prod:80")},
	}, {
		name:    "serviceId when the envTag has no entry",
		q:       discovery.Query{ServiceID: "billing", EnvTag: "staging"},
		sources: discovery.Sources{DirectURLs: direct},
		want:    discovery.Resolution{Step: discovery.StepDirectRegistry, Key: "billing", Targets: urls("http://billing-any:80")},
	}, {
		name: "direct registry before discovery",
		q:    discovery.Query{ServiceID: "billing"},
		sources: discovery.Sources{DirectURLs: direct,
			Discovered: []*registry.DiscoverySnapshot{snapshot("billing", "", "http", node("b", "", "http", "10.0.0.1", 80, true))}},
		want: discovery.Resolution{Step: discovery.StepDirectRegistry, Key: "billing", Targets: urls("http://billing-any:80")},
	}, {
		name:    "discovery: envTag and protocols, sorted by URL",
		q:       discovery.Query{ServiceID: "pets", EnvTag: "prod", Protocols: web},
		sources: discovery.Sources{Discovered: pets, Static: []string{"http://static:1"}},
		want: discovery.Resolution{Step: discovery.StepDiscovery, Targets: []discovery.Target{
			{URL: "http://10.0.0.1:8080", Instance: "i1"}, {URL: "http://10.0.0.2:8080", Instance: "i2"}, {URL: "https://10.0.0.3:8443", Instance: "i3"}}},
	}, {
		name:    "discovery: no envTag takes every environment",
		q:       discovery.Query{ServiceID: "pets", Protocols: []string{"http"}},
		sources: discovery.Sources{Discovered: pets},
		want: discovery.Resolution{Step: discovery.StepDiscovery, Targets: []discovery.Target{
			{URL: "http://10.0.0.1:8080", Instance: "i1"}, {URL: "http://10.0.0.2:8080", Instance: "i2"}, {URL: "http://10.0.1.1:8080", Instance: "i4"}}},
	}, {
		name: "discovery: one target per URL, named by the first instance id",
		q:    discovery.Query{ServiceID: "pets"},
		sources: discovery.Sources{Discovered: []*registry.DiscoverySnapshot{snapshot("pets", "", "http",
			node("z", "", "http", "10.0.0.1", 80, true), node("a", "", "http", "10.0.0.1", 80, true))}},
		want: discovery.Resolution{Step: discovery.StepDiscovery, Targets: []discovery.Target{{URL: "http://10.0.0.1:80", Instance: "a"}}},
	}, {
		name: "discovery: IPv6 in brackets",
		q:    discovery.Query{ServiceID: "pets"},
		sources: discovery.Sources{Discovered: []*registry.DiscoverySnapshot{snapshot("pets", "", "http",
			node("a", "", "http", "::1", 80, true))}},
		want: discovery.Resolution{Step: discovery.StepDiscovery, Targets: []discovery.Target{{URL: "http://[::1]:80", Instance: "a"}}},
	}, {
		name: "unusable nodes fall through to static targets, sorted and distinct",
		q:    discovery.Query{ServiceID: "pets", Protocols: web},
		sources: discovery.Sources{
			Discovered: []*registry.DiscoverySnapshot{
				snapshot("pets", "", "http", node("a", "", "http", "10.0.0.1", 8080, false), node("b", "", "http", "10.0.0.2", 0, true)),
				snapshot("pets", "", "grpc", node("c", "", "grpc", "10.0.0.3", 9000, true)),
				snapshot("cats", "", "http", node("d", "", "http", "10.0.0.4", 80, true)),
			},
			Static: []string{"http://s2:1", "http://s1:1", "http://s2:1"}},
		want: discovery.Resolution{Step: discovery.StepStaticTargets, Targets: urls("http://s1:1", "http://s2:1")},
	}, {
		name: "nothing",
		q:    discovery.Query{ServiceID: "pets"},
		want: discovery.Resolution{Step: discovery.StepNone},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := discovery.Resolve(tt.q, tt.sources)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirectKeys(t *testing.T) {
	if got := discovery.DirectKeys("a", ""); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("DirectKeys(a, \"\") = %q", got)
	}
	if got := discovery.DirectKeys("a", "prod"); !cmp.Equal(got, []string{"a|prod", "a"}) {
		t.Errorf("DirectKeys(a, prod) = %q", got)
	}
}
