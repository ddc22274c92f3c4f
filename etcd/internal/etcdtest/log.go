package etcdtest

import "go.uber.org/zap"

// quietLogger keeps clients from filling test output with retries and
// reconnections, which are expected here; errors still show.
func quietLogger() *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.ErrorLevel)
	cfg.Sampling = nil
	l, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return l
}
