package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// Under churn, instance lines are cut to maxInstanceLines a second, and a
// line says how many were left out.
func TestInstanceLinesAreRateLimited(t *testing.T) {
	out := newSyncBuffer()
	p := &pipeline{out: out}
	seen := map[string]*registry.Instance{}
	for i := range 50 {
		id := fmt.Sprintf("i%02d", i)
		p.instanceEvent(seen, watchable.Update[string, *registry.Instance]{Key: id,
			Value: &registry.Instance{ServiceID: "churn", Protocol: "http", Address: "10.0.0.1", Port: 1000 + i, Connected: true}})
	}
	p.reportSuppressed(time.Now())
	p.reportSuppressed(time.Now()) // nothing more to say
	text := out.String()
	// Fifty events take far less than the second the limit spans; if the
	// machine is slow enough for a second to pass, a few more get through.
	if n := strings.Count(text, "instance registered"); n < maxInstanceLines || n > 2*maxInstanceLines {
		t.Errorf("%d instance lines for 50 events, want about %d:\n%s", n, maxInstanceLines, text)
	}
	if n := strings.Count(text, "more not shown"); n != 1 {
		t.Errorf("%d summary lines, want 1:\n%s", n, text)
	}
	if !strings.Contains(text, fmt.Sprintf("instance events       %d more not shown", 50-strings.Count(text, "instance registered"))) {
		t.Errorf("the summary does not count the lines left out:\n%s", text)
	}
}
