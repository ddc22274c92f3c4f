package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// session is one WebSocket connection to the controller: it sends calls
// and matches their responses, and hands discovery/snapshot notifications
// to the client. A session ends for good when its socket does; the client
// then makes a new one.
type session struct {
	conn   *websocket.Conn
	notify func(*registry.SubscriptionNotification) // runs on the read loop

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*call
	subs    map[string]string // subscriptionId -> serviceId
	err     error             // why the session ended, once done is closed

	done chan struct{} // closed when the read loop ends
}

// call is one call waiting for its response.
type call struct {
	method string
	result chan callResult // buffered
	// onResult, if set, runs on the read loop with a successful result
	// before the next message is read: a subscription is known before its
	// first notification is handled.
	onResult func(json.RawMessage) error
}

type callResult struct {
	result json.RawMessage
	err    error
}

// dialSession opens a socket to url with header and starts its read loop,
// which runs until the socket ends (see close).
func dialSession(dialCtx context.Context, url string, client *http.Client, header http.Header, readLimit int64,
	notify func(*registry.SubscriptionNotification), debug func(msg string, args ...any)) (*session, error) {
	conn, resp, err := websocket.Dial(dialCtx, url, &websocket.DialOptions{HTTPClient: client, HTTPHeader: header})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("connect: the controller answered %s", resp.Status)
		}
		return nil, fmt.Errorf("connect: %w", err)
	}
	conn.SetReadLimit(readLimit)
	s := &session{conn: conn, notify: notify, pending: make(map[int64]*call), subs: make(map[string]string), done: make(chan struct{})}
	go s.read(debug)
	return s, nil
}

// read dispatches messages until the socket ends.
func (s *session) read(debug func(msg string, args ...any)) {
	var err error
	for {
		var data []byte
		var typ websocket.MessageType
		typ, data, err = s.conn.Read(context.Background()) // ends when the socket does
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			err = errors.New("the controller sent a binary message")
			_ = s.conn.Close(websocket.StatusUnsupportedData, "JSON-RPC is text")
			break
		}
		in, derr := decodeMessage(data)
		if derr != nil {
			if errors.Is(derr, errIgnored) {
				debug("ignored a message from the controller", "err", derr)
				continue
			}
			// A controller that says what the client cannot follow
			// cannot be mirrored faithfully: start over.
			err = derr
			_ = s.conn.Close(websocket.StatusInvalidFramePayloadData, "unexpected message")
			break
		}
		switch {
		case in.note != nil:
			s.mu.Lock()
			service, ok := s.subs[in.note.SubscriptionID]
			s.mu.Unlock()
			if ok && in.note.ServiceID == service {
				s.notify(in.note)
			} else {
				debug("ignored a snapshot for no subscription of ours", "subscription", in.note.SubscriptionID, "service", in.note.ServiceID)
			}
		case in.id < 0:
			debug("the controller reported an error outside any call", "err", in.err.Message)
		default:
			s.respond(in)
		}
	}
	s.mu.Lock()
	s.err = err
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, c := range pending {
		c.result <- callResult{err: fmt.Errorf("%s: connection lost: %w", c.method, err)}
	}
	_ = s.conn.CloseNow()
	close(s.done)
}

// respond hands a response to its call.
func (s *session) respond(in incoming) {
	s.mu.Lock()
	c, ok := s.pending[in.id]
	delete(s.pending, in.id)
	s.mu.Unlock()
	if !ok {
		return // the caller gave up (its context ended)
	}
	switch {
	case in.err != nil:
		c.result <- callResult{err: &CallError{Method: c.method, Err: in.err}}
	case c.onResult != nil:
		c.result <- callResult{result: in.result, err: c.onResult(in.result)}
	default:
		c.result <- callResult{result: in.result}
	}
}

// call sends method with params and waits for the response, the end of
// the session, or the end of ctx. A non-nil into receives the result.
func (s *session) call(ctx context.Context, method string, params any, into any, onResult func(json.RawMessage) error) error {
	c := &call{method: method, result: make(chan callResult, 1), onResult: onResult}
	s.mu.Lock()
	if s.pending == nil {
		err := s.err
		s.mu.Unlock()
		return fmt.Errorf("%s: connection lost: %w", method, err)
	}
	s.nextID++
	id := s.nextID
	s.pending[id] = c
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		if s.pending != nil {
			delete(s.pending, id)
		}
		s.mu.Unlock()
	}

	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		forget()
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	if err := s.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		forget()
		return fmt.Errorf("%s: send: %w", method, err)
	}
	select {
	case r := <-c.result:
		if r.err != nil {
			return r.err
		}
		if into != nil {
			if err := json.Unmarshal(r.result, into); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// subscribe subscribes to serviceID's snapshots; notifications for it
// reach notify from then on.
func (s *session) subscribe(ctx context.Context, serviceID string) (string, error) {
	var res struct {
		SubscriptionID string `json:"subscriptionId"`
	}
	err := s.call(ctx, "discovery/subscribe", map[string]string{"serviceId": serviceID}, nil, func(raw json.RawMessage) error {
		if err := json.Unmarshal(raw, &res); err != nil || res.SubscriptionID == "" {
			return fmt.Errorf("discovery/subscribe %s: result %.80s has no subscriptionId", serviceID, raw)
		}
		s.mu.Lock()
		s.subs[res.SubscriptionID] = serviceID
		s.mu.Unlock()
		return nil
	})
	return res.SubscriptionID, err
}

// unsubscribe ends a subscription; no notification for it follows.
func (s *session) unsubscribe(ctx context.Context, subscriptionID string) error {
	s.mu.Lock()
	delete(s.subs, subscriptionID) // from now on its notifications are dropped
	s.mu.Unlock()
	return s.call(ctx, "discovery/unsubscribe", map[string]string{"subscriptionId": subscriptionID}, nil, nil)
}

// close ends the session with a close frame (the handshake is bounded by
// the WebSocket library, to 5 s) and waits for its read loop.
func (s *session) close(code websocket.StatusCode, reason string) {
	_ = s.conn.Close(code, reason)
	<-s.done
}

// abort ends the session at once, without a close handshake.
func (s *session) abort() {
	_ = s.conn.CloseNow()
	<-s.done
}

// CallError is a JSON-RPC error the controller answered a call with.
// Branch on Err.Code (registry.CodeUnauthorized, CodeInvalidParams, ...).
type CallError struct {
	Method string
	Err    *registry.RPCError
}

// Error names the method and gives the controller's message.
func (e *CallError) Error() string {
	msg := fmt.Sprintf("%s: the controller refused (code %d): %s", e.Method, e.Err.Code, e.Err.Message)
	return msg
}

// Unwrap returns the RPCError.
func (e *CallError) Unwrap() error { return e.Err }
