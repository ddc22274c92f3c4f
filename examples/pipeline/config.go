package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/gateway"
)

// Route is the spec of a `kind: Route` document: requests whose path starts
// with PathPrefix go to an instance of ServiceID. The file provider stores
// whole documents, as file.Object[Route], keyed by namespace and name.
type Route struct {
	// PathPrefix selects the requests: the longest matching prefix wins.
	PathPrefix string `json:"pathPrefix"`
	// ServiceID names the service the requests go to.
	ServiceID string `json:"serviceId"`
	// EnvTag, when set, restricts discovery to instances of that
	// environment and selects the "serviceId|envTag" direct URL. When empty,
	// instances of every environment qualify.
	EnvTag string `json:"envTag,omitempty"`
	// Protocol, when set, restricts discovery to instances speaking it
	// (http or https). When empty, both qualify.
	Protocol string `json:"protocol,omitempty"`
	// DirectURL, when set, is the only target, whatever is discovered.
	DirectURL string `json:"directUrl,omitempty"`
	// StaticTargets are the targets of last resort, used when nothing else
	// resolves.
	StaticTargets []string `json:"staticTargets,omitempty"`
	// StripPrefix removes PathPrefix from the path sent upstream.
	StripPrefix bool `json:"stripPrefix,omitempty"`
	// Resilience, when set, overrides the gateway's defaults for this
	// route's requests.
	Resilience *Resilience `json:"resilience,omitempty"`
}

// Resilience is how the gateway forwards a route's requests (see
// gateway.Policy); what is left out keeps the gateway's defaults:
//
//	resilience:
//	  connectTimeout: 1s         # to make a connection to a target
//	  responseHeaderTimeout: 5s  # from the start of an attempt to the response headers; then 504
//	  retries: 1                 # GETs (and other idempotent requests without a body) that cannot reach a target; 0: none
//	  ejectAfter: 3              # failures in a row that set a target aside; 0: never
//	  ejectFor: 30s              # for how long, doubled each time in a row
type Resilience struct {
	ConnectTimeout        Duration `json:"connectTimeout,omitempty"`
	ResponseHeaderTimeout Duration `json:"responseHeaderTimeout,omitempty"`
	Retries               *int     `json:"retries,omitempty"`
	EjectAfter            *int     `json:"ejectAfter,omitempty"`
	EjectFor              Duration `json:"ejectFor,omitempty"`
}

// Validate reports the first problem that makes r unusable.
func (r *Resilience) Validate() error {
	for _, d := range []struct {
		name string
		d    Duration
	}{{"connectTimeout", r.ConnectTimeout}, {"responseHeaderTimeout", r.ResponseHeaderTimeout}, {"ejectFor", r.EjectFor}} {
		if d.d < 0 {
			return fmt.Errorf("resilience.%s %v must not be negative", d.name, time.Duration(d.d))
		}
	}
	if r.Retries != nil && *r.Retries < 0 {
		return fmt.Errorf("resilience.retries %d must not be negative", *r.Retries)
	}
	if r.EjectAfter != nil && *r.EjectAfter < 0 {
		return fmt.Errorf("resilience.ejectAfter %d must not be negative", *r.EjectAfter)
	}
	return nil
}

// Policy is r as a gateway.Policy: zero keeps the gateway's default, and
// an explicit 0 retries or ejectAfter turns them off.
func (r *Resilience) Policy() gateway.Policy {
	if r == nil {
		return gateway.Policy{}
	}
	p := gateway.Policy{
		ConnectTimeout:        time.Duration(r.ConnectTimeout),
		ResponseHeaderTimeout: time.Duration(r.ResponseHeaderTimeout),
		EjectFor:              time.Duration(r.EjectFor),
	}
	if r.Retries != nil {
		p.Retries = cmp.Or(*r.Retries, -1)
	}
	if r.EjectAfter != nil {
		p.EjectAfter = cmp.Or(*r.EjectAfter, -1)
	}
	return p
}

// Duration is a time.Duration written as in Go ("1.5s", "300ms").
type Duration time.Duration

// UnmarshalJSON reads "1.5s" (or a number of nanoseconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("duration %s: want a string such as \"1.5s\"", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Validate reports the first problem that makes r unusable.
func (r *Route) Validate() error {
	switch {
	case r.PathPrefix == "" || !strings.HasPrefix(r.PathPrefix, "/"):
		return fmt.Errorf("pathPrefix %q must start with /", r.PathPrefix)
	case r.ServiceID == "":
		return fmt.Errorf("serviceId is required")
	case r.Protocol != "" && !proxyable(r.Protocol):
		return fmt.Errorf("protocol %q cannot be proxied (use http or https)", r.Protocol)
	}
	if r.DirectURL != "" {
		if err := checkTargetURL(r.DirectURL); err != nil {
			return fmt.Errorf("directUrl: %w", err)
		}
	}
	for i, t := range r.StaticTargets {
		if err := checkTargetURL(t); err != nil {
			return fmt.Errorf("staticTargets[%d]: %w", i, err)
		}
	}
	if r.Resilience != nil {
		return r.Resilience.Validate()
	}
	return nil
}

// DirectRegistry is the spec of a `kind: DirectRegistry` document: fixed
// URLs for services, keyed by "serviceId|envTag" or "serviceId".
type DirectRegistry struct {
	DirectURLs map[string]string `json:"directUrls"`
}

// Validate reports the first problem that makes d unusable.
func (d *DirectRegistry) Validate() error {
	for _, k := range slices.Sorted(maps.Keys(d.DirectURLs)) {
		if k == "" || strings.Count(k, "|") > 1 || strings.HasPrefix(k, "|") {
			return fmt.Errorf("directUrls key %q must be \"serviceId\" or \"serviceId|envTag\"", k)
		}
		if err := checkTargetURL(d.DirectURLs[k]); err != nil {
			return fmt.Errorf("directUrls[%q]: %w", k, err)
		}
	}
	return nil
}

// proxyable reports whether the gateway can send requests to instances
// speaking protocol.
func proxyable(protocol string) bool {
	return protocol == "http" || protocol == "https"
}

// checkTargetURL reports whether s is an absolute http or https URL with a
// host, the only kind of target the gateway proxies to.
func checkTargetURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %w", s, err)
	}
	if !proxyable(u.Scheme) || u.Host == "" {
		return fmt.Errorf("invalid URL %q: want http://host:port or https://host:port", s)
	}
	return nil
}
