package message_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/watchable"
)

// BenchmarkHandleSubscription measures the loop's cost per update, with and
// without metrics, on one snapshot of b.N updates made by hand, so that the
// map's own cost stays out of the measure.
func BenchmarkHandleSubscription(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "plain"
		if withMetrics {
			name = "metrics"
		}
		b.Run(name, func(b *testing.B) {
			var opts []message.Option
			if withMetrics {
				m, err := message.NewMetrics(prometheus.NewRegistry())
				if err != nil {
					b.Fatal(err)
				}
				opts = append(opts, message.WithMetrics(m))
			}
			updates := make([]watchable.Update[int, int], b.N)
			for i := range updates {
				updates[i] = watchable.Update[int, int]{Key: i, Value: i}
			}
			sub := make(chan watchable.Snapshot[int, int], 1)
			sub <- watchable.Snapshot[int, int]{Updates: updates, Revision: 1}
			close(sub)
			ctx := context.Background()
			handled := 0
			b.ReportAllocs()
			b.ResetTimer()
			message.HandleSubscription(ctx, meta, sub, func(context.Context, watchable.Update[int, int]) error {
				handled++
				return nil
			}, opts...)
			if handled != b.N {
				b.Fatalf("handled %d updates, want %d", handled, b.N)
			}
		})
	}
}
