// Command quickstart is the README's quick start: a publisher stores plain
// Go values in a watchable map, a subscriber reads snapshots, and writes
// made while the subscriber is busy reach it coalesced into one snapshot.
//
//	go run ./examples/quickstart
package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// Service is an ordinary struct: no DeepCopy method is needed.
type Service struct {
	Addresses []string
	Since     time.Time
}

func main() {
	var services watchable.Map[string, *Service] // the zero value is ready
	defer services.Close()

	users := &Service{Addresses: []string{"10.0.0.1:80"}, Since: time.Now()}
	services.Store("users", users) // deep-copied on the way in...
	users.Addresses[0] = "oops"    // ...so this changes nothing in the map

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := services.Subscribe(ctx) // closes when ctx is done or the map is closed
	show(<-sub)                    // the first snapshot lists every entry

	// The subscriber is busy: these writes wait for it as one snapshot, with
	// the net change per key. "cart" came and went, so it is not mentioned.
	services.Store("orders", &Service{Addresses: []string{"10.0.0.2:80"}})
	services.Store("cart", &Service{})
	services.Delete("cart")
	services.Delete("users")
	show(<-sub)
}

func show(snap watchable.Snapshot[string, *Service]) {
	fmt.Printf("revision %d, %d entries:\n", snap.Revision, snap.State.Len())
	// Updates come in no particular order; sort them to print them.
	slices.SortFunc(snap.Updates, func(a, b watchable.Update[string, *Service]) int {
		return cmp.Compare(a.Key, b.Key)
	})
	for _, u := range snap.Updates {
		if u.Delete {
			fmt.Println("  removed", u.Key)
		} else {
			fmt.Println("  stored ", u.Key, u.Value.Addresses)
		}
	}
}
