package httpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/switchyard-go/switchyard/httpserver"
)

// A server on port 0 reports the port it got once it is ready.
func ExampleServer_Addr() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, world\n")
	})
	srv := httpserver.New("api", "127.0.0.1:0", mux)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Run(ctx) }() // or in a runner group, with the rest of the program
	<-srv.Ready()

	resp, err := http.Get("http://" + srv.Addr() + "/hello")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(string(body))
	}

	cancel() // what a signal would do: a graceful shutdown
	fmt.Println("run:", <-done)
	// Output:
	// hello, world
	// run: <nil>
}
