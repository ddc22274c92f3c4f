package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/internal/integration"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// The process tests run replicas as child processes of the test binary,
// which they kill with SIGKILL: a replica is this binary started with
// replicaArg first. It runs a LeaderOnly or a Shard against etcd, and
// streams what its runners do (each start and stop, with its term's token
// and the wall-clock time) as JSON lines on GET /events, from the first.
// POST /stop stops it gracefully (its runners resign, or leave).

const replicaArg = "cluster-test-replica"

// event is one thing a replica's runner did.
type event struct {
	Replica string `json:"replica"`
	Kind    string `json:"kind"`           // "start" or "stop"
	Item    string `json:"item,omitempty"` // "" for the leader-only runner
	Token   int64  `json:"token"`
	At      int64  `json:"at"` // Unix nanoseconds
}

func (e event) time() time.Time { return time.Unix(0, e.At) }

// eventLog is a replica's events, for its stream.
type eventLog struct {
	mu      sync.Mutex
	events  []event
	changed chan struct{}
	closed  bool // no more events: streams end once they sent them all
}

// close ends the log: the streams send what is left and end.
func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *eventLog) add(e event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.At = time.Now().UnixNano()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *eventLog) from(i int) ([]event, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events[i:], l.changed, l.closed
}

// replicaMain is the child's main: it returns the exit code.
func replicaMain(args []string) int {
	fs := flag.NewFlagSet(replicaArg, flag.ContinueOnError)
	var (
		endpoints = fs.String("endpoints", "", "etcd endpoints, comma-separated")
		addr      = fs.String("addr", "", "address of the events server")
		role      = fs.String("role", "leader", "leader or shard")
		id        = fs.String("id", "", "identity")
		key       = fs.String("key", "/test", "election key, or shard prefix")
		ttlFlag   = fs.Duration("ttl", ttl, "session time to live")
		items     = fs.Int("items", 30, "items to share")
		step      = fs.Duration("step", 10*time.Millisecond, "delay per workload level")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(*endpoints, ","),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		return 1
	}
	defer client.Close()

	log := &eventLog{changed: make(chan struct{})}
	record := func(ctx context.Context, item string) {
		term, _ := runner.TermOf(ctx)
		log.add(event{Replica: *id, Kind: "start", Item: item, Token: term.Token()})
		<-ctx.Done()
		log.add(event{Replica: *id, Kind: "stop", Item: item, Token: term.Token()})
	}
	var r runner.Runner
	switch *role {
	case "leader":
		e := cluster.NewElector(client, *key, cluster.WithIdentity(*id), cluster.WithTTL(*ttlFlag))
		r = runner.LeaderOnly(e, runner.Func("leader", func(ctx context.Context) error {
			record(ctx, "")
			return nil
		}))
	case "shard":
		m := new(watchable.Map[string, int])
		for i := range *items {
			m.Store(fmt.Sprintf("item-%02d", i), i)
		}
		e := cluster.NewShardEngine(client, *key, cluster.WithIdentity(*id), cluster.WithTTL(*ttlFlag))
		r = runner.Shard("shard", m.View(), func(k string) string { return k }, e,
			func(ctx context.Context, item string) error { record(ctx, item); return nil },
			runner.WithBalance(runner.Balance{Step: *step}))
	default:
		fmt.Fprintln(os.Stderr, "unknown role", *role)
		return 2
	}

	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) { cancel() })
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, req *http.Request) {
		flusher, _ := w.(http.Flusher)
		enc := json.NewEncoder(w)
		for i := 0; ; {
			events, changed, closed := log.from(i)
			for _, e := range events {
				if enc.Encode(e) != nil {
					return
				}
			}
			i += len(events)
			flusher.Flush()
			if closed {
				return
			}
			select {
			case <-changed:
			case <-req.Context().Done():
				return
			}
		}
	})
	srv := &http.Server{Addr: *addr, Handler: mux}
	go srv.ListenAndServe()
	defer func() {
		// Send the last events (the stops of a graceful stop) before
		// exiting.
		log.close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()

	g := runner.NewGroup(runner.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err := g.Run(gctx, r); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		return 1
	}
	return 0
}

// replica is a child replica, seen from the test.
type replica struct {
	id       string
	url      string
	proc     *integration.Process
	streamed chan struct{} // closed when its event stream has ended
}

// observer collects the events of every replica of a test, and keeps for
// each item (the leader-only runner's is "") the intervals during which a
// replica ran it, by the replicas' wall-clock times.
type observer struct {
	mu        sync.Mutex
	events    []event
	changed   chan struct{}
	running   map[string]map[string]int64 // item -> replica -> token, as the events arrive
	intervals map[string][]*interval      // item -> runs
}

type interval struct {
	replica     string
	token       int64
	start, stop time.Time // stop is zero while it runs
}

func newObserver() *observer {
	return &observer{changed: make(chan struct{}), running: map[string]map[string]int64{}, intervals: map[string][]*interval{}}
}

func (o *observer) add(e event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rs := o.running[e.Item]
	if rs == nil {
		rs = map[string]int64{}
		o.running[e.Item] = rs
	}
	if e.Kind == "start" {
		rs[e.Replica] = e.Token
		o.intervals[e.Item] = append(o.intervals[e.Item], &interval{replica: e.Replica, token: e.Token, start: e.time()})
	} else {
		delete(rs, e.Replica)
		for _, iv := range o.intervals[e.Item] {
			if iv.replica == e.Replica && iv.token == e.Token && iv.stop.IsZero() {
				iv.stop = e.time()
			}
		}
	}
	o.events = append(o.events, e)
	o.notifyLocked()
}

func (o *observer) notifyLocked() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// died ends every run of replica id at time at: it was killed then (or
// earlier).
func (o *observer) died(id string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range o.running {
		delete(rs, id)
	}
	for _, ivs := range o.intervals {
		for _, iv := range ivs {
			if iv.replica == id && iv.stop.IsZero() {
				iv.stop = at
			}
		}
	}
	o.notifyLocked()
}

// check fails the test if two replicas ran one item at the same time, by
// their clocks, or if an item's tokens did not grow from run to run.
func (o *observer) check(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	end := func(iv *interval) time.Time {
		if iv.stop.IsZero() {
			return time.Unix(1<<40, 0)
		}
		return iv.stop
	}
	for item, ivs := range o.intervals {
		for i, a := range ivs {
			for _, b := range ivs[i+1:] {
				if a.replica != b.replica && a.start.Before(end(b)) && b.start.Before(end(a)) {
					t.Errorf("%q ran on %s (token %d, %v to %v) and on %s (token %d, %v to %v) at once",
						item, a.replica, a.token, a.start.Format(time.StampMicro), end(a).Format(time.StampMicro),
						b.replica, b.token, b.start.Format(time.StampMicro), end(b).Format(time.StampMicro))
				}
				if a.start.Before(b.start) && a.token > b.token || b.start.Before(a.start) && b.token > a.token {
					t.Errorf("%q: tokens went back: %d on %s, then %d on %s", item, a.token, a.replica, b.token, b.replica)
				}
			}
		}
	}
}

// mark returns the position of the next event, for since.
func (o *observer) mark() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.events)
}

// since returns the events from position i on.
func (o *observer) since(i int) []event {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]event(nil), o.events[i:]...)
}

// wait blocks until cond holds on what runs (item -> replica -> token),
// and returns the events that arrived meanwhile.
func (o *observer) wait(t testing.TB, what string, cond func(running map[string]map[string]int64) bool) []event {
	t.Helper()
	deadline := time.After(patience)
	o.mu.Lock()
	first := len(o.events)
	o.mu.Unlock()
	for {
		o.mu.Lock()
		ok := cond(o.running)
		changed := o.changed
		events := append([]event(nil), o.events[first:]...)
		o.mu.Unlock()
		if ok {
			return events
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// streamClient keeps no idle connection, which would outlive the test.
var streamClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// follow streams the events of r into o until the stream ends (the replica
// stopped or died); r.streamed is closed then.
func (o *observer) follow(r *replica) error {
	resp, err := streamClient.Get(r.url + "/events")
	if err != nil {
		return err
	}
	r.streamed = make(chan struct{})
	go func() {
		defer close(r.streamed)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				o.add(e)
			}
		}
	}()
	return nil
}

// startReplica starts a child replica with the given role and flags,
// streams its events into o, and kills it when the test ends.
func startReplica(t testing.TB, o *observer, endpoints []string, id, role string, flags ...string) *replica {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	r := &replica{id: id}
	proc, _, err := integration.StartWithPorts(t, 1, func(ports []int, attempt int) integration.Command {
		addr := "127.0.0.1:" + strconv.Itoa(ports[0])
		r.url = "http://" + addr
		url := r.url
		args := append([]string{replicaArg, "-endpoints=" + strings.Join(endpoints, ","), "-addr=" + addr, "-id=" + id, "-role=" + role}, flags...)
		return integration.Command{
			Name:  "replica " + id,
			Path:  exe,
			Args:  args,
			Log:   filepath.Join(logs, fmt.Sprintf("replica-%s-%d.log", id, attempt)),
			Ready: func(ctx context.Context) error { return get(ctx, url+"/health") },
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r.proc = proc
	if err := o.follow(r); err != nil {
		t.Fatalf("follow the events of %s: %v", id, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the log of replica %s ends:\n%s", id, r.proc.LogTail())
		}
		if r.proc.Running() {
			r.proc.Kill(t)
		}
		<-r.streamed
	})
	return r
}

// kill kills the replica with SIGKILL, waits for the end of its event
// stream, and tells o. It returns when it sent the signal.
func (r *replica) kill(t testing.TB, o *observer) time.Time {
	t.Helper()
	at := time.Now()
	r.proc.Kill(t)
	within(t, r.streamed, "the event stream of "+r.id+" to end")
	o.died(r.id, time.Now())
	return at
}

// stop asks the replica to stop gracefully, waits until it has exited
// (after sending its last events), and returns when it asked.
func (r *replica) stop(t testing.TB, o *observer) time.Time {
	t.Helper()
	at := time.Now()
	resp, err := noKeepAlive.Post(r.url+"/stop", "", nil)
	if err != nil {
		t.Fatalf("stop %s: %v", r.id, err)
	}
	resp.Body.Close()
	within(t, r.streamed, "the event stream of "+r.id+" to end")
	o.died(r.id, time.Now()) // nothing is left running, unless events were lost
	return at
}

var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}
