package informer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// NewUnstructured returns an Informer of the objects of resource gvr in
// namespace ("" for all namespaces, and for a cluster-scoped resource),
// through the dynamic client: for custom resources without generated Go
// types. Its runner name is "kube:" followed by the resource, version and
// group ("kube:widgets.v1.example.com") unless WithName says otherwise.
//
// Until the API server serves gvr (its CustomResourceDefinition is not
// installed or not established yet), the Informer reports a "list" problem
// saying so and retries.
func NewUnstructured(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, opts ...Option) *Informer[*unstructured.Unstructured] {
	var rc dynamic.ResourceInterface = client.Resource(gvr)
	if namespace != "" {
		rc = client.Resource(gvr).Namespace(namespace)
	}
	return newInformer(resourceName(gvr), anyClient[*unstructured.UnstructuredList]{rc}, &unstructured.Unstructured{}, opts)
}

// resourceName writes gvr as kubectl does: pods.v1, widgets.v1.example.com.
func resourceName(gvr schema.GroupVersionResource) string {
	name := gvr.Resource + "." + gvr.Version
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	return name
}

var _ Client[runtime.Object] = anyClient[*unstructured.UnstructuredList]{}
