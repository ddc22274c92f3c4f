package translator

import (
	"cmp"
	"fmt"
	"reflect"
)

// compareKeys orders input keys to pick the winner of a conflict, the same
// way on every run: keys whose underlying type is a string, an integer or a
// float compare by value; any other keys compare by their fmt.Sprint text,
// then by their %#v text.
func compareKeys[K comparable](a, b K) int {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.IsValid() && vb.IsValid() && va.Kind() == vb.Kind() {
		switch va.Kind() {
		case reflect.String:
			return cmp.Compare(va.String(), vb.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return cmp.Compare(va.Int(), vb.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return cmp.Compare(va.Uint(), vb.Uint())
		case reflect.Float32, reflect.Float64:
			return cmp.Compare(va.Float(), vb.Float())
		}
	}
	if c := cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)); c != 0 {
		return c
	}
	return cmp.Compare(fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b))
}
