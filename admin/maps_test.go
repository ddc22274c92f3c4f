package admin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/watchable"
)

type point struct{ X, Y int }

type account struct {
	User     string            `json:"user"`
	Token    string            `json:"token"`
	Tags     map[string]string `json:"tags"`
	Sessions []session         `json:"sessions"`
	Big      uint64            `json:"big"`
}

type session struct {
	ID           string `json:"id"`
	RefreshToken string `json:"refreshToken"`
}

func (a account) DeepCopy() account {
	c := a
	c.Tags = make(map[string]string, len(a.Tags))
	for k, v := range a.Tags {
		c.Tags[k] = v
	}
	c.Sessions = append([]session(nil), a.Sessions...)
	return c
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestMaps(t *testing.T) {
	var points watchable.Map[point, string]
	points.Store(point{1, 2}, "a")
	points.Store(point{3, 4}, "b")
	sub := points.Subscribe(t.Context())
	<-sub

	var accounts watchable.Map[string, account]
	loaded := accounts.RegisterInitializer("loader")
	accounts.Store("ann", account{
		User: "ann", Token: "s3cr3t", Tags: map[string]string{"apiKey": "k", "zone": "z"},
		Sessions: []session{{ID: "1", RefreshToken: "r3fr3sh"}}, Big: math.MaxUint64,
	})

	ms := admin.NewMaps()
	admin.AddMap(ms, "points", points.View(), func(p point) string { return fmt.Sprintf("%d,%d", p.X, p.Y) })
	admin.AddMap(ms, "accounts", accounts.View(), func(k string) string { return k })
	url := serve(t, ms)

	want := []admin.MapInfo{{
		Name: "points", Revision: 2, Entries: 2, Subscribers: 1, Initialized: true,
		Contents: map[string]json.RawMessage{"1,2": raw(`"a"`), "3,4": raw(`"b"`)},
	}, {
		Name: "accounts", Revision: 1, Entries: 1, PendingInitializers: []string{"loader"},
		Contents: map[string]json.RawMessage{"ann": raw(`{"big":18446744073709551615,"sessions":[{"id":"1","refreshToken":"***"}],"tags":{"apiKey":"***","zone":"z"},"token":"***","user":"ann"}`)},
	}}
	got := getJSON[[]admin.MapInfo](t, url, http.StatusOK)
	if diff := cmp.Diff(want, got, compactJSON); diff != "" {
		t.Errorf("/debug/maps (-want +got):\n%s", diff)
	}
	_, _, body := get(t, url)
	for _, secret := range []string{"s3cr3t", "r3fr3sh", `"k"`} {
		if strings.Contains(string(body), secret) {
			t.Errorf("/debug/maps shows %s: %s", secret, body)
		}
	}

	loaded()
	got = getJSON[[]admin.MapInfo](t, url+"?map=accounts", http.StatusOK)
	if len(got) != 1 || !got[0].Initialized || got[0].PendingInitializers != nil || got[0].Revision != 2 {
		t.Errorf("accounts once initialized: %+v, want initialized at revision 2", got)
	}
}

// compactJSON compares json.RawMessages by their compact form, since the
// page indents them.
var compactJSON = cmp.Transformer("compact", func(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return "invalid JSON: " + string(r)
	}
	return b.String()
})

func TestMapsBounded(t *testing.T) {
	var big watchable.Map[int, int]
	for i := range 250 {
		big.Store(i, i)
	}
	var small watchable.Map[int, int]
	small.Store(1, 1)

	tests := []struct {
		name      string
		opts      []admin.Option
		query     string
		wantShown int
	}{
		{"default", nil, "", admin.DefaultMaxEntries},
		{"option", []admin.Option{admin.WithMaxEntries(7)}, "", 7},
		{"fewer asked", nil, "?limit=3", 3},
		{"more asked than allowed", []admin.Option{admin.WithMaxEntries(7)}, "?limit=1000", 7},
		{"figures only", nil, "?limit=0", 0},
		{"figures only by option", []admin.Option{admin.WithMaxEntries(-1)}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := admin.NewMaps(tt.opts...)
			admin.AddMap(ms, "big", big.View(), func(k int) string { return fmt.Sprint(k) })
			admin.AddMap(ms, "small", small.View(), func(k int) string { return fmt.Sprint(k) })
			got := getJSON[[]admin.MapInfo](t, serve(t, ms)+tt.query, http.StatusOK)
			if len(got) != 2 {
				t.Fatalf("got %d maps, want 2", len(got))
			}
			b := got[0]
			if b.Entries != 250 || len(b.Contents) != tt.wantShown || !b.Truncated ||
				b.Note != fmt.Sprintf("%d of 250 entries shown, in no particular order", tt.wantShown) {
				t.Errorf("big: entries %d, shown %d, truncated %v, note %q; want 250, %d, truncated with a note",
					b.Entries, len(b.Contents), b.Truncated, b.Note, tt.wantShown)
			}
			for k, v := range b.Contents {
				if string(v) != k {
					t.Errorf("big: entry %s shows %s", k, v)
				}
			}
			if s := got[1]; tt.wantShown > 0 && (s.Truncated || s.Note != "" || len(s.Contents) != 1) {
				t.Errorf("small: %+v, want its one entry, not truncated", s)
			}
		})
	}
}

func TestMapsQuery(t *testing.T) {
	var a, b watchable.Map[string, int]
	ms := admin.NewMaps()
	admin.AddMap(ms, "a", a.View(), func(k string) string { return k })
	admin.AddMap(ms, "b", b.View(), func(k string) string { return k })
	url := serve(t, ms)

	names := func(infos []admin.MapInfo) string {
		var n []string
		for _, i := range infos {
			n = append(n, i.Name)
		}
		return strings.Join(n, ",")
	}
	for query, want := range map[string]string{"": "a,b", "?map=b": "b", "?map=b&map=a": "b,a", "?map=a&map=a": "a"} {
		if got := names(getJSON[[]admin.MapInfo](t, url+query, http.StatusOK)); got != want {
			t.Errorf("GET %s shows %s, want %s", query, got, want)
		}
	}

	notFound := getJSON[map[string]any](t, url+"?map=a&map=nope", http.StatusNotFound)
	if diff := cmp.Diff(map[string]any{"error": `no map named "nope"`, "maps": []any{"a", "b"}}, notFound); diff != "" {
		t.Errorf("unknown map (-want +got):\n%s", diff)
	}
	for _, limit := range []string{"-1", "x", "1.5"} {
		bad := getJSON[map[string]any](t, url+"?limit="+limit, http.StatusBadRequest)
		if msg, _ := bad["error"].(string); !strings.Contains(msg, "limit") {
			t.Errorf("limit=%s: %v, want an error about the limit", limit, bad)
		}
	}
}

func TestMapsUnencodableValues(t *testing.T) {
	var m watchable.Map[string, float64]
	m.Store("ok", 1.5)
	m.Store("nan", math.NaN())
	m.Store("inf", math.Inf(1))
	ms := admin.NewMaps()
	admin.AddMap(ms, "floats", m.View(), func(k string) string { return k })

	got := getJSON[[]admin.MapInfo](t, serve(t, ms), http.StatusOK)
	if len(got) != 1 {
		t.Fatalf("got %d maps, want 1", len(got))
	}
	if diff := cmp.Diff(map[string]json.RawMessage{"ok": raw("1.5")}, got[0].Contents, compactJSON); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if e := got[0].Error; !strings.HasPrefix(e, "2 entries not shown") || !strings.Contains(e, "unsupported value") {
		t.Errorf("error %q, want one saying that 2 entries cannot be encoded", e)
	}
}

func TestAddMapRefuses(t *testing.T) {
	var m watchable.Map[string, int]
	key := func(k string) string { return k }
	tests := []struct {
		name string
		add  func(ms *admin.Maps)
		want string
	}{
		{"empty name", func(ms *admin.Maps) { admin.AddMap(ms, "", m.View(), key) }, "empty name"},
		{"twice", func(ms *admin.Maps) { admin.AddMap(ms, "m", m.View(), key); admin.AddMap(ms, "m", m.View(), key) }, `"m" added twice`},
		{"nil key", func(ms *admin.Maps) { admin.AddMap(ms, "m", m.View(), nil) }, "nil key"},
		{"zero view", func(ms *admin.Maps) { admin.AddMap(ms, "m", watchable.View[string, int]{}, key) }, "zero View"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := fmt.Sprint(recover()); !strings.Contains(r, tt.want) {
					t.Errorf("panic %q, want one mentioning %q", r, tt.want)
				}
			}()
			tt.add(admin.NewMaps())
		})
	}
}
