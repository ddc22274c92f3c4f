// Command pipeline runs the whole switchyard library at work: a file
// provider reads routes, a service registry accepts instances, a translator
// resolves a route table from both, and a reverse proxy serves it. Every
// component is a runner, and they talk only through watchable maps.
//
//	go run ./examples/pipeline
//	curl 127.0.0.1:8080/petstore/pets
//
// Run it with -h for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}
