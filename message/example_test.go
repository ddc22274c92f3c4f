package message_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/watchable"
)

// The handler is called for the initial contents, then for every change.
// Here it makes the next change itself, so the output is deterministic; in a
// program the writers are other components.
func ExampleHandleSubscription() {
	ctx := context.Background()
	var stock watchable.Map[string, int]
	stock.Store("apples", 1)

	message.HandleSubscription(ctx, message.Loop{Runner: "shop", Message: "stock"}, stock.Subscribe(ctx),
		func(ctx context.Context, u watchable.Update[string, int]) error {
			if u.Delete {
				fmt.Println("sold out:", u.Key)
				stock.Close() // ends the subscription, so HandleSubscription returns
				return nil
			}
			fmt.Println(u.Key, u.Value)
			if u.Value < 3 {
				stock.Store(u.Key, u.Value+1)
			} else {
				stock.Delete(u.Key)
			}
			return nil
		})
	// Output:
	// apples 1
	// apples 2
	// apples 3
	// sold out: apples
}

// A lazy reader claims the changes when it is ready: here the handler makes
// several writes at once, and the loop then handles only their net change.
// Writers do not pay for a lazy reader's backlog, however far behind it is.
func ExampleHandleLazily() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var prices watchable.Map[string, int]
	prices.Store("tea", 3)

	message.HandleLazily(ctx, message.Loop{Runner: "exporter", Message: "prices"}, prices.View(),
		func(ctx context.Context, u watchable.Update[string, int]) error {
			if u.Delete {
				fmt.Println("withdrawn:", u.Key)
				cancel() // HandleLazily returns when ctx is done
				return nil
			}
			fmt.Println(u.Key, u.Value)
			if u.Value == 3 {
				for p := 4; p <= 9; p++ {
					prices.Store("tea", p) // handled once, as tea 9
				}
				prices.Store("coffee", 1)
				prices.Delete("coffee") // added and removed: not handled
			} else {
				prices.Delete("tea")
			}
			return nil
		})
	// Output:
	// tea 3
	// tea 9
	// withdrawn: tea
}

// One loop per node, each following its own node's entry: a write wakes
// only the loop of the node it changes, however many loops there are, and
// a loop that falls behind handles the net change when it catches up.
func ExampleHandleKeysLazily() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var nodes watchable.Map[string, string]
	nodes.Replace(map[string]string{"node-a": "ready", "node-b": "ready"})

	message.HandleKeysLazily(ctx, message.Loop{Runner: "agent", Message: "nodes"}, nodes.View(), []string{"node-a"},
		func(ctx context.Context, u watchable.Update[string, string]) error {
			if u.Delete {
				fmt.Println(u.Key, "removed")
				cancel() // HandleKeysLazily returns when ctx is done
				return nil
			}
			fmt.Println(u.Key, u.Value)
			if u.Value == "ready" {
				nodes.Store("node-b", "draining") // not its node: not handled
				nodes.Store("node-a", "draining")
				nodes.Store("node-a", "cordoned") // handled once, as cordoned
			} else {
				nodes.Delete("node-a")
			}
			return nil
		})
	// Output:
	// node-a ready
	// node-a cordoned
	// node-a removed
}

// A per-node fan-out: each node's loop follows the pods placed on it, and
// a write costs the loops of the other nodes nothing.
func ExampleHandlePartitionLazily() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pods watchable.Map[string, string] // pod → the node it runs on
	pods.Replace(map[string]string{"web-1": "node-a", "db-1": "node-b"})
	byNode := watchable.PartitionBy(ctx, pods.View(), func(_, node string) string { return node })

	message.HandlePartitionLazily(ctx, message.Loop{Runner: "agent", Message: "pods"}, byNode, "node-a",
		func(ctx context.Context, u watchable.Update[string, string]) error {
			if u.Delete {
				fmt.Println(u.Key, "left node-a")
				cancel() // HandlePartitionLazily returns when ctx is done
				return nil
			}
			fmt.Println(u.Key, "runs on", u.Value)
			pods.Store("db-2", "node-b")  // another node's pod: not handled
			pods.Store("web-1", "node-b") // moved away: handled as a delete
			return nil
		})
	// Output:
	// web-1 runs on node-a
	// web-1 left node-a
}

// A state-of-the-world consumer recomputes from the whole State of each
// snapshot.
func ExampleHandleSnapshots() {
	ctx := context.Background()
	var backends watchable.Map[string, string]
	backends.Replace(map[string]string{"b": "10.0.0.2", "a": "10.0.0.1"})

	message.HandleSnapshots(ctx, message.Loop{Runner: "lb", Message: "backends"}, backends.Subscribe(ctx),
		func(ctx context.Context, s watchable.Snapshot[string, string]) error {
			fmt.Println("revision", s.Revision, "backends", slices.Sorted(s.State.Keys()))
			if s.State.Len() == 2 {
				backends.Delete("a")
			} else {
				backends.Close()
			}
			return nil
		})
	// Output:
	// revision 1 backends [a b]
	// revision 2 backends [b]
}

// Metrics are registered on the registry the program serves; WithMetrics
// attaches them to a loop, and ObserveMap exposes a map's size.
func ExampleNewMetrics() {
	reg := prometheus.NewRegistry()
	metrics, err := message.NewMetrics(reg)
	if err != nil {
		panic(err)
	}
	var jobs watchable.Map[string, int]
	stop, err := metrics.ObserveMap("jobs", &jobs)
	if err != nil {
		panic(err)
	}
	defer stop()

	jobs.Replace(map[string]int{"a": 1, "b": 2, "c": 3})
	ctx := context.Background()
	sub := jobs.Subscribe(ctx)
	jobs.Close() // the loop handles what sub holds, then returns
	message.HandleSubscription(ctx, message.Loop{Runner: "worker", Message: "jobs"}, sub,
		func(ctx context.Context, u watchable.Update[string, int]) error {
			if u.Key == "b" {
				return errors.New("job b is broken")
			}
			return nil
		},
		message.WithMetrics(metrics))

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "switchyard_message_updates_total", "switchyard_message_handler_errors_total":
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetCounter().GetValue())
		case "switchyard_map_entries":
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
	// Output:
	// switchyard_map_entries 3
	// switchyard_message_handler_errors_total 1
	// switchyard_message_updates_total 3
}
