// Package gateway forwards HTTP requests to the targets a discovery
// resolution found, the way a gateway in front of discovered services must:
// within timeouts, retrying a request that could not reach its target on
// another one, setting aside targets that keep failing, answering failures
// with bodies that name the route and the service but never an internal
// address, and measuring every answer.
//
//	proxy := gateway.New(func(r *http.Request) (gateway.Upstream, *gateway.Refusal) {
//		route := match(r.URL.Path) // the program's own routing
//		if route == nil {
//			return gateway.Upstream{}, &gateway.Refusal{Status: 404, Message: "no route"}
//		}
//		return gateway.Upstream{Route: route.Name, ServiceID: route.ServiceID, Targets: route.Targets}, nil
//	}, gateway.WithTransport(pool.Transport), gateway.WithMetrics(metrics))
//	srv := httpserver.New("gateway", addr, proxy)
//
// A Proxy is an http.Handler. For each request it asks its Resolver where
// the request goes: an Upstream (a route's targets, as discovery.Resolve
// gives them, with a Policy), or a Refusal that it answers itself. It then
// picks a target with the route's selection policy (a discovery.RoundRobin
// per route by default), leaving out ejected targets, and forwards the
// request with net/http/httputil.ReverseProxy.
//
// # Resilience
//
// Policy, per route over the Proxy's defaults, bounds each attempt: the
// connection must be made within ConnectTimeout and the response headers
// must arrive within ResponseHeaderTimeout of the attempt's start.
//
// An idempotent request without a body (GET, HEAD, OPTIONS, TRACE, PUT,
// DELETE) that fails to reach its target (the connection is refused, or
// not made in time, or breaks before the request is sent) is retried on
// another target, up to Retries times; the response then carries
// X-Switchyard-Retries with the number of retries, and the retries are
// counted. Nothing is retried once the request has been sent, since the
// target may have acted on it.
//
// Passive outlier ejection: a target that fails EjectAfter times in a row
// (no connection, a timeout, or a 5xx answer) is ejected: no request is
// sent to it for EjectFor, doubled on each ejection in a row up to 32
// times EjectFor. Once that time is over it gets requests again; the
// first success readmits it for good, a failure ejects it again. When
// every target of a route is ejected, they are all used anyway: a
// gateway that refuses everything helps nobody.
//
// # Answers
//
// A failure to reach the upstream answers 502, a timeout 504, each with a
// JSON body {"error", "route", "serviceId", "attempts"} that names no
// address: the address, with the error, goes to the log at warn level (at
// most one record a second per route, saying how many were left out).
//
// The request's client-IP headers (X-Real-IP, True-Client-IP, Forwarded,
// X-Forwarded-*, and the like) are not passed on as the client sent them:
// X-Real-IP and X-Forwarded-For are set to the address the request came
// from, and the others removed, so that an upstream cannot be fooled about
// who its client is. Headers named X-Switchyard-* are the gateway's: those
// of the client's request and of the upstream's response are dropped.
//
// # Metrics
//
// With WithMetrics, every answer is counted and timed per route and status
// class (switchyard_gateway_requests_total and
// switchyard_gateway_request_duration_seconds, from the moment the request
// arrives, the Resolver's time included), and retries, ejections and
// upstream failures are counted per route.
package gateway
