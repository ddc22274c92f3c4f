package generate

import (
	"bytes"
	"encoding/json"
	"fmt"

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
// made of map[string]any, []any, string, float64, bool and nil only, and
// sharing no memory with m. Generators may build resources and patches from
// any values that encode to JSON (typed slices and maps, integers, structs);
// normalizing them gives every consumer one representation, so that equal
// contents compare equal whatever types built them. Values that are JSON
// already are copied by a walk; others take a round trip through
// encoding/json.
func jsonObject(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		jv, err := jsonValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = jv
	}
	return out, nil
}

func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case float64:
		if _, err := json.Marshal(v); err != nil { // NaN and infinities
			return nil, err
		}
		return v, nil
	case map[string]any:
		if v == nil {
			return nil, nil
		}
		return jsonObject(v)
	case Config:
		if v == nil {
			return nil, nil
		}
		return jsonObject(v)
	case []any:
		if v == nil {
			return nil, nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			je, err := jsonValue(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = je
		}
		return out, nil
	case int:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case int64:
		return float64(v), nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var out any
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
}
