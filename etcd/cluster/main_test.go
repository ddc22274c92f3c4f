package cluster_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// zapNop silences the etcd clients the tests make by hand.
var zapNop = zap.NewNop()

func TestMain(m *testing.M) {
	// The process tests run this test binary as their replicas.
	if len(os.Args) > 1 && os.Args[1] == replicaArg {
		os.Exit(replicaMain(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}

// patience bounds every wait on a condition: generous, because the tests
// run with -race on a loaded two-core machine. Nothing waits this long
// unless a test is about to fail.
const patience = 60 * time.Second

// ttl is the sessions' time to live in the tests: etcd's minimum with its
// default election timeout.
const ttl = 2 * time.Second

// quiet discards the records of the code under test.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func timeout(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// within fails the test unless ch is closed or receives within patience.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}
