package status

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/watchable"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
)

// Client reads an object and writes its status subresource. The typed
// clients of a clientset are Clients: clientset.CoreV1().Pods(namespace) is
// a Client[*corev1.Pod].
type Client[V informer.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (V, error)
	UpdateStatus(ctx context.Context, obj V, opts metav1.UpdateOptions) (V, error)
}

// Target says how the Writer reaches objects of type V and their statuses,
// of type S.
type Target[V informer.Object, S any] struct {
	// Client returns the client for the objects of namespace ("" for
	// cluster-scoped objects).
	Client func(namespace string) Client[V]
	// Status returns the status of obj, which must not be changed.
	Status func(obj V) S
	// SetStatus sets the status of obj, the Writer's own copy, to s.
	SetStatus func(obj V, s S)
	// Equal reports whether two statuses are the same, so that nothing is
	// written; nil means watchable.DeepEqual.
	Equal func(a, b S) bool
}

func (t Target[V, S]) equal(a, b S) bool {
	if t.Equal != nil {
		return t.Equal(a, b)
	}
	return watchable.DeepEqual(a, b)
}

// Unstructured is the Target of the resource gvr through the dynamic
// client, for custom resources without Go types: a status is the object's
// "status" field, as JSON-like data (maps, slices, strings, numbers,
// booleans). Statuses are compared as JSON, so an int in a desired status
// equals the int64 the API server sends back.
func Unstructured(client dynamic.Interface, gvr schema.GroupVersionResource) Target[*unstructured.Unstructured, map[string]any] {
	return Target[*unstructured.Unstructured, map[string]any]{
		Client: func(namespace string) Client[*unstructured.Unstructured] {
			if namespace == "" {
				return dynamicClient{client.Resource(gvr)}
			}
			return dynamicClient{client.Resource(gvr).Namespace(namespace)}
		},
		Status: func(obj *unstructured.Unstructured) map[string]any {
			s, _, _ := unstructured.NestedMap(obj.Object, "status")
			return s
		},
		SetStatus: func(obj *unstructured.Unstructured, s map[string]any) {
			if s == nil {
				delete(obj.Object, "status")
				return
			}
			obj.Object["status"] = jsonValue(s)
		},
		Equal: func(a, b map[string]any) bool {
			return watchable.DeepEqual(jsonValue(a), jsonValue(b))
		},
	}
}

// jsonValue returns s as the API server would send it back: numbers as
// int64 or float64, structs as maps. A status that cannot be encoded as
// JSON is a bug of the program; it is kept as it is, and the API server
// refuses it.
func jsonValue(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return s
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("status: decode what was just encoded: %v", err))
	}
	return out
}

// dynamicClient drops the subresources parameter of the dynamic client's
// Get, which Client does not have.
type dynamicClient struct{ r dynamic.ResourceInterface }

func (d dynamicClient) Get(ctx context.Context, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
	return d.r.Get(ctx, name, opts)
}

func (d dynamicClient) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return d.r.UpdateStatus(ctx, obj, opts)
}
