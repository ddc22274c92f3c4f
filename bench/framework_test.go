package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// frameworkKeys is the map size of the framework scenarios.
const frameworkKeys = 10000

// BenchmarkHandleSubscription measures a consumer's throughput: the
// publisher Stores into a map of 10,000 entries while one consumer handles
// every update it is delivered; one op is one Store, and the run ends when
// the consumer has handled the last one. switchyard's consumer is
// message.HandleSubscription; the peer's is the loop its users write (and
// Envoy Gateway's HandleSubscription runs): range over the snapshots, then
// over their updates. handled/op is how many updates the consumer handled
// per Store (below 1 when snapshots coalesced several Stores).
func BenchmarkHandleSubscription(b *testing.B) {
	forEachLib(b, func(b *testing.B, lib string) {
		b.Run("val=int/N="+fmt.Sprint(frameworkKeys), func(b *testing.B) {
			benchHandle(b, lib)
		})
	})
}

func benchHandle(b *testing.B, lib string) {
	keys := keysFor(frameworkKeys)
	m := newKV[int](lib)
	defer m.Close()
	fill(m, keys, ints)

	var handled, want atomic.Int64 // want: the last Store's value, +1
	last := make(chan struct{}, 1)
	handle := func(v int) {
		handled.Add(1)
		if w := want.Load(); w != 0 && int64(v)+1 == w && want.CompareAndSwap(w, 0) {
			last <- struct{}{}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	switch m := m.(type) {
	case *ours[int]:
		sub := m.m.Subscribe(ctx)
		go func() {
			defer wg.Done()
			message.HandleSubscription(ctx, message.Loop{Runner: "bench", Message: "ints"}, sub,
				func(_ context.Context, u watchable.Update[string, int]) error {
					handle(u.Value)
					return nil
				})
		}()
	case *theirs[int]:
		sub := m.m.Subscribe(ctx)
		go func() {
			defer wg.Done()
			for snap := range sub {
				for _, u := range snap.Updates {
					handle(u.Value)
				}
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()

	// A first Store the consumer must reach, so that the initial contents
	// are handled before the clock starts.
	want.Store(-2 + 1)
	m.Store(keys[0], -2)
	awaitSignal(b, last)

	handled.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := b.N + 1 + i // never a fill value, never repeated
		if i == b.N-1 {
			want.Store(int64(v) + 1)
		}
		m.Store(keys[i%frameworkKeys], v)
	}
	awaitSignal(b, last)
	b.StopTimer()
	b.ReportMetric(float64(handled.Load())/float64(b.N), "handled/op")
}

// chainLength is the length of the translator chain.
const chainLength = 3

// BenchmarkChain measures a chain of three translators over 10,000 keys:
// each stage maps every entry of its input to its value plus one in its
// output. One op is one Store at the head until a subscriber of the tail
// sees it (its value plus three). switchyard's stages are translator.Derive
// runners; the peer's are the goroutines its users write: subscribe to the
// input, Store or Delete every update into the output.
func BenchmarkChain(b *testing.B) {
	forEachLib(b, func(b *testing.B, lib string) {
		b.Run("val=int/N="+fmt.Sprint(frameworkKeys), func(b *testing.B) {
			benchChain(b, lib)
		})
	})
}

func benchChain(b *testing.B, lib string) {
	keys := keysFor(frameworkKeys)
	head := newKV[int](lib)
	fill(head, keys, ints)

	ctx, cancel := context.WithCancel(context.Background())
	var stages sync.WaitGroup
	tail := chainStages(ctx, b, lib, head, &stages)
	var want atomic.Int64 // index+1 of the Store awaited at the tail
	seen := make(chan struct{}, 1)
	tailValue := func(i int) (string, int) { return keys[i%frameworkKeys], i + 1 + chainLength }
	var full sync.Once
	filled := make(chan struct{})
	stopTail := subscribers(tail, 1, func(_ int, v view[int]) {
		if v.Len() == len(keys) {
			full.Do(func() { close(filled) })
		}
		w := want.Load()
		if w == 0 {
			return
		}
		k, val := tailValue(int(w - 1))
		if got, ok := v.Get(k); ok && got == val && want.CompareAndSwap(w, 0) {
			seen <- struct{}{}
		}
	})
	defer func() {
		stopTail()
		cancel()
		stages.Wait()
		head.Close()
	}()
	awaitSignal(b, filled) // the whole chain has run once

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		want.Store(int64(i) + 1)
		head.Store(keys[i%frameworkKeys], i+1)
		awaitSignal(b, seen)
	}
	b.StopTimer()
}

// chainStages starts the chain's stages, each adding one to every value of
// its input, and returns the last stage's output. switchyard's stages are
// translator.Derive runners, which own their outputs; the peer's are the
// goroutines its users write: subscribe to the input, Store or Delete every
// update into an output map.
func chainStages(ctx context.Context, b *testing.B, lib string, head kv[int], stages *sync.WaitGroup) subscribable[int] {
	run := func(fn func()) {
		stages.Add(1)
		go func() {
			defer stages.Done()
			fn()
		}()
	}
	switch head := head.(type) {
	case *ours[int]:
		in := head.m.View()
		for range chainLength {
			d := translator.Derive("stage", in, func(_ context.Context, k string, v int) (map[string]int, error) {
				return map[string]int{k: v + 1}, nil
			})
			run(func() {
				if err := d.Run(ctx); err != nil {
					b.Errorf("stage: %v", err)
				}
			})
			in = d.Output()
		}
		return ourReadOnly[int]{in}
	case *theirs[int]:
		in := head
		for range chainLength {
			out := &theirs[int]{}
			src := in
			run(func() {
				defer out.Close()
				first := true
				for snap := range src.m.Subscribe(ctx) {
					// The first snapshot's State is the whole input. Its
					// Updates are not a marker: the peer appends to them
					// whatever changed before the first read, and those
					// changes are already in State.
					if first {
						first = false
						for k, v := range snap.State {
							out.m.Store(k, v+1)
						}
						continue
					}
					for _, u := range snap.Updates {
						if u.Delete {
							out.m.Delete(u.Key)
						} else {
							out.m.Store(u.Key, u.Value+1)
						}
					}
				}
			})
			in = out
		}
		return in
	}
	panic("bench: unknown library")
}
