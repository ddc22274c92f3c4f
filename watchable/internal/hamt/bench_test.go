package hamt

import (
	"fmt"
	"runtime"
	"testing"
)

var benchSizes = []int{100, 10_000, 100_000}

// benchMap returns a map of n int keys spread over a range four times wider,
// so that lookups of absent keys and of present ones cost about the same.
func benchMap(n int) (Map[int, int], []int) {
	keys := make([]int, n)
	tx := Map[int, int]{}.Txn()
	for i := range keys {
		keys[i] = i * 4
		tx.Set(keys[i], i)
	}
	return tx.Commit(), keys
}

var sinkInt int
var sinkMap Map[int, int]

func BenchmarkGet(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			m, keys := benchMap(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				v, _ := m.Get(keys[i%n])
				sinkInt += v
			}
		})
	}
}

func BenchmarkGetString(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			keys := make([]string, n)
			tx := Map[string, int]{}.Txn()
			for i := range keys {
				keys[i] = fmt.Sprintf("namespace/object-%d", i)
				tx.Set(keys[i], i)
			}
			m := tx.Commit()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				v, _ := m.Get(keys[i%n])
				sinkInt += v
			}
		})
	}
}

// BenchmarkSet overwrites existing keys of a fixed map: the cost of publishing
// one new version.
func BenchmarkSet(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			m, keys := benchMap(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				sinkMap = m.Set(keys[i%n], i)
			}
		})
	}
}

// BenchmarkSetNew adds an absent key to a fixed map.
func BenchmarkSetNew(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			m, keys := benchMap(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				sinkMap = m.Set(keys[i%n]+1, i)
			}
		})
	}
}

func BenchmarkDelete(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			m, keys := benchMap(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				sinkMap, _ = m.Delete(keys[i%n])
			}
		})
	}
}

// BenchmarkBatch compares 1,000 inserts into a 10,000-entry map made with
// Set calls against the same inserts in one Txn, and building a 1,000-entry
// map from empty both ways.
func BenchmarkBatch(b *testing.B) {
	const batch = 1000
	base, _ := benchMap(10_000)
	for _, bc := range []struct {
		name string
		base Map[int, int]
	}{{"into10k", base}, {"fromEmpty", Map[int, int]{}}} {
		b.Run(bc.name+"/Set", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				m := bc.base
				for k := range batch {
					m = m.Set(k*4+1, k)
				}
				sinkMap = m
			}
		})
		b.Run(bc.name+"/Txn", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				tx := bc.base.Txn()
				for k := range batch {
					tx.Set(k*4+1, k)
				}
				sinkMap = tx.Commit()
			}
		})
	}
}

func BenchmarkAll(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			m, _ := benchMap(n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, v := range m.All() {
					sinkInt += v
				}
			}
		})
	}
}

// payload is a value with pointers for BenchmarkCollect to mark: a small
// object, reached through the map, that holds a string and a slice.
type payload struct {
	name string
	tags []string
}

var sinkCollected any

// BenchmarkCollect measures a full collection (runtime.GC) with a map of
// 200,000 entries of pointer values live: a trie made by a Set per entry
// in one Txn, and a Go map for comparison. ns/op is one collection.
func BenchmarkCollect(b *testing.B) {
	const n = 200_000
	type item struct {
		key string
		val *payload
	}
	items := make([]item, n)
	for i := range items {
		k := fmt.Sprint("ns/name-", i)
		items[i] = item{key: k, val: &payload{name: k, tags: []string{k}}}
	}
	for _, c := range []struct {
		name  string
		build func() any
	}{
		{"trie=sets", func() any {
			tx := Map[string, *payload]{}.Txn()
			for _, it := range items {
				tx.Set(it.key, it.val)
			}
			return tx.Commit()
		}},
		{"gomap", func() any {
			m := make(map[string]*payload, n)
			for _, it := range items {
				m[it.key] = it.val
			}
			return m
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			sinkCollected = c.build()
			runtime.GC()
			b.ResetTimer()
			for range b.N {
				runtime.GC()
			}
			b.StopTimer()
			sinkCollected = nil
		})
	}
}
