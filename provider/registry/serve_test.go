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

func TestServeStandalone(t *testing.T) {
	r, err := New(WithToken(testToken), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, r) }()
	select {
	case <-r.Ready():
	case <-time.After(waitFor):
		t.Fatal("not ready")
	}
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/services",
		strings.NewReader(`{"serviceId":"a","protocol":"http","address":"h","port":1}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("register: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := ListenAndServe(context.Background(), "127.0.0.1:-1", r); err == nil {
		t.Error("ListenAndServe on a bad address succeeded")
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
