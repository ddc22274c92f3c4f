package watchable_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// A Replace of many entries, or into a large map, holds each entry back
// while the next few are found, as a large Batch holds its Stores (see
// storesAhead and replaceAhead in batchahead.go). These tests want the
// result to be what the same writes make one at a time.

// largeEntries is more entries than replaceAhead's threshold, and enough
// to make the map's table large.
const largeEntries = 1<<16 + 100

// oneAtATime makes m hold exactly entries with Deletes and Stores in one
// batch, asking Len after each Store, which applies it at once.
func oneAtATime(m *watchable.Map[string, int], entries map[string]int) {
	m.Batch(func(b *watchable.Batch[string, int]) {
		for k := range m.LoadAll() {
			if _, keep := entries[k]; !keep {
				b.Delete(k)
			}
		}
		for k, v := range entries {
			b.Store(k, v)
			b.Len()
		}
	})
}

// updatesOf reads the next snapshot of ch and returns its updates by key:
// the new value, or "deleted" and the value deleted.
func updatesOf(t *testing.T, ch <-chan watchable.Snapshot[string, int]) map[string]string {
	t.Helper()
	s := <-ch
	out := make(map[string]string, len(s.Updates))
	for _, u := range s.Updates {
		if _, dup := out[u.Key]; dup {
			t.Fatalf("key %q listed twice in one snapshot", u.Key)
		}
		out[u.Key] = fmt.Sprint(u.Delete, u.Value)
	}
	return out
}

func TestLargeReplaceIsOneWriteAfterAnother(t *testing.T) {
	for _, start := range []int{0, largeEntries} {
		t.Run(fmt.Sprintf("from %d entries", start), func(t *testing.T) {
			var replaced, stepped watchable.Map[string, int]
			t.Cleanup(replaced.Close)
			t.Cleanup(stepped.Close)
			first := map[string]int{}
			for i := range start {
				first[fmt.Sprint("k", i)] = i
			}
			replaced.Replace(first)
			oneAtATime(&stepped, first)
			if diff := cmp.Diff(stepped.LoadAll(), replaced.LoadAll()); diff != "" {
				t.Fatalf("after the first Replace (-one at a time +Replace):\n%s", diff)
			}

			// Every seventh key gone, every third unchanged, the others
			// changed, and new keys.
			entries := map[string]int{}
			for i := range largeEntries + 1000 {
				switch {
				case i < start && i%7 == 0:
				case i < start && i%3 == 0:
					entries[fmt.Sprint("k", i)] = i
				default:
					entries[fmt.Sprint("k", i)] = -i
				}
			}
			ctx := t.Context()
			rch, sch := replaced.Subscribe(ctx), stepped.Subscribe(ctx)
			<-rch
			<-sch
			rev := replaced.Revision()
			replaced.Replace(entries)
			oneAtATime(&stepped, entries)
			if diff := cmp.Diff(entries, replaced.LoadAll()); diff != "" {
				t.Fatalf("after Replace (-entries +the map):\n%s", diff)
			}
			if diff := cmp.Diff(updatesOf(t, sch), updatesOf(t, rch)); diff != "" {
				t.Fatalf("the subscriber's updates (-one at a time +Replace):\n%s", diff)
			}
			if got := replaced.Revision(); got != rev+1 {
				t.Errorf("Replace made revision %d from %d; want one revision", got, rev)
			}

			// The same entries again change nothing.
			replaced.Replace(entries)
			if got := replaced.Revision(); got != rev+1 {
				t.Errorf("an unchanged Replace made revision %d; want %d still", got, rev+1)
			}
		})
	}
}
