package discovery_test

import (
	"sync"
	"testing"

	"github.com/switchyard-go/switchyard/discovery"
)

func TestRoundRobin(t *testing.T) {
	var rr discovery.RoundRobin
	if _, ok := rr.Pick(nil); ok {
		t.Error("Pick of no targets succeeded")
	}
	targets := urls("http://a:1", "http://b:1", "http://c:1")
	var got []string
	for range 6 {
		tg, _ := rr.Pick(targets)
		got = append(got, tg.URL)
	}
	// The failed Pick above took no turn.
	want := []string{"http://a:1", "http://b:1", "http://c:1", "http://a:1", "http://b:1", "http://c:1"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("picks %q, want %q", got, want)
		}
	}

	// Concurrent picks share the turns evenly.
	var rr2 discovery.RoundRobin
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				tg, _ := rr2.Pick(targets)
				mu.Lock()
				counts[tg.URL]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, tg := range targets {
		if counts[tg.URL] != 400 {
			t.Errorf("concurrent picks: %v, want 400 each", counts)
			break
		}
	}
}

func TestPreferHTTPS(t *testing.T) {
	p := discovery.PreferHTTPS(nil)
	tests := []struct {
		name    string
		targets []discovery.Target
		want    []string // successive picks; nil when none
	}{
		{"https when there is one", urls("http://a:1", "https://b:1", "http://c:1", "https://d:1"), []string{"https://b:1", "https://d:1", "https://b:1"}},
		{"then http", urls("grpc://x:1", "http://a:1", "http://c:1"), []string{"http://a:1", "http://c:1", "http://a:1"}},
		{"never another scheme", urls("grpc://x:1", "ws://y:1"), nil},
		{"nothing", nil, nil},
	}
	for _, tt := range tests {
		p := discovery.PreferHTTPS(new(discovery.RoundRobin))
		for i := 0; i < 3; i++ {
			tg, ok := p.Pick(tt.targets)
			if tt.want == nil {
				if ok {
					t.Errorf("%s: picked %v, want nothing", tt.name, tg)
				}
				break
			}
			if tg.URL != tt.want[i] {
				t.Errorf("%s: pick %d = %s, want %s", tt.name, i, tg.URL, tt.want[i])
			}
		}
	}
	if tg, ok := p.Pick(urls("https://only:1")); !ok || tg.URL != "https://only:1" {
		t.Errorf("PreferHTTPS(nil): %v %v", tg, ok)
	}
}
