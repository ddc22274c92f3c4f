package registry

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
)

func TestListenAndServe(t *testing.T) {
	r, err := New(WithToken(testToken), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	// A free port, taken again at once; if another test grabs it first,
	// ListenAndServe fails and says so.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(ctx, addr, r) }()
	client := &http.Client{Transport: &http.Transport{}, Timeout: waitFor}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(waitFor)
	for {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/services",
			strings.NewReader(`{"serviceId":"a","protocol":"http","address":"h","port":1}`))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Errorf("register: %d", resp.StatusCode)
			}
			break
		}
		select {
		case err := <-done:
			t.Fatalf("ListenAndServe returned %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry does not answer on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond) // the server is starting
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe: %v", err)
	}
	r2, _ := New(WithToken(testToken), WithLogger(testLogger(t)))
	if err := ListenAndServe(context.Background(), "127.0.0.1:-1", r2); err == nil || !strings.Contains(err.Error(), "registry-api") {
		t.Errorf("ListenAndServe on a bad address: %v, want an error naming the server", err)
	}
}

// TestRunsInAGroup runs the registry in a runner group: the group is ready
// once the registry's data is, without any ordering, and the registry has
// no problem to report.
func TestRunsInAGroup(t *testing.T) {
	r, err := New(WithToken(testToken), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	g := runner.NewGroup(runner.WithLogger(testLogger(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, r) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("group: %v", err)
		}
	}()
	select {
	case <-g.Ready():
	case <-time.After(waitFor):
		t.Fatal("group not ready")
	}
	for _, ch := range []<-chan struct{}{r.Ready(), r.Instances().Initialized(), r.Snapshots().Initialized()} {
		select {
		case <-ch:
		default:
			t.Error("group ready before the registry's data")
		}
	}
	if _, err := r.Register(Registration{ServiceID: "a", Protocol: "http", Address: "h", Port: 1}); err != nil {
		t.Fatal(err)
	}
	st, _ := g.Status().Load(r.Name())
	if st.Phase != runner.PhaseReady || len(st.Problems) != 0 {
		t.Errorf("status %+v, want ready without problems", st)
	}
}
