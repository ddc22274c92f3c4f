package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	want := `revision 1: 1 services
  - users at [10.0.0.1:80]
revision 5: 2 services
  - orders at [10.0.0.2:80]
  - users at [10.0.0.1:80 10.0.0.3:80]
storing an equal value delivered nothing
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
}
