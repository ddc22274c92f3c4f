package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog, which client-go logs through, starts its flush daemon at init.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}

// handlers records what every node handler of every replica last saw.
type handlers struct {
	mu   sync.Mutex
	seen map[string]map[string][]string // node -> replica -> pods (nil: stopped)
}

func (h *handlers) observe(replica, node string, pods []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[node] == nil {
		h.seen[node] = map[string][]string{}
	}
	if pods == nil {
		delete(h.seen[node], replica)
		return
	}
	h.seen[node][replica] = pods
}

// check returns "" when every node of want is handled by exactly one
// replica, seeing exactly its pods, and nothing else is handled.
func (h *handlers) check(want map[string][]string) (string, map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	per := map[string]int{}
	for node, by := range h.seen {
		if len(by) == 0 {
			continue
		}
		if len(by) > 1 {
			return fmt.Sprintf("node %s handled by %v", node, by), nil
		}
		for replica, pods := range by {
			if !slices.Equal(pods, want[node]) {
				return fmt.Sprintf("node %s: %s sees %v, want %v", node, replica, pods, want[node]), nil
			}
			per[replica]++
		}
	}
	if n := len(per); n == 0 {
		return "no node handled", nil
	}
	total := 0
	for _, n := range per {
		total += n
	}
	if total != len(want) {
		return fmt.Sprintf("%d nodes handled, want %d", total, len(want)), nil
	}
	return "", per
}

func pod(node, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
}

// TestNodesSharded runs two controller replicas on a real API server: one
// shared pod watch each, per-node handlers, nodes shared with a Lease each.
// Every node is handled by exactly one replica, which sees only its pods;
// a new node is picked up by one of them.
func TestNodesSharded(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cs := c.Clientset(t)
	ctx := testrun.Context(t, testrun.Timeout)
	want := map[string][]string{}
	for i := range 8 {
		node := fmt.Sprintf("node-%d", i%4)
		name := fmt.Sprintf("pod-%d", i)
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod(node, name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want[node] = append(want[node], "default/"+name)
	}
	h := &handlers{seen: map[string]map[string][]string{}}
	for _, id := range []string{"c1", "c2"} {
		cfg := Config{Replica: id, Namespace: "default", Shard: true, Observe: h.observe,
			Lease: lease.Timing{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}}
		testrun.Run(t, runner.Func(id, func(ctx context.Context) error { return Run(ctx, cfg, c.Config()) }))
	}
	var per map[string]int
	testrun.Until(t, func() (why string) { why, per = h.check(want); return why })
	t.Logf("nodes per replica: %v", per)

	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod("node-9", "late"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want["node-9"] = []string{"default/late"}
	testrun.Until(t, func() (why string) { why, per = h.check(want); return why })
	t.Logf("nodes per replica, node-9 added: %v", per)
}
