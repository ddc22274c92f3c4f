// Package registrytest checks that a registry.Store keeps the contract a
// Registry relies on, so that every store — the default one in memory, the
// etcd module's — behaves the same where it must.
package registrytest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// MaxPerService is the limit of instances per service the tests run
// stores with.
const MaxPerService = 3

var idShape = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Conformance runs the contract's tests, as parallel subtests of t, each on
// a store made by newStore, run with the given lease. Instances leased by
// heartbeats must be gone within three leases of their last one; the tests
// wait up to twice that.
func Conformance(t *testing.T, lease time.Duration, newStore func(t *testing.T) registry.Store) {
	tests := []struct {
		name string
		test func(t *testing.T, st registry.Store, lease time.Duration)
	}{
		{"RegisterThenRead", registerThenRead},
		{"EndpointKeepsItsID", endpointKeepsItsID},
		{"ProposedID", proposedID},
		{"UnknownIDs", unknownIDs},
		{"Deregister", deregister},
		{"LimitPerService", limitPerService},
		{"HeartbeatsKeepAnInstance", heartbeatsKeep},
		{"WithoutHeartbeatsItGoes", withoutHeartbeats},
		{"HeldOutlivesTheLease", heldOutlivesTheLease},
		{"Disconnect", disconnect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			Start(t, st, lease)
			tt.test(t, st, lease)
		})
	}
	t.Run("NotRunning", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		ctx := context.Background()
		if _, err := st.Register(ctx, reg("api", 1), registry.NoHolder); !errors.Is(err, registry.ErrNotRunning) {
			t.Errorf("Register before Run: %v, want ErrNotRunning", err)
		}
		Start(t, st, lease)
		if err := st.Run(ctx, config(t, lease)); err == nil {
			t.Error("a second Run succeeded")
		}
	})
}

func config(t *testing.T, lease time.Duration) registry.StoreConfig {
	return registry.StoreConfig{
		Lease:  lease,
		Limits: registry.Limits{MaxInstancesPerService: MaxPerService, MaxInstances: 1000},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		Now:    time.Now,
	}
}

// Start runs st until the test ends, and waits until its Instances are
// initialized.
func Start(t *testing.T, st registry.Store, lease time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx, config(t, lease)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-st.Instances().Initialized():
	case err := <-done:
		done <- err
		t.Fatalf("Run returned before the instances were initialized: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("instances not initialized after 30s")
	}
}

func reg(service string, port int) registry.Registration {
	return registry.Registration{ServiceID: service, Protocol: "http", Address: "10.0.0.1", Port: port, Version: "v1"}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func register(t *testing.T, st registry.Store, r registry.Registration, held registry.Holder) string {
	t.Helper()
	id, err := st.Register(ctxFor(t), r, held)
	if err != nil {
		t.Fatalf("register %+v: %v", r, err)
	}
	return id
}

// waitFor waits on a subscription until cond returns "" for the
// instances, failing with its last answer after d.
func waitFor(t *testing.T, st registry.Store, d time.Duration, cond func(watchable.State[string, *registry.Instance]) string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	why := "no snapshot"
	for snap := range st.Instances().Subscribe(ctx) {
		if why = cond(snap.State); why == "" {
			return
		}
	}
	t.Fatalf("after %v: %s", d, why)
}

func registerThenRead(t *testing.T, st registry.Store, _ time.Duration) {
	r := reg("api", 80)
	r.EnvTag, r.Environment, r.Tags = "prod", "staging", map[string]string{"zone": "a"}
	before := time.Now()
	id := register(t, st, r, registry.NoHolder)
	if !idShape.MatchString(id) {
		t.Errorf("id %q, want 32 hexadecimal digits", id)
	}
	// Read-your-writes: no waiting.
	inst, ok := st.Instances().Load(id)
	if !ok {
		t.Fatal("the instance is not in Instances when Register returns")
	}
	want := registry.Instance{RuntimeInstanceID: id, ServiceID: "api", EnvTag: "prod", Environment: "staging", Version: "v1",
		Protocol: "http", Address: "10.0.0.1", Port: 80, Tags: map[string]string{"zone": "a"}, Connected: true}
	got := *inst
	if got.ConnectedAt.Before(before.Add(-time.Second)) || got.ConnectedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("connectedAt %v, want about now", got.ConnectedAt)
	}
	got.ConnectedAt, got.LastSeenAt = time.Time{}, time.Time{}
	if !got.Equal(&want) {
		t.Errorf("instance %+v, want %+v", got, want)
	}
}

func endpointKeepsItsID(t *testing.T, st registry.Store, _ time.Duration) {
	id := register(t, st, reg("api", 80), registry.NoHolder)
	r := reg("api", 80)
	r.Version = "v2"
	if again := register(t, st, r, registry.NoHolder); again != id {
		t.Fatalf("the same endpoint registered again got %s, want %s", again, id)
	}
	if inst, _ := st.Instances().Load(id); inst == nil || inst.Version != "v2" {
		t.Errorf("after registering again: %+v, want version v2", inst)
	}
	if other := register(t, st, reg("api", 81), registry.NoHolder); other == id {
		t.Error("another endpoint got the same id")
	}
	if n := st.Instances().Len(); n != 2 {
		t.Errorf("%d instances, want 2", n)
	}
}

func proposedID(t *testing.T, st registry.Store, _ time.Duration) {
	const wanted = "0123456789abcdef0123456789abcdef"
	r := reg("api", 80)
	r.RuntimeInstanceID = wanted
	if id := register(t, st, r, registry.NoHolder); id != wanted {
		t.Fatalf("proposed %s, got %s", wanted, id)
	}
	r = reg("api", 81)
	r.RuntimeInstanceID = wanted
	if id := register(t, st, r, registry.NoHolder); id == wanted || !idShape.MatchString(id) {
		t.Errorf("proposed an id another instance has: got %s, want a new one", id)
	}
}

func unknownIDs(t *testing.T, st registry.Store, _ time.Duration) {
	const unknown = "ffffffffffffffffffffffffffffffff"
	if err := st.Renew(ctxFor(t), unknown); !errors.Is(err, registry.ErrUnknownInstance) {
		t.Errorf("Renew of an unknown id: %v, want ErrUnknownInstance", err)
	}
	if err := st.Deregister(ctxFor(t), unknown); !errors.Is(err, registry.ErrUnknownInstance) {
		t.Errorf("Deregister of an unknown id: %v, want ErrUnknownInstance", err)
	}
}

func deregister(t *testing.T, st registry.Store, _ time.Duration) {
	id := register(t, st, reg("api", 80), registry.NoHolder)
	held := register(t, st, reg("api", 81), 7)
	for _, id := range []string{id, held} {
		if err := st.Deregister(ctxFor(t), id); err != nil {
			t.Fatal(err)
		}
		if _, ok := st.Instances().Load(id); ok {
			t.Errorf("instance %s still there when Deregister returns", id)
		}
		if err := st.Deregister(ctxFor(t), id); !errors.Is(err, registry.ErrUnknownInstance) {
			t.Errorf("second Deregister: %v, want ErrUnknownInstance", err)
		}
	}
}

func limitPerService(t *testing.T, st registry.Store, _ time.Duration) {
	for port := range MaxPerService {
		register(t, st, reg("api", 80+port), registry.NoHolder)
	}
	if _, err := st.Register(ctxFor(t), reg("api", 99), registry.NoHolder); !errors.Is(err, registry.ErrTooManyInstances) {
		t.Errorf("one instance too many: %v, want ErrTooManyInstances", err)
	}
	// Registering a known endpoint again is no new instance.
	register(t, st, reg("api", 80), registry.NoHolder)
	register(t, st, reg("web", 80), registry.NoHolder)
}

func heartbeatsKeep(t *testing.T, st registry.Store, lease time.Duration) {
	id := register(t, st, reg("api", 80), registry.NoHolder)
	tick := time.NewTicker(lease / 4)
	defer tick.Stop()
	for deadline := time.Now().Add(3 * lease); time.Now().Before(deadline); <-tick.C {
		if err := st.Renew(ctxFor(t), id); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		if inst, ok := st.Instances().Load(id); !ok || !inst.Connected {
			t.Fatalf("a heartbeated instance is %+v (present %v), want connected", inst, ok)
		}
	}
}

func withoutHeartbeats(t *testing.T, st registry.Store, lease time.Duration) {
	id := register(t, st, reg("api", 80), registry.NoHolder)
	waitFor(t, st, 6*lease, func(s watchable.State[string, *registry.Instance]) string {
		if _, ok := s.Get(id); ok {
			return "an instance without heartbeats is still there"
		}
		return ""
	})
	if err := st.Renew(ctxFor(t), id); !errors.Is(err, registry.ErrUnknownInstance) {
		t.Errorf("heartbeat after removal: %v, want ErrUnknownInstance", err)
	}
}

func heldOutlivesTheLease(t *testing.T, st registry.Store, lease time.Duration) {
	id := register(t, st, reg("api", 80), 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*lease)
	defer cancel()
	sub := st.Instances().Subscribe(ctx)
	<-sub
	for snap := range sub { // until the timeout: nothing may change it
		if inst, ok := snap.State.Get(id); !ok || !inst.Connected {
			t.Fatalf("a held instance without heartbeats became %+v (present %v)", inst, ok)
		}
	}
}

func disconnect(t *testing.T, st registry.Store, lease time.Duration) {
	id := register(t, st, reg("api", 80), 1)
	if err := st.Disconnect(ctxFor(t), id, 2); err != nil {
		t.Fatal(err)
	}
	if inst, _ := st.Instances().Load(id); inst == nil || !inst.Connected {
		t.Fatalf("disconnected by a connection that does not hold it: %+v", inst)
	}
	if err := st.Disconnect(ctxFor(t), id, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, 6*lease, func(s watchable.State[string, *registry.Instance]) string {
		if inst, ok := s.Get(id); ok && inst.Connected {
			return "still connected after its holder closed"
		}
		return ""
	})
	// A heartbeat brings it back, leased by heartbeats from then on.
	if err := st.Renew(ctxFor(t), id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, 6*lease, func(s watchable.State[string, *registry.Instance]) string {
		if inst, ok := s.Get(id); !ok || !inst.Connected {
			return fmt.Sprintf("a heartbeat did not reconnect it: %+v", inst)
		}
		return ""
	})

	// Without one it goes, within a lease or so of the disconnection.
	other := register(t, st, reg("api", 81), 3)
	if err := st.Disconnect(ctxFor(t), other, 3); err != nil {
		t.Fatal(err)
	}
	waitFor(t, st, 6*lease, func(s watchable.State[string, *registry.Instance]) string {
		if _, ok := s.Get(other); ok {
			return "a disconnected instance is still there"
		}
		return ""
	})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
