// Command quickstart shows the watchable map at work: a publisher stores
// values, a subscriber reads snapshots, and writes made while the subscriber
// is busy reach it coalesced into one snapshot.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/switchyard-go/switchyard/watchable"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// Service is what the publisher stores: a name and the addresses it is
// served at. It is an ordinary struct: the map deep-copies values on the
// way in and out, so that nobody shares memory by accident.
type Service struct {
	Name      string
	Addresses []string
}

func run(out io.Writer) error {
	var services watchable.Map[string, *Service]
	defer services.Close()
	services.Store("users", &Service{Name: "users", Addresses: []string{"10.0.0.1:80"}})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := services.Subscribe(ctx)

	// The first snapshot holds everything that is already there.
	show(out, <-sub)

	// The subscriber is busy now; these four writes wait for it as one
	// snapshot with the net change per key: "cart" was added and removed in
	// between, so it is not mentioned at all.
	services.Store("orders", &Service{Name: "orders", Addresses: []string{"10.0.0.2:80"}})
	services.Store("cart", &Service{Name: "cart"})
	services.Delete("cart")
	services.Store("users", &Service{Name: "users", Addresses: []string{"10.0.0.1:80", "10.0.0.3:80"}})
	show(out, <-sub)

	// Storing a value equal to the current one is not a change.
	services.Store("orders", &Service{Name: "orders", Addresses: []string{"10.0.0.2:80"}})
	select {
	case s := <-sub:
		return fmt.Errorf("unexpected snapshot at revision %d", s.Revision)
	default:
		fmt.Fprintln(out, "storing an equal value delivered nothing")
	}
	return nil
}

func show(out io.Writer, s watchable.Snapshot[string, *Service]) {
	fmt.Fprintf(out, "revision %d: %d services\n", s.Revision, s.State.Len())
	slices.SortFunc(s.Updates, func(a, b watchable.Update[string, *Service]) int {
		return strings.Compare(a.Key, b.Key)
	})
	for _, u := range s.Updates {
		if u.Delete {
			fmt.Fprintf(out, "  - %s removed\n", u.Key)
			continue
		}
		fmt.Fprintf(out, "  - %s at %v\n", u.Key, u.Value.Addresses)
	}
}
