package informer_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The benchmarks start their own API server; with -benchtime=1x (as CI
// runs every benchmark) each does one round. For the figures in
// docs/benchmarks.md:
//
//	cd kube && go test -run '^$' -bench . -benchtime 3x ./informer

// seen records, per config map name, when a consumer first saw it.
type seen struct {
	mu   sync.Mutex
	at   map[string]time.Time
	news chan string
}

func newSeen() *seen { return &seen{at: map[string]time.Time{}, news: make(chan string, 1024)} }

func (s *seen) saw(name string) {
	now := time.Now()
	s.mu.Lock()
	_, old := s.at[name]
	if !old {
		s.at[name] = now
	}
	s.mu.Unlock()
	if !old {
		s.news <- name
	}
}

func (s *seen) wait(b *testing.B, name string) time.Time {
	for {
		select {
		case n := <-s.news:
			if n == name {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.at[name]
			}
		case <-time.After(testrun.Timeout):
			b.Fatalf("%s not seen after %v", name, testrun.Timeout)
		}
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

// BenchmarkCreateToMap creates config maps one at a time and measures, for
// each, the time from sending the create to the object's arrival: in the
// Informer's map (seen by a subscriber), and in the AddFunc of a plain
// client-go shared informer on the same server, watching at the same time.
func BenchmarkCreateToMap(b *testing.B) {
	c := kubetest.Start(b)
	cs := c.Clientset(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ours, raw := newSeen(), newSeen()
	inf := informer.New[*corev1.ConfigMap](cs.CoreV1().ConfigMaps("bench"), informer.WithLogger(testrun.Quiet))
	ran := make(chan error, 1)
	go func() { ran <- inf.Run(ctx) }()
	<-inf.Ready()
	sub := inf.Output().Subscribe(ctx)
	go func() {
		for s := range sub {
			for _, u := range s.Updates {
				if !u.Delete {
					ours.saw(u.Key.Name)
				}
			}
		}
	}()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("bench"))
	shared := factory.Core().V1().ConfigMaps().Informer()
	shared.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		raw.saw(obj.(*corev1.ConfigMap).Name)
	}})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
		<-ran
	}()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}

	const perRound = 200
	var oursLat, rawLat []time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		for range perRound {
			name := "cm-" + strconv.Itoa(n)
			n++
			start := time.Now()
			if _, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, configMap("bench", name, map[string]string{"k": "v"}), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			oursLat = append(oursLat, ours.wait(b, name).Sub(start))
			rawLat = append(rawLat, raw.wait(b, name).Sub(start))
		}
	}
	b.StopTimer()
	for _, p := range []struct {
		name string
		p    float64
	}{{"p50", 0.5}, {"p99", 0.99}} {
		o, r := percentile(oursLat, p.p), percentile(rawLat, p.p)
		b.ReportMetric(float64(o.Microseconds()), p.name+"-map-µs")
		b.ReportMetric(float64(r.Microseconds()), p.name+"-handler-µs")
		b.ReportMetric(float64(o)/float64(r), p.name+"-ratio")
	}
}

// BenchmarkMemoryPerObject lists 2,000 config maps (five data keys each,
// and the managedFields the API server records) and measures the heap they
// take: in a plain client-go informer's store, in the Informer's map, and
// in the Informer's map with DropManagedFields.
func BenchmarkMemoryPerObject(b *testing.B) {
	c := kubetest.Start(b)
	cs := c.Clientset(b)
	ctx := context.Background()
	const objects = 2000
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mem"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for i := range objects {
		data := map[string]string{}
		for k := range 5 {
			data["key-"+strconv.Itoa(k)] = fmt.Sprintf("value-%d-%d", i, k)
		}
		if _, err := cs.CoreV1().ConfigMaps("mem").Create(ctx, configMap("mem", "cm-"+strconv.Itoa(i), data), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	variants := []struct {
		name string
		// run fills a cache, which it keeps until ctx ends, and returns it
		// with a function that waits for its goroutines to end.
		run func(ctx context.Context) (keep any, wait func())
	}{
		{"client-go-informer", func(ctx context.Context) (any, func()) {
			factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("mem"))
			shared := factory.Core().V1().ConfigMaps().Informer()
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			return shared, factory.Shutdown
		}},
		{"switchyard", func(ctx context.Context) (any, func()) { return runInformer(ctx, cs, false) }},
		{"switchyard-drop-managed-fields", func(ctx context.Context) (any, func()) { return runInformer(ctx, cs, true) }},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				before := heap()
				keep, wait := v.run(ctx)
				after := heap()
				runtime.KeepAlive(keep)
				cancel()
				wait()
				perObject = float64(after-before) / objects
			}
			b.ReportMetric(perObject, "B/object")
		})
	}
}

// runInformer runs an Informer of the namespace mem until it is ready and
// returns it, and a function that waits for it to stop, which it does with
// ctx.
func runInformer(ctx context.Context, cs kubernetes.Interface, drop bool) (*informer.Informer[*corev1.ConfigMap], func()) {
	inf := informer.New[*corev1.ConfigMap](cs.CoreV1().ConfigMaps("mem"), informer.WithLogger(testrun.Quiet))
	if drop {
		inf.WithTransform(informer.DropManagedFields)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	<-inf.Ready()
	return inf, func() { <-done }
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
