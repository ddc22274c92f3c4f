package main

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
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
}

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
