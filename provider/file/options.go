package file

import (
	"log/slog"
	"time"
)

// Option configures a Provider.
type Option func(*config)

type config struct {
	debounce time.Duration
	rescan   time.Duration
	notify   bool
	maxSize  int64
	logger   *slog.Logger
	onError  func(error)
}

func newConfig(opts []Option) config {
	c := config{
		debounce: 100 * time.Millisecond,
		rescan:   30 * time.Second,
		notify:   true,
		maxSize:  DefaultMaxFileSize,
		logger:   slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithDebounce sets how long the directory must be quiet after a filesystem
// event before it is read again (default 100ms), so that a burst of writes
// becomes one update. A directory that never stays quiet is still read at
// least every ten debounce periods. Zero reads it after every event.
//
// The same period confirms that a file is empty: a file that provides
// documents and is found empty (zero bytes, as when a writer has truncated
// it and not written yet) keeps its documents until it is read again at
// least one debounce period later and is still empty.
func WithDebounce(d time.Duration) Option {
	return func(c *config) { c.debounce = max(d, 0) }
}

// WithRescanInterval sets how often the whole directory is read again
// whatever the events say (default 30s), which catches changes that events
// missed. Zero disables the rescan.
func WithRescanInterval(d time.Duration) Option {
	return func(c *config) { c.rescan = max(d, 0) }
}

// WithFSNotify turns filesystem events on (the default) or off. Without
// them, changes are noticed by the rescan only.
func WithFSNotify(enabled bool) Option {
	return func(c *config) { c.notify = enabled }
}

// WithLogger logs problems with files (keys "runner", "file", "error") and
// with watching the directory to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithErrorHandler calls fn with each new problem, a *DocumentError, when it
// is found. fn runs on the provider's goroutine and must not block.
func WithErrorHandler(fn func(error)) Option {
	return func(c *config) { c.onError = fn }
}

// DefaultMaxFileSize is the largest file read unless WithMaxFileSize says
// otherwise: 4 MiB.
const DefaultMaxFileSize = 4 << 20

// WithMaxFileSize sets the size in bytes of the largest file that is read
// (default DefaultMaxFileSize). A larger file is not read: it keeps its last
// good documents and is reported with an error wrapping ErrTooLarge that
// names the file and the limit. Zero or less means no limit.
func WithMaxFileSize(n int64) Option {
	return func(c *config) { c.maxSize = n }
}
