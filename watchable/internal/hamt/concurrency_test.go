package hamt

import (
	"maps"
	"sync"
	"testing"
)

// Readers on many goroutines walk old versions while the test goroutine keeps
// deriving new versions from those same versions with Set, Delete and Txn.
// Under -race any in-place write to a shared node would be reported.
func TestConcurrentReadersOfOldVersions(t *testing.T) {
	var versions []snapshot
	var m Map[int, int]
	want := map[int]int{}
	for v := range 20 {
		for i := range 200 {
			k := v*100 + i
			m = m.Set(k, v)
			want[k] = v
		}
		for k := v * 50; k < v*50+30; k++ {
			m, _ = m.Delete(k)
			delete(want, k)
		}
		versions = append(versions, snapshot{m, maps.Clone(want)})
	}

	const readers = 8
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; ; round++ {
				select {
				case <-done:
					if round > 0 {
						return
					}
				default:
				}
				s := versions[(r+round)%len(versions)]
				if s.m.Len() != len(s.want) {
					t.Errorf("version Len %d, want %d", s.m.Len(), len(s.want))
					return
				}
				n := 0
				for k, v := range s.m.All() {
					if w, ok := s.want[k]; !ok || w != v {
						t.Errorf("version holds %d=%d, want %d (%v)", k, v, w, ok)
						return
					}
					n++
				}
				if n != len(s.want) {
					t.Errorf("version iterated %d entries, want %d", n, len(s.want))
					return
				}
				for k, w := range s.want {
					if v, ok := s.m.Get(k); !ok || v != w {
						t.Errorf("Get(%d) = %d, %v; want %d", k, v, ok, w)
						return
					}
				}
			}
		}()
	}

	for round := range 30 {
		for i, s := range versions {
			base := s.m
			n := base.Set(round, round)
			n, _ = n.Delete(i * 100)
			tx := base.Txn()
			for k := range 300 {
				tx.Set(k*7, round)
				tx.Delete(k * 11)
			}
			tx.Commit()
			tx = n.Txn()
			tx.Set(-1, -1)
			tx.Commit()
		}
	}
	close(done)
	wg.Wait()

	for _, s := range versions {
		checkMap(t, s.m, s.want)
	}
}
