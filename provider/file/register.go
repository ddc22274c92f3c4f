package file

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/watchable"
)

// Register makes p decode documents of the given kind into T, and returns
// the map that holds them, keyed by their metadata's namespace and name.
// p creates the map and is its only writer: what it returns is the map's
// read-only View. While p runs, the map holds exactly the documents of that
// kind found in the directory.
//
// T is decoded from the whole document (kind, metadata, spec and anything
// else it holds) with JSON rules after YAML is converted to JSON, so its
// fields use json tags, and a document with a field that T does not have is
// rejected. Object[S] is a ready-made T; any struct of the same shape works.
// T must be deep-copyable (see watchable.DeepCopy).
//
// The map is not initialized (its Initialized channel is open, and its
// snapshots say Initialized false) until p has published its first reading
// of the directory to every kind's map, so that a consumer waiting on it
// never acts on a partial picture.
//
// Register must be called before p first runs; it panics once p has started
// running, if kind is empty or already registered, or if T cannot be
// deep-copied.
func Register[T any](p *Provider, kind string) watchable.View[types.NamespacedName, T] {
	if kind == "" {
		panic("file.Register: empty kind")
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				panic(fmt.Sprintf("file.Register(%q): %v", kind, r))
			}
		}()
		var zero T
		watchable.DeepCopy(zero)
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		panic(fmt.Sprintf("file.Register(%q): provider %s has started running", kind, p.Name()))
	}
	if _, dup := p.kinds[kind]; dup {
		panic(fmt.Sprintf("file.Register(%q): kind already registered with provider %s", kind, p.Name()))
	}
	m := new(watchable.Map[types.NamespacedName, T])
	p.kinds[kind] = mapSink[T]{m: m, done: m.RegisterInitializer(p.Name())}
	return m.View()
}

// sink is a registered kind, with its type erased so that the provider can
// hold kinds of different types.
type sink interface {
	// decode decodes one JSON document strictly into the kind's type.
	decode(doc []byte) (any, error)
	// replace makes the map hold exactly entries.
	replace(entries map[types.NamespacedName]any)
	// apply applies ops to the map as one batch.
	apply(ops []op)
	// initialized marks the map initialized, once its first contents are
	// published.
	initialized()
}

// op is a write to a kind's map: store value, or delete when value is nil.
type op struct {
	name  types.NamespacedName
	value any
}

type mapSink[T any] struct {
	m    *watchable.Map[types.NamespacedName, T]
	done func() // the map's initializer
}

func (s mapSink[T]) decode(doc []byte) (any, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func (s mapSink[T]) replace(entries map[types.NamespacedName]any) {
	typed := make(map[types.NamespacedName]T, len(entries))
	for name, v := range entries {
		typed[name] = v.(T)
	}
	s.m.Replace(typed)
}

func (s mapSink[T]) apply(ops []op) {
	s.m.Batch(func(b *watchable.Batch[types.NamespacedName, T]) {
		for _, o := range ops {
			if o.value == nil {
				b.Delete(o.name)
			} else {
				b.Store(o.name, o.value.(T))
			}
		}
	})
}

func (s mapSink[T]) initialized() { s.done() }
