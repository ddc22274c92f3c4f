package discovery_test

import (
	"fmt"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/provider/registry"
)

func ExampleResolve() {
	billing := &registry.DiscoverySnapshot{ServiceID: "billing", EnvTag: "prod", Protocol: "http", Nodes: []registry.Instance{
		{RuntimeInstanceID: "b1", ServiceID: "billing", EnvTag: "prod", Protocol: "http", Address: "10.0.0.2", Port: 8080, Connected: true},
		{RuntimeInstanceID: "b2", ServiceID: "billing", EnvTag: "prod", Protocol: "http", Address: "10.0.0.1", Port: 8080, Connected: true},
		{RuntimeInstanceID: "b3", ServiceID: "billing", EnvTag: "prod", Protocol: "http", Address: "10.0.0.3", Port: 8080}, // not connected
	}}
	sources := discovery.Sources{
		DirectURLs: map[string]string{"billing|canary": "http://10.9.9.9:8080"},
		Discovered: []*registry.DiscoverySnapshot{billing},
		Static:     []string{"http://billing.fallback:8080"},
	}
	for _, env := range []string{"canary", "prod", "dev"} {
		res := discovery.Resolve(discovery.Query{ServiceID: "billing", EnvTag: env}, sources)
		fmt.Printf("%s: %s %q", env, res.Step, res.Key)
		for _, t := range res.Targets {
			fmt.Printf(" %s(%s)", t.URL, t.Instance)
		}
		fmt.Println()
	}
	// Output:
	// canary: directRegistry "billing|canary" http://10.9.9.9:8080()
	// prod: discovery "" http://10.0.0.1:8080(b2) http://10.0.0.2:8080(b1)
	// dev: staticTargets "" http://billing.fallback:8080()
}

func ExamplePreferHTTPS() {
	targets := []discovery.Target{{URL: "http://10.0.0.1:80"}, {URL: "https://10.0.0.2:443"}, {URL: "https://10.0.0.3:443"}}
	policy := discovery.PreferHTTPS(new(discovery.RoundRobin))
	for range 3 {
		t, _ := policy.Pick(targets)
		fmt.Println(t.URL)
	}
	// Output:
	// https://10.0.0.2:443
	// https://10.0.0.3:443
	// https://10.0.0.2:443
}
