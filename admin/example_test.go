package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

type Backend struct {
	Address string `json:"address"`
	Token   string `json:"token"`
}

// Maps shows every map added to it, its figures and its contents, with
// secrets masked.
func ExampleAddMap() {
	var backends watchable.Map[string, Backend]
	backends.Store("web", Backend{Address: "10.0.0.1:80", Token: "s3cr3t"})

	maps := admin.NewMaps()
	admin.AddMap(maps, "backends", backends.View(), func(k string) string { return k })

	rec := httptest.NewRecorder()
	maps.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/maps", nil))
	fmt.Print(rec.Body)
	// Output:
	// [
	//   {
	//     "name": "backends",
	//     "revision": 1,
	//     "entries": 1,
	//     "subscribers": 0,
	//     "notifiers": 0,
	//     "initialized": true,
	//     "contents": {
	//       "web": {
	//         "address": "10.0.0.1:80",
	//         "token": "***"
	//       }
	//     }
	//   }
	// ]
}

// Readiness answers 200 once every runner of the group is ready, and 503
// naming those that are not before.
func ExampleReadiness() {
	g := runner.NewGroup()
	readyz := admin.Readiness(g.Status())
	check := func() {
		rec := httptest.NewRecorder()
		readyz.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		fmt.Println(rec.Code, http.StatusText(rec.Code))
	}

	check() // the group has not started its runners
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- g.Run(ctx, runner.Func("api", func(ctx context.Context) error { <-ctx.Done(); return nil }))
	}()
	<-g.Ready()
	check()
	cancel()
	<-done
	// Output:
	// 503 Service Unavailable
	// 200 OK
}
