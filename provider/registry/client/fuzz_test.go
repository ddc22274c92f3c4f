package client

import (
	"encoding/json"
	"testing"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// FuzzDecodeMessage feeds the client's decoding of controller messages,
// and its splitting of a service's snapshot into the mirror's keys, with
// anything: they must never panic, and what they accept must be
// consistent.
//
//	go test -run '^$' -fuzz FuzzDecodeMessage -fuzztime 30s ./provider/registry/client
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		// What the controller sends (see provider/registry/testdata/wire.golden).
		`{"jsonrpc":"2.0","id":1,"result":{"runtimeInstanceId":"fedcba9876543210fedcba9876543210"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"subscriptionId":"0123456789abcdef0123456789abcdef"}}`,
		`{"jsonrpc":"2.0","method":"discovery/snapshot","params":{"subscriptionId":"s","serviceId":"api","envTag":"","protocol":"","nodes":[` +
			`{"runtimeInstanceId":"a","serviceId":"api","envTag":"prod","environment":"staging","version":"","protocol":"grpc","address":"10.0.0.2","port":9000,"connectedAt":"2030-01-02T03:04:05Z","connected":true},` +
			`{"runtimeInstanceId":"b","serviceId":"api","envTag":"prod","protocol":"http","address":"10.0.0.1","port":8080,"tags":{"zone":"a"},"connectedAt":"2030-01-02T03:04:05Z","connected":true}]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"serviceId":"api","envTag":"","protocol":"http","nodes":[]}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: port is required","data":{"error":"port is required","field":"port"}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		// What it must not be fooled by.
		`{"jsonrpc":"2.0","method":"discovery/snapshot","params":{"subscriptionId":"s","serviceId":"api","nodes":[{"runtimeInstanceId":"x","serviceId":"other"}]}}`,
		`{"jsonrpc":"2.0","method":"discovery/snapshot","params":{"serviceId":"api","nodes":[]}}`,
		`{"jsonrpc":"2.0","id":"7","result":true}`,
		`{"jsonrpc":"1.0","id":1,"result":true}`,
		`{"jsonrpc":"2.0","id":1}`,
		`[{"jsonrpc":"2.0","id":1,"result":true}]`,
		`{"jsonrpc":"2.0","method":"discovery/snapshot","params":null}`,
		``, `null`, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := decodeMessage(data)
		if err != nil {
			return
		}
		if in.note == nil {
			if in.id >= 0 && in.err == nil && len(in.result) == 0 {
				t.Fatalf("a response without result or error accepted: %q", data)
			}
			return
		}
		if in.note.SubscriptionID == "" || checkSnapshot(in.note.DiscoverySnapshot) != nil {
			t.Fatalf("an inconsistent notification accepted: %q", data)
		}
		groups := split(in.note.DiscoverySnapshot)
		total := 0
		for k, g := range groups {
			if k.ServiceID != in.note.ServiceID || g.ServiceID != k.ServiceID || g.EnvTag != k.EnvTag || g.Protocol != k.Protocol || len(g.Nodes) == 0 {
				t.Fatalf("group %v = %+v from %q", k, g, data)
			}
			for _, n := range g.Nodes {
				if n.EnvTag != k.EnvTag || n.Protocol != k.Protocol || n.ServiceID != k.ServiceID {
					t.Fatalf("node %+v in group %v", n, k)
				}
			}
			total += len(g.Nodes)
			// What the mirror stores encodes and decodes to itself.
			b, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			var back registry.DiscoverySnapshot
			if err := json.Unmarshal(b, &back); err != nil || !back.Equal(g) {
				t.Fatalf("group %v does not round-trip: %v", k, err)
			}
		}
		if total != len(in.note.Nodes) {
			t.Fatalf("split kept %d of %d nodes", total, len(in.note.Nodes))
		}
	})
}
