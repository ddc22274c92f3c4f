package translator_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

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
	urls := new(watchable.Map[string, string])
	r := translator.Derive("urls", ports, urls,
		func(_ context.Context, name string, port int) (map[string]string, error) {
			return map[string]string{name: fmt.Sprintf("http://%s.internal:%d", name, port)}, nil
		})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	<-r.(runner.Readier).Ready()

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
	shares := new(watchable.Map[string, float64])
	r := translator.Compute("shares", shares, func(context.Context) (map[string]float64, error) {
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
	}, weights, healthy)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	<-r.(runner.Readier).Ready()
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
