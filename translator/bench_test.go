package translator_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// BenchmarkChainLatency measures how long a change written at the head of a
// chain of three Derive stages over 10,000 keys takes to reach a subscriber
// of the tail. Besides the mean (ns/op) it reports the median and the 99th
// percentile.
func BenchmarkChainLatency(b *testing.B) {
	const keys = 10_000
	head := new(watchable.Map[int, int])
	for k := range keys {
		head.Store(k, 0)
	}
	next := func(_ context.Context, k, v int) (map[int]int, error) {
		return map[int]int{k: v + 1}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 3)
	in := head.View()
	for range 3 {
		d := translator.Derive("stage", in, next)
		in = d.Output()
		go func() { done <- d.Run(ctx) }()
	}
	defer func() {
		cancel()
		for range 3 {
			<-done
		}
	}()
	tail := in.Subscribe(ctx)
	for snap := range tail { // until the whole chain has run once
		if snap.Initialized {
			break
		}
	}

	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		k, v := i%keys, i+1
		began := time.Now()
		head.Store(k, v)
		for snap := range tail {
			if got, _ := snap.State.Get(k); got == v+3 {
				break
			}
		}
		latencies = append(latencies, time.Since(began))
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Nanoseconds())/1e3, "µs-p50")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Nanoseconds())/1e3, "µs-p99")
}
