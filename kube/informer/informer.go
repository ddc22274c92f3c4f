package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Object is what the values of an Informer's map are: a pointer to a
// Kubernetes object, such as *corev1.Pod or *unstructured.Unstructured.
type Object interface {
	runtime.Object
	metav1.Object
}

// Client lists and watches one resource. A typed client of a clientset is
// one: clientset.CoreV1().ConfigMaps(namespace) is a Client of
// *corev1.ConfigMapList, and the namespace it was made for ("" for all) is
// the one the Informer follows. So is a dynamic.ResourceInterface.
type Client[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Informer is a runner that keeps a map of the objects of one resource,
// keyed by namespace and name, equal to what the API server holds (see the
// package documentation). It implements runner.Runner and runner.Readier.
//
// Name, Ready and Output are safe to call from any goroutine at any time,
// also before Run; call WithTransform before Run. Run may be called again
// after it has returned, not while it runs.
type Informer[V Object] struct {
	name      string
	resource  string // what is listed, for messages: "configmaps", "widgets.v1.example.com"
	client    Client[runtime.Object]
	expected  V // an empty object of the type the reflector expects
	cfg       config
	transform func(V) V

	out         watchable.Map[types.NamespacedName, V]
	initialized func()
	running     atomic.Bool
}

// New returns an Informer of the objects client lists, of type V:
//
//	pods := informer.New[*corev1.Pod](clientset.CoreV1().Pods(""))
//
// Its runner name is "kube:" followed by V's type name ("kube:Pod") unless
// WithName says otherwise. The output map is created here, so consumers can
// subscribe before Run; it is initialized once the first list is published.
//
// New panics if client lists items of another type than V (a
// *corev1.ConfigMapList for an Informer of *corev1.Pod).
func New[V Object, L runtime.Object](client Client[L], opts ...Option) *Informer[V] {
	t := reflect.TypeFor[V]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("informer.New[%s]: the object type must be a pointer to a struct", t))
	}
	if item, ok := listItemType(reflect.TypeFor[L]()); ok && item != t.Elem() {
		panic(fmt.Sprintf("informer.New[%s]: the client lists %s, whose items are %s", t, reflect.TypeFor[L](), item))
	}
	return newInformer[V](t.Elem().Name(), anyClient[L]{client}, reflect.New(t.Elem()).Interface().(V), opts)
}

func newInformer[V Object](resource string, client Client[runtime.Object], expected V, opts []Option) *Informer[V] {
	i := &Informer[V]{resource: resource, client: client, expected: expected, cfg: newConfig(opts)}
	i.name = i.cfg.name
	if i.name == "" {
		i.name = "kube:" + resource
	}
	i.initialized = i.out.RegisterInitializer(i.name)
	return i
}

// listItemType returns the element type of the Items slice of list type l.
func listItemType(l reflect.Type) (reflect.Type, bool) {
	if l.Kind() != reflect.Pointer || l.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	f, ok := l.Elem().FieldByName("Items")
	if !ok || f.Type.Kind() != reflect.Slice {
		return nil, false
	}
	return f.Type.Elem(), true
}

// anyClient hides the list type, which nothing after New needs.
type anyClient[L runtime.Object] struct{ c Client[L] }

func (a anyClient[L]) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := a.c.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (a anyClient[L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return a.c.Watch(ctx, opts)
}

// WithTransform makes the Informer pass every object through fn before
// storing it, to drop what the program does not need and save memory: see
// DropManagedFields. fn receives an object nobody else holds and may change
// it in place and return it; it must keep its namespace and name. It runs on
// Run's goroutine. Call WithTransform before Run; it returns i.
func (i *Informer[V]) WithTransform(fn func(V) V) *Informer[V] {
	i.transform = fn
	return i
}

// DropManagedFields clears an object's metadata.managedFields, the
// server-side apply bookkeeping that often takes more memory than the rest
// of the object and that few controllers read. Pass it to WithTransform.
func DropManagedFields[V Object](obj V) V {
	obj.SetManagedFields(nil)
	return obj
}

// Name returns the runner name: the one given WithName, or "kube:" and the
// resource.
func (i *Informer[V]) Name() string { return i.name }

// Ready is closed once the first list has been published; it is the output
// map's Initialized.
func (i *Informer[V]) Ready() <-chan struct{} { return i.out.Initialized() }

// Output returns the read-only view of the map of objects, keyed by
// namespace (empty for cluster-scoped objects) and name. Its values are
// shared and MUST NOT be mutated (see watchable.State); Load gives copies.
func (i *Informer[V]) Output() watchable.View[types.NamespacedName, V] { return i.out.View() }

var errAlreadyRunning = errors.New("already running")

// Run lists and watches until ctx is done, then returns nil. Failures to
// list or watch are reported (see the package documentation) and retried
// with a backoff between WithBackoff's bounds; Run itself fails only when it
// cannot start: a selector given to WithLabelSelector or WithFieldSelector
// does not parse, or the Informer is already running.
func (i *Informer[V]) Run(ctx context.Context) error {
	if i.cfg.err != nil {
		return fmt.Errorf("informer %s: %w", i.name, i.cfg.err)
	}
	if !i.running.CompareAndSwap(false, true) {
		return fmt.Errorf("informer %s: %w", i.name, errAlreadyRunning)
	}
	defer i.running.Store(false)

	log := i.cfg.logger.With("runner", i.name)
	lw := &listWatch{
		client:   i.client,
		resource: i.resource,
		label:    i.cfg.label,
		field:    i.cfg.field,
		health:   runner.HealthOf(ctx),
		log:      log,
	}
	s := &store[V]{inf: i, log: log}
	r := cache.NewReflectorWithOptions(lw.listerWatcher(), i.expected, s, cache.ReflectorOptions{
		Name:            i.name,
		TypeDescription: i.resource,
	})

	// The reflector's own loop (RunWithContext) backs off by 0.8 s to 30 s
	// and tells nobody; this one reports through lw and uses our bounds.
	delay := i.cfg.minBackoff
	for {
		start := time.Now()
		err := r.ListAndWatchWithContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && time.Since(start) > i.cfg.maxBackoff {
			// A watch that ran for a while ended (410 Gone, or a closed
			// stream): list again at once.
			delay = i.cfg.minBackoff
			continue
		}
		if err != nil {
			log.Debug("list and watch", "error", err)
		}
		// Jitter keeps replicas that failed together from retrying together.
		wait := delay/2 + rand.N(delay/2+1)
		delay = min(2*delay, i.cfg.maxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}
