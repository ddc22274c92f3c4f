package generate

import (
	"fmt"
	"strings"
)

// Resource is one resource a generator produces, and what the translator
// publishes: a Kubernetes-shaped object held as unstructured JSON data, so
// that it can be written out as YAML or applied without Go types for its
// kind.
type Resource struct {
	// ID identifies the resource within its application. A generator may
	// leave it empty for an object with apiVersion, kind and metadata.name:
	// the translator then sets it to Kusion's Kubernetes resource ID,
	// "apiVersion:kind:namespace:name", or "apiVersion:kind:name" without a
	// namespace (see ObjectID).
	ID string `json:"id"`

	// Workload marks the application's workload: the resource that the
	// patchers change. Only the workload generator may set it, and needs
	// to only when it produces several resources; the translator sets it
	// on the workload it publishes.
	Workload bool `json:"workload,omitempty"`

	// Object is the resource itself. A generator may build it from any
	// values that encode to JSON; what the translator publishes holds JSON
	// values only (see Config).
	Object map[string]any `json:"object"`
}

// DeepCopy returns a copy of r that shares no memory with it.
func (r Resource) DeepCopy() Resource {
	r.Object = copyObject(r.Object)
	return r
}

// Equal reports whether r and o are the same resource: equal IDs, Workload
// marks and objects. It compares JSON values without reflection, which
// makes telling a regenerated resource from the published one cheap; other
// values in an object are compared with reflect.DeepEqual.
func (r Resource) Equal(o Resource) bool {
	return r.ID == o.ID && r.Workload == o.Workload && objectsEqual(r.Object, o.Object)
}

// Key is the key of a published resource: the application's key in the
// translator's input, and the resource's ID.
type Key[K comparable] struct {
	App K
	ID  string
}

// String returns the application's key and the resource's ID.
func (k Key[K]) String() string {
	return fmt.Sprintf("%v %s", k.App, k.ID)
}

// ObjectID returns Kusion's ID of a Kubernetes object:
// "apiVersion:kind:namespace:name", or "apiVersion:kind:name" for an object
// without a namespace. It returns "" if apiVersion, kind or metadata.name is
// missing or not a string.
func ObjectID(obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return ""
	}
	if namespace == "" {
		return strings.Join([]string{apiVersion, kind, name}, ":")
	}
	return strings.Join([]string{apiVersion, kind, namespace, name}, ":")
}
