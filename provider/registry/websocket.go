package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-go/switchyard/httpserver"
)

func (r *Registry) handleMicroservice(w http.ResponseWriter, req *http.Request) {
	r.serveSocket(w, req, true)
}

func (r *Registry) handleDiscoverySocket(w http.ResponseWriter, req *http.Request) {
	r.serveSocket(w, req, false)
}

// serveSocket upgrades the request and serves JSON-RPC on it until the
// peer goes away, the request ends, Run returns or the server shuts down.
// A token in the Authorization header is checked before the upgrade (401
// when wrong); without one, calls must carry it in params, within
// Limits.AuthTimeout.
func (r *Registry) serveSocket(w http.ResponseWriter, req *http.Request, microservice bool) {
	if !r.running(w) {
		return
	}
	s := &session{r: r, microservice: microservice, local: localAddr(req), remote: remoteOf(req), subs: make(map[string]*subscription)}
	if !microservice && !r.hasDisc {
		s.authorized.Store(true) // discovery is open
	}
	if token, present := bearer(req); present {
		ok := false
		if microservice {
			s.cred = r.registrant(token)
			ok = s.cred != nil
		} else {
			ok = r.authorizeDiscovery(token)
		}
		if !ok {
			r.authFailed(httpRefusal(req, tokenProblem(req)))
			writeError(w, http.StatusUnauthorized, "", "missing or invalid bearer token")
			return
		}
		s.authorized.Store(true)
	}
	if r.sockets.Add(1) > int64(r.cfg.limits.MaxSockets) {
		r.sockets.Add(-1)
		r.limitReached(httpRefusal(req, "too many WebSockets"))
		writeError(w, http.StatusServiceUnavailable, "", "the registry has the maximum of %d WebSockets open; try again later", r.cfg.limits.MaxSockets)
		return
	}
	defer r.sockets.Add(-1)
	c, err := websocket.Accept(w, req, nil)
	if err != nil {
		return // Accept has answered
	}
	defer c.CloseNow()
	c.SetReadLimit(r.cfg.limits.MaxMessageBytes)

	ctx, cancel := context.WithCancel(req.Context())
	s.ctx = ctx
	s.send = func(data []byte) error {
		wctx, cancel := context.WithTimeout(ctx, r.cfg.limits.WriteTimeout)
		defer cancel()
		return c.Write(wctx, websocket.MessageText, data)
	}
	var authDeadline <-chan time.Time
	if !s.authorized.Load() {
		t := time.NewTimer(r.cfg.limits.AuthTimeout)
		defer t.Stop()
		authDeadline = t.C
	}
	draining := httpserver.Draining(req.Context()) // nil outside an httpserver.Server
	s.wg.Add(2)
	go func() { // end the socket when it must: registry stopped, server shutting down, no token in time
		defer s.wg.Done()
		for {
			select {
			case <-r.stopped:
				_ = c.Close(websocket.StatusGoingAway, "registry stopped")
			case <-draining:
				_ = c.Close(websocket.StatusGoingAway, "server shutting down")
			case <-authDeadline:
				if s.authorized.Load() {
					authDeadline = nil
					continue
				}
				r.counts.authTimeouts.Add(1)
				r.authFailed(refusal{remote: s.remote, transport: "websocket", path: req.URL.Path, reason: "no token within the authentication timeout"})
				_ = c.Close(websocket.StatusPolicyViolation, "authentication timeout")
			case <-ctx.Done():
			}
			return
		}
	}()
	go func() { // detect dead peers
		defer s.wg.Done()
		t := time.NewTicker(r.cfg.limits.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pctx, pcancel := context.WithTimeout(ctx, r.cfg.limits.WriteTimeout)
				err := c.Ping(pctx)
				pcancel()
				if err != nil {
					_ = c.CloseNow()
					return
				}
			}
		}
	}()

	var closeCode websocket.StatusCode
	var closeReason string
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			break // peer closed, message too big (closed with 1009), or stopped
		}
		if typ != websocket.MessageText {
			r.counts.invalidInput.Add(1)
			closeCode, closeReason = websocket.StatusUnsupportedData, "only text messages carry JSON-RPC"
			break
		}
		code, err := s.handle(msg)
		if err != nil {
			break
		}
		if code != 0 {
			closeCode, closeReason = code, "unauthorized"
			break
		}
	}
	// The session ends before the close handshake, which waits for the
	// peer: nothing else (the authentication deadline) acts on it meanwhile.
	cancel()
	s.end()
	if closeCode != 0 {
		_ = c.Close(closeCode, closeReason)
	}
}

// session is one WebSocket's JSON-RPC state. handle runs on the socket's
// read loop only; subscriptions run in their own goroutines and only send.
type session struct {
	r            *Registry
	ctx          context.Context
	send         func([]byte) error // safe for concurrent use
	microservice bool
	local        net.Addr // where the socket arrived, for the address policy
	remote       string   // the client, for the log
	// authorized is set once a valid token was presented; the goroutine
	// enforcing the authentication deadline reads it.
	authorized atomic.Bool
	cred       *credential // the registration token's, on /ws/microservice
	instanceID string      // set by service/register
	subs       map[string]*subscription
	wg         sync.WaitGroup
	afterSend  []func() // run by handle once the response is sent
}

type subscription struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// end stops the session's goroutines and disconnects its instance.
func (s *session) end() {
	for _, sub := range s.subs {
		sub.cancel()
	}
	s.wg.Wait()
	if s.instanceID != "" {
		s.r.store.disconnect(s.instanceID, s)
	}
}

// registerParams are the params of service/register.
type registerParams struct {
	registrationWire
	Token string `json:"token"`
}

// lookupParams are the params of discovery/lookup and discovery/subscribe.
type lookupParams struct {
	ServiceID string `json:"serviceId"`
	EnvTag    string `json:"envTag"`
	Protocol  string `json:"protocol"`
	Token     string `json:"token"`
}

type unsubscribeParams struct {
	SubscriptionID string `json:"subscriptionId"`
}

// SubscriptionNotification is the params of a discovery/snapshot
// notification: the snapshot, with the id of the subscription it is for.
type SubscriptionNotification struct {
	SubscriptionID string `json:"subscriptionId"`
	*DiscoverySnapshot
}

var (
	errUnauthorized  = &RPCError{Code: CodeUnauthorized, Message: "unauthorized: missing or invalid token"}
	errUnavailable   = &RPCError{Code: CodeUnavailable, Message: "registry is not running"}
	errNotRegistered = &RPCError{Code: CodeNotRegistered, Message: "not registered: call service/register first"}
)

// refused names a refused call for the log.
func (s *session) refused(method, reason string) refusal {
	return refusal{remote: s.remote, transport: "websocket", path: method, reason: reason}
}

// tokenProblem says what is wrong with a token presented in params.
func paramsTokenProblem(token string) string {
	if token == "" {
		return "no token in the Authorization header nor in params"
	}
	return "wrong token"
}

// handle answers one message: it sends the response (none for a
// notification) and returns the close code when the socket must then be
// closed, or the error of sending.
func (s *session) handle(msg []byte) (websocket.StatusCode, error) {
	if isBatch(msg) {
		s.r.counts.invalidInput.Add(1)
		if data := batchResponse(msg); data != nil {
			return 0, s.send(data)
		}
		return 0, nil
	}
	req, id, rerr := parseRequest(msg)
	var result any
	if rerr == nil {
		result, rerr = s.call(req)
	}
	if rerr != nil {
		switch rerr.Code {
		case CodeParseError, CodeInvalidRequest, CodeMethodNotFound, CodeInvalidParams:
			s.r.counts.invalidInput.Add(1)
		}
	}
	defer s.runAfterSend()
	if req != nil && req.ID == nil {
		return closeFor(rerr), nil // a notification gets no answer, even an error
	}
	data, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: result, Error: rerr})
	if err != nil {
		data, _ = json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: CodeInternalError, Message: "internal error"}})
	}
	if err := s.send(data); err != nil {
		return 0, err
	}
	return closeFor(rerr), nil
}

func (s *session) runAfterSend() {
	for _, f := range s.afterSend {
		f()
	}
	s.afterSend = s.afterSend[:0]
}

func closeFor(err *RPCError) websocket.StatusCode {
	if err != nil && err.Code == CodeUnauthorized {
		return websocket.StatusPolicyViolation
	}
	return 0
}

func (s *session) call(req *rpcRequest) (any, *RPCError) {
	switch req.Method {
	case "service/register":
		if !s.microservice {
			break
		}
		return s.register(req.Params)
	case "discovery/lookup", "discovery/subscribe", "discovery/unsubscribe":
		// An instance discovers on the socket it registered on.
		if s.microservice && s.instanceID == "" {
			return nil, errNotRegistered
		}
		switch req.Method {
		case "discovery/lookup":
			k, err := s.lookupKey(req.Params)
			if err != nil {
				return nil, err
			}
			return s.r.Lookup(k), nil
		case "discovery/subscribe":
			return s.subscribe(req.Params)
		default:
			return s.unsubscribe(req.Params)
		}
	}
	return nil, &RPCError{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
}

func (s *session) register(params json.RawMessage) (any, *RPCError) {
	if s.instanceID != "" {
		return nil, &RPCError{Code: CodeAlreadyRegistered, Message: "already registered on this socket"}
	}
	var p registerParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if !s.authorized.Load() {
		if s.cred = s.r.registrant(p.Token); s.cred == nil {
			s.r.authFailed(s.refused("service/register", paramsTokenProblem(p.Token)))
			return nil, errUnauthorized
		}
		s.authorized.Store(true)
	}
	reg, ferr := p.registration()
	if ferr == nil {
		ferr = s.r.cfg.limits.validate(&reg)
	}
	if ferr != nil {
		return nil, invalidParams(ferr)
	}
	if ferr := s.r.permit(s.cred, &reg, s.local); ferr != nil {
		s.r.forbidden(s.refused("service/register", ferr.Error()))
		return nil, &RPCError{Code: CodeForbidden, Message: "forbidden: " + ferr.Error(), Data: ferr}
	}
	id, err := s.r.register(reg, s)
	switch {
	case errors.Is(err, ErrTooManyInstances):
		s.r.limitReached(s.refused("service/register", err.Error()))
		return nil, &RPCError{Code: CodeLimitExceeded, Message: err.Error()}
	case err != nil:
		return nil, errUnavailable
	}
	s.instanceID = id
	return map[string]string{"runtimeInstanceId": id}, nil
}

func (s *session) lookupKey(params json.RawMessage) (DiscoveryKey, *RPCError) {
	var p lookupParams
	if err := decodeParams(params, &p); err != nil {
		return DiscoveryKey{}, err
	}
	return s.checkLookup(p)
}

// checkLookup authorizes and validates the params of a lookup or
// subscription.
func (s *session) checkLookup(p lookupParams) (DiscoveryKey, *RPCError) {
	if !s.authorized.Load() {
		if !s.r.authorizeDiscovery(p.Token) {
			s.r.authFailed(s.refused("discovery", paramsTokenProblem(p.Token)))
			return DiscoveryKey{}, errUnauthorized
		}
		s.authorized.Store(true)
	}
	k := DiscoveryKey{ServiceID: p.ServiceID, EnvTag: p.EnvTag, Protocol: p.Protocol}
	if ferr := s.r.cfg.limits.validateLookup(k); ferr != nil {
		return DiscoveryKey{}, invalidParams(ferr)
	}
	return k, nil
}

// subscribeParams are the params of discovery/subscribe: those of a
// lookup, and whether to get deltas after the first snapshot.
type subscribeParams struct {
	lookupParams
	Delta bool `json:"delta"`
}

func (s *session) subscribe(params json.RawMessage) (any, *RPCError) {
	var p subscribeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	k, err := s.checkLookup(p.lookupParams)
	if err != nil {
		return nil, err
	}
	if len(s.subs) >= s.r.cfg.limits.MaxSubscriptionsPerConn {
		s.r.limitReached(s.refused("discovery/subscribe", "too many subscriptions on one socket"))
		return nil, &RPCError{Code: CodeLimitExceeded, Message: fmt.Sprintf("too many subscriptions on this socket (limit %d)", s.r.cfg.limits.MaxSubscriptionsPerConn)}
	}
	unwatch, ok := s.r.addWatcher()
	if !ok {
		s.r.limitReached(s.refused("discovery/subscribe", "too many watchers"))
		return nil, &RPCError{Code: CodeLimitExceeded, Message: fmt.Sprintf("the registry has the maximum of %d watchers; try again later", s.r.cfg.limits.MaxWatchers)}
	}
	id := newID()
	ctx, cancel := context.WithCancel(s.ctx)
	sub := &subscription{cancel: cancel, done: make(chan struct{})}
	s.subs[id] = sub
	// The first notification must not overtake the result: the watch
	// starts once handle has sent it.
	started := make(chan struct{})
	s.afterSend = append(s.afterSend, func() { close(started) })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(sub.done)
		defer unwatch()
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		// The JSON of a snapshot or delta is shared by every watcher of k:
		// splice it into the notification rather than encoding it again.
		snapshotPrefix := []byte(`{"jsonrpc":"2.0","method":"discovery/snapshot","params":{"subscriptionId":"` + id + `",`)
		deltaPrefix := []byte(`{"jsonrpc":"2.0","method":"discovery/delta","params":{"subscriptionId":"` + id + `",`)
		_ = s.r.watch(ctx, k, p.Delta, 0, func(data []byte, snapshot bool) error {
			prefix := deltaPrefix
			if snapshot {
				prefix = snapshotPrefix
			}
			msg := make([]byte, 0, len(prefix)+len(data)+1)
			msg = append(append(append(msg, prefix...), data[1:]...), '}')
			return s.send(msg)
		}, nil)
	}()
	return map[string]string{"subscriptionId": id}, nil
}

func (s *session) unsubscribe(params json.RawMessage) (any, *RPCError) {
	var p unsubscribeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	sub, ok := s.subs[p.SubscriptionID]
	if !ok {
		return nil, invalidParams(fieldErr("subscriptionId", "unknown subscriptionId"))
	}
	delete(s.subs, p.SubscriptionID)
	sub.cancel()
	<-sub.done // no notification for it follows the result
	return true, nil
}
