package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/httpserver"
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
	writeFieldError(w, status, fieldErr(field, format, args...))
}

// writeFieldError answers with ferr as the body. Refusals that may leave
// a request body unread also close the connection: net/http would
// otherwise read what is left of the body, which a hostile client sends as
// slowly as it can.
func writeFieldError(w http.ResponseWriter, status int, ferr *FieldError) {
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchyard-registry"`)
		w.Header().Set("Connection", "close")
	case http.StatusForbidden, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		w.Header().Set("Connection", "close")
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, ferr)
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

// tokenProblem says what is wrong with the token of a refused request,
// for the log: never the token itself.
func tokenProblem(req *http.Request) string {
	switch token, present := bearer(req); {
	case !present:
		return "no Authorization header"
	case token == "":
		return "Authorization header without a bearer token"
	default:
		return "wrong token"
	}
}

func httpRefusal(req *http.Request, reason string) refusal {
	return refusal{remote: remoteOf(req), transport: "http", path: req.URL.Path, reason: reason}
}

// running answers 503 unless the registry runs, and reports whether it
// does.
func (r *Registry) running(w http.ResponseWriter) bool {
	if !r.isRunning() {
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
		return false
	}
	return true
}

// admitRegistrant answers a request that cannot register, heartbeat or
// deregister (registry not running, missing or wrong token), and returns
// the credential of the token of one that can.
func (r *Registry) admitRegistrant(w http.ResponseWriter, req *http.Request) *credential {
	if !r.running(w) {
		return nil
	}
	token, _ := bearer(req)
	cred := r.registrant(token)
	if cred == nil {
		r.authFailed(httpRefusal(req, tokenProblem(req)))
		writeError(w, http.StatusUnauthorized, "", "missing or invalid bearer token")
	}
	return cred
}

// admitDiscovery answers a lookup or watch that cannot be served, and
// reports whether it can.
func (r *Registry) admitDiscovery(w http.ResponseWriter, req *http.Request) bool {
	if !r.running(w) {
		return false
	}
	if token, _ := bearer(req); !r.authorizeDiscovery(token) {
		r.authFailed(httpRefusal(req, tokenProblem(req)))
		writeError(w, http.StatusUnauthorized, "", "missing or invalid bearer token")
		return false
	}
	return true
}

// badInput counts and answers bad input.
func (r *Registry) badInput(w http.ResponseWriter, status int, ferr *FieldError) {
	r.counts.invalidInput.Add(1)
	writeFieldError(w, status, ferr)
}

// localAddr is the address a request arrived at, or nil.
func localAddr(req *http.Request) net.Addr {
	a, _ := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return a
}

func (r *Registry) handleRegister(w http.ResponseWriter, req *http.Request) {
	cred := r.admitRegistrant(w, req)
	if cred == nil {
		return
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		r.badInput(w, http.StatusUnsupportedMediaType, fieldErr("", "content type must be application/json"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.limits.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			r.badInput(w, http.StatusRequestEntityTooLarge, fieldErr("", "request body is larger than %d bytes", tooBig.Limit))
		case errors.Is(err, os.ErrDeadlineExceeded):
			r.badInput(w, http.StatusRequestTimeout, fieldErr("", "request body not received in time"))
		default:
			r.badInput(w, http.StatusBadRequest, fieldErr("", "reading request body: %v", err))
		}
		return
	}
	reg, ferr := r.cfg.limits.decodeRegistration(body)
	if ferr != nil {
		r.badInput(w, http.StatusBadRequest, ferr)
		return
	}
	if ferr := r.permit(cred, &reg, localAddr(req)); ferr != nil {
		r.forbidden(httpRefusal(req, ferr.Error()))
		writeFieldError(w, http.StatusForbidden, ferr)
		return
	}
	id, err := r.register(reg, nil)
	switch {
	case errors.Is(err, ErrTooManyInstances):
		r.limitReached(httpRefusal(req, err.Error()))
		writeError(w, http.StatusConflict, "serviceId", "%v", err)
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
	default:
		writeJSON(w, http.StatusCreated, RegisterResponse{RuntimeInstanceID: id, LeaseSeconds: r.cfg.lease.Seconds()})
	}
}

// permit checks that cred may register reg, and that the address policy
// accepts its address, for a registration that arrived at local.
func (r *Registry) permit(cred *credential, reg *Registration, local net.Addr) *FieldError {
	if !cred.allows(reg.ServiceID) {
		return fieldErr("serviceId", "this token may not register instances of service %q", reg.ServiceID)
	}
	if why := r.cfg.addresses.check(reg.Address, reg.Port, local); why != "" {
		return fieldErr("address", "%s", why)
	}
	return nil
}

func (r *Registry) handleHeartbeat(w http.ResponseWriter, req *http.Request) {
	r.serveInstance(w, req, true)
}

func (r *Registry) handleDeregister(w http.ResponseWriter, req *http.Request) {
	r.serveInstance(w, req, false)
}

// serveInstance renews (heartbeat) or removes the instance named by the
// path, if the token may act for its service.
func (r *Registry) serveInstance(w http.ResponseWriter, req *http.Request, heartbeat bool) {
	cred := r.admitRegistrant(w, req)
	if cred == nil {
		return
	}
	id := req.PathValue("id")
	var err error
	if inst, ok := r.store.instances.Load(id); !ok {
		err = ErrUnknownInstance
	} else if !cred.allows(inst.ServiceID) {
		r.forbidden(httpRefusal(req, fmt.Sprintf("token may not act for service %q", inst.ServiceID)))
		writeError(w, http.StatusForbidden, "runtimeInstanceId", "this token may not act for instances of service %q", inst.ServiceID)
		return
	} else if heartbeat {
		err = r.Heartbeat(id)
	} else {
		err = r.Deregister(id)
	}
	switch {
	case errors.Is(err, ErrUnknownInstance):
		writeFieldError(w, http.StatusNotFound, notRegistered(heartbeat))
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// ReasonNotRegistered is the Code of the FieldError of a 404 answer to a
// heartbeat or deregistration of an instance the registry does not know:
// its lease expired, it was deregistered, or the registry restarted. A
// client that gets it for a heartbeat registers again. Clients test the
// code, not the message, which may change.
const ReasonNotRegistered = "not_registered"

func notRegistered(heartbeat bool) *FieldError {
	ferr := &FieldError{Field: "runtimeInstanceId", Code: ReasonNotRegistered,
		Message: "unknown runtimeInstanceId: the registry does not know this instance (it was deregistered, its lease expired, or the registry restarted)"}
	if heartbeat {
		ferr.Message = "unknown runtimeInstanceId: the registry does not know this instance (its lease expired or the registry restarted); register again with POST /v1/services"
	}
	return ferr
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
	if !r.admitDiscovery(w, req) {
		return
	}
	k, ferr := r.parseQuery(req.URL.Query())
	if ferr != nil {
		r.badInput(w, http.StatusBadRequest, ferr)
		return
	}
	writeJSON(w, http.StatusOK, r.Lookup(k))
}

// serveContext returns a context that ends with parent, when Run returns,
// or when the httpserver.Server serving the request begins to shut down.
func (r *Registry) serveContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	draining := httpserver.Draining(parent) // nil, never ready, outside an httpserver.Server
	go func() {
		select {
		case <-r.stopped:
			cancel()
		case <-draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// addWatcher counts one more watcher, unless Limits.MaxWatchers are live
// already; done uncounts it.
func (r *Registry) addWatcher() (done func(), ok bool) {
	if r.watchers.Add(1) > int64(r.cfg.limits.MaxWatchers) {
		r.watchers.Add(-1)
		return nil, false
	}
	return func() { r.watchers.Add(-1) }, true
}

// watch calls send with the JSON of the merged snapshot for k at once and
// after every change to it, until ctx ends or send fails; with delta, every
// event after the first is instead the JSON of a DiscoveryDelta from the
// previous event (snapshot false), and changes that no node shows send
// nothing. Changes that arrive while send is busy are coalesced: the next
// event carries the newest state. ping, if not nil, is called every
// keepAlive. The data passed to send is shared with other watchers and
// must not be modified.
func (r *Registry) watch(ctx context.Context, k DiscoveryKey, delta bool, keepAlive time.Duration, send func(data []byte, snapshot bool) error, ping func() error) error {
	// A subset subscription wakes only for changes to matching snapshots,
	// so every wake-up is news for this watcher.
	sub := r.Snapshots().SubscribeSubset(ctx, func(sk DiscoveryKey, _ *DiscoverySnapshot) bool { return k.matches(sk) })
	var tickC <-chan time.Time
	if ping != nil {
		tick := time.NewTicker(keepAlive)
		defer tick.Stop()
		tickC = tick.C
	}
	var sent []*DiscoverySnapshot // what the watcher has, for deltas
	first := true
	for {
		select {
		case snap, ok := <-sub:
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return ErrNotRunning
			}
			parts := partsOf(snap.State)
			var data []byte
			var err error
			if first || !delta {
				data, err = r.encodings.encode(k, snap.State)
			} else {
				data, err = r.deltas.encode(k, sent, parts)
			}
			if err != nil {
				return err
			}
			if data != nil {
				if err := send(data, first || !delta); err != nil {
					return err
				}
			}
			sent, first = parts, false
		case <-tickC:
			if err := ping(); err != nil {
				return err
			}
		}
	}
}

var (
	sseEvent     = []byte("event: snapshot\ndata: ")
	sseDelta     = []byte("event: delta\ndata: ")
	sseEnd       = []byte("\n\n")
	sseKeepAlive = []byte(": keepalive\n\n")
)

func (r *Registry) handleWatch(w http.ResponseWriter, req *http.Request) {
	if !r.admitDiscovery(w, req) {
		return
	}
	q := req.URL.Query()
	delta, ferr := takeDelta(q)
	if ferr != nil {
		r.badInput(w, http.StatusBadRequest, ferr)
		return
	}
	k, ferr := r.parseQuery(q)
	if ferr != nil {
		r.badInput(w, http.StatusBadRequest, ferr)
		return
	}
	done, ok := r.addWatcher()
	if !ok {
		r.limitReached(httpRefusal(req, "too many watchers"))
		writeError(w, http.StatusServiceUnavailable, "", "the registry has the maximum of %d watchers; try again later", r.cfg.limits.MaxWatchers)
		return
	}
	defer done()
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
	_ = r.watch(ctx, k, delta, r.cfg.limits.KeepAlive,
		func(data []byte, snapshot bool) error {
			if snapshot {
				return write(sseEvent, data, sseEnd)
			}
			return write(sseDelta, data, sseEnd)
		},
		func() error { return write(sseKeepAlive) })
}

// takeDelta removes the delta parameter of a watch from q and returns it:
// true, false (the default), 1 or 0.
func takeDelta(q url.Values) (bool, *FieldError) {
	vals, ok := q["delta"]
	if !ok {
		return false, nil
	}
	delete(q, "delta")
	if len(vals) != 1 {
		return false, fieldErr("delta", "delta must be given once")
	}
	switch vals[0] {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fieldErr("delta", "delta must be true or false")
}
