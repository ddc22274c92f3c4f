package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/provider/registry"
)

var (
	hostileFull   = flag.Bool("hostile.full", false, "TestHostileClients at the size of issue 11: 2,000 slow-body connections, 500 sockets, the production timeouts")
	hostileStrict = flag.Bool("hostile.strict", false, "TestHostileClients fails when the normal client's p99 under attack is over twice its p99 without")
)

// hostileSize is what TestHostileClients throws at the pipeline.
type hostileSize struct {
	slowBodies  int           // connections trickling a body with a wrong token, reconnecting once closed
	sockets     int           // WebSockets that never authenticate
	authTimeout time.Duration // the registry's Limits.AuthTimeout
	bodyTimeout time.Duration // the servers' body timeout
	window      time.Duration // how long the normal client measures, in each phase
}

// TestHostileClients runs the pipeline on loopback and attacks its control
// listener as issue 11 did, from a process of its own, with connections
// that trickle a registration body under a wrong token (each attacker
// connects again a second after the server closes its connection) and
// WebSockets that never authenticate, while a normal client measures the
// latency of /healthz and of a routed GET, first without the attack and
// then during it. Every hostile connection
// must be closed within its timeout, and every normal request must
// succeed; the p99s are logged, and compared (-hostile.strict fails when
// the one under attack is over twice the other).
//
// The short form, the default, is for CI. By hand:
//
//	go test ./examples/pipeline -run TestHostileClients -hostile.full -v
//
// Client and server share the process, and so its descriptor limit: the
// test raises the soft limit up to the hard one if it must, and shrinks the
// attack (saying so) if even that is not enough.
func TestHostileClients(t *testing.T) {
	size := hostileSize{slowBodies: 200, sockets: 50, authTimeout: 2 * time.Second, bodyTimeout: 2 * time.Second, window: 1200 * time.Millisecond}
	if *hostileFull {
		size = hostileSize{slowBodies: 2000, sockets: 500, authTimeout: registry.DefaultAuthTimeout, bodyTimeout: httpserver.DefaultBodyTimeout, window: 6 * time.Second}
	}
	if testing.Short() && !*hostileFull {
		size.slowBodies, size.sockets = 50, 20
	}
	size = fitDescriptors(t, size)
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("attack: %d slow-body connections, %d sockets; auth timeout %v, body timeout %v; load average at start: %s",
		size.slowBodies, size.sockets, size.authTimeout, size.bodyTimeout, strings.TrimSpace(string(load)))

	e := launchPipeline(t, func(cfg *config) {
		cfg.registryLimits = registry.Limits{AuthTimeout: size.authTimeout}
		cfg.serverOptions = []httpserver.Option{httpserver.WithBodyTimeout(size.bodyTimeout)}
	}, nil)
	e.waitReady()
	waitRouted(t, e)

	normal := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}, Timeout: 30 * time.Second}
	defer normal.CloseIdleConnections()
	targets := []string{e.control + "/healthz", e.gateway + "/petstore/pets"}
	quiet := measure(t, normal, targets, size.window)

	ctl := strings.TrimPrefix(e.control, "http://")
	attack := startAttacker(t, ctl, size)
	attacked := measure(t, normal, targets, size.window)
	s, w := attack.stop(t)

	t.Logf("slow-body connections: %d made, %d closed by the server, longest held %v (timeout %v); %d dials failed",
		s.Made, s.Closed, s.Longest.Round(time.Millisecond), size.bodyTimeout, s.DialErrors)
	t.Logf("sockets: %d opened, %d closed by the server with 1008, longest held %v (timeout %v); %d dials failed",
		w.Made, w.Closed, w.Longest.Round(time.Millisecond), size.authTimeout, w.DialErrors)
	if s.Made == 0 || s.Closed != s.Made {
		t.Errorf("%d of %d slow-body connections were not closed by the server within %v", s.Made-s.Closed, s.Made, size.bodyTimeout+hostileSlack)
	}
	if w.Made != size.sockets || w.Closed != w.Made {
		t.Errorf("%d of %d sockets opened; %d not closed with 1008 within %v", w.Made, size.sockets, w.Made-w.Closed, size.authTimeout+hostileSlack)
	}
	c := e.p.registry.Counters()
	t.Logf("registry counters: %+v", c)
	if c.AuthTimeouts != uint64(w.Made) {
		t.Errorf("registry counted %d authentication timeouts, want %d", c.AuthTimeouts, w.Made)
	}

	verdict := "PASS"
	for i, target := range targets {
		q, a := quiet[i], attacked[i]
		if a.failures > 0 || q.failures > 0 {
			t.Errorf("%s: %d requests failed without the attack, %d during it", target, q.failures, a.failures)
		}
		ratio := float64(a.p99) / float64(q.p99)
		mark := "PASS"
		if ratio > 2 {
			mark, verdict = "MISS", "MISS"
		}
		t.Logf("%-40s unloaded p50 %-9v p99 %-9v (%d requests) | attacked p50 %-9v p99 %-9v (%d requests) | p99 ratio %.2f %s",
			pathOf(target), q.p50, q.p99, q.n, a.p50, a.p99, a.n, ratio, mark)
	}
	t.Logf("latency target (p99 under attack within 2x of unloaded): %s", verdict)
	if verdict == "MISS" && *hostileStrict {
		t.Error("the normal client's p99 under attack is over twice its unloaded p99")
	}
}

// hostileSlack is how much later than its timeout a hostile connection may
// be closed: the server's timers, and a busy machine.
const hostileSlack = 3 * time.Second

func pathOf(url string) string {
	if i := strings.Index(strings.TrimPrefix(url, "http://"), "/"); i >= 0 {
		return "GET " + strings.TrimPrefix(url, "http://")[i:]
	}
	return url
}

// waitRouted waits until the demo route reaches both demo backends.
func waitRouted(t *testing.T, e *e2e) {
	t.Helper()
	eventually(t, "the demo route routed", func() bool {
		r, ok := e.p.table.Load("petstore")
		return ok && len(r.Targets) == 2
	})
}

// fitDescriptors makes room for the attack within the descriptor limit,
// which client and server share here: 2 per connection, and a margin.
func fitDescriptors(t *testing.T, size hostileSize) hostileSize {
	need := uint64(2*(size.slowBodies+size.sockets) + 512)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Logf("cannot read the descriptor limit (%v): going on", err)
		return size
	}
	if rl.Cur < need && rl.Max > rl.Cur {
		raised := rl
		raised.Cur = min(need, rl.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			t.Logf("raised the soft descriptor limit from %d to %d (hard limit %d)", rl.Cur, raised.Cur, rl.Max)
			rl = raised
		}
	}
	t.Logf("descriptor limit %d (hard %d); the attack needs about %d", rl.Cur, rl.Max, need)
	if rl.Cur < need {
		f := float64(rl.Cur-512) / float64(need-512)
		size.slowBodies, size.sockets = int(float64(size.slowBodies)*f), int(float64(size.sockets)*f)
		t.Logf("the descriptor limit is too low for the whole attack: shrunk to %d slow-body connections and %d sockets", size.slowBodies, size.sockets)
	}
	return size
}

// latencies is what the normal client measured of one target.
type latencies struct {
	n, failures int
	p50, p99    time.Duration
}

// measure sends requests to the targets in turn, one at a time, for the
// window, and returns each target's latencies.
func measure(t *testing.T, c *http.Client, targets []string, window time.Duration) []latencies {
	t.Helper()
	took := make([][]time.Duration, len(targets))
	failures := make([]int, len(targets))
	for end := time.Now().Add(window); time.Now().Before(end); {
		for i, u := range targets {
			start := time.Now()
			resp, err := c.Get(u)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				failures[i]++
				t.Logf("%s: %v", u, err)
				continue
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	out := make([]latencies, len(targets))
	for i, d := range took {
		slices.Sort(d)
		out[i] = latencies{n: len(d), failures: failures[i]}
		if len(d) > 0 {
			out[i].p50 = d[len(d)/2].Round(time.Microsecond)
			out[i].p99 = d[min(len(d)-1, len(d)*99/100)].Round(time.Microsecond)
		}
	}
	return out
}

// holdCount says how many hostile connections were made, how many the
// server closed in time, and how long it held them at most.
type holdCount struct {
	Made       int
	Closed     int // by the server, within the timeout
	DialErrors int
	Longest    time.Duration
}

// holds counts hostile connections as they end; it is safe for
// concurrent use.
type holds struct {
	mu sync.Mutex
	c  holdCount
}

func (h *holds) add(held time.Duration, closedInTime bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.c.Made++
	if closedInTime {
		h.c.Closed++
	}
	h.c.Longest = max(h.c.Longest, held)
}

func (h *holds) dialFailed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.c.DialErrors++
}

func (h *holds) summary() holdCount {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// slowBody opens connections to addr that send the headers of a
// registration with a wrong token, then its body a byte at a time, until
// ctx is done; it records how long the server holds each one.
func slowBody(ctx context.Context, addr string, timeout time.Duration, h *holds) {
	const header = "POST /v1/services HTTP/1.1\r\nHost: registry\r\nAuthorization: Bearer not-the-token\r\n" +
		"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			h.dialFailed()
			pause(ctx, time.Second)
			continue
		}
		start := time.Now()
		stop := make(chan struct{})
		var wrote sync.WaitGroup
		wrote.Add(1)
		go func() { // the body, a byte every 100 ms, until the server closes
			defer wrote.Done()
			if _, err := io.WriteString(c, header); err != nil {
				return
			}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte{' '}); err != nil {
						return
					}
				}
			}
		}()
		_ = c.SetReadDeadline(start.Add(timeout + hostileSlack))
		_, err = io.Copy(io.Discard, c) // the 401, then the end (or a reset, as the body keeps coming)
		held := time.Since(start)
		close(stop)
		c.Close()
		wrote.Wait()
		h.add(held, !errors.Is(err, os.ErrDeadlineExceeded))
		pause(ctx, time.Second) // then again, for as long as the attack lasts
	}
}

// idleSocket opens a WebSocket to addr's /ws/microservice and never
// presents a token; it records how long the server holds it.
func idleSocket(addr string, timeout time.Duration, h *holds, dialed chan<- struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+hostileSlack+30*time.Second)
	defer cancel()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws/microservice", &websocket.DialOptions{HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		h.dialFailed()
		dialed <- struct{}{}
		return
	}
	defer c.CloseNow()
	start := time.Now()
	dialed <- struct{}{}
	rctx, rcancel := context.WithTimeout(context.Background(), timeout+hostileSlack)
	defer rcancel()
	_, _, err = c.Read(rctx)
	h.add(time.Since(start), websocket.CloseStatus(err) == websocket.StatusPolicyViolation)
}

// attackerEnv carries the attack to the attacker process: the target
// address and the size, as JSON.
const attackerEnv = "SWITCHYARD_HOSTILE_ATTACK"

// attackOrder is what the attacker process is told to do.
type attackOrder struct {
	Addr        string
	SlowBodies  int
	Sockets     int
	AuthTimeout time.Duration
	BodyTimeout time.Duration
}

// attackReport is what the attacker process reports once stopped.
type attackReport struct {
	SlowBodies, Sockets holdCount
}

// attacker is the attacker process, as TestHostileClients sees it.
type attacker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *syncBuffer
}

// startAttacker runs the attack against addr in a process of its own (this
// test binary, running TestHostileAttacker), as a hostile client would be,
// so that its goroutines and garbage do not share the server's runtime;
// it returns once every socket of the attack is open.
func startAttacker(t *testing.T, addr string, size hostileSize) *attacker {
	t.Helper()
	order, _ := json.Marshal(attackOrder{Addr: addr, SlowBodies: size.slowBodies, Sockets: size.sockets,
		AuthTimeout: size.authTimeout, BodyTimeout: size.bodyTimeout})
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileAttacker$", "-test.count=1")
	cmd.Env = append(os.Environ(), attackerEnv+"="+string(order))
	a := &attacker{cmd: cmd, stderr: newSyncBuffer()}
	cmd.Stderr = a.stderr
	var err error
	if a.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.lines = bufio.NewScanner(out)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line := a.next(t); line != "attacking" {
		t.Fatalf("attacker: %q, want it attacking\nstderr:\n%s", line, a.stderr.String())
	}
	return a
}

// next returns the next line the attacker printed that is addressed to
// the test.
func (a *attacker) next(t *testing.T) string {
	t.Helper()
	for a.lines.Scan() {
		if line, ok := strings.CutPrefix(a.lines.Text(), "attacker: "); ok {
			return line
		}
	}
	t.Fatalf("the attacker ended: %v\nstderr:\n%s", a.lines.Err(), a.stderr.String())
	return ""
}

// stop ends the slow-body connections, waits for the server to close the
// sockets, and returns what the attacker saw.
func (a *attacker) stop(t *testing.T) (slow, sockets holdCount) {
	t.Helper()
	a.stdin.Close() // the signal to stop
	var r attackReport
	if err := json.Unmarshal([]byte(a.next(t)), &r); err != nil {
		t.Fatalf("attacker's report: %v", err)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("attacker: %v\nstderr:\n%s", err, a.stderr.String())
	}
	return r.SlowBodies, r.Sockets
}

// TestHostileAttacker is the attacker process of TestHostileClients; it
// does nothing when run otherwise. It opens the sockets, says "attacking",
// keeps the slow-body connections coming until its standard input closes,
// waits for the server to close every socket, and prints its report.
func TestHostileAttacker(t *testing.T) {
	env := os.Getenv(attackerEnv)
	if env == "" {
		t.Skip("the attacker process of TestHostileClients")
	}
	var o attackOrder
	if err := json.Unmarshal([]byte(env), &o); err != nil {
		t.Fatal(err)
	}
	ctx, stopSlow := context.WithCancel(context.Background())
	defer stopSlow()
	slow, socks := &holds{}, &holds{}
	var wg sync.WaitGroup
	dialed := make(chan struct{}, o.Sockets)
	for range o.Sockets {
		wg.Add(1)
		go func() { defer wg.Done(); idleSocket(o.Addr, o.AuthTimeout, socks, dialed) }()
	}
	for range o.Sockets {
		<-dialed
	}
	for range o.SlowBodies {
		wg.Add(1)
		go func() { defer wg.Done(); slowBody(ctx, o.Addr, o.BodyTimeout, slow) }()
	}
	fmt.Println("attacker: attacking")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test closes it
	stopSlow()
	wg.Wait()
	report, _ := json.Marshal(attackReport{SlowBodies: slow.summary(), Sockets: socks.summary()})
	fmt.Println("attacker: " + string(report))
}

// pause waits for d or the end of ctx.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
