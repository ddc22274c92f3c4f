package file

import (
	"maps"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/watchable"
)

// Object is a ready-made document type for Register: a Kubernetes-like
// envelope around a spec of the user's type S. S must be deep-copyable (see
// watchable.DeepCopy): a struct of plain values, or one with a DeepCopy
// method.
//
// Any other struct type with the fields a document has works too; Object
// only saves writing one.
type Object[S any] struct {
	APIVersion string   `json:"apiVersion,omitempty"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       S        `json:"spec"`
}

// DeepCopy returns a copy of o sharing no memory with it.
func (o Object[S]) DeepCopy() Object[S] {
	o.Metadata = o.Metadata.DeepCopy()
	o.Spec = watchable.DeepCopy(o.Spec)
	return o
}

// Metadata is the metadata of an Object.
type Metadata struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// DeepCopy returns a copy of m sharing no memory with it.
func (m Metadata) DeepCopy() Metadata {
	m.Labels = maps.Clone(m.Labels)
	return m
}

// NamespacedName returns the key under which the object is stored.
func (m Metadata) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
}
