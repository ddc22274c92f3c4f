package watchable_test

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
)

// sharedMemory returns the paths of the mutable memory that a and b share:
// what pointers point to, slices' arrays and maps, found by walking both
// with reflection, independently of the copy plans. Memory that DeepCopy
// shares on purpose is skipped: immutable standard types, errors, and
// values of size zero, which need not have addresses of their own.
func sharedMemory(a, b any) []string {
	seen := map[uintptr]string{}
	walkMemory(reflect.ValueOf(a), "", func(addr uintptr, path string) { seen[addr] = path }, map[uintptr]bool{})
	var shared []string
	walkMemory(reflect.ValueOf(b), "", func(addr uintptr, path string) {
		if other, ok := seen[addr]; ok {
			shared = append(shared, fmt.Sprintf("%s and %s", other, path))
		}
	}, map[uintptr]bool{})
	return shared
}

var (
	errorIface   = reflect.TypeFor[error]()
	reflectIfc   = reflect.TypeFor[reflect.Type]()
	locationPtr  = reflect.TypeFor[*time.Location]()
	regexpPtr    = reflect.TypeFor[*regexp.Regexp]()
	protoMessage = reflect.TypeFor[proto.Message]()
)

// immutable reports whether DeepCopy shares values of t on purpose.
func immutable(t reflect.Type) bool {
	switch t {
	case errorIface, reflectIfc, locationPtr, regexpPtr, reflect.TypeFor[time.Time](), reflect.TypeFor[time.Location]():
		return true
	}
	return t.PkgPath() == "net/netip" || (t.PkgPath() == "unique" && strings.HasPrefix(t.Name(), "Handle["))
}

func walkMemory(v reflect.Value, path string, visit func(uintptr, string), done map[uintptr]bool) {
	if !v.IsValid() || immutable(v.Type()) {
		return
	}
	mark := func(addr uintptr, size uintptr) bool {
		if addr == 0 || size == 0 || done[addr] {
			return false
		}
		done[addr] = true
		visit(addr, path)
		return true
	}
	switch v.Kind() {
	case reflect.Pointer:
		if mark(uintptr(v.UnsafePointer()), v.Type().Elem().Size()) {
			walkMemory(v.Elem(), path, visit, done)
		}
	case reflect.Slice:
		if v.Len() > 0 && mark(uintptr(v.UnsafePointer()), v.Type().Elem().Size()) {
			for i := range v.Len() {
				walkMemory(v.Index(i), fmt.Sprintf("%s[%d]", path, i), visit, done)
			}
		}
	case reflect.Map:
		if !v.IsNil() && mark(uintptr(v.UnsafePointer()), 1) {
			for it := v.MapRange(); it.Next(); {
				walkMemory(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), visit, done)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			walkMemory(v.Index(i), fmt.Sprintf("%s[%d]", path, i), visit, done)
		}
	case reflect.Struct:
		// A proto message's unexported fields hold its runtime state,
		// which proto.Clone shares on purpose (type descriptors).
		message := reflect.PointerTo(v.Type()).Implements(protoMessage)
		for i := range v.NumField() {
			if f := v.Type().Field(i); !message || f.IsExported() {
				walkMemory(v.Field(i), path+"."+f.Name, visit, done)
			}
		}
	case reflect.Interface:
		walkMemory(v.Elem(), path+".("+typeName(v.Elem())+")", visit, done)
	}
}

func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	return v.Type().String()
}

func TestSharedMemoryFindsSharing(t *testing.T) {
	type node struct {
		Tags []string
		M    map[string]int
		P    *int
	}
	n := 1
	a := &node{Tags: []string{"a"}, M: map[string]int{}, P: &n}
	b := &node{Tags: a.Tags, M: a.M, P: a.P}
	if got := sharedMemory(a, b); len(got) != 3 {
		t.Fatalf("sharedMemory found %q; want the three shared parts", got)
	}
	if got := sharedMemory(a, a); len(got) != 4 {
		t.Fatalf("sharedMemory(a, a) found %q; want four", got)
	}
}
