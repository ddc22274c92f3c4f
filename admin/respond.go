package admin

import (
	"encoding/json"
	"net/http"
)

// writeJSON answers with v as indented JSON, which people read with curl.
// The pages change from one moment to the next: nothing may cache them.
func writeJSON(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
