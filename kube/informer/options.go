package informer

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Option configures an Informer.
type Option func(*config)

type config struct {
	name                   string
	label, field           string
	minBackoff, maxBackoff time.Duration
	logger                 *slog.Logger
	err                    error // a selector that does not parse; Run returns it
}

func newConfig(opts []Option) config {
	c := config{minBackoff: 500 * time.Millisecond, maxBackoff: 15 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// WithName sets the Informer's runner name, under which a runner group
// lists its status and problems and which its log records carry. An empty
// name keeps the default, "kube:" followed by the resource.
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithLabelSelector restricts the Informer to the objects whose labels
// match selector, in the syntax of kubectl's -l ("app=web,tier!=cache").
// An object whose labels stop matching leaves the map, as if deleted. A
// selector that does not parse makes Run fail at once, naming it.
func WithLabelSelector(selector string) Option {
	return func(c *config) {
		if _, err := labels.Parse(selector); err != nil && c.err == nil {
			c.err = fmt.Errorf("WithLabelSelector(%q): %w", selector, err)
		}
		c.label = selector
	}
}

// WithFieldSelector restricts the Informer to the objects whose fields
// match selector ("metadata.name=web", "spec.nodeName=node-1"; which fields
// are selectable depends on the resource). A selector that does not parse
// makes Run fail at once, naming it; one the API server refuses is reported
// as a list problem.
func WithFieldSelector(selector string) Option {
	return func(c *config) {
		if _, err := fields.ParseSelector(selector); err != nil && c.err == nil {
			c.err = fmt.Errorf("WithFieldSelector(%q): %w", selector, err)
		}
		c.field = selector
	}
}

// WithBackoff bounds the wait between failed attempts to list: the first
// wait is about initial, each next one twice the last, up to limit
// (defaults: 500ms and 15s). So a resource that appears (a
// CustomResourceDefinition installed after the program started) is picked
// up within about limit.
// Values of zero or less keep the defaults.
//
// A watch that fails while the API server is unreachable is retried by
// client-go's reflector with its own backoff (0.8s doubling up to 30s).
func WithBackoff(initial, limit time.Duration) Option {
	return func(c *config) {
		if initial > 0 {
			c.minBackoff = initial
		}
		if limit > 0 {
			c.maxBackoff = limit
		}
		c.maxBackoff = max(c.maxBackoff, c.minBackoff)
	}
}

// WithLogger sends the Informer's records (a problem appeared or was
// resolved, a re-list) to l. Without it, or with a nil l, they go to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
