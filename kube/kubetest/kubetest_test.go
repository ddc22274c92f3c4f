package kubetest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog, which client-go logs through, starts its flush daemon at init.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}

func ctx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: data}
}

// names lists the config maps in default, with their resource versions.
func names(t *testing.T, cs *kubernetes.Clientset) map[string]string {
	t.Helper()
	list, err := cs.CoreV1().ConfigMaps("default").List(ctx(t, 30*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list config maps: %v", err)
	}
	got := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" { // published by a controller we do not run, but stay safe
			got[cm.Name] = cm.ResourceVersion
		}
	}
	return got
}

func TestAPIServerSurvivesKillAndRestart(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cs := c.Clientset(t)
	created, err := cs.CoreV1().ConfigMaps("default").Create(ctx(t, 30*time.Second), configMap("kept", map[string]string{"k": "v"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kept": created.ResourceVersion}
	if diff := cmp.Diff(want, names(t, cs)); diff != "" {
		t.Fatalf("list before the kill (-want +got):\n%s", diff)
	}

	c.APIServer.Kill(t)
	short, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := cs.CoreV1().ConfigMaps("default").List(short, metav1.ListOptions{}); err == nil {
		t.Fatal("list from a killed API server succeeded")
	}

	c.APIServer.Restart(t)
	// The same client, on the same address and credentials, sees the same
	// object at the same resource version: it lives in etcd, which ran on.
	if diff := cmp.Diff(want, names(t, cs)); diff != "" {
		t.Fatalf("list after the restart (-want +got):\n%s", diff)
	}
}

func TestCompactionMakesOldResourceVersionsGone(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t, kubetest.WithCompactionInterval(time.Second), kubetest.WithoutWatchCache())
	cms := c.Clientset(t).CoreV1().ConfigMaps("default")
	first, err := cms.Create(ctx(t, 30*time.Second), configMap("churn", map[string]string{"n": "0"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := first.DeepCopy()
	var secondRV string // the version the first update made
	for _, n := range []string{"1", "2", "3"} {
		cm.Data["n"] = n
		if cm, err = cms.Update(ctx(t, 30*time.Second), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if secondRV == "" {
			secondRV = cm.ResourceVersion
		}
	}

	// The API server compacts every second to the revision it saw a second
	// before: the early versions are gone within a few seconds. Wait until
	// the second version is, not only the first: a watch from the first
	// starts at the revision after it, which a compaction to exactly that
	// revision keeps (list Gone, watch not).
	old := metav1.ListOptions{ResourceVersion: secondRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	var last error
	err = wait.PollUntilContextTimeout(ctx(t, 2*time.Minute), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = cms.List(ctx, old)
		return apierrors.IsResourceExpired(last) || apierrors.IsGone(last), nil
	})
	if err != nil {
		t.Fatalf("list at compacted version %s: %v, want 410 Gone", secondRV, last)
	}

	// A watch from there, as an informer's after a disconnection, is told to
	// re-list.
	w, err := cms.Watch(ctx(t, 30*time.Second), metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != http.StatusGone {
		t.Fatalf("watch from compacted version %s: first event %s %v, want an error 410 Gone", first.ResourceVersion, ev.Type, ev.Object)
	}
}

func TestInstallCRD(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	gvr := kubetest.InstallCRD(t, c.Config(), []byte(kubetest.WidgetCRD))
	if gvr.Group != "test.switchyard.dev" || gvr.Version != "v1" || gvr.Resource != "widgets" {
		t.Fatalf("InstallCRD = %v", gvr)
	}
	client, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.switchyard.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w", "namespace": "default"},
		"spec":       map[string]any{"size": int64(3)},
	}}
	// The resource is usable at once: no retry here.
	if _, err := client.Resource(gvr).Namespace("default").Create(ctx(t, 30*time.Second), w, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a widget: %v", err)
	}
	got, err := client.Resource(gvr).Namespace("default").Get(ctx(t, 30*time.Second), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Fatalf("widget spec.size = %d, want 3", size)
	}
}
