package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/discovery"
)

// HeaderRetries is the response header that says how many times a request
// was retried on another target, when it was.
const HeaderRetries = "X-Switchyard-Retries"

// headerPrefix starts the names of the gateway's own headers.
const headerPrefix = "X-Switchyard-"

// Upstream is where the Resolver sends a request: a route's targets and
// how to forward to them.
type Upstream struct {
	// Route names the route that matched, in metrics, logs and error
	// bodies.
	Route string
	// ServiceID names the service the route sends to, in logs and error
	// bodies.
	ServiceID string
	// Targets are where the request may go, such as the Targets of a
	// discovery.Resolution. They are shared, never modified.
	Targets []discovery.Target
	// StripPrefix, when set, is removed from the start of the request's
	// path before it is forwarded ("/pets/1" with StripPrefix "/pets"
	// goes as "/1").
	StripPrefix string
	// Policy is the route's own; its zero fields keep the Proxy's.
	Policy Policy
	// Header is added to the response, whatever it is: the place for
	// headers that say how the request was routed.
	Header http.Header
}

// Refusal is an answer the gateway gives itself: no route matched, a
// route has no usable target, the route table is not ready. It is
// answered with Status and a JSON body {"error": Message, "route",
// "serviceId"} plus Body's members.
type Refusal struct {
	Status    int
	Message   string
	Route     string // when a route matched
	ServiceID string // when a route matched
	Body      map[string]any
	Header    http.Header // added to the response
}

// Resolver decides where a request goes: an Upstream, or, when the
// Refusal is not nil, nowhere. It runs in the request's goroutine and may
// wait (for a route to get a target, say) as long as the request's
// context allows.
type Resolver func(r *http.Request) (Upstream, *Refusal)

// Option configures a Proxy.
type Option func(*Proxy)

// WithPolicy sets the Proxy's policy, which an Upstream's own overrides
// field by field; its zero fields keep the Default... values.
func WithPolicy(p Policy) Option { return func(x *Proxy) { x.policy = p.over(defaultPolicy) } }

// WithTransport sets how a target is reached: transport returns the
// RoundTripper for a target (a pooled one per instance, see
// discovery.Pool), or nil for the Proxy's own, a clone of
// http.DefaultTransport.
func WithTransport(transport func(discovery.Target) http.RoundTripper) Option {
	return func(x *Proxy) { x.transport = transport }
}

// WithSelection sets how a route picks among its targets: newPolicy is
// called once per route name, the first time it is used (default: a new
// discovery.RoundRobin).
func WithSelection(newPolicy func() discovery.Policy) Option {
	return func(x *Proxy) { x.newSelection = newPolicy }
}

// WithLogger sends the Proxy's records to l: upstream failures (warn, at
// most one a second per route), ejections (warn) and readmissions (info).
// Without it, or with a nil l, they go to slog.Default().
func WithLogger(l *slog.Logger) Option { return func(x *Proxy) { x.log = l } }

// WithMetrics records every answer, retry, ejection and upstream failure
// in m.
func WithMetrics(m *Metrics) Option { return func(x *Proxy) { x.metrics = m } }

// Proxy is the gateway's handler; see the package documentation. Make one
// with New. It is safe for concurrent use.
type Proxy struct {
	resolve      Resolver
	policy       Policy
	transport    func(discovery.Target) http.RoundTripper
	fallback     http.RoundTripper
	newSelection func() discovery.Policy
	log          *slog.Logger
	metrics      *Metrics
	now          func() time.Time // the clock of ejections; tests set it

	rp         *httputil.ReverseProxy
	selections sync.Map // route name -> discovery.Policy
	outliers   outliers
	warnings   sync.Map // route name -> *sampler
}

// New returns a Proxy that forwards where resolve says.
func New(resolve Resolver, opts ...Option) *Proxy {
	p := &Proxy{resolve: resolve, policy: defaultPolicy, now: time.Now}
	for _, o := range opts {
		o(p)
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.newSelection == nil {
		p.newSelection = func() discovery.Policy { return new(discovery.RoundRobin) }
	}
	fallback := http.DefaultTransport.(*http.Transport).Clone()
	fallback.MaxIdleConnsPerHost = 64
	p.fallback = fallback
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      roundTripFunc(p.roundTrip),
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.proxyError,
		BufferPool:     bufferPool{},
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	return p
}

// CloseIdleConnections closes the idle connections of the Proxy's own
// transport (those of WithTransport are the caller's).
func (p *Proxy) CloseIdleConnections() {
	p.fallback.(*http.Transport).CloseIdleConnections()
}

// ServeHTTP resolves and answers one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	up, refusal := p.resolve(r)
	route := up.Route
	if refusal != nil {
		route = refusal.Route
		addHeader(w.Header(), refusal.Header)
		p.refuse(rec, refusal)
	} else {
		addHeader(w.Header(), up.Header)
		p.forward(rec, r, &up)
	}
	p.metrics.observe(route, rec.status(r), time.Since(start))
}

func (p *Proxy) refuse(w http.ResponseWriter, f *Refusal) {
	body := make(map[string]any, len(f.Body)+3)
	for k, v := range f.Body {
		body[k] = v
	}
	body["error"] = f.Message
	if f.Route != "" {
		body["route"] = f.Route
	}
	if f.ServiceID != "" {
		body["serviceId"] = f.ServiceID
	}
	writeJSONError(w, f.Status, body)
}

// selection returns the selection policy of route.
func (p *Proxy) selection(route string) discovery.Policy {
	if s, ok := p.selections.Load(route); ok {
		return s.(discovery.Policy)
	}
	s, _ := p.selections.LoadOrStore(route, p.newSelection())
	return s.(discovery.Policy)
}

func addHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append(dst[k], vs...)
	}
}

func writeJSONError(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// recorder remembers the status of the answer, for the metrics.
type recorder struct {
	http.ResponseWriter
	code int
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection: flushes,
// deadlines, and hijacking for protocol upgrades.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// status is the class of the answer for the metrics: "canceled" when the
// client went away before any answer.
func (r *recorder) status(req *http.Request) string {
	switch {
	case r.code == 0 && req.Context().Err() != nil:
		return "canceled"
	case r.code == 0:
		return "2xx" // the handler wrote nothing: net/http answers 200
	}
	return strconv.Itoa(r.code/100) + "xx"
}

// bufferPool recycles the proxy's copy buffers across requests.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sampler lets one record a second through, counting the others.
type sampler struct {
	mu      sync.Mutex
	last    time.Time
	dropped int
}

// allow reports whether a record may be made now, and how many were left
// out since the last one.
func (s *sampler) allow(now time.Time) (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.last) < time.Second {
		s.dropped++
		return false, 0
	}
	d := s.dropped
	s.last, s.dropped = now, 0
	return true, d
}

// warn logs an upstream failure of route, sampled.
func (p *Proxy) warn(ctx context.Context, route, msg string, args ...any) {
	s, _ := p.warnings.LoadOrStore(route, new(sampler))
	ok, dropped := s.(*sampler).allow(time.Now())
	if !ok {
		return
	}
	p.log.Log(ctx, slog.LevelWarn, msg, append(args, "alsoFailedSinceLastRecord", dropped)...)
}
