package registry

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// JSON-RPC 2.0 error codes. The first four are the standard ones; the
// others are this registry's application codes, in the range the
// specification leaves to servers.
const (
	CodeParseError     = -32700 // the message is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a JSON-RPC 2.0 request (batches included)
	CodeMethodNotFound = -32601 // no such method on this endpoint
	CodeInvalidParams  = -32602 // bad params; data is {"error": ..., "field": ...}
	CodeInternalError  = -32603

	// CodeUnauthorized: a missing or wrong token. The socket is closed
	// with status 1008 (policy violation) after this error.
	CodeUnauthorized = -32001
	// CodeNotRegistered: a call on /ws/microservice before service/register.
	CodeNotRegistered = -32002
	// CodeAlreadyRegistered: a second service/register on one socket.
	CodeAlreadyRegistered = -32003
	// CodeLimitExceeded: too many instances for the service, or too many
	// subscriptions on the socket.
	CodeLimitExceeded = -32004
	// CodeUnavailable: the registry is not running.
	CodeUnavailable = -32005
	// CodeForbidden: the token may not register instances of the service
	// (WithServiceToken), or the address policy refuses the address
	// (WithAddressPolicy); data is {"error", "field"}. The socket stays
	// open.
	CodeForbidden = -32006
)

// rpcRequest is a JSON-RPC 2.0 request or notification.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	// ID is nil for a notification (no "id" member).
	ID json.RawMessage `json:"id,omitempty"`
}

// RPCError is the error member of a JSON-RPC response.
type RPCError struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Data    *FieldError `json:"data,omitempty"`
}

// Error returns the error's message.
func (e *RPCError) Error() string { return e.Message }

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

var nullID = json.RawMessage("null")

// parseRequest decodes one message that is not a batch. On failure it
// returns the error to send and the id to send it with: the request's
// whenever it can be read, null otherwise.
func parseRequest(msg []byte) (*rpcRequest, json.RawMessage, *RPCError) {
	if !json.Valid(msg) {
		return nil, nullID, &RPCError{Code: CodeParseError, Message: "parse error: message is not valid JSON"}
	}
	var req rpcRequest
	if ferr := decodeStrict(msg, &req); ferr != nil {
		return nil, readID(msg), &RPCError{Code: CodeInvalidRequest, Message: "invalid request: " + ferr.Error()}
	}
	id := req.ID
	if id != nil && !validID(id) {
		return nil, nullID, &RPCError{Code: CodeInvalidRequest, Message: "invalid request: id must be a string, a number or null"}
	}
	if id == nil {
		id = nullID
	}
	if req.JSONRPC != "2.0" {
		return nil, id, &RPCError{Code: CodeInvalidRequest, Message: `invalid request: jsonrpc must be "2.0"`}
	}
	if req.Method == "" {
		return nil, id, &RPCError{Code: CodeInvalidRequest, Message: "invalid request: method is required"}
	}
	// encoding/json would turn invalid UTF-8 into U+FFFD without a word:
	// refuse it, whichever member holds it.
	if !utf8.Valid(msg) {
		return &req, id, invalidParams(fieldErr("", "message is not valid UTF-8"))
	}
	return &req, id, nil
}

// readID returns the id of a message that is JSON but not a valid request
// (an unknown member, a member of the wrong type), when it has a valid one,
// and null otherwise.
func readID(msg []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &probe) != nil || probe.ID == nil || !validID(probe.ID) {
		return nullID
	}
	return probe.ID
}

// isBatch reports whether msg is a JSON array: a batch.
func isBatch(msg []byte) bool {
	trimmed := bytes.TrimLeft(msg, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

var errBatch = &RPCError{Code: CodeInvalidRequest, Message: "invalid request: batches are not supported; send one request per message"}

// batchResponse answers a batch, which this server does not serve: with
// one error per request of the batch, each with the request's id when it
// can be read (as the specification answers a batch of invalid requests),
// or one error with id null for an empty or unreadable batch. Requests
// without an id are notifications: they get no answer, and a batch of
// notifications only gets none at all (nil).
func batchResponse(msg []byte) []byte {
	var elems []json.RawMessage
	if json.Unmarshal(msg, &elems) != nil || len(elems) == 0 {
		data, _ := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: nullID, Error: errBatch})
		return data
	}
	var out []rpcResponse
	for _, e := range elems {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(e, &probe) == nil && probe.ID == nil {
			continue // a notification
		}
		out = append(out, rpcResponse{JSONRPC: "2.0", ID: readID(e), Error: errBatch})
	}
	if len(out) == 0 {
		return nil
	}
	data, _ := json.Marshal(out)
	return data
}

func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// decodeParams decodes params strictly into v; absent params decode as {}.
func decodeParams(params json.RawMessage, v any) *RPCError {
	if len(params) == 0 || bytes.Equal(params, nullID) {
		params = json.RawMessage("{}")
	}
	if ferr := decodeStrict(params, v); ferr != nil {
		return invalidParams(ferr)
	}
	return nil
}

func invalidParams(ferr *FieldError) *RPCError {
	return &RPCError{Code: CodeInvalidParams, Message: "invalid params: " + ferr.Error(), Data: ferr}
}
