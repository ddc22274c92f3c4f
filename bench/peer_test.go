package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	peer "github.com/telepresenceio/watchable"

	"github.com/switchyard-go/switchyard/watchable"
)

// TestPeerDifferential runs random sequences of the operations both
// libraries share (Store, Delete, LoadOrStore, LoadAndDelete,
// CompareAndSwap, Load, Len) on a switchyard Map and on the peer's Map, and
// checks that they answer alike and hold the same contents after every
// operation. It used to live in watchable's model test; it is here so that
// the main module does not depend on the peer. watchable's own model test
// still checks every operation, subscriptions included, against a Go map.
func TestPeerDifferential(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 2))
			var ours watchable.Map[int, int]
			var theirs peer.Map[int, int]
			defer ours.Close()
			defer theirs.Close()
			agree := func(op string, want, got any) {
				t.Helper()
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s: switchyard differs from the peer (-peer +switchyard):\n%s", op, diff)
				}
			}
			for range 300 {
				k, v := r.IntN(8), r.IntN(4)
				var op string
				switch r.IntN(7) {
				case 0, 1:
					op = fmt.Sprintf("Store(%d, %d)", k, v)
					ours.Store(k, v)
					theirs.Store(k, v)
				case 2:
					op = fmt.Sprintf("Delete(%d)", k)
					ours.Delete(k)
					theirs.Delete(k)
				case 3:
					op = fmt.Sprintf("LoadOrStore(%d, %d)", k, v)
					ov, ol := ours.LoadOrStore(k, v)
					pv, pl := theirs.LoadOrStore(k, v)
					agree(op, fmt.Sprint(pv, pl), fmt.Sprint(ov, ol))
				case 4:
					op = fmt.Sprintf("LoadAndDelete(%d)", k)
					ov, ol := ours.LoadAndDelete(k)
					pv, pl := theirs.LoadAndDelete(k)
					agree(op, fmt.Sprint(pv, pl), fmt.Sprint(ov, ol))
				case 5:
					old := v % 2
					op = fmt.Sprintf("CompareAndSwap(%d, %d, %d)", k, old, v)
					agree(op, theirs.CompareAndSwap(k, old, v), ours.CompareAndSwap(k, old, v))
				case 6:
					op = fmt.Sprintf("Load(%d)", k)
					ov, ol := ours.Load(k)
					pv, pl := theirs.Load(k)
					agree(op, fmt.Sprint(pv, pl), fmt.Sprint(ov, ol))
					agree("Len", theirs.Len(), ours.Len())
				}
				agree(op+" then LoadAll", theirs.LoadAll(), ours.LoadAll())
			}
		})
	}
}
