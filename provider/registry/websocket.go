package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

func (r *Registry) handleMicroservice(w http.ResponseWriter, req *http.Request) {
	r.serveSocket(w, req, true)
}

func (r *Registry) handleDiscoverySocket(w http.ResponseWriter, req *http.Request) {
	r.serveSocket(w, req, false)
}

// serveSocket upgrades the request and serves JSON-RPC on it until the
// peer goes away, the request ends or Run returns. A token in the
// Authorization header is checked before the upgrade (401 when wrong);
// without one, calls must carry it in params.
func (r *Registry) serveSocket(w http.ResponseWriter, req *http.Request, microservice bool) {
	if !r.isRunning() {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "", "registry is not running")
		return
	}
	authorized := !microservice && !r.hasDisc
	if token, present := bearer(req); present {
		ok := r.authorizeRegistration(token)
		if !microservice {
			ok = r.authorizeDiscovery(token)
		}
		if !ok {
			writeError(w, http.StatusUnauthorized, "", "missing or invalid bearer token")
			return
		}
		authorized = true
	}
	c, err := websocket.Accept(w, req, nil)
	if err != nil {
		return // Accept has answered
	}
	defer c.CloseNow()
	c.SetReadLimit(r.cfg.limits.MaxMessageBytes)

	ctx, cancel := context.WithCancel(req.Context())
	s := &session{
		r: r, ctx: ctx, microservice: microservice, authorized: authorized,
		subs: make(map[string]*subscription),
		send: func(data []byte) error {
			wctx, cancel := context.WithTimeout(ctx, r.cfg.limits.WriteTimeout)
			defer cancel()
			return c.Write(wctx, websocket.MessageText, data)
		},
	}
	s.wg.Add(2)
	go func() { // end the socket when the registry stops
		defer s.wg.Done()
		select {
		case <-r.stopped:
			_ = c.Close(websocket.StatusGoingAway, "registry stopped")
		case <-ctx.Done():
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

	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			break // peer closed, message too big (closed with 1009), or stopped
		}
		if typ != websocket.MessageText {
			_ = c.Close(websocket.StatusUnsupportedData, "only text messages carry JSON-RPC")
			break
		}
		closeCode, err := s.handle(msg)
		if err != nil {
			break
		}
		if closeCode != 0 {
			_ = c.Close(closeCode, "unauthorized")
			break
		}
	}
	cancel()
	s.end()
}

// session is one WebSocket's JSON-RPC state. handle runs on the socket's
// read loop only; subscriptions run in their own goroutines and only send.
type session struct {
	r            *Registry
	ctx          context.Context
	send         func([]byte) error // safe for concurrent use
	microservice bool
	authorized   bool
	instanceID   string // set by service/register
	subs         map[string]*subscription
	wg           sync.WaitGroup
	afterSend    []func() // run by handle once the response is sent
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

// handle answers one message: it sends the response (none for a
// notification) and returns the close code when the socket must then be
// closed, or the error of sending.
func (s *session) handle(msg []byte) (websocket.StatusCode, error) {
	req, id, rerr := parseRequest(msg)
	var result any
	if rerr == nil {
		result, rerr = s.call(req)
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
	if !s.authorized && !s.r.authorizeRegistration(p.Token) {
		return nil, errUnauthorized
	}
	s.authorized = true
	reg, ferr := p.registration()
	if ferr == nil {
		ferr = s.r.cfg.limits.validate(&reg)
	}
	if ferr != nil {
		return nil, invalidParams(ferr)
	}
	id, err := s.r.store.register(reg, s)
	switch {
	case errors.Is(err, ErrTooManyInstances):
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
	if !s.authorized {
		if !s.r.authorizeDiscovery(p.Token) {
			return DiscoveryKey{}, errUnauthorized
		}
		s.authorized = true
	}
	k := DiscoveryKey{ServiceID: p.ServiceID, EnvTag: p.EnvTag, Protocol: p.Protocol}
	if ferr := s.r.cfg.limits.validateLookup(k); ferr != nil {
		return DiscoveryKey{}, invalidParams(ferr)
	}
	return k, nil
}

func (s *session) subscribe(params json.RawMessage) (any, *RPCError) {
	k, err := s.lookupKey(params)
	if err != nil {
		return nil, err
	}
	if len(s.subs) >= s.r.cfg.limits.MaxSubscriptionsPerConn {
		return nil, &RPCError{Code: CodeLimitExceeded, Message: "too many subscriptions on this socket"}
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
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		// The snapshot's JSON is shared by every watcher of k: splice it
		// into the notification rather than encoding it again.
		prefix := []byte(`{"jsonrpc":"2.0","method":"discovery/snapshot","params":{"subscriptionId":"` + id + `",`)
		_ = s.r.watch(ctx, k, 0, func(snap []byte) error {
			msg := make([]byte, 0, len(prefix)+len(snap)+1)
			msg = append(append(append(msg, prefix...), snap[1:]...), '}')
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
