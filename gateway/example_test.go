package gateway_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/gateway"
)

// A route with a dead and a live target: the GET that meets the dead one
// first is retried on the other, and says so.
func Example() {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "pets at "+r.URL.Path)
	}))
	defer live.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more

	targets := []discovery.Target{{URL: dead, Instance: "a"}, {URL: live.URL, Instance: "b"}}
	proxy := gateway.New(func(r *http.Request) (gateway.Upstream, *gateway.Refusal) {
		return gateway.Upstream{Route: "pets", ServiceID: "petstore", Targets: targets, StripPrefix: "/pets"}, nil
	})
	defer proxy.CloseIdleConnections()
	srv := httptest.NewServer(proxy) // in a program: an httpserver.Server
	defer srv.Close()

	for range 2 {
		resp, err := http.Get(srv.URL + "/pets/1")
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %q retries=%q\n", resp.StatusCode, body, resp.Header.Get(gateway.HeaderRetries))
	}
	http.DefaultClient.CloseIdleConnections()
	// Output:
	// 200 "pets at /1" retries="1"
	// 200 "pets at /1" retries=""
}
