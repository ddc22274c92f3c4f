package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/switchyard-go/switchyard/watchable"
)

// Config is the configuration of a module or of a runtime: JSON-shaped data
// (objects, arrays, strings, numbers, booleans and null) as it is decoded
// from YAML or JSON, which only the generator that receives it interprets.
// It mirrors Kusion's GenericConfig; Decode turns it into the generator's own
// type.
//
// The configurations in a Request hold JSON values only: map[string]any,
// []any, string, float64, bool and nil.
type Config map[string]any

// Decode decodes c into v, a pointer, with the rules of encoding/json,
// strictly: a field that v's type does not have is an error, so that a
// misspelt setting is reported rather than ignored. A nil c leaves v as it
// is.
func (c Config) Decode(v any) error {
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("decode configuration: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode configuration: %w", err)
	}
	return nil
}

// DeepCopy returns a copy of c that shares no memory with it. Values other
// than JSON values are copied with watchable.DeepCopy.
func (c Config) DeepCopy() Config {
	if c == nil {
		return nil
	}
	return copyObject(c)
}

// copyObject deep-copies a JSON object.
func copyObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

// copyValue deep-copies a JSON value; anything else goes through
// watchable.DeepCopy, which panics, naming the type, on what it cannot copy.
func copyValue(v any) any {
	switch v := v.(type) {
	case nil, string, bool, float64:
		return v
	case map[string]any:
		return copyObject(v)
	case Config:
		return v.DeepCopy()
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	default:
		return watchable.DeepCopy(v)
	}
}

// jsonObject returns m as encoding/json would decode it after encoding it:
// made of map[string]any, []any, string, float64, bool and nil only.
// Generators may build resources and patches from any values that encode to
// JSON (typed slices and maps, integers, structs); normalizing them gives
// every consumer one representation, so that equal contents compare equal
// whatever types built them.
//
// The result shares with m every object and array that holds JSON values
// only, m itself included: normalizing what is JSON already allocates
// nothing, and otherwise only the objects and arrays on the way to the
// values that are not are new. Neither m nor the result may be changed
// afterwards, then; copyObject makes one that may.
func jsonObject(m map[string]any) (map[string]any, error) {
	out, _, err := jsonMap(m)
	return out, err
}

// jsonMap normalizes m, reporting whether the result is a new map.
func jsonMap(m map[string]any) (map[string]any, bool, error) {
	var out map[string]any // nil until a value differs
	for k, v := range m {
		jv, changed, err := jsonValue(v)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", k, err)
		}
		if changed && out == nil {
			out = maps.Clone(m)
		}
		if out != nil && changed {
			out[k] = jv
		}
	}
	if out == nil {
		return m, false, nil
	}
	return out, true, nil
}

// jsonValue normalizes v, reporting whether the result differs from v.
func jsonValue(v any) (any, bool, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, false, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false, fmt.Errorf("unsupported value: %v", v)
		}
		return v, false, nil
	case map[string]any:
		if v == nil {
			return nil, true, nil
		}
		return jsonMap(v)
	case Config:
		if v == nil {
			return nil, true, nil
		}
		m, _, err := jsonMap(v)
		return m, true, err // a map[string]any now
	case []any:
		if v == nil {
			return nil, true, nil
		}
		var out []any // nil until an element differs
		for i, e := range v {
			je, changed, err := jsonValue(e)
			if err != nil {
				return nil, false, fmt.Errorf("[%d]: %w", i, err)
			}
			if changed && out == nil {
				out = slices.Clone(v)
			}
			if out != nil && changed {
				out[i] = je
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	case int:
		return float64(v), true, nil
	case int32:
		return float64(v), true, nil
	case int64:
		return float64(v), true, nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, false, err
		}
		var out any
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, false, err
		}
		return out, true, nil
	}
}

// jsonEqual reports whether a and b are deeply equal, comparing JSON values
// without reflection, and falling back on reflect.DeepEqual for others.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && objectsEqual(a, b)
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) || (a == nil) != (b == nil) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func objectsEqual(a, b map[string]any) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !jsonEqual(av, bv) {
			return false
		}
	}
	return true
}
