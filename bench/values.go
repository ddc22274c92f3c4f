package bench

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"
)

// valueKind describes one type of value the scenarios store, so that every
// scenario can run with plain integers and with realistic objects alike.
type valueKind[V any] struct {
	name string
	// make returns the value for the key with index key at revision rev.
	// Different revs give values that are not DeepEqual.
	make func(key, rev int) V
	// rev recovers the rev a value was made with, so a subscriber can tell
	// whether it has seen a particular Store.
	rev func(V) int
}

// ringSize is how many distinct values a benchmark cycles through. It is a
// prime, so that storing ring[i%ringSize] at keys[i%N] never stores the
// value a key already holds for any N used here: every Store is a change for
// both libraries (switchyard drops Stores of equal values, the peer does not).
const ringSize = 1021

// ring returns ringSize values with revs 1..ringSize; fill uses rev 0.
func (vk valueKind[V]) ring() []V {
	out := make([]V, ringSize)
	for i := range out {
		out[i] = vk.make(i, i+1)
	}
	return out
}

// ints are the cheapest values: copied by assignment in both libraries.
var ints = valueKind[int]{
	name: "int",
	make: func(_, rev int) int { return rev },
	rev:  func(v int) int { return v },
}

// services are Kubernetes-style objects, stored as pointers as Kubernetes
// clients do, copied by their DeepCopy method and compared with
// reflect.DeepEqual by both libraries.
var services = valueKind[*Service]{
	name: "k8s",
	make: newService,
	rev:  func(s *Service) int { return int(s.ResourceVersion) },
}

// protos are protobuf messages. The peer copies them with proto.Clone;
// switchyard copies and compares them field by field as proto.Clone and
// proto.Equal would (see watchable.DeepCopy), and so does the floor, which
// copies with watchable.DeepCopy.
var protos = valueKind[*structpb.Struct]{
	name: "proto",
	make: newProto,
	rev:  func(s *structpb.Struct) int { return int(s.GetFields()["rev"].GetNumberValue()) },
}

// Service is shaped like a Kubernetes Service: object metadata with labels
// and annotations, a spec with slices and a map, and a status. Its DeepCopy
// is written the way deepcopy-gen writes them.
type Service struct {
	Name            string
	Namespace       string
	UID             string
	ResourceVersion int64
	Labels          map[string]string
	Annotations     map[string]string
	Spec            ServiceSpec
	Status          ServiceStatus
}

// ServiceSpec is the desired state of a Service.
type ServiceSpec struct {
	Type      string
	ClusterIP string
	Ports     []ServicePort
	Selector  map[string]string
}

// ServicePort is one port a Service exposes.
type ServicePort struct {
	Name       string
	Protocol   string
	Port       int32
	TargetPort int32
}

// ServiceStatus is the observed state of a Service.
type ServiceStatus struct {
	Conditions []Condition
}

// Condition is one observation about a Service.
type Condition struct {
	Type               string
	Status             string
	Reason             string
	LastTransitionUnix int64
}

// DeepCopy returns a copy of s that shares no memory with it.
func (s *Service) DeepCopy() *Service {
	if s == nil {
		return nil
	}
	out := *s
	out.Labels = copyStrings(s.Labels)
	out.Annotations = copyStrings(s.Annotations)
	out.Spec.Selector = copyStrings(s.Spec.Selector)
	if s.Spec.Ports != nil {
		out.Spec.Ports = make([]ServicePort, len(s.Spec.Ports))
		copy(out.Spec.Ports, s.Spec.Ports)
	}
	if s.Status.Conditions != nil {
		out.Status.Conditions = make([]Condition, len(s.Status.Conditions))
		copy(out.Status.Conditions, s.Status.Conditions)
	}
	return &out
}

func copyStrings(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func newService(key, rev int) *Service {
	name := fmt.Sprintf("svc-%06d", key)
	app := fmt.Sprintf("app-%d", key%50)
	return &Service{
		Name:            name,
		Namespace:       fmt.Sprintf("ns-%d", key%20),
		UID:             fmt.Sprintf("4f9c2a1e-0000-4000-8000-%012d", key),
		ResourceVersion: int64(rev),
		Labels:          map[string]string{"app": app, "tier": "backend", "version": "v1"},
		Annotations:     map[string]string{"switchyard.dev/owner": "bench"},
		Spec: ServiceSpec{
			Type:      "ClusterIP",
			ClusterIP: fmt.Sprintf("10.96.%d.%d", key/256%256, key%256),
			Ports: []ServicePort{
				{Name: "http", Protocol: "TCP", Port: 80, TargetPort: 8080},
				{Name: "grpc", Protocol: "TCP", Port: 9090, TargetPort: 9090},
			},
			Selector: map[string]string{"app": app},
		},
		Status: ServiceStatus{Conditions: []Condition{
			{Type: "Ready", Status: "True", Reason: "EndpointsReady", LastTransitionUnix: 1700000000 + int64(rev)},
		}},
	}
}

func newProto(key, rev int) *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{
		"name":      fmt.Sprintf("route-%06d", key),
		"namespace": fmt.Sprintf("ns-%d", key%20),
		"rev":       rev,
		"weight":    100,
		"hosts":     []any{"example.com", "www.example.com"},
		"labels":    map[string]any{"app": fmt.Sprintf("app-%d", key%50), "tier": "edge"},
	})
	if err != nil {
		panic(err) // the input above is always valid
	}
	return s
}
