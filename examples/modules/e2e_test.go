package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/integration"
	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// argsEnv makes the test binary a replica, run with these arguments
// (space-separated), instead of running the tests.
const argsEnv = "MODULES_REPLICA_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(argsEnv); args != "" {
		if err := run(strings.Fields(args)); err != nil {
			fmt.Fprintln(os.Stderr, "modules:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m,
		// klog, which client-go logs through, starts its flush daemon at init.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}

// Short Leases keep the test short; the margin covers a slow machine.
const (
	leaseDuration = 4 * time.Second
	margin        = 3 * time.Second
)

// proc is a replica run as a child process.
type proc struct {
	module, name string
	log          string
	p            *integration.Process
}

func (p *proc) said(prefix string) []string {
	b, _ := os.ReadFile(p.log)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// addr is where the replica listens.
func (p *proc) addr() string {
	if l := p.said("listening "); len(l) > 0 {
		return l[0]
	}
	return ""
}

func startReplica(t *testing.T, kubeconfig, module, name, components string) *proc {
	t.Helper()
	p := &proc{module: module, name: name, log: filepath.Join(t.TempDir(), module+"-"+name+".log")}
	args := []string{"-module", module, "-replica", name, "-components", components, "-kubeconfig", kubeconfig,
		"-lease-duration", leaseDuration.String(), "-renew-deadline", "3s", "-retry-period", "500ms", "-wait", "3s"}
	var err error
	p.p, err = integration.StartProcess(t, integration.Command{
		Name: "module " + module + " replica " + name,
		Path: os.Args[0],
		Args: []string{"-test.run=^$"},
		Env:  []string{argsEnv + "=" + strings.Join(args, " ")},
		Log:  p.log,
		Ready: func(context.Context) error {
			if p.addr() == "" {
				return fmt.Errorf("not listening yet")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// published reads a TinyModule's status: who leads, at which address, and
// which managers wrote the status subresource (metadata.managedFields).
func published(t *testing.T, dyn dynamic.Interface, module string) (leader, addr string, writers []string) {
	obj, err := dyn.Resource(Resource).Namespace("default").Get(testrun.Context(t, 10*time.Second), module, metav1.GetOptions{})
	if err != nil {
		return "", "", nil
	}
	leader, _, _ = unstructured.NestedString(obj.Object, "status", "leader")
	addr, _, _ = unstructured.NestedString(obj.Object, "status", "addr")
	for _, f := range obj.GetManagedFields() {
		if f.Subresource == "status" && !slices.Contains(writers, f.Manager) {
			writers = append(writers, f.Manager)
		}
	}
	slices.Sort(writers)
	return leader, addr, writers
}

// waitLeader waits until module's status names one of replicas as leader,
// at its address, and returns it.
func waitLeader(t *testing.T, dyn dynamic.Interface, module string, replicas ...*proc) *proc {
	t.Helper()
	var leader *proc
	testrun.Until(t, func() string {
		name, addr, _ := published(t, dyn, module)
		for _, r := range replicas {
			if r.name == name && r.addr() == addr {
				leader = r
				return ""
			}
		}
		return fmt.Sprintf("TinyModule %s: status says leader %q at %q", module, name, addr)
	})
	return leader
}

// send posts a message through replica via and returns the answer and who
// handled it.
func send(t *testing.T, via *proc, to, body string) (string, string, int) {
	t.Helper()
	resp, err := http.Post("http://"+via.addr()+"/send?to="+to, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out), resp.Header.Get("X-Handled-By"), resp.StatusCode
}

// waitDelivered sends until the answer is want, handled by handler.
func waitDelivered(t *testing.T, via *proc, to, body, want, handler string) {
	t.Helper()
	testrun.Until(t, func() string {
		got, by, code := send(t, via, to, body)
		if code != http.StatusOK || got != want || by != handler {
			return fmt.Sprintf("send %s %q through %s/%s: %d %q by %q, want %q by %q", to, body, via.module, via.name, code, got, by, want, handler)
		}
		return ""
	})
}

// TestModulesEndToEnd runs two modules of two replicas each against a real
// API server: one replica per module leads and is the only one to write its
// module's status; a message crosses modules through the pool; when a
// leader is killed (SIGKILL) the other replica publishes its own address
// within the lease duration, and messages find it.
func TestModulesEndToEnd(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	kubetest.InstallCRD(t, c.Config(), CRD)
	kubeconfig := c.Kubeconfig(t)
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	alpha := []*proc{startReplica(t, kubeconfig, "alpha", "a1", "upper"), startReplica(t, kubeconfig, "alpha", "a2", "upper")}
	beta := []*proc{startReplica(t, kubeconfig, "beta", "b1", "reverse"), startReplica(t, kubeconfig, "beta", "b2", "reverse")}

	leaderA := waitLeader(t, dyn, "alpha", alpha...)
	leaderB := waitLeader(t, dyn, "beta", beta...)
	for _, m := range []struct {
		module string
		leader *proc
	}{{"alpha", leaderA}, {"beta", leaderB}} {
		if _, _, writers := published(t, dyn, m.module); !slices.Equal(writers, []string{"modules-" + m.module + "-" + m.leader.name}) {
			t.Errorf("TinyModule %s: status written by %v, want by its leader %s only", m.module, writers, m.leader.name)
		}
	}

	// Messages cross modules through the pool, from any replica, leader or
	// not, to the other module's leader; local components answer at once.
	for _, via := range beta {
		waitDelivered(t, via, "upper.in", "hello", "HELLO", "alpha/"+leaderA.name)
	}
	waitDelivered(t, alpha[0], "reverse.in", "abc", "cba", "beta/"+leaderB.name)
	if got, by, _ := send(t, alpha[1], "upper.in", "local"); got != "LOCAL" || by != "alpha/"+alpha[1].name {
		t.Errorf("a local message: %q by %q", got, by)
	}
	start := time.Now()
	got, _, code := send(t, alpha[0], "nobody.in", "x")
	if took := time.Since(start); code != http.StatusGatewayTimeout || !strings.Contains(got, "no module serves") || took > 3*time.Second+margin {
		t.Errorf("a message nobody serves: %d %q after %v, want 504 saying so after about 3s", code, got, took)
	}

	// Kill alpha's leader: the other replica takes over and publishes its
	// own address; beta's pool follows.
	other := alpha[0]
	if other == leaderA {
		other = alpha[1]
	}
	killed := time.Now()
	leaderA.p.Kill(t)
	if next := waitLeader(t, dyn, "alpha", other); next != other {
		t.Fatalf("alpha is led by %s", next.name)
	}
	took := time.Since(killed)
	t.Logf("alpha: %s killed, %s published its address %v later (lease duration %v)", leaderA.name, other.name, took.Round(time.Millisecond), leaseDuration)
	if took > leaseDuration+margin {
		t.Errorf("the new leader published its address %v after the kill, want within %v", took, leaseDuration+margin)
	}
	if _, _, writers := published(t, dyn, "alpha"); !slices.Equal(writers, []string{"modules-alpha-a1", "modules-alpha-a2"}) {
		t.Errorf("alpha's status written by %v, want by both leaders in turn", writers)
	}
	waitDelivered(t, beta[0], "upper.in", "again", "AGAIN", "alpha/"+other.name)
}
