package watchable

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// TestKeyTable checks keyTable against a Go map over random sets and
// deletes, with hashes that collide often (so that probes cluster and wrap
// around the table's end, and deletes move slots back) and with real ones.
func TestKeyTable(t *testing.T) {
	chans := make([]chan struct{}, 8)
	for i := range chans {
		chans[i] = make(chan struct{})
	}
	for _, tc := range []struct {
		name string
		hash func(k int) uint64
	}{
		{"colliding", func(k int) uint64 { return uint64(k%5) * 7 }},
		{"near the end", func(k int) uint64 { return ^uint64(0) - uint64(k%3) }},
		{"hamt.Hash", func(k int) uint64 { return hamt.Hash(k) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			var table keyTable[int, chan<- struct{}]
			want := map[int]chan<- struct{}{}
			check := func(step int) {
				t.Helper()
				if table.n != len(want) {
					t.Fatalf("step %d: %d entries, want %d", step, table.n, len(want))
				}
				for k := range 80 {
					got, ok := table.get(k, tc.hash(k))
					w, wok := want[k]
					if ok != wok || got != w {
						t.Fatalf("step %d: get(%d) = %v, %v; want %v, %v", step, k, got, ok, w, wok)
					}
				}
			}
			for step := range 20000 {
				k := r.IntN(60)
				switch r.IntN(3) {
				case 0:
					table.delete(k, tc.hash(k))
					delete(want, k)
				default:
					ch := chans[r.IntN(len(chans))]
					table.set(k, tc.hash(k), ch)
					want[k] = ch
				}
				if step%97 == 0 || len(want) == 0 {
					check(step)
				}
			}
			for k := range 60 { // empty it: the slots go
				table.delete(k, tc.hash(k))
			}
			if table.n != 0 || table.slots != nil {
				t.Fatalf("emptied table: %d entries, %d slots", table.n, len(table.slots))
			}
		})
	}
}

// TestKeyReadersSkipNaN checks that a key not equal to itself, which no
// write can match and remove could not find, takes no slot: readers of NaN
// added and removed again leave the table empty.
func TestKeyReadersSkipNaN(t *testing.T) {
	var x keyReaders[float64, int]
	for r := 1; r <= 100; r++ {
		x.add(r, []float64{math.NaN(), 1})
		x.remove(r, []float64{math.NaN(), 1})
	}
	if x.first.n != 0 || len(x.more) != 0 {
		t.Fatalf("after 100 readers of NaN and 1 came and went: %d slots in use, %d keys with more readers; want none", x.first.n, len(x.more))
	}
	x.add(7, []float64{math.NaN(), 1})
	if r, _, ok := x.of(1, hamt.Hash(1.0)); !ok || r != 7 {
		t.Fatalf("of(1) = %d, %v; want 7, true", r, ok)
	}
	if _, _, ok := x.of(math.NaN(), hamt.Hash(math.NaN())); ok {
		t.Fatal("of(NaN) found a reader")
	}
}
