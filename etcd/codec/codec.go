// Package codec turns the values of a watchable map into the bytes of etcd
// values and back, for a mirror (etcd into a map) and a sink (a map into
// etcd). JSON is the default of both.
package codec

import (
	"encoding/json"
	"fmt"
)

// Codec encodes values of type V as etcd values and decodes them back.
// Decode(Encode(v)) must give a value equal to v. A Codec must be safe for
// concurrent use; the ones in this package are.
type Codec[V any] interface {
	Encode(v V) ([]byte, error)
	Decode(data []byte) (V, error)
}

// JSON returns the codec of encoding/json. Decoding refuses trailing data
// after the value, so that two values concatenated by mistake are an error
// rather than the first of them.
func JSON[V any]() Codec[V] { return jsonCodec[V]{} }

type jsonCodec[V any] struct{}

func (jsonCodec[V]) Encode(v V) ([]byte, error) { return json.Marshal(v) }

func (jsonCodec[V]) Decode(data []byte) (V, error) {
	var v V
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("decode JSON: %w", err)
	}
	return v, nil
}

// String returns the codec that stores a string as its bytes, unchanged.
func String() Codec[string] { return stringCodec{} }

type stringCodec struct{}

func (stringCodec) Encode(v string) ([]byte, error)    { return []byte(v), nil }
func (stringCodec) Decode(data []byte) (string, error) { return string(data), nil }
