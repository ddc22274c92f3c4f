package watchable_test

import (
	"reflect"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// fuzzNode is a recursive type holding every kind DeepCopy copies part by
// part.
type fuzzNode struct {
	Name  string
	N     int64
	Flag  bool
	Bytes []byte
	Kids  []*fuzzNode
	Attrs map[string][]int32
	Opt   *string
	Any   any
	Arr   [2]uint16
	Inner struct {
		S []string
		M map[int]string
	}
}

// FuzzDeepCopy builds two values from the input and checks that DeepCopy
// copies the first completely and independently, and that DeepEqual agrees
// with reflect.DeepEqual on them (neither has Equal methods or floats).
func FuzzDeepCopy(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01hello\x02\x03\x04\x05\x06\x07\x08\x09"))
	f.Add([]byte("\x01\x01a\x00\x00\x03\x02\x01\x01b\x04\x03\x05\x04\x06\x01\x02"))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Fuzz(func(t *testing.T, data []byte) {
		half := len(data) / 2
		build := func() (*fuzzNode, *fuzzNode) {
			return (&decoder{data: data[:half]}).node(0), (&decoder{data: data[half:]}).node(0)
		}
		v, w := build()
		c := watchable.DeepCopy(v)
		if !watchable.DeepEqual(v, c) || !reflect.DeepEqual(v, c) {
			t.Fatalf("the copy differs\noriginal %+v\ncopy     %+v", v, c)
		}
		if shared := sharedMemory(v, c); len(shared) > 0 {
			t.Fatalf("the copy shares memory with the original: %q", shared)
		}
		if got, want := watchable.DeepEqual(v, w), reflect.DeepEqual(v, w); got != want {
			t.Fatalf("DeepEqual = %v, reflect.DeepEqual = %v for\n%+v\n%+v", got, want, v, w)
		}
		mutate(reflect.ValueOf(c))
		if again, _ := build(); !reflect.DeepEqual(v, again) {
			t.Fatalf("mutating the copy changed the original")
		}
	})
}

// decoder makes values from fuzz input; when the input runs out it reads
// zeros, which end every branch.
type decoder struct{ data []byte }

func (d *decoder) byte() byte {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

func (d *decoder) str() string {
	n := int(d.byte() % 4)
	if n > len(d.data) {
		n = len(d.data)
	}
	s := string(d.data[:n])
	d.data = d.data[n:]
	return s
}

// bytes returns nil, an empty slice or a short one.
func (d *decoder) bytes() []byte {
	switch d.byte() % 3 {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	return []byte(d.str())
}

func (d *decoder) node(depth int) *fuzzNode {
	if d.byte()%5 == 0 || depth > 5 {
		return nil
	}
	n := &fuzzNode{Name: d.str(), N: int64(d.byte()) - 128, Flag: d.byte()%2 == 0, Bytes: d.bytes()}
	n.Arr = [2]uint16{uint16(d.byte()), uint16(d.byte())}
	for range d.byte() % 3 {
		n.Kids = append(n.Kids, d.node(depth+1))
	}
	if k := d.byte() % 3; k > 0 {
		n.Attrs = map[string][]int32{}
		for range k - 1 {
			n.Attrs[d.str()] = []int32{int32(d.byte())}
		}
	}
	if d.byte()%2 == 0 {
		s := d.str()
		n.Opt = &s
	}
	n.Any = d.anyValue(depth)
	if d.byte()%2 == 0 {
		n.Inner.S = []string{d.str()}
		n.Inner.M = map[int]string{int(d.byte()): d.str()}
	}
	return n
}

func (d *decoder) anyValue(depth int) any {
	if depth > 5 {
		return nil
	}
	switch d.byte() % 9 {
	case 1:
		return int(d.byte())
	case 2:
		return d.str()
	case 3:
		return d.node(depth + 1)
	case 4:
		return []any{d.anyValue(depth + 1), d.anyValue(depth + 1)}
	case 5:
		return map[string]any{d.str(): d.anyValue(depth + 1)}
	case 6:
		if n := d.node(depth + 1); n != nil {
			return *n
		}
	case 7:
		return []string{d.str()}
	case 8:
		return d.bytes()
	}
	return nil
}

// mutate changes every value reachable from v that can be changed in
// place: numbers, strings and booleans through pointers, slices and maps,
// and adds an entry to every map.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			mutate(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			mutate(e)
			v.SetMapIndex(k, e)
		}
		v.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	case reflect.Struct:
		for i := range v.NumField() {
			mutate(v.Field(i))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "!")
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
		}
	case reflect.Uint8, reflect.Uint16:
		if v.CanSet() {
			v.SetUint(v.Uint() + 1)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	}
}
