package hamt

// Temporary stand-in, replaced by the real package from the hamt branch.

import "iter"

type Map[K comparable, V any] struct{ m map[K]V }

func (m Map[K, V]) Len() int          { return len(m.m) }
func (m Map[K, V]) Get(k K) (V, bool) { v, ok := m.m[k]; return v, ok }
func (m Map[K, V]) Set(k K, v V) Map[K, V] {
	n := make(map[K]V, len(m.m)+1)
	for a, b := range m.m {
		n[a] = b
	}
	n[k] = v
	return Map[K, V]{n}
}
func (m Map[K, V]) Delete(k K) (Map[K, V], bool) {
	if _, ok := m.m[k]; !ok {
		return m, false
	}
	n := make(map[K]V, len(m.m))
	for a, b := range m.m {
		if a != k {
			n[a] = b
		}
	}
	return Map[K, V]{n}, true
}
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(y func(K, V) bool) {
		for k, v := range m.m {
			if !y(k, v) {
				return
			}
		}
	}
}
func (m Map[K, V]) Keys() iter.Seq[K] {
	return func(y func(K) bool) {
		for k := range m.m {
			if !y(k) {
				return
			}
		}
	}
}

type Txn[K comparable, V any] struct{ m Map[K, V] }

func (m Map[K, V]) Txn() *Txn[K, V]    { return &Txn[K, V]{m} }
func (t *Txn[K, V]) Get(k K) (V, bool) { return t.m.Get(k) }
func (t *Txn[K, V]) Set(k K, v V)      { t.m = t.m.Set(k, v) }
func (t *Txn[K, V]) Delete(k K) bool   { var ok bool; t.m, ok = t.m.Delete(k); return ok }
func (t *Txn[K, V]) Len() int          { return t.m.Len() }
func (t *Txn[K, V]) Commit() Map[K, V] { return t.m }
