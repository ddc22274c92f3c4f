package informer

import (
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// store is the reflector's store: it writes what the reflector lists and
// watches into the Informer's map. Only the reflector, on Run's goroutine,
// calls it.
type store[V Object] struct {
	inf    *Informer[V]
	log    *slog.Logger
	listed bool // a first list was published
}

func keyOf(o metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// object checks obj's type and applies the transform.
func (s *store[V]) object(obj any) (V, error) {
	v, ok := obj.(V)
	if !ok {
		return v, fmt.Errorf("informer %s: got a %T, want a %T", s.inf.name, obj, s.inf.expected)
	}
	if s.inf.transform != nil {
		v = s.inf.transform(v)
	}
	return v, nil
}

func (s *store[V]) Add(obj any) error {
	v, err := s.object(obj)
	if err != nil {
		return err
	}
	s.inf.out.Store(keyOf(v), v)
	return nil
}

func (s *store[V]) Update(obj any) error { return s.Add(obj) }

// Delete deletes obj's key. Besides an object it accepts the tombstone a
// DeltaFIFO makes for an object deleted while nobody watched
// (cache.DeletedFinalStateUnknown), although a reflector writing into this
// store never makes one: a re-list arrives whole, as Replace.
func (s *store[V]) Delete(obj any) error {
	switch o := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		ns, name, err := cache.SplitMetaNamespaceKey(o.Key)
		if err != nil {
			return fmt.Errorf("informer %s: tombstone key %q: %w", s.inf.name, o.Key, err)
		}
		s.inf.out.Delete(types.NamespacedName{Namespace: ns, Name: name})
	case metav1.Object:
		s.inf.out.Delete(keyOf(o))
	default:
		return fmt.Errorf("informer %s: delete a %T, want a %T", s.inf.name, obj, s.inf.expected)
	}
	return nil
}

// Replace publishes a list: the first makes the map's first complete
// contents and initializes it, a later one (a re-list) changes only what
// differs, in one revision.
func (s *store[V]) Replace(list []any, resourceVersion string) error {
	entries := make(map[types.NamespacedName]V, len(list))
	for _, obj := range list {
		v, err := s.object(obj)
		if err != nil {
			return err
		}
		entries[keyOf(v)] = v
	}
	before := s.inf.out.Revision()
	s.inf.out.Replace(entries)
	if !s.listed {
		s.listed = true
		s.inf.initialized()
		return nil
	}
	s.log.Info("re-listed", "objects", len(entries), "changed", s.inf.out.Revision() != before, "resourceVersion", resourceVersion)
	return nil
}

// Resync does nothing: the map holds the objects themselves, so there is
// nothing to deliver again.
func (s *store[V]) Resync() error { return nil }
