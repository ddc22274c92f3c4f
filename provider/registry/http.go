package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Handler returns the HTTP handler of the registry: the HTTP API under /v1/
// and the WebSocket endpoints under /ws/. Mount it at the root of a mux, or
// for those two prefixes:
//
//	mux.Handle("/v1/", r.Handler())
//	mux.Handle("/ws/", r.Handler())
//
// It answers 503 until Run has started and after it has returned; open
// watches and sockets end when Run returns or their request ends.
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/services", r.handleRegister)
	mux.HandleFunc("PUT /v1/services/{id}/heartbeat", r.handleHeartbeat)
	mux.HandleFunc("DELETE /v1/services/{id}", r.handleDeregister)
	mux.HandleFunc("GET /v1/discovery", r.handleLookup)
	mux.HandleFunc("GET /v1/discovery/watch", r.handleWatch)
	mux.HandleFunc("GET /ws/microservice", r.handleMicroservice)
	mux.HandleFunc("GET /ws/discovery", r.handleDiscoverySocket)
	return mux
}

// RegisterResponse is the body of a 201 answer to POST /v1/services.
type RegisterResponse struct {
	RuntimeInstanceID string `json:"runtimeInstanceId"`
	// LeaseSeconds is the lease period: send a heartbeat well within it.
	LeaseSeconds float64 `json:"leaseSeconds"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, field, format string, args ...any) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard-registry"`)
	}
	writeJSON(w, status, fieldErr(field, format, args...))
}

// bearer returns the token of an "Authorization: Bearer" header, and
// whether there was an Authorization header at all.
func bearer(req *http.Request) (token string, present bool) {
	h := req.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(token), true
}

// admit writes the answer for a request that cannot be served (registry not
// running, missing or wrong token) and reports whether it may go on.
func (r *Registry) admit(w http.ResponseWriter, req *http.Request, discovery bool) bool {
	if !r.isRunning() {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
		return false
	}
	token, _ := bearer(req)
	ok := r.authorizeRegistration(token)
	if discovery {
		ok = r.authorizeDiscovery(token)
	}
	if !ok {
		writeError(w, http.StatusUnauthorized, "", "missing or invalid bearer token")
		return false
	}
	return true
}

func (r *Registry) handleRegister(w http.ResponseWriter, req *http.Request) {
	if !r.admit(w, req, false) {
		return
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "", "content type must be application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.limits.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "", "request body is larger than %d bytes", tooBig.Limit)
			return
		}
		writeError(w, http.StatusBadRequest, "", "reading request body: %v", err)
		return
	}
	reg, ferr := r.cfg.limits.decodeRegistration(body)
	if ferr != nil {
		writeJSON(w, http.StatusBadRequest, ferr)
		return
	}
	id, err := r.store.register(reg, nil)
	switch {
	case errors.Is(err, ErrTooManyInstances):
		writeError(w, http.StatusConflict, "serviceId", "service %q has the maximum of %d instances", reg.ServiceID, r.cfg.limits.MaxInstancesPerService)
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
	default:
		writeJSON(w, http.StatusCreated, RegisterResponse{RuntimeInstanceID: id, LeaseSeconds: r.cfg.lease.Seconds()})
	}
}

func (r *Registry) handleHeartbeat(w http.ResponseWriter, req *http.Request) {
	if !r.admit(w, req, false) {
		return
	}
	r.answerInstance(w, r.Heartbeat(req.PathValue("id")))
}

func (r *Registry) handleDeregister(w http.ResponseWriter, req *http.Request) {
	if !r.admit(w, req, false) {
		return
	}
	r.answerInstance(w, r.Deregister(req.PathValue("id")))
}

func (r *Registry) answerInstance(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknownInstance):
		writeError(w, http.StatusNotFound, "runtimeInstanceId", "unknown runtimeInstanceId")
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// parseQuery reads a lookup from the query string: serviceId (required),
// envTag and protocol; anything else is rejected.
func (r *Registry) parseQuery(q url.Values) (DiscoveryKey, *FieldError) {
	var k DiscoveryKey
	for name, vals := range q {
		if len(vals) != 1 {
			return k, fieldErr(name, "%s must be given once", name)
		}
		switch name {
		case "serviceId":
			k.ServiceID = vals[0]
		case "envTag":
			k.EnvTag = vals[0]
		case "protocol":
			k.Protocol = vals[0]
		default:
			return k, fieldErr(name, "unknown query parameter %q", name)
		}
	}
	return k, r.cfg.limits.validateLookup(k)
}

// validateLookup checks a lookup: serviceId required, protocol known if
// given.
func (l Limits) validateLookup(k DiscoveryKey) *FieldError {
	if err := l.checkName("serviceId", k.ServiceID, true); err != nil {
		return err
	}
	if err := l.checkName("envTag", k.EnvTag, false); err != nil {
		return err
	}
	if k.Protocol != "" && !protocols[k.Protocol] {
		return fieldErr("protocol", "protocol must be one of http, https, grpc, ws, wss")
	}
	return nil
}

func (r *Registry) handleLookup(w http.ResponseWriter, req *http.Request) {
	if !r.admit(w, req, true) {
		return
	}
	k, ferr := r.parseQuery(req.URL.Query())
	if ferr != nil {
		writeJSON(w, http.StatusBadRequest, ferr)
		return
	}
	writeJSON(w, http.StatusOK, r.Lookup(k))
}

// serveContext returns a context that ends with parent or when Run returns.
func (r *Registry) serveContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-r.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// watch calls send with the JSON of the merged snapshot for k at once and
// after every change to it, until ctx ends or send fails. Changes that
// arrive while send is busy are coalesced: the next call gets the newest
// snapshot. ping, if not nil, is called every keepAlive. The data passed to
// send is shared with other watchers and must not be modified.
func (r *Registry) watch(ctx context.Context, k DiscoveryKey, keepAlive time.Duration, send func(data []byte) error, ping func() error) error {
	// A subset subscription wakes only for changes to matching snapshots,
	// so every wake-up is news for this watcher.
	sub := r.Snapshots().SubscribeSubset(ctx, func(sk DiscoveryKey, _ *DiscoverySnapshot) bool { return k.matches(sk) })
	var tickC <-chan time.Time
	if ping != nil {
		tick := time.NewTicker(keepAlive)
		defer tick.Stop()
		tickC = tick.C
	}
	for {
		select {
		case snap, ok := <-sub:
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return ErrNotRunning
			}
			data, err := r.encodings.encode(k, snap.State)
			if err != nil {
				return err
			}
			if err := send(data); err != nil {
				return err
			}
		case <-tickC:
			if err := ping(); err != nil {
				return err
			}
		}
	}
}

var (
	sseEvent     = []byte("event: snapshot\ndata: ")
	sseEnd       = []byte("\n\n")
	sseKeepAlive = []byte(": keepalive\n\n")
)

func (r *Registry) handleWatch(w http.ResponseWriter, req *http.Request) {
	if !r.admit(w, req, true) {
		return
	}
	k, ferr := r.parseQuery(req.URL.Query())
	if ferr != nil {
		writeJSON(w, http.StatusBadRequest, ferr)
		return
	}
	ctx, cancel := r.serveContext(req.Context())
	defer cancel()
	rc := http.NewResponseController(w)
	write := func(parts ...[]byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(r.cfg.limits.WriteTimeout))
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return rc.Flush()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = r.watch(ctx, k, r.cfg.limits.KeepAlive,
		func(data []byte) error { return write(sseEvent, data, sseEnd) },
		func() error { return write(sseKeepAlive) })
}
