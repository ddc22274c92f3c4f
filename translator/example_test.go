package translator_test

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

func ExampleDerive() {
	ports := new(watchable.Map[string, int]) // service name -> port
	ports.Store("web", 8080)
	ports.Store("api", 9090)

	// The transformation only says what one service produces; the
	// translator publishes it, and deletes it when it is no longer produced.
	d := translator.Derive("urls", ports.View(),
		func(_ context.Context, name string, port int) (map[string]string, error) {
			return map[string]string{name: fmt.Sprintf("http://%s.internal:%d", name, port)}, nil
		})
	urls := d.Output() // read-only, and usable before Run

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	<-d.Ready()

	all := urls.State()
	for _, name := range slices.Sorted(all.Keys()) {
		v, _ := all.Get(name)
		fmt.Println(name, v)
	}

	sub := urls.Subscribe(ctx)
	<-sub // the current contents
	ports.Delete("api")
	for _, u := range (<-sub).Updates {
		fmt.Println("deleted:", u.Delete, u.Key)
	}

	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// api http://api.internal:9090
	// web http://web.internal:8080
	// deleted: true api
	// Run returned <nil>
}

func ExampleCompute() {
	weights := new(watchable.Map[string, int]) // backend -> weight
	healthy := new(watchable.Map[string, bool])
	weights.Store("a", 3)
	weights.Store("b", 1)
	healthy.Store("a", true)

	// Recomputed whenever either input changes; reads both through State.
	c := translator.Compute("shares", []translator.Input{weights, healthy}, func(context.Context) (map[string]float64, error) {
		h, w := healthy.State(), weights.State()
		total := 0
		for name, weight := range w.All() {
			if ok, _ := h.Get(name); ok {
				total += weight
			}
		}
		out := make(map[string]float64)
		for name, weight := range w.All() {
			if ok, _ := h.Get(name); ok {
				out[name] = float64(weight) / float64(total)
			}
		}
		return out, nil
	})
	shares := c.Output()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	<-c.Ready()
	fmt.Println(shares.State().Map())

	sub := shares.Subscribe(ctx)
	<-sub
	healthy.Store("b", true)
	s := (<-sub).State.Map()
	for _, name := range slices.Sorted(maps.Keys(s)) {
		fmt.Println(name, s[name])
	}

	cancel()
	<-done
	// Output:
	// map[a:1]
	// a 0.75
	// b 0.25
}

func ExampleGroupBy() {
	type pod struct{ Service, IP string }
	pods := new(watchable.Map[string, pod]) // pod name -> pod
	pods.Store("web-1", pod{"web", "10.0.0.1"})
	pods.Store("web-2", pod{"web", "10.0.0.2"})
	pods.Store("api-1", pod{"api", "10.0.1.1"})

	// key names each pod's group; build makes one group's value from its
	// members. The translator keeps the membership, builds only the groups
	// that changed, and deletes a group when its last member leaves.
	g := translator.GroupBy("endpoints", pods.View(),
		func(_ string, p pod) (string, bool) { return p.Service, p.Service != "" },
		func(_ context.Context, _ string, members iter.Seq2[string, pod]) (string, error) {
			var ips []string
			for _, p := range members { // in no particular order
				ips = append(ips, p.IP)
			}
			slices.Sort(ips)
			return strings.Join(ips, " "), nil
		})
	endpoints := g.Output() // service -> IPs

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	<-g.Ready()

	show := func(s watchable.State[string, string]) {
		for _, service := range slices.Sorted(s.Keys()) {
			ips, _ := s.Get(service)
			fmt.Printf("%s: %s\n", service, ips)
		}
	}
	show(endpoints.State())

	sub := endpoints.Subscribe(ctx)
	<-sub // the current contents
	// api-1 moves to web: api loses its last member and is deleted.
	pods.Store("api-1", pod{"web", "10.0.1.1"})
	snap := <-sub
	fmt.Println("changed:", len(snap.Updates), "groups")
	show(snap.State)

	cancel()
	<-done
	// Output:
	// api: 10.0.1.1
	// web: 10.0.0.1 10.0.0.2
	// changed: 2 groups
	// web: 10.0.0.1 10.0.0.2 10.0.1.1
}

func ExampleGrouping_WithInputEqual() {
	type instance struct {
		Service string
		Addr    string
		Beat    int // moved by every heartbeat; no output depends on it
	}
	instances := new(watchable.Map[string, instance])
	instances.Store("i1", instance{"web", "10.0.0.1:80", 1})
	instances.Store("i2", instance{"web", "10.0.0.2:80", 1})

	builds := 0
	g := translator.GroupBy("endpoints", instances.View(),
		func(_ string, i instance) (string, bool) { return i.Service, true },
		func(_ context.Context, _ string, members iter.Seq2[string, instance]) (int, error) {
			builds++ // only Run's goroutine calls build
			n := 0
			for range members {
				n++
			}
			return n, nil
		}).
		WithInputEqual(func(a, b instance) bool { return a.Service == b.Service && a.Addr == b.Addr })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	<-g.Ready()

	sub := g.Output().Subscribe(ctx)
	<-sub
	instances.Store("i1", instance{"web", "10.0.0.1:80", 2}) // a heartbeat: no rebuild
	instances.Store("i3", instance{"web", "10.0.0.3:80", 1}) // a new member: a rebuild
	n, _ := (<-sub).State.Get("web")
	cancel()
	<-done
	fmt.Println("web has", n, "instances after", builds, "builds")
	// Output:
	// web has 3 instances after 2 builds
}

// The translators' readiness follows their inputs': a translator is ready
// when its inputs are initialized and its first output from them is
// published, so nothing downstream computes from a partial load, and a
// runner group is ready only then.
func Example_readiness() {
	services := new(watchable.Map[string, int]) // service name -> port
	// The writer of services (a provider, say) declares its first load.
	loaded := services.RegisterInitializer("loader")

	urls := translator.Derive("urls", services.View(),
		func(_ context.Context, name string, port int) (map[string]string, error) {
			return map[string]string{name: fmt.Sprintf("http://%s.internal:%d", name, port)}, nil
		})
	count := translator.Compute("count", []translator.Input{urls.Output()},
		func(context.Context) (map[string]int, error) {
			n := urls.Output().Len()
			fmt.Println("computing from", n, "urls")
			return map[string]int{"urls": n}, nil
		})

	g := runner.NewGroup()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx, urls, count) }()

	services.Store("web", 8080) // urls may publish this early; count waits
	services.Store("api", 9090)
	loaded()

	<-g.Ready()
	fmt.Println(count.Output().State().Map())
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// computing from 2 urls
	// map[urls:2]
	// Run returned <nil>
}
