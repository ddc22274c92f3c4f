package file

import (
	"log/slog"
	"time"
)

// Option configures a Provider. The options that concern following a
// directory's changes (WithDebounce, WithRescanInterval, WithFSNotify) apply
// to New only: NewFS refuses them.
type Option func(*config)

type config struct {
	name     string
	debounce time.Duration
	rescan   time.Duration
	notify   bool
	maxSize  int64
	logger   *slog.Logger
	onError  func(error)
	// watching names the options given that only make sense for a
	// directory that is watched, in the order given, for NewFS to refuse.
	watching []string
}

func newConfig(opts []Option) config {
	c := config{
		debounce: 100 * time.Millisecond,
		rescan:   30 * time.Second,
		notify:   true,
		maxSize:  DefaultMaxFileSize,
	}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// WithName sets the provider's runner name, under which a runner group
// lists its status and its problems, and which its log records carry. The
// default is "file:" followed by the directory ("file:fs:" and the
// directory for NewFS); a fixed name such as "config" keeps health checks
// and dashboards the same wherever the files come from. An empty name keeps
// the default.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
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
//
// It applies to New only; NewFS panics when given it.
func WithDebounce(d time.Duration) Option {
	return func(c *config) {
		c.debounce = max(d, 0)
		c.watching = append(c.watching, "WithDebounce")
	}
}

// WithRescanInterval sets how often the whole directory is read again
// whatever the events say (default 30s), which catches changes that events
// missed. Zero disables the rescan.
//
// It applies to New only; NewFS panics when given it.
func WithRescanInterval(d time.Duration) Option {
	return func(c *config) {
		c.rescan = max(d, 0)
		c.watching = append(c.watching, "WithRescanInterval")
	}
}

// WithFSNotify turns filesystem events on (the default) or off. Without
// them, changes are noticed by the rescan only.
//
// It applies to New only; NewFS panics when given it.
func WithFSNotify(enabled bool) Option {
	return func(c *config) {
		c.notify = enabled
		c.watching = append(c.watching, "WithFSNotify")
	}
}

// WithLogger sends the provider's log records to l: each new problem with a
// file (keys "runner", "file", "error"), and trouble watching the
// directory. Without it, or with a nil l, they go to slog.Default(): a bad
// file is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
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
