package informer_test

import (
	"context"
	"fmt"

	"github.com/switchyard-go/switchyard/kube/informer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// An informer of config maps in every namespace: once Ready, its output
// holds them all, keyed by namespace and name, and follows their changes.
// (A fake clientset stands in for a cluster here; a program passes a
// clientset made from kube.Config.)
func Example() {
	clientset := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"color": "blue"},
	})
	configMaps := informer.New[*corev1.ConfigMap](clientset.CoreV1().ConfigMaps(""),
		informer.WithLabelSelector("team!=legacy")).
		WithTransform(informer.DropManagedFields)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- configMaps.Run(ctx) }()
	<-configMaps.Ready()

	cm, ok := configMaps.Output().Load(types.NamespacedName{Namespace: "default", Name: "settings"})
	fmt.Println(configMaps.Name(), ok, cm.Data["color"])

	cancel()
	fmt.Println(<-done)
	// Output:
	// kube:ConfigMap true blue
	// <nil>
}
