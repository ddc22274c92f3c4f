package watchable

import (
	"context"
	"testing"
	"time"
)

// TestPartitionsNotifyEndsWithTheIndex checks what Map.Notifiers cannot
// see once the index's router is gone: that the index's end, by its context
// or by its map's Close, drops every registration and its table slot, and
// that a Notify after the end registers nothing.
func TestPartitionsNotifyEndsWithTheIndex(t *testing.T) {
	for _, end := range []string{"ctx", "Close"} {
		t.Run(end, func(t *testing.T) {
			var m Map[int, int]
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			p := PartitionBy(ctx, m.View(), func(_, v int) int { return v })
			ch := make(chan struct{}, 1)
			p.Notify(t.Context(), 1, ch)
			p.Notify(t.Context(), 2, ch)
			counts := func() (closed bool, regs, slots int) {
				m.mu.Lock()
				defer m.mu.Unlock()
				return p.closed, len(p.notes.all), p.notes.readers.first.n
			}
			if _, regs, slots := counts(); regs != 2 || slots != 2 {
				t.Fatalf("two registrations: %d registered, %d slots; want 2, 2", regs, slots)
			}
			if end == "ctx" {
				cancel()
			} else {
				m.Close()
			}
			deadline := time.Now().Add(time.Minute)
			for closed, _, _ := counts(); !closed; closed, _, _ = counts() {
				if time.Now().After(deadline) {
					t.Fatal("the index still open a minute after its end")
				}
				time.Sleep(time.Millisecond)
			}
			if _, regs, slots := counts(); regs != 0 || slots != 0 {
				t.Fatalf("after the index ended: %d registered, %d slots; want none", regs, slots)
			}
			p.Notify(t.Context(), 1, ch)
			if _, regs, slots := counts(); regs != 0 || slots != 0 {
				t.Fatalf("a Notify after the index ended: %d registered, %d slots; want none", regs, slots)
			}
		})
	}
}
