package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-go/switchyard/internal/integration"
	"github.com/switchyard-go/switchyard/provider/registry"
)

const etcdTestToken = "etcd-test-token"

// noKeepAlive leaves no idle connection behind a test.
var noKeepAlive = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// startEtcd starts an etcd server process (built by etcd/hack/etcd.sh) and
// returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	bin := integration.Find(t, integration.Lookup{Env: "SWITCHYARD_ETCD_BIN", Cached: filepath.Join("etcd", "etcd"), Script: "etcd/hack/etcd.sh"})
	_, endpoint, err := integration.StartEtcd(t, bin, filepath.Join(t.TempDir(), "data"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return endpoint
}

// pipelineProcess is a pipeline binary running on etcd.
type pipelineProcess struct {
	*integration.Process
	gateway, control string // host:port
}

// startEtcdPipeline runs bin on etcd with free ports, and waits until it is
// ready.
func startEtcdPipeline(t *testing.T, bin, name, endpoint string, lease time.Duration) *pipelineProcess {
	t.Helper()
	t.Setenv("SWITCHYARD_TOKEN", etcdTestToken) // inherited by the child
	logs := t.TempDir()
	pp := &pipelineProcess{}
	p, _, err := integration.StartWithPorts(t, 3, func(ports []int, attempt int) integration.Command {
		pp.gateway = "127.0.0.1:" + strconv.Itoa(ports[0])
		pp.control = "127.0.0.1:" + strconv.Itoa(ports[1])
		control := pp.control
		return integration.Command{
			Name: name,
			Path: bin,
			Args: []string{"-demo=false", "-etcd", endpoint, "-lease", lease.String(), "-log-level", "info",
				"-gateway-addr", pp.gateway, "-control-addr", pp.control, "-admin-addr", "127.0.0.1:" + strconv.Itoa(ports[2])},
			Log: filepath.Join(logs, fmt.Sprintf("%s-%d.log", name, attempt)),
			Ready: func(ctx context.Context) error {
				code, _, err := getURL(ctx, "http://"+control+"/readyz")
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("/readyz: %d", code)
				}
				return err
			},
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	pp.Process = p
	return pp
}

func getURL(ctx context.Context, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// lookup asks p's registry for the instances of service.
func (p *pipelineProcess) lookup(t *testing.T, service string) map[string]registry.Instance {
	t.Helper()
	code, body, err := getURL(context.Background(), "http://"+p.control+"/v1/discovery?serviceId="+service)
	if err != nil || code != http.StatusOK {
		t.Fatalf("lookup %s: %d %s %v", service, code, body, err)
	}
	var snap registry.DiscoverySnapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatal(err)
	}
	out := map[string]registry.Instance{}
	for _, n := range snap.Nodes {
		out[n.RuntimeInstanceID] = n
	}
	return out
}

// send calls the registry's HTTP API of p with the token.
func (p *pipelineProcess) send(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+p.control+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+etcdTestToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// backend is an HTTP server answering its name.
func backend(t *testing.T, name string) (port int) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
	t.Cleanup(srv.Close)
	port, _ = strconv.Atoi(srv.URL[strings.LastIndexByte(srv.URL, ':')+1:])
	return port
}

func registration(port int) string {
	return fmt.Sprintf(`{"serviceId":"inventory","protocol":"http","address":"127.0.0.1","port":%d}`, port)
}

// until polls cond every 20 ms until it returns "", failing with its last
// answer after d.
func until(t *testing.T, d time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoPipelinesOnEtcd runs two pipeline processes on one etcd: an
// instance registered through one is discovered and routed by the other.
// When the first is killed, the instance leased by heartbeats lives on (its
// heartbeats go to the second), and the one its WebSocket held vanishes
// within the lease.
func TestTwoPipelinesOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs etcd and two pipelines")
	}
	const lease = 2 * time.Second
	endpoint := startEtcd(t)
	bin := buildBinary(t)
	first := startEtcdPipeline(t, bin, "first", endpoint, lease)
	second := startEtcdPipeline(t, bin, "second", endpoint, lease)

	// An instance leased by heartbeats, registered through the first, its
	// heartbeats sent to the second, as through a load balancer.
	code, body := first.send(t, http.MethodPost, "/v1/services", registration(backend(t, "by-heartbeats")))
	if code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, body)
	}
	var reg registry.RegisterResponse
	if err := json.Unmarshal([]byte(body), &reg); err != nil {
		t.Fatal(err)
	}
	leased := reg.RuntimeInstanceID
	stop := make(chan struct{})
	beats := make(chan error, 1)
	go func() {
		tick := time.NewTicker(lease / 4)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				beats <- nil
				return
			case <-tick.C:
			}
			req, _ := http.NewRequest(http.MethodPut, "http://"+second.control+"/v1/services/"+leased+"/heartbeat", nil)
			req.Header.Set("Authorization", "Bearer "+etcdTestToken)
			resp, err := noKeepAlive.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					err = fmt.Errorf("heartbeat through the second pipeline: %s", resp.Status)
				}
			}
			if err != nil {
				beats <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-beats; err != nil {
			t.Error(err)
		}
	}()

	// An instance held by a WebSocket to the first.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+first.control+"/ws/microservice",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + etcdTestToken}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	msg := `{"jsonrpc":"2.0","id":1,"method":"service/register","params":` + registration(backend(t, "by-socket")) + `}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	_, answer, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rpc struct {
		Result struct{ RuntimeInstanceID string }
		Error  any
	}
	if err := json.Unmarshal(answer, &rpc); err != nil || rpc.Error != nil {
		t.Fatalf("service/register: %s", answer)
	}
	held := rpc.Result.RuntimeInstanceID
	ws.CloseRead(ctx) // answers pings from now on

	// Discovered (once its mirror has caught up) and routed by the second.
	until(t, 30*time.Second, func() string {
		if got := second.lookup(t, "inventory"); len(got) != 2 {
			return fmt.Sprintf("the second pipeline finds %v, want both instances", got)
		}
		return ""
	})
	seen := map[string]bool{}
	until(t, 30*time.Second, func() string {
		_, b, err := getURL(ctx, "http://"+second.gateway+"/inventory/x")
		if err == nil {
			seen[string(b)] = true
		}
		if !seen["by-heartbeats"] || !seen["by-socket"] {
			return fmt.Sprintf("the second gateway reached %v, want both backends", seen)
		}
		return ""
	})

	first.Kill(t)
	killed := time.Now()
	until(t, 4*lease, func() string {
		if _, ok := second.lookup(t, "inventory")[held]; ok {
			return "the instance held by the killed pipeline's socket is still there"
		}
		return ""
	})
	t.Logf("the socket-held instance vanished %v after the kill (lease %v)", time.Since(killed).Round(10*time.Millisecond), lease)
	// The one leased by heartbeats stays, past its lease, and is routed.
	for deadline := time.Now().Add(2 * lease); time.Now().Before(deadline); time.Sleep(lease / 4) {
		inst, ok := second.lookup(t, "inventory")[leased]
		if !ok || !inst.Connected {
			t.Fatalf("the instance leased by heartbeats is %+v (present %v) after the kill", inst, ok)
		}
	}
	for range 3 {
		if code, b, err := getURL(ctx, "http://"+second.gateway+"/inventory/x"); err != nil || code != http.StatusOK || string(b) != "by-heartbeats" {
			t.Fatalf("the second gateway after the kill: %d %q %v", code, b, err)
		}
	}
}
