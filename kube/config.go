package kube

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The client-side rate limits Config sets when the configuration it loads
// sets none (client-go's own defaults, 5 requests per second with bursts of
// 10, throttle a controller that writes statuses or renews leases).
//
// The budget they leave: lists and watches are a few requests per resource
// and per reconnection; a status writer sends one GET at most and one
// update per changed status; a Lease election renews every 2 seconds; Lease
// sharding renews one Lease per owned item per renew period (300 items at a
// 10 second period: 30 requests per second). Raise them with WithQPS when a
// replica owns more.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Option configures Config.
type Option func(*config)

type config struct {
	qps     float32
	burst   int
	context string
}

// WithQPS sets the client-side rate limit: qps requests per second on
// average, burst at once. It overrides what the configuration file says.
// Values of zero or less keep the file's, or the defaults.
func WithQPS(qps float32, burst int) Option {
	return func(c *config) { c.qps, c.burst = qps, burst }
}

// WithContext selects a context of the kubeconfig file other than its
// current one.
func WithContext(name string) Option {
	return func(c *config) { c.context = name }
}

// Config returns the configuration for clients of the cluster the program
// runs against: from the kubeconfig file at path when path is not empty;
// otherwise from $KUBECONFIG or ~/.kube/config, as kubectl does; and, when
// there is no such file, from the service account of the pod the program
// runs in. Its rate limits are those of WithQPS, or else of the file, or
// else DefaultQPS and DefaultBurst.
func Config(path string, opts ...Option) (*rest.Config, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		if path != "" {
			return nil, fmt.Errorf("load the client configuration from %s: %w", path, err)
		}
		return nil, fmt.Errorf("load the client configuration (no kubeconfig given: tried $KUBECONFIG, ~/.kube/config and the pod's service account): %w", err)
	}
	SetRateLimits(cfg, c.qps, c.burst)
	return cfg, nil
}

// SetRateLimits sets cfg's client-side rate limits to qps and burst where
// they are greater than zero, and else, where cfg sets none, to DefaultQPS
// and DefaultBurst. It is for a configuration made otherwise than by Config.
func SetRateLimits(cfg *rest.Config, qps float32, burst int) {
	switch {
	case qps > 0:
		cfg.QPS = qps
	case cfg.QPS == 0:
		cfg.QPS = DefaultQPS
	}
	switch {
	case burst > 0:
		cfg.Burst = burst
	case cfg.Burst == 0:
		cfg.Burst = DefaultBurst
	}
}
