package watchable_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unique"
	"unsafe"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchyard-go/switchyard/watchable"
)

// copies returns a test that copies a value made by fresh and checks the
// copy: it is equal to the original, by DeepEqual and by reflect.DeepEqual;
// it shares no mutable memory with it; and mutate, which changes every
// mutable part of a value, changes the original without changing the copy,
// and the copy without changing the original. mutate may be nil for values
// without mutable parts.
func copies[T any](fresh func() T, mutate func(T)) func(*testing.T) {
	return checkCopies(fresh, mutate, reflect.DeepEqual)
}

// copiesProto is copies for values holding proto messages, whose internal
// state reflect.DeepEqual should not see.
func copiesProto[T any](fresh func() T, mutate func(T)) func(*testing.T) {
	return checkCopies(fresh, mutate, func(a, b any) bool { return watchable.DeepEqual(a.(T), b.(T)) })
}

func checkCopies[T any](fresh func() T, mutate func(T), same func(a, b any) bool) func(*testing.T) {
	return func(t *testing.T) {
		t.Helper()
		orig := fresh()
		c := watchable.DeepCopy(orig)
		if !watchable.DeepEqual(orig, c) || !same(orig, c) {
			t.Fatalf("the copy differs from the original\noriginal %+v\ncopy     %+v", orig, c)
		}
		if shared := sharedMemory(orig, c); len(shared) > 0 {
			t.Fatalf("the copy shares memory with the original: %s", shared)
		}
		if mutate == nil {
			return
		}
		mutate(orig)
		if !same(c, fresh()) {
			t.Fatalf("mutating the original changed the copy: %+v", c)
		}
		orig = fresh()
		mutate(watchable.DeepCopy(orig))
		if !same(orig, fresh()) {
			t.Fatalf("mutating the copy changed the original: %+v", orig)
		}
	}
}

// Named types of each kind.
type (
	labels  map[string]string
	names   []string
	ident   string
	portSet [3]int32
	intPtr  *int
)

type port struct {
	Name string
	Port int32
}

type spec struct {
	Ports    []port
	Selector labels
	Weights  map[string]float64
}

// counted copies itself with a value-receiver DeepCopy that counts calls.
type counted struct{ Tags []string }

var countedCopies atomic.Int64

func (c counted) DeepCopy() counted {
	countedCopies.Add(1)
	return counted{Tags: slices.Clone(c.Tags)}
}

// inner is embedded, unexported, with exported fields that are promoted.
type inner struct{ Tags []string }

type Embedded struct{ Notes []string }

type withEmbedded struct {
	inner
	*Embedded
	Name string
}

// private has unexported fields DeepCopy may copy: plain values, and types
// that copy themselves or are immutable.
type private struct {
	n    int
	s    string
	when time.Time
	err  error
	m    *meta
	Pub  []string
}

// conn is a user's type that keeps data in unexported fields of every kind:
// the program's own types are copied field by field.
type conn struct {
	addr    *string
	tags    []string
	weights map[string]int
	next    *conn
	meta    any
}

// stringer is a non-empty interface type for interface fields.
type stringer interface{ String() string }

type tagged struct{ Tags []string }

func (t *tagged) String() string { return strings.Join(t.Tags, ",") }

type holder struct {
	V  any
	S  stringer
	Sh shape
	Vs []any
	M  map[string]any
}

var (
	loc     = time.FixedZone("UTC+2", 2*3600)
	pattern = regexp.MustCompile(`^a+b$`)
)

func TestDeepCopyKinds(t *testing.T) {
	tests := []struct {
		name  string
		check func(*testing.T)
	}{
		{"int", copies(func() int { return 42 }, nil)},
		{"string", copies(func() string { return "s" }, nil)},
		{"plain struct", copies(func() plain { return plain{Name: "a", Pair: [2]int32{1, 2}} }, nil)},
		{"pointer to plain struct", copies(
			func() *plain { return &plain{Name: "a", Pair: [2]int32{1, 2}} },
			func(v *plain) { v.Name, v.Pair[0] = "x", 9 })},
		{"pointer to pointer", copies(
			func() **int { n := 1; p := &n; return &p },
			func(v **int) { **v = 2 })},
		{"nil pointer", copies(func() *plain { return nil }, nil)},
		{"slice of strings", copies(func() []string { return []string{"a", "b"} }, func(v []string) { v[0] = "x" })},
		{"nil and empty slices", copies(
			func() [][]int { return [][]int{nil, {}, {1}} },
			func(v [][]int) { v[2][0] = 9 })},
		{"map of slices of pointers", copies(
			func() map[string][]*port { return map[string][]*port{"a": {{Name: "http", Port: 80}, nil}, "b": nil} },
			func(v map[string][]*port) { v["a"][0].Port = 1; v["a"][1] = &port{}; v["c"] = nil })},
		{"maps of maps", copies(
			func() map[int]map[string][]string { return map[int]map[string][]string{1: {"x": {"y"}}, 2: {}} },
			func(v map[int]map[string][]string) { v[1]["x"][0] = "z"; v[2]["new"] = nil })},
		{"array of structs with maps", copies(
			func() [2]struct{ M map[string]int } {
				return [2]struct{ M map[string]int }{{M: map[string]int{"a": 1}}, {}}
			},
			func(v [2]struct{ M map[string]int }) { v[0].M["a"] = 2 })},
		{"named types", copies(
			func() *struct {
				L labels
				N names
				I ident
				P portSet
				Q intPtr
			} {
				n := 3
				return &struct {
					L labels
					N names
					I ident
					P portSet
					Q intPtr
				}{labels{"a": "b"}, names{"x"}, "id", portSet{1, 2, 3}, &n}
			},
			func(v *struct {
				L labels
				N names
				I ident
				P portSet
				Q intPtr
			}) {
				v.L["a"], v.N[0], v.I, v.P[0], *v.Q = "c", "y", "other", 9, 4
			})},
		{"nested structs", copies(
			func() *spec {
				return &spec{Ports: []port{{"http", 80}}, Selector: labels{"app": "x"}, Weights: map[string]float64{"a": 0.5}}
			},
			func(v *spec) { v.Ports[0].Port, v.Selector["app"], v.Weights["a"] = 1, "y", 1 })},
		{"embedded structs", copies(
			func() *withEmbedded {
				return &withEmbedded{inner: inner{Tags: []string{"t"}}, Embedded: &Embedded{Notes: []string{"n"}}, Name: "e"}
			},
			func(v *withEmbedded) { v.Tags[0], v.Notes[0] = "x", "y" })},
		{"unexported fields of plain values and self-copying types", copies(
			func() *private {
				return &private{n: 1, s: "s", when: time.Unix(1, 0).In(loc), err: io.EOF, m: &meta{Name: "m", Labels: map[string]string{"a": "b"}}, Pub: []string{"p"}}
			},
			func(v *private) { v.n, v.m.Labels["a"], v.Pub[0] = 2, "c", "q" })},
		{"unexported references of the program's own types", copies(
			func() *conn {
				a, b := "10.0.0.1", "10.0.0.2"
				return &conn{addr: &a, tags: []string{"t"}, weights: map[string]int{"w": 1},
					next: &conn{addr: &b, meta: []string{"m"}}, meta: map[string]int{"x": 1}}
			},
			func(v *conn) {
				*v.addr, v.tags[0], v.weights["w"], *v.next.addr = "changed", "u", 2, "changed"
				v.next.meta.([]string)[0], v.meta.(map[string]int)["x"] = "n", 2
			})},
		{"interfaces holding each kind", copies(
			func() *holder {
				return &holder{
					V:  map[string][]int{"a": {1}},
					S:  &tagged{Tags: []string{"x"}},
					Sh: &rect{Sides: []int{2, 3}},
					Vs: []any{nil, 1, "s", plain{Name: "p"}, &plain{Name: "q"}, []string{"r"}, tagged{Tags: []string{"s"}}, []any{map[string]any{"deep": []int{1}}}, time.Unix(0, 0).UTC()},
					M:  map[string]any{"item": &item{Name: "i", Tags: []string{"t"}}, "meta": meta{Name: "m", Labels: map[string]string{"k": "v"}}},
				}
			},
			func(v *holder) {
				v.V.(map[string][]int)["a"][0] = 9
				v.S.(*tagged).Tags[0] = "y"
				v.Sh.(*rect).Sides[0] = 100
				v.Vs[4].(*plain).Name = "changed"
				v.Vs[5].([]string)[0] = "changed"
				v.Vs[6].(tagged).Tags[0] = "changed"
				v.Vs[7].([]any)[0].(map[string]any)["deep"].([]int)[0] = 9
				v.M["item"].(*item).Tags[0] = "changed"
				v.M["meta"].(meta).Labels["k"] = "changed"
			})},
		{"immutable standard types are shared", copies(
			func() *struct {
				When     time.Time
				Zone     *time.Location
				Addr     netip.Addr
				Prefix   netip.Prefix
				AddrPort netip.AddrPort
				Handle   unique.Handle[string]
				Pattern  *regexp.Regexp
				Err      error
				Type     reflect.Type
				Dur      time.Duration
			} {
				return &struct {
					When     time.Time
					Zone     *time.Location
					Addr     netip.Addr
					Prefix   netip.Prefix
					AddrPort netip.AddrPort
					Handle   unique.Handle[string]
					Pattern  *regexp.Regexp
					Err      error
					Type     reflect.Type
					Dur      time.Duration
				}{
					time.Date(2025, 1, 2, 3, 4, 5, 6, loc), loc,
					netip.MustParseAddr("fe80::1%eth0"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParseAddrPort("[::1]:80"),
					unique.Make("handle"), pattern, fmt.Errorf("wrapped: %w", io.EOF), reflect.TypeFor[int](), time.Second,
				}
			}, nil)},
		{"math/big numbers are copied", copies(
			func() *struct {
				I  *big.Int
				IV big.Int
				R  *big.Rat
				F  *big.Float
			} {
				v := &struct {
					I  *big.Int
					IV big.Int
					R  *big.Rat
					F  *big.Float
				}{I: big.NewInt(1 << 62), R: big.NewRat(1, 3), F: big.NewFloat(1.5)}
				v.IV.SetInt64(-7)
				v.I.Lsh(v.I, 100)
				return v
			},
			func(v *struct {
				I  *big.Int
				IV big.Int
				R  *big.Rat
				F  *big.Float
			}) {
				v.I.SetInt64(1)
				v.IV.SetInt64(2)
				v.R.SetInt64(3)
				v.F.SetInt64(4)
			})},
		{"standard types that are plain data", copies(
			func() *struct {
				Raw json.RawMessage
				IP  net.IP
				Net net.IPNet
				URL *url.URL
			} {
				_, n, _ := net.ParseCIDR("10.1.0.0/16")
				return &struct {
					Raw json.RawMessage
					IP  net.IP
					Net net.IPNet
					URL *url.URL
				}{json.RawMessage(`{"a":1}`), net.ParseIP("10.0.0.1"), *n, &url.URL{Scheme: "https", User: url.UserPassword("u", "p"), Host: "h"}}
			},
			func(v *struct {
				Raw json.RawMessage
				IP  net.IP
				Net net.IPNet
				URL *url.URL
			}) {
				v.Raw[0], v.IP[0], v.Net.IP[0], v.Net.Mask[0] = ' ', 1, 2, 3
				v.URL.Host, v.URL.User = "other", nil
			})},
		{"DeepCopy methods inside plain structs", copies(
			func() *struct {
				Meta    meta
				MetaPtr *meta
				Item    *item
				Counted counted
				Metas   []meta
			} {
				return &struct {
					Meta    meta
					MetaPtr *meta
					Item    *item
					Counted counted
					Metas   []meta
				}{
					meta{Name: "a", Labels: map[string]string{"k": "v"}}, &meta{Name: "b", Labels: map[string]string{"k": "v"}},
					&item{Name: "c", Tags: []string{"t"}}, counted{Tags: []string{"t"}}, []meta{{Labels: map[string]string{"k": "v"}}},
				}
			},
			func(v *struct {
				Meta    meta
				MetaPtr *meta
				Item    *item
				Counted counted
				Metas   []meta
			}) {
				v.Meta.Labels["k"], v.MetaPtr.Labels["k"], v.Item.Tags[0], v.Counted.Tags[0], v.Metas[0].Labels["k"] = "1", "2", "3", "4", "5"
			})},
		{"proto messages inside plain structs", copiesProto(
			func() *struct {
				Msg    *structpb.Struct
				Msgs   []*durationpb.Duration
				ByName map[string]*structpb.Value
				Any    any
			} {
				s, _ := structpb.NewStruct(map[string]any{"a": []any{1.0, "x"}})
				return &struct {
					Msg    *structpb.Struct
					Msgs   []*durationpb.Duration
					ByName map[string]*structpb.Value
					Any    any
				}{s, []*durationpb.Duration{durationpb.New(time.Second), nil}, map[string]*structpb.Value{"v": structpb.NewStringValue("s")}, durationpb.New(time.Minute)}
			},
			func(v *struct {
				Msg    *structpb.Struct
				Msgs   []*durationpb.Duration
				ByName map[string]*structpb.Value
				Any    any
			}) {
				v.Msg.Fields["a"] = structpb.NewNullValue()
				v.Msgs[0].Seconds = 99
				v.ByName["v"].Kind = &structpb.Value_NumberValue{NumberValue: 1}
				v.Any.(*durationpb.Duration).Seconds = 99
			})},
		{"named pointer in an interface", copies(
			func() any { n := 1; return intPtr(&n) },
			func(v any) { *v.(intPtr) = 2 })},
		{"maps with interface keys and flat values", copies(
			func() map[any]port { return map[any]port{"a": {"http", 80}, 2: {}, port{"k", 1}: {}} },
			func(v map[any]port) { v["a"] = port{} })},
		{"pointer to an interface", copies(
			func() *any { v := any([]int{1}); return &v },
			func(v *any) { (*v).([]int)[0] = 2 })},
		{"embedded interface", copies(
			func() struct{ fmt.Stringer } { return struct{ fmt.Stringer }{&tagged{Tags: []string{"a"}}} },
			func(v struct{ fmt.Stringer }) { v.Stringer.(*tagged).Tags[0] = "b" })},
		{"zero-size parts", copies(
			func() *struct {
				E struct{}
				Z [0]int
				S []struct{}
				M map[string]struct{}
			} {
				return &struct {
					E struct{}
					Z [0]int
					S []struct{}
					M map[string]struct{}
				}{S: make([]struct{}, 3), M: map[string]struct{}{"a": {}}}
			},
			func(v *struct {
				E struct{}
				Z [0]int
				S []struct{}
				M map[string]struct{}
			}) {
				v.M["b"] = struct{}{}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

func TestDeepCopyUsesNestedMethods(t *testing.T) {
	before := countedCopies.Load()
	watchable.DeepCopy(&struct{ C []counted }{C: []counted{{}, {}}})
	if n := countedCopies.Load() - before; n != 2 {
		t.Fatalf("counted.DeepCopy was called %d times; want 2", n)
	}
}

func TestDeepCopyKeepsNilEmptyAndCapacity(t *testing.T) {
	type lists struct {
		Nil, Empty, Spare []int
		NilMap, EmptyMap  map[string]int
	}
	c := watchable.DeepCopy(lists{Empty: []int{}, Spare: make([]int, 1, 10), EmptyMap: map[string]int{}})
	if c.Nil != nil || c.Empty == nil || len(c.Empty) != 0 || c.NilMap != nil || c.EmptyMap == nil {
		t.Fatalf("nil and empty were not kept apart: %#v", c)
	}
	if cap(c.Spare) != 1 || cap(c.Empty) != 0 {
		t.Fatalf("capacities %d and %d; want the lengths", cap(c.Spare), cap(c.Empty))
	}
}

// TestDeepCopyCopiesAliasesTwice documents that DeepCopy copies a tree: a
// pointer reached twice is copied twice.
func TestDeepCopyCopiesAliasesTwice(t *testing.T) {
	shared := &port{Name: "p"}
	c := watchable.DeepCopy(&struct{ A, B *port }{shared, shared})
	if c.A == c.B || *c.A != *shared || *c.B != *shared {
		t.Fatalf("copy %p %+v, %p %+v", c.A, c.A, c.B, c.B)
	}
}

// guarded holds a lock, and so cannot be copied by assignment.
type guarded struct {
	mu   sync.Mutex
	Name string
}

func (g *guarded) rename(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Name = name
}

// lockedCounter holds a lock, and copies itself.
type lockedCounter struct {
	mu sync.Mutex
	N  atomic.Int64
}

func (c *lockedCounter) DeepCopy() *lockedCounter {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &lockedCounter{}
	out.N.Store(c.N.Load())
	return out
}

func TestDeepCopyOfLocks(t *testing.T) {
	c := &lockedCounter{}
	c.N.Store(3)
	c.mu.Lock() // held by someone else while a copy is made through the method
	done := make(chan *lockedCounter)
	go func() { done <- watchable.DeepCopy(&struct{ C *lockedCounter }{c}).C }()
	c.mu.Unlock()
	if got := <-done; got == c || got.N.Load() != 3 || !got.mu.TryLock() {
		t.Fatalf("copy %p with N %d; original %p", got, got.N.Load(), c)
	}
	// Atomics hold no lock (their marker is a blank field): copied as data.
	if got := watchable.DeepCopy(&struct{ N atomic.Int64 }{}); got == nil {
		t.Fatal("no copy of a struct holding an atomic")
	}
}

// chain is a recursive type.
type chain struct {
	N    int
	Next *chain
	Any  any
}

func newChain(n int) *chain {
	var head *chain
	for i := range n {
		head = &chain{N: n - i, Next: head}
	}
	return head
}

func TestDeepCopyDeepValues(t *testing.T) {
	orig := newChain(5000) // well beyond the depth where cycle tracking starts
	c := watchable.DeepCopy(orig)
	if !watchable.DeepEqual(orig, c) || !reflect.DeepEqual(orig, c) {
		t.Fatal("the copy of a long chain differs")
	}
	for a, b := orig, c; a != nil; a, b = a.Next, b.Next {
		if a == b {
			t.Fatalf("node %d is shared", a.N)
		}
	}
}

func TestDeepCopyRefusals(t *testing.T) {
	type hook struct{ Fn func() }
	type withHooks struct {
		Name  string
		Hooks []hook
	}
	type withChan struct{ C chan int }
	type withUnsafe struct{ P struct{ Raw unsafe.Pointer } }
	type keyed struct{ Index map[*port]int }
	type protoByValue struct{ D durationpb.Duration }
	type anyKeys struct{ Index map[any]int }
	tests := []struct {
		name  string
		store func()
		want  string
	}{
		{"func in a slice of structs", func() { watchable.DeepCopy(&withHooks{}) },
			"watchable: cannot deep-copy *watchable_test.withHooks: field .Hooks[].Fn is a func"},
		{"func itself", func() { watchable.DeepCopy(func() {}) },
			"watchable: cannot deep-copy func(): it is a func"},
		{"chan", func() { watchable.DeepCopy(withChan{}) },
			"watchable: cannot deep-copy watchable_test.withChan: field .C is a chan"},
		{"unsafe.Pointer", func() { watchable.DeepCopy([]withUnsafe{}) },
			"watchable: cannot deep-copy []watchable_test.withUnsafe: element [].P.Raw is an unsafe.Pointer"},
		{"unexported fields of a standard type", func() { watchable.DeepCopy(&struct{ B bytes.Buffer }{}) },
			"watchable: cannot deep-copy *struct { B bytes.Buffer }: field .B.buf is unexported and holds a slice, which only bytes.Buffer's own code knows how to copy: give it a DeepCopy method"},
		{"pointer map keys", func() { watchable.DeepCopy(keyed{}) },
			"watchable: cannot deep-copy watchable_test.keyed: field .Index has keys of type *watchable_test.port, which a copy would change"},
		{"proto message by value", func() { watchable.DeepCopy(&protoByValue{}) },
			"watchable: cannot deep-copy *watchable_test.protoByValue: field .D is a proto message held by value: hold it by pointer, as *durationpb.Duration"},
		{"func held in an interface field", func() { watchable.DeepCopy(holder{Vs: []any{1, hook{}}}) },
			"watchable: cannot deep-copy watchable_test.holder: field .Vs[1].(watchable_test.hook).Fn is a func"},
		{"func held in an any", func() { watchable.DeepCopy[any](&withHooks{}) },
			"watchable: cannot deep-copy *watchable_test.withHooks held in interface {}: field .Hooks[].Fn is a func"},
		{"pointer held in an interface map key", func() { watchable.DeepCopy(anyKeys{Index: map[any]int{&port{}: 1}}) },
			"watchable: cannot deep-copy watchable_test.anyKeys: field .Index has a key holding a *watchable_test.port, which a copy would change"},
		{"a lock", func() { g := &guarded{}; g.rename("g"); watchable.DeepCopy(g) },
			"watchable: cannot deep-copy *watchable_test.guarded: field .mu is a sync.Mutex, which must not be copied"},
		{"a lock inside a standard type", func() { watchable.DeepCopy(&struct{ Wg sync.WaitGroup }{}) },
			"watchable: cannot deep-copy *struct { Wg sync.WaitGroup }: field .Wg.noCopy is a sync.noCopy, which must not be copied"},
		{"nil value of a refused type", func() { watchable.DeepCopy[*withHooks](nil) },
			"watchable: cannot deep-copy *watchable_test.withHooks: field .Hooks[].Fn is a func"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := panicOf(tt.store); got != tt.want {
				t.Fatalf("panic\n%v\nwant\n%s", got, tt.want)
			}
		})
	}
}

func panicOf(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

func TestDeepCopyRefusesCycles(t *testing.T) {
	self := &chain{N: 1}
	self.Next = self
	ring := newChain(3)
	ring.Next.Next.Next = ring
	viaAny := newChain(2)
	viaAny.Next.Any = viaAny
	selfSlice := []any{1, nil}
	selfSlice[1] = selfSlice
	selfMap := map[string]any{"a": 1}
	selfMap["self"] = selfMap
	tests := []struct {
		name string
		copy func()
		want string
	}{
		{"pointer to itself", func() { watchable.DeepCopy(self) },
			"watchable: cannot deep-copy *watchable_test.chain: field .Next refers back to a value that contains it (a cycle)"},
		{"ring of three", func() { watchable.DeepCopy(ring) },
			"watchable: cannot deep-copy *watchable_test.chain: field .Next.Next.Next refers back to a value that contains it (a cycle)"},
		{"through an interface", func() { watchable.DeepCopy(viaAny) },
			"watchable: cannot deep-copy *watchable_test.chain: field .Next.Any.(*watchable_test.chain) refers back to a value that contains it (a cycle)"},
		{"slice holding itself", func() { watchable.DeepCopy(selfSlice) },
			"watchable: cannot deep-copy []interface {}: element [1].([]interface {}) refers back to a value that contains it (a cycle)"},
		{"map holding itself", func() { watchable.DeepCopy(selfMap) },
			`watchable: cannot deep-copy map[string]interface {}: element ["self"].(map[string]interface {}) refers back to a value that contains it (a cycle)`},
		{"cycle in an any", func() { watchable.DeepCopy[any](ring) },
			"watchable: cannot deep-copy *watchable_test.chain held in interface {}: field .Next.Next.Next refers back to a value that contains it (a cycle)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := panicOf(tt.copy); got != tt.want {
				t.Fatalf("panic\n%v\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestWritesRefuseCyclesBeforeChangingAnything(t *testing.T) {
	var m watchable.Map[string, *chain]
	m.Store("ok", newChain(2))
	self := &chain{N: 1}
	self.Next = self
	if panicOf(func() { m.Store("cyclic", self) }) == nil {
		t.Fatal("Store of a cyclic value did not panic")
	}
	if panicOf(func() { m.Replace(map[string]*chain{"new": newChain(1), "cyclic": self}) }) == nil {
		t.Fatal("Replace with a cyclic value did not panic")
	}
	if m.Len() != 1 || m.Revision() != 1 {
		t.Fatalf("the map changed: %d entries, revision %d", m.Len(), m.Revision())
	}
	m.Store("after", newChain(1)) // and it is still usable
	if m.Len() != 2 {
		t.Fatalf("Store after a refusal: %d entries", m.Len())
	}
}

func TestDeepEqualRules(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }
	ringOf := func(ns ...int) *chain {
		head := newChain(len(ns))
		n := head
		for i, v := range ns {
			n.N = v
			if i == len(ns)-1 {
				n.Next = head
			}
			n = n.Next
		}
		return head
	}
	type withTime struct {
		Name string
		At   time.Time
	}
	type withVersion struct{ V []version }
	type withPtrEqual struct{ P ptrEqual }
	type withErr struct{ Err error }
	type withFunc struct{ F func() }
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"nil and empty slices differ", watchable.DeepEqual([]int(nil), []int{}), false},
		{"nil and empty maps differ", watchable.DeepEqual(map[string]int(nil), map[string]int{}), false},
		{"nil and empty maps of slices differ", watchable.DeepEqual(map[string][]int(nil), map[string][]int{}), false},
		{"empty slices", watchable.DeepEqual([]int{}, make([]int, 0, 5)), true},
		{"nil slices in structs", watchable.DeepEqual(spec{}, spec{}), true},
		{"NaN", watchable.DeepEqual(nan(), nan()), false},
		{"NaN in a struct", watchable.DeepEqual(struct{ F float64 }{nan()}, struct{ F float64 }{nan()}), false},
		{"negative zero", watchable.DeepEqual(struct{ F float64 }{0}, struct{ F float64 }{-1 * 0.0}), true},
		{"the same instant in another location", watchable.DeepEqual(withTime{"a", time.Unix(5, 0).UTC()}, withTime{"a", time.Unix(5, 0).In(loc)}), true},
		{"another instant", watchable.DeepEqual(withTime{"a", time.Unix(5, 0)}, withTime{"a", time.Unix(6, 0)}), false},
		{"locations by name", watchable.DeepEqual(time.FixedZone("X", 1), time.FixedZone("X", 1)), true},
		{"nil location is UTC", watchable.DeepEqual((*time.Location)(nil), time.UTC), true},
		{"netip", watchable.DeepEqual(netip.MustParseAddr("::1"), netip.IPv6Loopback()), true},
		{"regexps by source", watchable.DeepEqual(regexp.MustCompile("a+"), regexp.MustCompile("a+")), true},
		{"different regexps", watchable.DeepEqual(regexp.MustCompile("a+"), regexp.MustCompile("a*")), false},
		{"big ints by value", watchable.DeepEqual(big.NewInt(7), new(big.Int).SetInt64(7)), true},
		{"errors by message", watchable.DeepEqual(withErr{errors.New("x")}, withErr{errors.New("x")}), true},
		{"errors by type", watchable.DeepEqual(withErr{errors.New("x")}, withErr{fmt.Errorf("%w", errors.New("x"))}), false},
		{"nil and non-nil error", watchable.DeepEqual(withErr{nil}, withErr{io.EOF}), false},
		{"Equal methods inside slices", watchable.DeepEqual(withVersion{[]version{{1, "a"}}}, withVersion{[]version{{1, "b"}}}), true},
		{"Equal methods inside maps", watchable.DeepEqual(map[string]version{"k": {1, "a"}}, map[string]version{"k": {1, "b"}}), true},
		{"pointer-receiver Equal(*T) inside a struct", watchable.DeepEqual(withPtrEqual{ptrEqual{1, "a"}}, withPtrEqual{ptrEqual{1, "b"}}), true},
		{"pointer-receiver Equal(*T) deciding no", watchable.DeepEqual(withPtrEqual{ptrEqual{1, "a"}}, withPtrEqual{ptrEqual{2, "a"}}), false},
		{"protos inside structs", watchable.DeepEqual(struct{ D *durationpb.Duration }{durationpb.New(1)}, struct{ D *durationpb.Duration }{durationpb.New(1)}), true},
		{"interfaces holding slices", watchable.DeepEqual(holder{V: []int{1}}, holder{V: []int{1}}), true},
		{"interfaces holding different types", watchable.DeepEqual(holder{V: 1}, holder{V: int64(1)}), false},
		{"interfaces holding structs with slices", watchable.DeepEqual(holder{V: tagged{[]string{"a"}}}, holder{V: tagged{[]string{"a"}}}), true},
		{"non-empty interfaces", watchable.DeepEqual(holder{S: &tagged{[]string{"a"}}}, holder{S: &tagged{[]string{"b"}}}), false},
		{"nil funcs", watchable.DeepEqual(withFunc{}, withFunc{}), true},
		{"non-nil funcs", watchable.DeepEqual(withFunc{func() {}}, withFunc{func() {}}), false},
		{"equal rings", watchable.DeepEqual(ringOf(1, 2, 3), ringOf(1, 2, 3)), true},
		{"different rings", watchable.DeepEqual(ringOf(1, 2, 3), ringOf(1, 2, 4)), false},
		{"a ring and itself", func() bool { r := ringOf(1, 2); return watchable.DeepEqual(r, r) }(), true},
		{"complex numbers", watchable.DeepEqual(struct{ C complex128 }{1 + 2i}, struct{ C complex128 }{1 + 3i}), false},
		{"arrays of strings", watchable.DeepEqual(struct{ A [2]string }{[2]string{"a", "b"}}, struct{ A [2]string }{[2]string{"a", "b"}}), true},
		{"arrays of strings differing", watchable.DeepEqual([3]string{"a", "b", "c"}, [3]string{"a", "b", "d"}), false},
		{"maps held in interfaces", watchable.DeepEqual(holder{V: map[string]int{"a": 1}}, holder{V: map[string]int{"a": 1}}), true},
		{"maps of slices held in interfaces", watchable.DeepEqual(holder{V: map[string][]int{"a": {1}}}, holder{V: map[string][]int{"a": {2}}}), false},
		{"maps with interface keys", watchable.DeepEqual(map[any]int{"a": 1, 2: 2}, map[any]int{2: 2, "a": 1}), true},
		{"a scalar's Equal method", watchable.DeepEqual(decade(1991), decade(1999)), true},
		{"a scalar's pointer-receiver Equal method", watchable.DeepEqual(caseless("A"), caseless("a")), true},
		{"a scalar without methods", watchable.DeepEqual(ident("A"), ident("a")), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: DeepEqual = %v; want %v", tt.name, tt.got, tt.want)
		}
	}
}

// decade is a number whose Equal method compares decades.
type decade int

func (d decade) Equal(o decade) bool { return d/10 == o/10 }

// caseless is a string whose pointer-receiver Equal ignores case.
type caseless string

func (c *caseless) Equal(o *caseless) bool { return strings.EqualFold(string(*c), string(*o)) }

// ptrEqual has the pointer-receiver Equal shape, Equal(*T) bool on *T,
// which ignores Note.
type ptrEqual struct {
	N    int
	Note string
}

func (p *ptrEqual) Equal(o *ptrEqual) bool { return p.N == o.N }

// TestDeepEqualAgreesWithReflect compares values without Equal methods,
// floats or standard types, for which DeepEqual must agree with
// reflect.DeepEqual.
func TestDeepEqualAgreesWithReflect(t *testing.T) {
	values := []*spec{
		nil,
		{},
		{Ports: []port{}},
		{Ports: []port{{"a", 1}}},
		{Ports: []port{{"a", 2}}},
		{Selector: labels{}},
		{Selector: labels{"a": "b"}},
		{Selector: labels{"a": "c"}},
		{Selector: labels{"b": "b"}},
	}
	for _, a := range values {
		for _, b := range values {
			if got, want := watchable.DeepEqual(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("DeepEqual(%+v, %+v) = %v; reflect.DeepEqual says %v", a, b, got, want)
			}
		}
	}
}
