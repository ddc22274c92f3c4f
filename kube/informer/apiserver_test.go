package informer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// versions lists what the API server holds: each config map's resource
// version. A map that equals it holds every object at its latest version.
func versions(t *testing.T, cms typedcorev1.ConfigMapInterface) map[types.NamespacedName]string {
	t.Helper()
	var list *corev1.ConfigMapList
	testrun.Until(t, func() string {
		var err error
		list, err = cms.List(testrun.Context(t, 10*time.Second), metav1.ListOptions{})
		if err != nil {
			return fmt.Sprintf("list config maps: %v", err)
		}
		return ""
	})
	out := map[types.NamespacedName]string{}
	for _, cm := range list.Items {
		out[nn(cm.Namespace, cm.Name)] = cm.ResourceVersion
	}
	return out
}

// waitVersions waits until the map holds exactly the objects of want, at
// their versions.
func waitVersions[V informer.Object](t *testing.T, v watchable.View[types.NamespacedName, V], want map[types.NamespacedName]string) {
	t.Helper()
	testrun.State(t, v, func(s watchable.State[types.NamespacedName, V]) string {
		got := map[types.NamespacedName]string{}
		for k, obj := range s.All() {
			got[k] = obj.GetResourceVersion()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return "map against a fresh list, resource versions (-list +map):\n" + diff
		}
		return ""
	})
}

// waitStatus waits until cond accepts the status of runner name in g.
func waitStatus(t *testing.T, g *runner.Group, name string, cond func(runner.Status) string) runner.Status {
	t.Helper()
	s := testrun.State(t, g.Status(), func(s watchable.State[string, runner.Status]) string {
		st, ok := s.Get(name)
		if !ok {
			return name + " is not in the group's status"
		}
		return cond(st)
	})
	st, _ := s.Get(name)
	return st
}

// churn creates, updates and deletes config maps named churn-0 to churn-9
// in namespace default, with short timeouts and ignoring failures, until
// stopped; ok counts the calls that succeeded.
type churn struct {
	ok   atomic.Int64
	stop func()
}

func startChurn(t *testing.T, cms typedcorev1.ConfigMapInterface) *churn {
	c := &churn{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(1, 2))
		// Bounded: at 10 ms a call, ten thousand calls take minutes; the
		// test stops it long before.
		for i := 0; i < 10000 && ctx.Err() == nil; i++ {
			name := "churn-" + strconv.Itoa(rng.IntN(10))
			call, cancelCall := context.WithTimeout(ctx, 2*time.Second)
			var err error
			switch rng.IntN(3) {
			case 0:
				_, err = cms.Create(call, configMap("default", name, map[string]string{"i": strconv.Itoa(i)}), metav1.CreateOptions{})
			case 1:
				_, err = cms.Update(call, configMap("default", name, map[string]string{"i": strconv.Itoa(i)}), metav1.UpdateOptions{})
			case 2:
				err = cms.Delete(call, name, metav1.DeleteOptions{})
			}
			cancelCall()
			if err == nil || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
				c.ok.Add(1) // the server answered
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	c.stop = func() { cancel(); <-done }
	t.Cleanup(c.stop)
	return c
}

func (c *churn) waitAnswers(t *testing.T, n int64) {
	t.Helper()
	target := c.ok.Load() + n
	testrun.Until(t, func() string {
		if got := c.ok.Load(); got < target {
			return fmt.Sprintf("the API server answered %d churn calls, want %d", got, target)
		}
		return ""
	})
}

// TestInformerSurvivesAPIServerKill kills the API server (SIGKILL) while
// config maps change, and restarts it: the informer reports the broken
// watch meanwhile, and afterwards its map equals a fresh list, object for
// object and version for version. Counting the calls that succeeded would
// prove nothing: a create can commit although its caller timed out.
func TestInformerSurvivesAPIServerKill(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cms := c.Clientset(t).CoreV1().ConfigMaps("")
	inf := informer.New[*corev1.ConfigMap](cms, informer.WithLogger(testrun.Quiet), informer.WithBackoff(100*time.Millisecond, 2*time.Second))
	g := testrun.Group(t, inf)
	testrun.Closed(t, inf.Ready(), "informer ready")

	ch := startChurn(t, c.Clientset(t).CoreV1().ConfigMaps("default"))
	ch.waitAnswers(t, 20)
	c.APIServer.Kill(t)
	st := waitStatus(t, g, inf.Name(), func(st runner.Status) string {
		if st.Problems["watch"] == "" {
			return fmt.Sprintf("no watch problem reported while the API server is down: %+v", st)
		}
		return ""
	})
	t.Logf("while the API server was down: %s", st.Problems["watch"])
	c.APIServer.Restart(t)
	ch.waitAnswers(t, 20)
	ch.stop()

	waitVersions(t, inf.Output(), versions(t, cms))
	waitStatus(t, g, inf.Name(), func(st runner.Status) string {
		if len(st.Problems) > 0 || st.Phase != runner.PhaseReady {
			return fmt.Sprintf("status after the restart: %+v, want ready without problems", st)
		}
		return ""
	})
}

// gated passes a client's lists and watches through until the test closes
// the gate: then it stops the open watches and answers new ones 429 Too
// Many Requests, which client-go's reflector retries as a watch, from the
// resource version it holds, without listing. It counts the 410 Gone errors
// the API server sends in watch streams.
type gated struct {
	client informer.Client[*corev1.ConfigMapList]
	gone   atomic.Int32

	mu      sync.Mutex
	closed  bool
	watches []*gatedWatch
}

func (g *gated) List(ctx context.Context, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	return g.client.List(ctx, opts)
}

func (g *gated) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, apierrors.NewTooManyRequests("the test holds the gate", 1)
	}
	inner, err := g.client.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := &gatedWatch{inner: inner, ch: make(chan watch.Event), stop: make(chan struct{})}
	go w.forward(&g.gone)
	g.watches = append(g.watches, w)
	return w, nil
}

func (g *gated) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	for _, w := range g.watches {
		w.Stop()
	}
	g.watches = nil
}

func (g *gated) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = false
}

type gatedWatch struct {
	inner watch.Interface
	ch    chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func (w *gatedWatch) forward(gone *atomic.Int32) {
	defer close(w.ch)
	for {
		select {
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			if st, isStatus := ev.Object.(*metav1.Status); ev.Type == watch.Error && isStatus && st.Code == http.StatusGone {
				gone.Add(1)
			}
			select {
			case w.ch <- ev:
			case <-w.stop:
				return
			}
		case <-w.stop:
			return
		}
	}
}

func (w *gatedWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *gatedWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

// TestInformerRelistsAfterCompaction cuts the informer off while objects
// are created, changed and deleted and the API server compacts its history
// past the informer's resource version, with the watch cache off so that
// nothing older is served: when the informer is let through again, its
// watch gets 410 Gone, it lists again, and publishes the net difference as
// one revision.
func TestInformerRelistsAfterCompaction(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t, kubetest.WithCompactionInterval(time.Second), kubetest.WithoutWatchCache())
	cms := c.Clientset(t).CoreV1().ConfigMaps("default")
	ctx := testrun.Context(t, testrun.Timeout)
	for _, name := range []string{"kept", "changed", "deleted"} {
		if _, err := cms.Create(ctx, configMap("default", name, map[string]string{"v": "1"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	g := &gated{client: cms}
	inf := informer.New[*corev1.ConfigMap](g, informer.WithLogger(testrun.Quiet), informer.WithBackoff(100*time.Millisecond, time.Second))
	testrun.Run(t, inf)
	testrun.Closed(t, inf.Ready(), "informer ready")
	// An event through the watch, so that the reflector takes the end of
	// this watch for a broken connection rather than a refused one.
	if _, err := cms.Create(ctx, configMap("default", "seen", map[string]string{"v": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVersions(t, inf.Output(), versions(t, cms))

	g.close()
	before := inf.Output().Revision()
	created, err := cms.Create(ctx, configMap("default", "created", map[string]string{"v": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, configMap("default", "changed", map[string]string{"v": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Everything the informer saw is older than created, so once created's
	// version is compacted, so is the informer's. Compaction keeps the
	// revision it compacts to: writes after created move it past.
	exact := metav1.ListOptions{ResourceVersion: created.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	tick := configMap("default", "tick", nil)
	if _, err := cms.Create(ctx, tick, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		_, err := cms.List(ctx, exact)
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			break
		}
		if i == 600 {
			t.Fatalf("resource version %s not compacted after %d writes: list answered %v", created.ResourceVersion, i, err)
		}
		tick.Data = map[string]string{"i": strconv.Itoa(i)}
		if _, err := cms.Update(ctx, tick, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // compaction runs every second: pace the writes
	}
	if got := inf.Output().Revision(); got != before {
		t.Fatalf("the map changed while the informer was cut off: revision %d, was %d", got, before)
	}

	g.open()
	want := versions(t, cms)
	waitVersions(t, inf.Output(), want)
	if got := g.gone.Load(); got == 0 {
		t.Error("the API server sent no 410 Gone: the informer did not resume from its compacted version")
	}
	if got := inf.Output().Revision(); got != before+1 {
		t.Errorf("the catch-up took revisions %d to %d, want one revision (one Replace)", before, got)
	}
	if _, ok := want[nn("default", "deleted")]; ok {
		t.Fatal("default/deleted is still listed")
	}
}

// TestInformerReportsMissingCRD starts an informer of a custom resource
// whose CRD is not installed: the runner is running but not ready, and says
// why; once the CRD is installed the informer lists it, without a restart.
func TestInformerReportsMissingCRD(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	gvr := kubetest.WidgetResource
	inf := informer.NewUnstructured(dyn, gvr, "default", informer.WithLogger(testrun.Quiet), informer.WithBackoff(100*time.Millisecond, time.Second))
	if inf.Name() != "kube:widgets.v1.test.switchyard.dev" {
		t.Errorf("Name = %q", inf.Name())
	}
	g := testrun.Group(t, inf)
	st := waitStatus(t, g, inf.Name(), func(st runner.Status) string {
		if !strings.Contains(st.Problems["list"], "CustomResourceDefinition") {
			return fmt.Sprintf("status %+v, want a list problem naming the CustomResourceDefinition", st)
		}
		return ""
	})
	if st.Phase != runner.PhaseRunning {
		t.Errorf("phase %s while the resource is missing, want %s", st.Phase, runner.PhaseRunning)
	}
	select {
	case <-inf.Ready():
		t.Fatal("ready while the resource is missing")
	default:
	}
	t.Logf("reported: %s", st.Problems["list"])

	kubetest.InstallCRD(t, c.Config(), []byte(kubetest.WidgetCRD))
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.switchyard.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(testrun.Context(t, time.Minute), w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testrun.Closed(t, inf.Ready(), "informer ready once the CRD is installed")
	testrun.State(t, inf.Output(), func(s watchable.State[types.NamespacedName, *unstructured.Unstructured]) string {
		got, ok := s.Get(nn("default", "w"))
		if !ok {
			return "default/w is not in the map"
		}
		if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
			return fmt.Sprintf("default/w has spec.size %d, want 3", size)
		}
		return ""
	})
	waitStatus(t, g, inf.Name(), func(st runner.Status) string {
		if len(st.Problems) > 0 || st.Phase != runner.PhaseReady {
			return fmt.Sprintf("status %+v, want ready without problems", st)
		}
		return ""
	})
}
