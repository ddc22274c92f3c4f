package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// incoming is one message from the controller, decoded: the response to a
// call (id set) or a discovery/snapshot notification (note set).
type incoming struct {
	id     int64
	result json.RawMessage
	err    *registry.RPCError
	note   *registry.SubscriptionNotification
}

// wireMessage is what a JSON-RPC 2.0 message may carry.
type wireMessage struct {
	JSONRPC string             `json:"jsonrpc"`
	ID      json.RawMessage    `json:"id"`
	Method  string             `json:"method"`
	Params  json.RawMessage    `json:"params"`
	Result  json.RawMessage    `json:"result"`
	Error   *registry.RPCError `json:"error"`
}

// errIgnored marks a message the client does not act on (a notification of
// another method, a response to no call of ours): it is logged at debug.
var errIgnored = errors.New("message ignored")

// decodeMessage decodes one message of the controller. It accepts only
// what the protocol sends: a response with a numeric id (ours are numbers)
// and a result or an error, or a discovery/snapshot notification whose
// snapshot is well formed (see checkSnapshot). Anything else is an error;
// unknown members are tolerated, for controllers newer than the client.
func decodeMessage(data []byte) (incoming, error) {
	var m wireMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return incoming{}, fmt.Errorf("decode message from the controller: %w", err)
	}
	if m.JSONRPC != "2.0" {
		return incoming{}, fmt.Errorf("decode message from the controller: jsonrpc is %q, want \"2.0\"", m.JSONRPC)
	}
	if len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null")) {
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return incoming{}, fmt.Errorf("decode response from the controller: id %.40q is not one of ours: %w", m.ID, errIgnored)
		}
		if m.Error == nil && len(m.Result) == 0 {
			return incoming{}, fmt.Errorf("decode response %d from the controller: neither result nor error", id)
		}
		return incoming{id: id, result: m.Result, err: m.Error}, nil
	}
	if m.Error != nil { // an error the controller could not tie to a call
		return incoming{id: -1, err: m.Error}, nil
	}
	if m.Method != "discovery/snapshot" {
		return incoming{}, fmt.Errorf("decode notification %.40q from the controller: %w", m.Method, errIgnored)
	}
	note := registry.SubscriptionNotification{DiscoverySnapshot: &registry.DiscoverySnapshot{}}
	if err := json.Unmarshal(m.Params, &note); err != nil {
		return incoming{}, fmt.Errorf("decode discovery/snapshot from the controller: %w", err)
	}
	if note.SubscriptionID == "" {
		return incoming{}, errors.New("decode discovery/snapshot from the controller: no subscriptionId")
	}
	if err := checkSnapshot(note.DiscoverySnapshot); err != nil {
		return incoming{}, fmt.Errorf("decode discovery/snapshot from the controller: %w", err)
	}
	return incoming{note: &note}, nil
}

// checkSnapshot refuses a snapshot the client could not mirror faithfully:
// one without serviceId, or with a node of another service, or without a
// runtimeInstanceId.
func checkSnapshot(s *registry.DiscoverySnapshot) error {
	if s.ServiceID == "" {
		return errors.New("snapshot without serviceId")
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.ServiceID != s.ServiceID {
			return fmt.Errorf("snapshot of %q lists a node of service %.64q", s.ServiceID, n.ServiceID)
		}
		if n.RuntimeInstanceID == "" {
			return fmt.Errorf("snapshot of %q lists a node without runtimeInstanceId", s.ServiceID)
		}
	}
	return nil
}
