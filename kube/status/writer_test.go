package status_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/kube/status"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The fake clientset serves plumbing tests only: a stale update succeeds on
// it, so conflicts are tested against a real API server (apiserver_test.go).

func pod(name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: corev1.PodStatus{Phase: phase}}
}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

// counting counts the status updates the writer sends.
type counting struct {
	status.Client[*corev1.Pod]
	updates *atomic.Int64
}

func (c counting) UpdateStatus(ctx context.Context, p *corev1.Pod, opts metav1.UpdateOptions) (*corev1.Pod, error) {
	c.updates.Add(1)
	return c.Client.UpdateStatus(ctx, p, opts)
}

func podTarget(cs *fake.Clientset, updates *atomic.Int64) status.Target[*corev1.Pod, corev1.PodStatus] {
	return status.Target[*corev1.Pod, corev1.PodStatus]{
		Client: func(ns string) status.Client[*corev1.Pod] {
			return counting{Client: cs.CoreV1().Pods(ns), updates: updates}
		},
		Status:    func(p *corev1.Pod) corev1.PodStatus { return p.Status },
		SetStatus: func(p *corev1.Pod, s corev1.PodStatus) { p.Status = s },
	}
}

// podFixture is pods in a fake clientset, an informer of them, and a map of
// desired statuses.
type podFixture struct {
	cs      *fake.Clientset
	pods    *informer.Informer[*corev1.Pod]
	desired *watchable.Map[types.NamespacedName, corev1.PodStatus]
	updates atomic.Int64
}

func newPodFixture(t *testing.T, pods ...runtime.Object) *podFixture {
	f := &podFixture{cs: fake.NewClientset(pods...), desired: &watchable.Map[types.NamespacedName, corev1.PodStatus]{}}
	// The fake delivers no event from before a watch opens, and the
	// informer is ready once it has listed, before it watches: a write in
	// between would never reach it. So the fixture waits for the watch.
	watching := make(chan struct{})
	var once sync.Once
	f.cs.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		a := action.(k8stesting.WatchActionImpl)
		w, err := f.cs.Tracker().Watch(a.GetResource(), a.GetNamespace(), a.ListOptions)
		if err == nil {
			once.Do(func() { close(watching) })
		}
		return true, w, err
	})
	f.pods = informer.New[*corev1.Pod](f.cs.CoreV1().Pods(""), informer.WithLogger(testrun.Quiet))
	testrun.Run(t, f.pods)
	testrun.Closed(t, f.pods.Ready(), "pods informer ready")
	testrun.Closed(t, watching, "pods informer watching")
	return f
}

func (f *podFixture) writer(e runner.Elector, opts ...status.Option) *status.Writer[*corev1.Pod, corev1.PodStatus] {
	opts = append([]status.Option{status.WithLogger(testrun.Quiet)}, opts...)
	return status.NewWriter("pod-status", f.pods.Output(), f.desired.View(), podTarget(f.cs, &f.updates), e, opts...)
}

// phase returns the phase the fake API server holds for pod name.
func (f *podFixture) phase(t *testing.T, name string) corev1.PodPhase {
	t.Helper()
	p, err := f.cs.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Status.Phase
}

func (f *podFixture) waitPhase(t *testing.T, name string, want corev1.PodPhase) {
	t.Helper()
	testrun.Until(t, func() string {
		if got := f.phase(t, name); got != want {
			return fmt.Sprintf("pod %s is %s, want %s", name, got, want)
		}
		return ""
	})
}

// waitInformed waits until the informer holds pod name in phase want.
func (f *podFixture) waitInformed(t *testing.T, name string, want corev1.PodPhase) {
	t.Helper()
	testrun.Until(t, func() string {
		p, ok := f.pods.Output().State().Get(key(name))
		if !ok || p.Status.Phase != want {
			return fmt.Sprintf("the informer does not hold pod %s %s yet", name, want)
		}
		return ""
	})
}

func TestWriterWritesOnlyWhileLeading(t *testing.T) {
	f := newPodFixture(t, pod("a", corev1.PodPending))
	f.desired.Store(key("a"), corev1.PodStatus{Phase: corev1.PodRunning})
	e := newElector()
	stop := testrun.Run(t, f.writer(e))

	// The writer cannot write before its first term: it campaigns first.
	e.campaigning(t)
	if got := f.phase(t, "a"); got != corev1.PodPending {
		t.Fatalf("pod a is %s before the writer leads, want Pending", got)
	}
	first := e.grant(t, 1)
	f.waitPhase(t, "a", corev1.PodRunning)
	// The second term must start from an informer that has seen this
	// write: one that lags it hands the second term a Pending pod, and the
	// stale event arriving after the second term's write makes it check,
	// and write, once more (on a real API server that write would conflict;
	// the fake accepts it).
	f.waitInformed(t, "a", corev1.PodRunning)

	first.end()
	e.campaigning(t)
	f.desired.Store(key("a"), corev1.PodStatus{Phase: corev1.PodSucceeded})
	if got := f.phase(t, "a"); got != corev1.PodRunning {
		t.Fatalf("pod a is %s between terms, want Running", got)
	}
	second := e.grant(t, 2)
	f.waitPhase(t, "a", corev1.PodSucceeded)

	stop()
	if !second.resigned.Load() {
		t.Error("the writer did not resign its term when it stopped")
	}
	// The first term may be resigned after it ended (runner.LeaderOnly does
	// so to let engines clean up; resigning an ended term does nothing), so
	// only the writes between the terms are checked, above.
	if got := f.updates.Load(); got != 2 {
		t.Errorf("%d status updates, want 2", got)
	}
}

func TestWriterWritesNothingThatIsThere(t *testing.T) {
	f := newPodFixture(t, pod("same", corev1.PodRunning), pod("other", corev1.PodPending))
	f.desired.Store(key("same"), corev1.PodStatus{Phase: corev1.PodRunning})
	f.desired.Store(key("other"), corev1.PodStatus{Phase: corev1.PodRunning})
	f.desired.Store(key("absent"), corev1.PodStatus{Phase: corev1.PodRunning})
	e := newElector()
	w := f.writer(e)
	idle := make(chan struct{}, 1)
	status.SetIdle(w, func() {
		select {
		case idle <- struct{}{}:
		default:
		}
	})
	testrun.Run(t, w)
	e.grant(t, 1)
	f.waitPhase(t, "other", corev1.PodRunning)
	testrun.Closed(t, onceFrom(idle), "writer idle")
	if got := f.updates.Load(); got != 1 {
		t.Fatalf("%d status updates, want 1: pod same had its status already, pod absent does not exist", got)
	}

	// Someone else changes the status: the writer puts the desired one back.
	if _, err := f.cs.CoreV1().Pods("ns").UpdateStatus(context.Background(), pod("same", corev1.PodFailed), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitPhase(t, "same", corev1.PodRunning)
	// And a pod that appears gets its desired status.
	if _, err := f.cs.CoreV1().Pods("ns").Create(context.Background(), pod("absent", corev1.PodPending), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitPhase(t, "absent", corev1.PodRunning)
	if got := f.updates.Load(); got != 3 {
		t.Errorf("%d status updates, want 3", got)
	}
}

// onceFrom returns a channel closed at the next value of ch.
func onceFrom(ch <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		<-ch
		close(out)
	}()
	return out
}

func TestWriterRetriesFailures(t *testing.T) {
	f := newPodFixture(t, pod("a", corev1.PodPending))
	var failures atomic.Int64
	f.cs.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && failures.Add(1) <= 2 {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is having a bad day"))
		}
		return false, nil, nil
	})
	f.desired.Store(key("a"), corev1.PodStatus{Phase: corev1.PodRunning})
	e := newElector()
	w := f.writer(e, status.WithBackoff(10*time.Millisecond, 50*time.Millisecond))
	g := testrun.Group(t, w)
	e.grant(t, 1)
	testrun.State(t, g.Status(), func(s watchable.State[string, runner.Status]) string {
		st, _ := s.Get(w.Name())
		if p := st.Problems["status ns/a"]; !strings.Contains(p, "bad day") {
			return fmt.Sprintf("status %+v, want the failure reported under \"status ns/a\"", st)
		}
		return ""
	})
	f.waitPhase(t, "a", corev1.PodRunning)
	testrun.State(t, g.Status(), func(s watchable.State[string, runner.Status]) string {
		if st, _ := s.Get(w.Name()); len(st.Problems) > 0 {
			return fmt.Sprintf("status %+v, want the problem cleared", st)
		}
		return ""
	})
	if got := f.updates.Load(); got != 3 {
		t.Errorf("%d status updates, want 3 (two failures, then the write)", got)
	}
}
