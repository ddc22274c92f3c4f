package admin

// DefaultMaxEntries is how many entries of each map /debug/maps shows
// unless WithMaxEntries says otherwise.
const DefaultMaxEntries = 100

// Option configures Maps.
type Option func(*config)

type config struct {
	maxEntries int
}

func newConfig(opts []Option) config {
	c := config{maxEntries: DefaultMaxEntries}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithMaxEntries sets how many entries of each map are shown at most
// (default DefaultMaxEntries). A map with more is shown truncated, with a
// note saying so; its figures (entries, revision, ...) are always complete.
// Zero or less shows the figures only. The cost of a request grows with
// this number, not with the size of the maps.
func WithMaxEntries(n int) Option {
	return func(c *config) { c.maxEntries = max(n, 0) }
}
