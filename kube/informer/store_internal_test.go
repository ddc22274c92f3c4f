package informer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// A reflector writing into store never makes a tombstone, but a store that
// is handed one must still delete the object it names.
func TestStoreDeletesTombstones(t *testing.T) {
	inf := New[*corev1.ConfigMap](fake.NewClientset().CoreV1().ConfigMaps(""))
	s := &store[*corev1.ConfigMap]{inf: inf, log: inf.cfg.logger}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one"}}
	if err := s.Replace([]any{cm}, "1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(cache.DeletedFinalStateUnknown{Key: "a/one", Obj: cm}); err != nil {
		t.Fatal(err)
	}
	if _, ok := inf.out.Load(types.NamespacedName{Namespace: "a", Name: "one"}); ok {
		t.Error("a/one is still there after its tombstone was deleted")
	}
	if err := s.Delete("a/one"); err == nil {
		t.Error("Delete of a string succeeded, want an error naming the type")
	}
	if err := s.Add(&corev1.Pod{}); err == nil {
		t.Error("Add of a Pod to a ConfigMap informer succeeded, want an error")
	}
}
