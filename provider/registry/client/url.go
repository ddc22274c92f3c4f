package client

import (
	"fmt"
	"net/url"
	"strings"
)

// endpoint is a controller's address, parsed once.
type endpoint struct {
	secure bool
	host   string // host[:port]
	base   string // path prefix, without a trailing slash
}

// parseController reads a controller base URL: http, https, ws or wss,
// with a host, and no user information (a token belongs in WithToken). A
// path ending in one of the registry's endpoints is cut to its base; the
// query and fragment are dropped. Errors quote nothing of the URL but its
// scheme, since a mistyped URL may hold a secret.
func parseController(s string) (endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return endpoint{}, fmt.Errorf("registry client: controller URL does not parse (want http(s)://host:port or ws(s)://host:port)")
	}
	var e endpoint
	switch u.Scheme {
	case "http", "ws":
	case "https", "wss":
		e.secure = true
	default:
		return endpoint{}, fmt.Errorf("registry client: controller URL scheme %q: want http, https, ws or wss", u.Scheme)
	}
	if u.User != nil {
		return endpoint{}, fmt.Errorf("registry client: controller URL must not carry user information: give the token with WithToken")
	}
	if u.Host == "" {
		return endpoint{}, fmt.Errorf("registry client: controller URL has no host")
	}
	e.host = u.Host
	e.base = strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/ws/microservice", "/ws/discovery", "/v1/services", "/v1/discovery"} {
		e.base = strings.TrimSuffix(e.base, suffix)
	}
	return e, nil
}

// socket returns the WebSocket URL of path (such as "/ws/microservice").
func (e endpoint) socket(path string) string {
	scheme := "ws"
	if e.secure {
		scheme = "wss"
	}
	return scheme + "://" + e.host + e.base + path
}

// http returns the HTTP URL of path (such as "/v1/services").
func (e endpoint) http(path string) string {
	scheme := "http"
	if e.secure {
		scheme = "https"
	}
	return scheme + "://" + e.host + e.base + path
}

// String names the controller in logs and errors: its HTTP base URL.
func (e endpoint) String() string { return e.http("") }
