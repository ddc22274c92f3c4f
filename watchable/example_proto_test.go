package watchable_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchyard-go/switchyard/watchable"
)

// Proto messages are stored like any other value: copied on the way in,
// and compared with the stored one as proto.Equal would, so that storing a
// message equal to the current one, even a different pointer built anew,
// tells no subscriber anything.
func ExampleMap_Store_protoMessages() {
	var m watchable.Map[string, *structpb.Struct]
	route, _ := structpb.NewStruct(map[string]any{"host": "example.com", "weight": 100})
	m.Store("route", route)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := m.Subscribe(ctx)
	first := <-sub
	fmt.Println("revision", first.Revision)

	// The map holds its own copy: changing ours changes nothing there.
	route.Fields["weight"] = structpb.NewNumberValue(50)
	stored, _ := m.Load("route")
	fmt.Println("stored weight:", stored.Fields["weight"].GetNumberValue())

	// An equal message: no new revision, no snapshot.
	again, _ := structpb.NewStruct(map[string]any{"host": "example.com", "weight": 100})
	m.Store("route", again)
	fmt.Println("revision", m.Revision())

	// A different one reaches the subscriber.
	m.Store("route", route)
	s := <-sub
	fmt.Println("revision", s.Revision, "weight", s.Updates[0].Value.Fields["weight"].GetNumberValue())
	// Output:
	// revision 1
	// stored weight: 100
	// revision 1
	// revision 2 weight 50
}
