package watchable_test

import (
	"fmt"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// Route is plain data: no DeepCopy method is needed to store it.
type Route struct {
	Host     string
	Backends []string
	Headers  map[string]string
}

// Lease holds a time.Time, which is immutable and shared by copies.
type Lease struct {
	Holder string
	Until  time.Time
}

func ExampleMap_Store_plainValues() {
	var routes watchable.Map[string, *Route]
	mine := &Route{Host: "example.com", Backends: []string{"10.0.0.1:80"}, Headers: map[string]string{"x-env": "prod"}}
	routes.Store("web", mine)

	// The map stored a deep copy: changing ours changes nothing there.
	mine.Backends[0] = "10.0.0.2:80"
	mine.Headers["x-env"] = "dev"
	stored, _ := routes.Load("web")
	fmt.Println(stored.Backends, stored.Headers)

	var leases watchable.Map[string, Lease]
	until := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	leases.Store("leader", Lease{Holder: "a", Until: until})
	// The same instant in another location is equal (time.Time.Equal):
	// storing it is not a change.
	leases.Store("leader", Lease{Holder: "a", Until: until.In(time.FixedZone("CET", 3600))})
	fmt.Println("revision", leases.Revision())

	// What cannot be copied is refused at the first Store, naming the part.
	defer func() { fmt.Println(recover()) }()
	var hooks watchable.Map[string, struct{ OnChange func() }]
	hooks.Store("h", struct{ OnChange func() }{})
	// Output:
	// [10.0.0.1:80] map[x-env:prod]
	// revision 1
	// watchable: cannot deep-copy struct { OnChange func() }: field .OnChange is a func
}
