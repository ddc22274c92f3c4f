package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// nextEvent returns the next event of an SSE stream, comments skipped.
func (s *sseStream) nextEvent() (event string, data []byte) {
	s.t.Helper()
	for {
		line, err := s.lines.ReadBytes('\n')
		if err != nil {
			s.t.Fatalf("the stream ended: %v", err)
		}
		line = bytes.TrimRight(line, "\n")
		switch {
		case len(line) == 0 && event != "":
			return event, data
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		}
	}
}

// merged is what Snapshots holds for the lookup k, as one snapshot.
func (f *fixture) merged(k DiscoveryKey) *DiscoverySnapshot {
	out := &DiscoverySnapshot{ServiceID: k.ServiceID, EnvTag: k.EnvTag, Protocol: k.Protocol, Nodes: []Instance{}}
	for sk, s := range f.r.Snapshots().State().All() {
		if k.matches(sk) {
			out.Nodes = append(out.Nodes, s.Nodes...)
		}
	}
	sortNodes(out.Nodes)
	return out
}

// A delta watch sends the whole snapshot first, then only what changed;
// applying the deltas in order keeps the client's copy equal to the
// registry's.
func TestDeltaWatch(t *testing.T) {
	clock := newFakeClock()
	f := start(t, withClock(clock), WithLease(time.Minute))
	a := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 80})
	f.register(Registration{ServiceID: "api", EnvTag: "prod", Protocol: "grpc", Address: "10.0.0.2", Port: 90})
	f.register(Registration{ServiceID: "other", Protocol: "http", Address: "10.0.0.3", Port: 80})
	k := DiscoveryKey{ServiceID: "api"}
	f.waitSnapshots("both api instances in Snapshots", func(m map[DiscoveryKey]*DiscoverySnapshot) bool { return len(m) == 3 })

	w := f.watchSSE("serviceId=api&delta=true", "")
	event, data := w.nextEvent()
	var mine DiscoverySnapshot
	if err := json.Unmarshal(data, &mine); event != "snapshot" || err != nil || len(mine.Nodes) != 2 {
		t.Fatalf("first event %s %s (%v), want the snapshot of 2 nodes", event, data, err)
	}
	next := func(what string) *DiscoveryDelta {
		t.Helper()
		event, data := w.nextEvent()
		var d DiscoveryDelta
		if err := json.Unmarshal(data, &d); event != "delta" || err != nil {
			t.Fatalf("%s: event %s %s (%v), want a delta", what, event, data, err)
		}
		d.Apply(&mine)
		return &d
	}
	check := func(what string) {
		t.Helper()
		// No change follows the one just read before this check: the
		// registry's snapshots are those the event was made from.
		want := f.merged(k)
		if diff := cmp.Diff(summarize(want), summarize(&mine)); diff != "" {
			t.Errorf("%s: the client's copy (-registry +copy):\n%s", what, diff)
		}
	}

	c := f.register(Registration{ServiceID: "api", Protocol: "https", Address: "10.0.0.4", Port: 443})
	if d := next("a registration"); len(d.Upserts) != 1 || d.Upserts[0].RuntimeInstanceID != c || len(d.Removes) != 0 {
		t.Errorf("delta of a registration: %+v, want one upsert", d)
	}
	check("after a registration")

	if status, _ := f.do("DELETE", "/v1/services/"+a, testToken, "", ""); status != http.StatusNoContent {
		t.Fatal("deregister failed")
	}
	if d := next("a deregistration"); len(d.Upserts) != 0 || len(d.Removes) != 1 || d.Removes[0] != a {
		t.Errorf("delta of a deregistration: %+v, want one removal", d)
	}
	check("after a deregistration")

	clock.advance(2 * time.Minute) // every lease runs out: both api instances disconnect
	f.r.store.expire()
	if d := next("expired leases"); len(d.Upserts) != 2 || d.Upserts[0].Connected || len(d.Removes) != 0 {
		t.Errorf("delta of expired leases: %+v, want the two instances, disconnected", d)
	}
	check("after the leases expired")

	// Another service's changes send nothing to this watch: the next event
	// is the next change of api.
	f.register(Registration{ServiceID: "other", Protocol: "http", Address: "10.0.0.5", Port: 80})
	d := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.6", Port: 80})
	if got := next("a registration after another service's"); len(got.Upserts) != 1 || got.Upserts[0].RuntimeInstanceID != d {
		t.Errorf("delta: %+v, want only the api instance", got)
	}
	check("at the end")
}

func TestDeltaSubscribe(t *testing.T) {
	f := start(t)
	rc := f.dial("/ws/discovery", "")
	var sub struct{ SubscriptionID string }
	rc.result("discovery/subscribe", map[string]any{"serviceId": "api", "delta": true}, &sub)
	first := rc.snapshotNote()
	if first.SubscriptionID != sub.SubscriptionID || len(first.Nodes) != 0 {
		t.Fatalf("first notification %+v", first)
	}
	id := f.register(Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 80})
	m := rc.mustRead()
	var note struct {
		SubscriptionID string `json:"subscriptionId"`
		DiscoveryDelta
	}
	if err := json.Unmarshal(m.Params, &note); m.Method != "discovery/delta" || err != nil {
		t.Fatalf("got %+v (%v), want a discovery/delta notification", m, err)
	}
	if note.SubscriptionID != sub.SubscriptionID || note.ServiceID != "api" || len(note.Upserts) != 1 || note.Upserts[0].RuntimeInstanceID != id || note.Removes == nil {
		t.Errorf("delta notification %s", m.Params)
	}
	// Without delta, subscriptions still get whole snapshots.
	rc.result("discovery/subscribe", map[string]any{"serviceId": "api"}, &sub)
	if n := rc.snapshotNote(); len(n.Nodes) != 1 {
		t.Errorf("snapshot of a plain subscription: %+v", n)
	}
}

func TestDeltaBadInput(t *testing.T) {
	f := start(t)
	for _, tt := range []struct {
		path, field, msg string
	}{
		{"/v1/discovery/watch?serviceId=api&delta=yes", "delta", "true or false"},
		{"/v1/discovery/watch?serviceId=api&delta=true&delta=false", "delta", "once"},
		{"/v1/discovery?serviceId=api&delta=true", "delta", "unknown query parameter"},
	} {
		status, body := f.do("GET", tt.path, "", "", "")
		var got FieldError
		_ = json.Unmarshal([]byte(body), &got)
		if status != http.StatusBadRequest || got.Field != tt.field || !strings.Contains(got.Message, tt.msg) {
			t.Errorf("GET %s: %d %s, want 400 on %s", tt.path, status, body, tt.field)
		}
	}
	rc := f.dial("/ws/discovery", "")
	for _, params := range []map[string]any{{"serviceId": "api", "delta": "yes"}} {
		if m := rc.call("discovery/subscribe", params); m.Error == nil || m.Error.Code != CodeInvalidParams || m.Error.Data.Field != "delta" {
			t.Errorf("subscribe %v: %+v, want CodeInvalidParams on delta", params, m)
		}
	}
	if m := rc.call("discovery/lookup", map[string]any{"serviceId": "api", "delta": true}); m.Error == nil || m.Error.Code != CodeInvalidParams {
		t.Errorf("lookup with delta: %+v, want CodeInvalidParams", m)
	}
}

// Applying the delta between two random sets of snapshots to the first
// gives the second.
func TestDiffApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := DiscoveryKey{ServiceID: "api"}
	random := func() []*DiscoverySnapshot {
		var parts []*DiscoverySnapshot
		for _, env := range []string{"dev", "prod"} {
			if rng.IntN(4) == 0 {
				continue
			}
			s := &DiscoverySnapshot{ServiceID: "api", EnvTag: env, Protocol: "http"}
			for i := range 10 {
				if rng.IntN(2) == 0 {
					s.Nodes = append(s.Nodes, Instance{RuntimeInstanceID: fmt.Sprintf("%s-%d", env, i), ServiceID: "api", EnvTag: env,
						Protocol: "http", Address: "10.0.0.1", Port: 1000 + i, Connected: rng.IntN(3) > 0, Version: fmt.Sprint(rng.IntN(2))})
				}
			}
			sortNodes(s.Nodes)
			parts = append(parts, s)
		}
		return parts
	}
	mergeOf := func(parts []*DiscoverySnapshot) *DiscoverySnapshot {
		m := &DiscoverySnapshot{Nodes: []Instance{}}
		for _, p := range parts {
			m.Nodes = append(m.Nodes, p.Nodes...)
		}
		sortNodes(m.Nodes)
		return m
	}
	for range 500 {
		from, to := random(), random()
		if rng.IntN(3) == 0 && len(from) > 0 {
			to = append(to[:0:0], from[0]) // a part unchanged, shared
		}
		got := mergeOf(from)
		diff(q, from, to).Apply(got)
		if d := cmp.Diff(summarize(mergeOf(to)), summarize(got)); d != "" {
			t.Fatalf("applying the delta (-want +got):\n%s", d)
		}
	}
}

// For a service of 1,000 nodes, a delta event for one change is a few
// hundred bytes, where a snapshot event is the whole service again.
func TestDeltaEventSize(t *testing.T) {
	f := start(t, WithLimits(Limits{MaxInstancesPerService: 2000}))
	for i := range 1000 {
		if _, err := f.r.Register(Registration{ServiceID: "big", Protocol: "http", Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250), Port: 8080,
			Version: "1.2.3", Tags: map[string]string{"zone": "eu-west-1a", "app.kubernetes.io/name": "big"}}); err != nil {
			t.Fatal(err)
		}
	}
	f.waitSnapshots("1,000 nodes", func(m map[DiscoveryKey]*DiscoverySnapshot) bool {
		s := m[DiscoveryKey{"big", "", "http"}]
		return s != nil && len(s.Nodes) == 1000
	})
	full, delta := f.watchSSE("serviceId=big", ""), f.watchSSE("serviceId=big&delta=true", "")
	_, first := full.nextEvent()
	delta.nextEvent()
	f.r.Register(Registration{ServiceID: "big", Protocol: "http", Address: "10.1.0.1", Port: 8080, Version: "1.2.3"})
	_, again := full.nextEvent()
	_, d := delta.nextEvent()
	t.Logf("one registration in a 1,000-node service: a snapshot event of %d bytes, a delta event of %d bytes", len(again), len(d))
	if len(d)*100 > len(again) || len(first) > len(again) {
		t.Errorf("delta event %d bytes, snapshot event %d bytes: want the delta a hundred times smaller", len(d), len(again))
	}
}
