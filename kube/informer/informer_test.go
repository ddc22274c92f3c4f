package informer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/watchable"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The fake clientset serves plumbing tests only: it does not honour
// resource versions, so conflicts, re-lists and resumed watches are tested
// against a real API server (apiserver_test.go).

func configMap(namespace, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
}

func nn(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// watches makes cs report each watch it opens, once the watch is
// registered: the fake delivers no event that happened before, so a test
// changes objects only after the informer's watch is there.
func watches(cs *fake.Clientset) <-chan k8stesting.WatchActionImpl {
	ch := make(chan k8stesting.WatchActionImpl, 16)
	cs.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		a := action.(k8stesting.WatchActionImpl)
		w, err := cs.Tracker().Watch(a.GetResource(), a.GetNamespace(), a.ListOptions)
		if err == nil {
			ch <- a
		}
		return true, w, err
	})
	return ch
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testrun.Timeout):
		t.Fatalf("%s: not after %v", what, testrun.Timeout)
		panic("unreachable")
	}
}

// data maps each config map to its data, for comparisons.
func data(s watchable.State[types.NamespacedName, *corev1.ConfigMap]) map[types.NamespacedName]map[string]string {
	out := map[types.NamespacedName]map[string]string{}
	for k, v := range s.All() {
		out[k] = v.Data
	}
	return out
}

func waitData(t *testing.T, v watchable.View[types.NamespacedName, *corev1.ConfigMap], want map[types.NamespacedName]map[string]string) {
	t.Helper()
	testrun.State(t, v, func(s watchable.State[types.NamespacedName, *corev1.ConfigMap]) string {
		if diff := cmp.Diff(want, data(s)); diff != "" {
			return "config maps (-want +got):\n" + diff
		}
		return ""
	})
}

func TestInformerFollowsAddUpdateDelete(t *testing.T) {
	cs := fake.NewClientset(
		configMap("a", "one", map[string]string{"n": "1"}),
		configMap("b", "two", map[string]string{"n": "2"}),
	)
	opened := watches(cs)
	inf := informer.New[*corev1.ConfigMap](cs.CoreV1().ConfigMaps(""), informer.WithLogger(testrun.Quiet))
	if inf.Name() != "kube:ConfigMap" {
		t.Errorf("Name = %q, want kube:ConfigMap", inf.Name())
	}
	out := inf.Output()
	select {
	case <-out.Initialized():
		t.Fatal("the map is initialized before the first list")
	default:
	}
	testrun.Run(t, inf)
	testrun.Closed(t, inf.Ready(), "informer ready")
	// The first list is published whole, before the map is initialized.
	if diff := cmp.Diff(map[types.NamespacedName]map[string]string{
		nn("a", "one"): {"n": "1"},
		nn("b", "two"): {"n": "2"},
	}, data(out.State())); diff != "" {
		t.Fatalf("after the first list (-want +got):\n%s", diff)
	}
	receive(t, opened, "watch")

	ctx := testrun.Context(t, testrun.Timeout)
	cms := cs.CoreV1().ConfigMaps("a")
	if _, err := cms.Create(ctx, configMap("a", "three", map[string]string{"n": "3"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, configMap("a", "one", map[string]string{"n": "1+"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps("b").Delete(ctx, "two", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitData(t, out, map[types.NamespacedName]map[string]string{
		nn("a", "one"):   {"n": "1+"},
		nn("a", "three"): {"n": "3"},
	})
}

func TestInformerPassesSelectors(t *testing.T) {
	cs := fake.NewClientset()
	lists := make(chan k8stesting.ListRestrictions, 4)
	cs.PrependReactor("list", "configmaps", func(action k8stesting.Action) (bool, runtime.Object, error) {
		lists <- action.(k8stesting.ListAction).GetListRestrictions()
		return false, nil, nil
	})
	opened := watches(cs)
	inf := informer.New[*corev1.ConfigMap](cs.CoreV1().ConfigMaps("ns"),
		informer.WithLabelSelector("app=web,tier!=cache"),
		informer.WithFieldSelector("metadata.name=web"),
		informer.WithLogger(testrun.Quiet))
	testrun.Run(t, inf)
	testrun.Closed(t, inf.Ready(), "informer ready")

	list := receive(t, lists, "list")
	watch := receive(t, opened, "watch")
	for what, got := range map[string][2]string{
		"list":  {list.Labels.String(), list.Fields.String()},
		"watch": {watch.WatchRestrictions.Labels.String(), watch.WatchRestrictions.Fields.String()},
	} {
		if want := [2]string{"app=web,tier!=cache", "metadata.name=web"}; got != want {
			t.Errorf("%s selectors = %q, want %q", what, got, want)
		}
	}
	if ns := watch.GetNamespace(); ns != "ns" {
		t.Errorf("watch namespace = %q, want ns", ns)
	}
}

func TestInformerRefusesBadSelectors(t *testing.T) {
	cs := fake.NewClientset()
	for _, tt := range []struct {
		opt  informer.Option
		want string
	}{
		{informer.WithLabelSelector("app in (web"), `WithLabelSelector("app in (web")`},
		{informer.WithFieldSelector("metadata.name"), `WithFieldSelector("metadata.name")`},
	} {
		inf := informer.New[*corev1.ConfigMap](cs.CoreV1().ConfigMaps(""), tt.opt)
		err := inf.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "kube:ConfigMap") {
			t.Errorf("Run = %v, want an error naming %s and the informer", err, tt.want)
		}
	}
}

func TestInformerTransforms(t *testing.T) {
	cm := configMap("a", "one", map[string]string{"n": "1"})
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	cs := fake.NewClientset(cm)
	inf := informer.New[*corev1.ConfigMap](cs.CoreV1().ConfigMaps(""), informer.WithLogger(testrun.Quiet)).
		WithTransform(informer.DropManagedFields)
	testrun.Run(t, inf)
	testrun.Closed(t, inf.Ready(), "informer ready")
	got, ok := inf.Output().Load(nn("a", "one"))
	if !ok {
		t.Fatal("a/one is missing")
	}
	if got.ManagedFields != nil || got.Data["n"] != "1" {
		t.Errorf("stored %+v, want the object without its managed fields", got.ObjectMeta)
	}
}

func TestInformerRunsOnce(t *testing.T) {
	inf := informer.New[*corev1.ConfigMap](fake.NewClientset().CoreV1().ConfigMaps(""), informer.WithLogger(testrun.Quiet))
	testrun.Run(t, inf)
	testrun.Closed(t, inf.Ready(), "informer ready")
	if err := inf.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a second Run = %v, want an error saying it is already running", err)
	}
}

func TestNewRefusesMismatchedClient(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "*v1.Pod") || !strings.Contains(msg, "ConfigMapList") {
			t.Errorf("panic %q, want one naming *v1.Pod and the ConfigMapList", msg)
		}
	}()
	informer.New[*corev1.Pod](fake.NewClientset().CoreV1().ConfigMaps(""))
}
