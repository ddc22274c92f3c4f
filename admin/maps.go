package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/switchyard-go/switchyard/watchable"
)

// MapInfo is what /debug/maps shows about one map.
type MapInfo struct {
	// Name is the name the map was added under.
	Name string `json:"name"`
	// Revision, Entries, Subscribers, Notifiers and Initialized are the
	// map's figures (see watchable.View), read just before its contents:
	// the contents may be a little newer than the revision.
	Revision    uint64 `json:"revision"`
	Entries     int    `json:"entries"`
	Subscribers int    `json:"subscribers"`
	Notifiers   int    `json:"notifiers"`
	Initialized bool   `json:"initialized"`
	// PendingInitializers names whom the map waits for while it is not
	// initialized (see watchable.Map.RegisterInitializer).
	PendingInitializers []string `json:"pendingInitializers,omitempty"`
	// Contents are the entries shown, keyed by the text form of their keys,
	// each value as its JSON encoding with secret-looking fields masked.
	Contents map[string]json.RawMessage `json:"contents"`
	// Truncated reports that Contents holds only some of the entries, and
	// Note then says how many.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
	// Error tells about entries left out of Contents because their values
	// could not be encoded as JSON.
	Error string `json:"error,omitempty"`
}

// Maps is the handler of /debug/maps: it shows the maps added to it with
// AddMap, in the order they were added, as a JSON array of MapInfo.
//
// Two query parameters narrow what it shows: map=NAME (repeatable) shows
// only the maps named, in that order, and limit=N shows at most N entries
// per map (never more than WithMaxEntries allows; limit=0 shows the figures
// only). An unknown map name is answered with 404 and a bad limit with 400.
//
// Maps is safe for concurrent use: maps may be added while it serves.
type Maps struct {
	cfg  config
	mu   sync.RWMutex
	maps []shownMap
}

// shownMap is a map Maps can describe, whatever its types.
type shownMap struct {
	name string
	info func(limit int) MapInfo
}

// NewMaps returns a /debug/maps handler with no maps yet.
func NewMaps(opts ...Option) *Maps {
	return &Maps{cfg: newConfig(opts)}
}

// AddMap adds m to what ms shows, under name; key gives the text form of a
// key, which should differ for different keys (two keys with the same text
// show as one entry). The values are shown as encoding/json encodes them.
//
// AddMap panics if name is empty or already added, if key is nil, or if m
// is a zero View.
func AddMap[K comparable, V any](ms *Maps, name string, m watchable.View[K, V], key func(K) string) {
	if name == "" {
		panic("admin: AddMap with an empty name")
	}
	if key == nil {
		panic(fmt.Sprintf("admin: AddMap %q with a nil key function", name))
	}
	m.Len() // a zero View panics here, rather than in a request
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if slices.ContainsFunc(ms.maps, func(s shownMap) bool { return s.name == name }) {
		panic(fmt.Sprintf("admin: map %q added twice", name))
	}
	ms.maps = append(ms.maps, shownMap{name: name, info: func(limit int) MapInfo { return describe(name, m, key, limit) }})
}

// describe reads m's figures and up to limit of its entries.
func describe[K comparable, V any](name string, m watchable.View[K, V], key func(K) string, limit int) MapInfo {
	st := m.State()
	info := MapInfo{
		Name:        name,
		Revision:    st.Revision(), // the entries' own, which m.Revision() might not be
		Subscribers: m.Subscribers(),
		Notifiers:   m.Notifiers(),
	}
	select {
	case <-m.Initialized():
		info.Initialized = true
	default:
		info.PendingInitializers = m.PendingInitializers()
	}
	info.Entries = st.Len()
	info.Contents = make(map[string]json.RawMessage, min(limit, st.Len()))
	var failed int
	var firstErr error
	// Any limit entries: the first ones State yields, so that the cost
	// stays with the limit however large the map is.
	shown := 0
	for k, v := range st.All() {
		if shown == limit {
			break
		}
		shown++
		ks := key(k)
		raw, err := encodeValue(v)
		if err != nil {
			if failed++; firstErr == nil {
				firstErr = fmt.Errorf("key %q: %w", ks, err)
			}
			continue
		}
		info.Contents[ks] = raw
	}
	if shown < info.Entries {
		info.Truncated = true
		info.Note = fmt.Sprintf("%d of %d entries shown, in no particular order", shown, info.Entries)
	}
	if failed > 0 {
		info.Error = fmt.Sprintf("%d entries not shown: their values cannot be encoded as JSON (%v)", failed, firstErr)
	}
	return info
}

func (ms *Maps) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := ms.cfg.maxEntries
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("limit %q: want a number of entries, 0 or more", s)})
			return
		}
		limit = min(n, limit)
	}
	ms.mu.RLock()
	maps := ms.maps
	ms.mu.RUnlock()

	if names := q["map"]; len(names) > 0 {
		var selected []shownMap
		for _, name := range names {
			i := slices.IndexFunc(maps, func(m shownMap) bool { return m.name == name })
			if i < 0 {
				known := make([]string, len(maps))
				for i, m := range maps {
					known[i] = m.name
				}
				writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("no map named %q", name), "maps": known})
				return
			}
			if !slices.ContainsFunc(selected, func(m shownMap) bool { return m.name == name }) {
				selected = append(selected, maps[i])
			}
		}
		maps = selected
	}

	infos := make([]MapInfo, len(maps))
	for i, m := range maps {
		infos[i] = m.info(limit)
	}
	writeJSON(w, http.StatusOK, infos)
}
