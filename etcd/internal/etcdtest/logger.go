package etcdtest

import (
	"log/slog"
	"strings"
	"testing"
)

// Logger returns a logger that writes to tb's log, shown when the test
// fails or runs with -v.
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
