package watchable_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// k8sService has the shape of bench/values.go's Service (a Kubernetes
// Service: metadata with labels and annotations, a spec with slices and a
// map, a status), without a DeepCopy method: DeepCopy copies it by plan.
type k8sService struct {
	Name            string
	Namespace       string
	UID             string
	ResourceVersion int64
	Labels          map[string]string
	Annotations     map[string]string
	Spec            k8sServiceSpec
	Status          k8sServiceStatus
}

type k8sServiceSpec struct {
	Type      string
	ClusterIP string
	Ports     []k8sServicePort
	Selector  map[string]string
}

type k8sServicePort struct {
	Name       string
	Protocol   string
	Port       int32
	TargetPort int32
}

type k8sServiceStatus struct {
	Conditions []k8sCondition
}

type k8sCondition struct {
	Type               string
	Status             string
	Reason             string
	LastTransitionUnix int64
}

// handService is the same shape with a DeepCopy written by hand, the way
// deepcopy-gen writes them (and as bench/values.go's Service has it).
type handService k8sService

func (s *handService) DeepCopy() *handService {
	if s == nil {
		return nil
	}
	out := *s
	out.Labels = copyLabels(s.Labels)
	out.Annotations = copyLabels(s.Annotations)
	out.Spec.Selector = copyLabels(s.Spec.Selector)
	if s.Spec.Ports != nil {
		out.Spec.Ports = make([]k8sServicePort, len(s.Spec.Ports))
		copy(out.Spec.Ports, s.Spec.Ports)
	}
	if s.Status.Conditions != nil {
		out.Status.Conditions = make([]k8sCondition, len(s.Status.Conditions))
		copy(out.Status.Conditions, s.Status.Conditions)
	}
	return &out
}

func copyLabels(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// newK8sService returns the value bench/values.go's newService makes.
func newK8sService(key, rev int) *k8sService {
	app := fmt.Sprintf("app-%d", key%50)
	return &k8sService{
		Name:            fmt.Sprintf("svc-%06d", key),
		Namespace:       fmt.Sprintf("ns-%d", key%20),
		UID:             fmt.Sprintf("4f9c2a1e-0000-4000-8000-%012d", key),
		ResourceVersion: int64(rev),
		Labels:          map[string]string{"app": app, "tier": "backend", "version": "v1"},
		Annotations:     map[string]string{"switchyard.dev/owner": "bench"},
		Spec: k8sServiceSpec{
			Type:      "ClusterIP",
			ClusterIP: fmt.Sprintf("10.96.%d.%d", key/256%256, key%256),
			Ports: []k8sServicePort{
				{Name: "http", Protocol: "TCP", Port: 80, TargetPort: 8080},
				{Name: "grpc", Protocol: "TCP", Port: 9090, TargetPort: 9090},
			},
			Selector: map[string]string{"app": app},
		},
		Status: k8sServiceStatus{Conditions: []k8sCondition{
			{Type: "Ready", Status: "True", Reason: "EndpointsReady", LastTransitionUnix: 1700000000 + int64(rev)},
		}},
	}
}

var (
	sinkService *k8sService
	sinkHand    *handService
	sinkInt     int
	sinkString  string
	sinkBool    bool
	sinkAny     any
	sinkValue   k8sService
)

// BenchmarkDeepCopyService compares DeepCopy of a Kubernetes-style value by
// plan with the hand-written DeepCopy of the same shape. The plan's target
// is at most 1.5 times the hand-written cost.
func BenchmarkDeepCopyService(b *testing.B) {
	svc := newK8sService(7, 1)
	hand := (*handService)(newK8sService(7, 1))
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkService = watchable.DeepCopy(svc)
		}
	})
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkHand = hand.DeepCopy()
		}
	})
	// For reference: the same value held in an any (copied by dynamic
	// type), and by value (the copy is made on the heap, then fixed).
	b.Run("plan, in an any", func(b *testing.B) {
		b.ReportAllocs()
		var v any = svc
		for b.Loop() {
			sinkAny = watchable.DeepCopy(v)
		}
	})
	b.Run("plan, by value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkValue = watchable.DeepCopy(*svc)
		}
	})
	b.Run("hand-written via DeepCopy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkHand = watchable.DeepCopy(hand)
		}
	})
}

// BenchmarkDeepCopyScalar measures the values that need no copying, which
// must stay allocation-free and cost a few nanoseconds.
func BenchmarkDeepCopyScalar(b *testing.B) {
	b.Run("int", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			sinkInt = watchable.DeepCopy(i)
		}
	})
	b.Run("string", func(b *testing.B) {
		b.ReportAllocs()
		s := "svc-000007"
		for b.Loop() {
			sinkString = watchable.DeepCopy(s)
		}
	})
}

// BenchmarkDeepEqualService compares two equal Kubernetes-style values that
// share no memory (every part must be compared) with DeepEqual's plan and
// with reflect.DeepEqual, which DeepEqual used for such values before.
func BenchmarkDeepEqualService(b *testing.B) {
	x, y := newK8sService(7, 1), newK8sService(7, 1)
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkBool = watchable.DeepEqual(x, y)
		}
	})
	b.Run("reflect.DeepEqual", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkBool = reflect.DeepEqual(x, y)
		}
	})
}

func BenchmarkDeepEqualScalar(b *testing.B) {
	b.Run("int", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			sinkBool = watchable.DeepEqual(i, i+1)
		}
	})
}
