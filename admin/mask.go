package admin

import (
	"bytes"
	"encoding/json"
	"strings"
)

// secretWords are the parts of a field name that make its value masked.
var secretWords = []string{"token", "secret", "password", "passwd", "authorization", "apikey", "api_key", "credential", "privatekey", "private_key"}

// masked replaces the values of secret fields.
const masked = "***"

// encodeValue returns the JSON encoding of v, with the value of every
// object member whose name suggests a secret, at any depth, replaced by
// "***".
func encodeValue[V any](v V) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil || !mayHoldSecret(raw) {
		return raw, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep large integers exact
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(mask(tree))
}

// mayHoldSecret reports whether raw mentions a secret word anywhere, which
// is cheap to check, and false for most values.
func mayHoldSecret(raw []byte) bool {
	lower := bytes.ToLower(raw)
	for _, w := range secretWords {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

func secretField(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// mask masks the secret fields of a decoded JSON value, in place.
func mask(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if secretField(k) {
				v[k] = masked
			} else {
				v[k] = mask(e)
			}
		}
	case []any:
		for i := range v {
			v[i] = mask(v[i])
		}
	}
	return v
}
