package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchyard-go/switchyard/discovery"
)

// The causes of an attempt cut short by its policy.
var (
	errConnectTimeout = errors.New("connection not made within the connect timeout")
	errHeaderTimeout  = errors.New("response headers not received within the response header timeout")
)

// exchange is the state of one forwarded request, passed through its
// context to the ReverseProxy's callbacks, which all run in the request's
// goroutine.
type exchange struct {
	up       *Upstream
	pol      Policy
	base     *url.URL // the outbound URL before a target's is set
	tried    []string // keys of the targets tried, in order
	last     discovery.Target
	attempts int
	retries  int
	cancels  []context.CancelCauseFunc // of the attempts, ended with the request
}

type exchangeKey struct{}

func exchangeOf(ctx context.Context) *exchange { return ctx.Value(exchangeKey{}).(*exchange) }

// targetKey identifies a target for ejection: its instance when it was
// discovered, else its URL.
func targetKey(t discovery.Target) string {
	if t.Instance != "" {
		return t.Instance
	}
	return t.URL
}

// forward sends r to one of up's targets.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, up *Upstream) {
	if len(up.Targets) == 0 {
		p.refuse(w, &Refusal{Status: http.StatusServiceUnavailable, Route: up.Route, ServiceID: up.ServiceID,
			Message: fmt.Sprintf("no target for service %q", up.ServiceID)})
		return
	}
	x := &exchange{up: up, pol: up.Policy.over(p.policy)}
	defer func() {
		for _, cancel := range x.cancels {
			cancel(nil)
		}
	}()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
}

// clientIPHeaders are request headers through which a client could claim
// to be someone else; Rewrite already drops Forwarded and X-Forwarded-*.
var clientIPHeaders = []string{
	"X-Real-Ip", "True-Client-Ip", "X-Client-Ip", "Client-Ip", "X-Cluster-Client-Ip",
	"Cf-Connecting-Ip", "Fastly-Client-Ip", "X-Original-Forwarded-For", "Forwarded",
}

func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	x := exchangeOf(pr.In.Context())
	if prefix := x.up.StripPrefix; prefix != "" {
		pr.Out.URL.Path = stripPrefix(pr.Out.URL.Path, prefix)
		if pr.Out.URL.RawPath != "" {
			pr.Out.URL.RawPath = stripPrefix(pr.Out.URL.RawPath, prefix)
		}
	}
	h := pr.Out.Header
	for _, name := range clientIPHeaders {
		h.Del(name)
	}
	for name := range h {
		if strings.HasPrefix(name, headerPrefix) {
			delete(h, name)
		}
	}
	pr.SetXForwarded()
	if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
		h.Set("X-Real-Ip", ip)
	}
	base := *pr.Out.URL
	x.base = &base
}

func stripPrefix(path, prefix string) string {
	p := strings.TrimPrefix(path, strings.TrimSuffix(prefix, "/"))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// idempotent methods may be sent twice without changing the outcome.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// roundTrip sends out to a target, and to another one when it could not
// reach it and may be sent again.
func (p *Proxy) roundTrip(out *http.Request) (*http.Response, error) {
	x := exchangeOf(out.Context())
	// ReverseProxy sends no body when the client sent none.
	retriable := idempotent(out.Method) && out.Body == nil
	t, ok := p.next(x)
	if !ok { // forward saw to it that there are targets
		return nil, fmt.Errorf("no target for service %q", x.up.ServiceID)
	}
	for {
		resp, sent, err := p.attempt(x, out, t)
		if err == nil {
			if resp.StatusCode >= 500 {
				p.failed(x, t, "status "+strconv.Itoa(resp.StatusCode))
			} else {
				p.succeeded(x, t)
			}
			return resp, nil
		}
		p.failed(x, t, failureKind(err))
		if sent || !retriable || x.retries >= x.pol.Retries || out.Context().Err() != nil {
			return nil, err
		}
		if t, ok = p.next(x); !ok {
			return nil, err // no other target to try
		}
		x.retries++
		p.metrics.retry(x.up.Route)
	}
}

// next picks the target of the next attempt: one not tried yet, not
// ejected unless all the untried ones are. The route's selection policy
// picks the first; a retry takes the candidate that follows the last
// target tried in the order of the targets, so that retries do not move
// the route's rotation.
func (p *Proxy) next(x *exchange) (discovery.Target, bool) {
	candidates := p.outliers.admitted(x.up.Targets, x.tried, p.now())
	if len(candidates) == 0 {
		return discovery.Target{}, false
	}
	if len(x.tried) == 0 {
		return p.selection(x.up.Route).Pick(candidates)
	}
	last := slices.IndexFunc(x.up.Targets, func(t discovery.Target) bool { return targetKey(t) == x.tried[len(x.tried)-1] })
	for i := 1; i <= len(x.up.Targets); i++ {
		t := x.up.Targets[(last+i)%len(x.up.Targets)]
		if slices.ContainsFunc(candidates, func(c discovery.Target) bool { return targetKey(c) == targetKey(t) }) {
			return t, true
		}
	}
	return candidates[0], true
}

// attempt sends out to t within the policy's timeouts. sent reports
// whether the request's headers were written, after which it must not be
// sent again.
func (p *Proxy) attempt(x *exchange, out *http.Request, t discovery.Target) (resp *http.Response, sent bool, err error) {
	x.attempts++
	x.tried = append(x.tried, targetKey(t))
	x.last = t
	u, err := url.Parse(t.URL)
	if err != nil || u.Host == "" {
		return nil, false, fmt.Errorf("target %q is not a URL", t.URL)
	}
	ctx, cancel := context.WithCancelCause(out.Context())
	x.cancels = append(x.cancels, cancel) // ends with the request: the body is still to be read
	var wrote atomic.Bool
	connect := time.AfterFunc(x.pol.ConnectTimeout, func() { cancel(errConnectTimeout) })
	header := time.AfterFunc(x.pol.ResponseHeaderTimeout, func() { cancel(errHeaderTimeout) })
	defer connect.Stop()
	defer header.Stop()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:      func(httptrace.GotConnInfo) { connect.Stop() },
		WroteHeaders: func() { wrote.Store(true) },
	})
	req := out.Clone(ctx)
	base := *x.base
	req.URL = &base
	(&httputil.ProxyRequest{Out: req}).SetURL(u)
	rt := p.fallback
	if p.transport != nil {
		if own := p.transport(t); own != nil {
			rt = own
		}
	}
	resp, err = rt.RoundTrip(req)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errConnectTimeout) || errors.Is(cause, errHeaderTimeout) {
			err = fmt.Errorf("%w: %v", cause, err)
		}
		return nil, wrote.Load(), err
	}
	return resp, true, nil
}

// failureKind names an upstream failure for metrics and error bodies,
// without the address that its error text holds.
func failureKind(err error) string {
	switch {
	case errors.Is(err, errConnectTimeout):
		return "connect timeout"
	case errors.Is(err, errHeaderTimeout):
		return "response header timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "connection failed"
}

func (p *Proxy) failed(x *exchange, t discovery.Target, kind string) {
	p.metrics.upstreamFailure(x.up.Route, kind)
	if d := p.outliers.failed(targetKey(t), p.now(), x.pol); d > 0 {
		p.metrics.ejection(x.up.Route)
		p.log.Warn("target ejected: no requests for it until the time is over",
			"route", x.up.Route, "serviceId", x.up.ServiceID, "target", t.URL, "instance", t.Instance,
			"lastFailure", kind, "for", d)
	}
}

func (p *Proxy) succeeded(x *exchange, t discovery.Target) {
	if p.outliers.succeeded(targetKey(t)) {
		p.log.Info("target readmitted: it answered again",
			"route", x.up.Route, "serviceId", x.up.ServiceID, "target", t.URL, "instance", t.Instance)
	}
}

// modifyResponse drops the upstream's own X-Switchyard-* headers, so that
// only the gateway's reach the client, and says how many retries it took.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	for name := range resp.Header {
		if strings.HasPrefix(name, headerPrefix) {
			delete(resp.Header, name)
		}
	}
	if x := exchangeOf(resp.Request.Context()); x.retries > 0 {
		resp.Header.Set(HeaderRetries, strconv.Itoa(x.retries))
	}
	return nil
}

// proxyError answers a request that no target answered: 504 for a
// timeout, 502 otherwise, naming the route and the service; the target's
// address and the error go to the log.
func (p *Proxy) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	x := exchangeOf(r.Context())
	if r.Context().Err() != nil {
		return // the client went away; nobody is listening
	}
	kind := failureKind(err)
	status, msg := http.StatusBadGateway, "upstream unavailable: "+kind
	if strings.Contains(kind, "timeout") {
		status, msg = http.StatusGatewayTimeout, "upstream timed out: "+kind
	}
	p.warn(r.Context(), x.up.Route, "upstream failed",
		"route", x.up.Route, "serviceId", x.up.ServiceID, "target", x.last.URL, "instance", x.last.Instance,
		"attempts", x.attempts, "status", status, "err", err)
	if x.retries > 0 {
		w.Header().Set(HeaderRetries, strconv.Itoa(x.retries))
	}
	writeJSONError(w, status, map[string]any{
		"error":     msg,
		"route":     x.up.Route,
		"serviceId": x.up.ServiceID,
		"attempts":  x.attempts,
	})
}

// admitted returns the targets a request may try next: those not tried,
// less the ejected ones unless every one of them is ejected. With no
// failing target and nothing tried, it is targets itself.
func (o *outliers) admitted(targets []discovery.Target, tried []string, now time.Time) []discovery.Target {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.m) == 0 && len(tried) == 0 {
		return targets
	}
	var fresh, ejected []discovery.Target
	for _, t := range targets {
		k := targetKey(t)
		switch {
		case slices.Contains(tried, k):
		case o.m[k] != nil && now.Before(o.m[k].until):
			ejected = append(ejected, t)
		default:
			fresh = append(fresh, t)
		}
	}
	if len(fresh) == 0 {
		return ejected
	}
	return fresh
}
