package file

import "k8s.io/apimachinery/pkg/types"

// Object is a ready-made document type for Register: a Kubernetes-like
// envelope around a spec of the user's type S, which may be any type that
// watchable.DeepCopy copies (plain structs, slices, maps and pointers
// included).
//
// Any other struct type with the fields a document has works too; Object
// only saves writing one.
type Object[S any] struct {
	APIVersion string   `json:"apiVersion,omitempty"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       S        `json:"spec"`
}

// Metadata is the metadata of an Object.
type Metadata struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// NamespacedName returns the key under which the object is stored.
func (m Metadata) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
}
