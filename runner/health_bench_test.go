package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/switchyard-go/switchyard/runner"
)

// BenchmarkHealthReportManyKeys reports a problem under each of 10,000
// keys, as a provider with a bad entry per key of its input does, and then
// clears them all: one op is the 20,000 reports.
func BenchmarkHealthReportManyKeys(b *testing.B) {
	const keys = 10_000
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprintf("entry-%05d", i)
	}
	bad := errors.New("bad entry")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	health := make(chan runner.Health, 1)
	g := runner.NewGroup(runner.WithLogger(slog.New(slog.DiscardHandler)))
	errc := make(chan error, 1)
	go func() {
		errc <- g.Run(ctx, runner.Func("scanner", func(ctx context.Context) error {
			health <- runner.HealthOf(ctx)
			<-ctx.Done()
			return nil
		}))
	}()
	h := <-health
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range names {
			h.Report(k, bad)
		}
		for _, k := range names {
			h.Report(k, nil)
		}
	}
	b.StopTimer()
	cancel()
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}
