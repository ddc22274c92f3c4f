package registry

import (
	"maps"
	"slices"
	"time"
)

// Instance is one registered instance of a service. Values reached through
// a watchable.State or Snapshot are shared and must not be mutated.
type Instance struct {
	RuntimeInstanceID string            `json:"runtimeInstanceId"`
	ServiceID         string            `json:"serviceId"`
	EnvTag            string            `json:"envTag"`
	Environment       string            `json:"environment"`
	Version           string            `json:"version"`
	Protocol          string            `json:"protocol"`
	Address           string            `json:"address"`
	Port              int               `json:"port"`
	Tags              map[string]string `json:"tags,omitempty"`
	ConnectedAt       time.Time         `json:"connectedAt"`
	// LastSeenAt is the time of the latest registration or heartbeat. It is
	// kept up to date in Registry.Instances, where Load and State show it,
	// and in the nodes of a lookup (Registry.Lookup, GET /v1/discovery,
	// discovery/lookup); but Equal ignores it, so that a heartbeat wakes no
	// subscriber (see Equal). The nodes of Registry.Snapshots, of watches and
	// of subscriptions leave it zero (and it is then omitted from JSON):
	// there it would be stale, since heartbeats do not reach them.
	LastSeenAt time.Time `json:"lastSeenAt,omitzero"`
	Connected  bool      `json:"connected"`
}

// Usable reports whether traffic can be sent to the instance: it is
// connected and has a port.
func (i *Instance) Usable() bool {
	return i.Connected && i.Port != 0
}

// DiscoveryKey identifies a DiscoverySnapshot. As a lookup (see
// Registry.Lookup), an empty EnvTag or Protocol matches every value.
type DiscoveryKey struct {
	ServiceID string
	EnvTag    string
	Protocol  string
}

// DiscoverySnapshot is the set of instances of one service, environment and
// protocol, sorted by envTag, protocol, address, port and runtimeInstanceId.
// Nodes include instances that are not connected: use only those for which
// Usable reports true. Nodes carry LastSeenAt only in the answer to a lookup
// (see Instance.LastSeenAt).
//
// A lookup or watch that omits envTag or protocol merges the snapshots of
// every value of the omitted field into one, whose omitted field is "".
type DiscoverySnapshot struct {
	ServiceID string     `json:"serviceId"`
	EnvTag    string     `json:"envTag"`
	Protocol  string     `json:"protocol"`
	Nodes     []Instance `json:"nodes"`
}

// Equal reports whether i and o are equal field by field (times compared
// with time.Time.Equal), except LastSeenAt, which it ignores.
//
// A watchable map compares values with Equal, and storing a value equal to
// the current one is no change: the map keeps the new value but notifies
// nobody. So a heartbeat, which moves only LastSeenAt, wakes no subscriber
// of Registry.Instances (nor the translator deriving Snapshots), while
// Load and State show the newest LastSeenAt. A heartbeat that reconnects
// an instance changes Connected and ConnectedAt: that one is a change.
func (i *Instance) Equal(o *Instance) bool {
	if i == nil || o == nil {
		return i == o
	}
	return i.RuntimeInstanceID == o.RuntimeInstanceID && i.ServiceID == o.ServiceID &&
		i.EnvTag == o.EnvTag && i.Environment == o.Environment && i.Version == o.Version && i.Protocol == o.Protocol &&
		i.Address == o.Address && i.Port == o.Port && maps.Equal(i.Tags, o.Tags) &&
		i.ConnectedAt.Equal(o.ConnectedAt) && i.Connected == o.Connected
}

// Equal reports whether s and o are equal, nodes in order (compared with
// Instance.Equal).
func (s *DiscoverySnapshot) Equal(o *DiscoverySnapshot) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.ServiceID == o.ServiceID && s.EnvTag == o.EnvTag && s.Protocol == o.Protocol &&
		slices.EqualFunc(s.Nodes, o.Nodes, func(a, b Instance) bool { return a.Equal(&b) })
}
