package registry

import (
	"maps"
	"time"
)

// Instance is one registered instance of a service.
type Instance struct {
	RuntimeInstanceID string            `json:"runtimeInstanceId"`
	ServiceID         string            `json:"serviceId"`
	EnvTag            string            `json:"envTag"`
	Version           string            `json:"version"`
	Protocol          string            `json:"protocol"`
	Address           string            `json:"address"`
	Port              int               `json:"port"`
	Tags              map[string]string `json:"tags,omitempty"`
	ConnectedAt       time.Time         `json:"connectedAt"`
	LastSeenAt        time.Time         `json:"lastSeenAt"`
	Connected         bool              `json:"connected"`
}

// DeepCopy returns a copy of i that shares no memory with it.
func (i *Instance) DeepCopy() *Instance {
	if i == nil {
		return nil
	}
	c := *i
	c.Tags = maps.Clone(i.Tags)
	return &c
}

// Usable reports whether traffic can be sent to the instance: it is
// connected and has a port.
func (i *Instance) Usable() bool {
	return i.Connected && i.Port != 0
}

// DiscoveryKey identifies a DiscoverySnapshot.
type DiscoveryKey struct {
	ServiceID string
	EnvTag    string
	Protocol  string
}

// DiscoverySnapshot is the set of instances of one service, environment and
// protocol.
type DiscoverySnapshot struct {
	ServiceID string     `json:"serviceId"`
	EnvTag    string     `json:"envTag"`
	Protocol  string     `json:"protocol"`
	Nodes     []Instance `json:"nodes"`
}

// DeepCopy returns a copy of s that shares no memory with it.
func (s *DiscoverySnapshot) DeepCopy() *DiscoverySnapshot {
	if s == nil {
		return nil
	}
	c := *s
	c.Nodes = make([]Instance, len(s.Nodes))
	for i := range s.Nodes {
		c.Nodes[i] = *s.Nodes[i].DeepCopy()
	}
	return &c
}
