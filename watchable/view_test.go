package watchable_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

func TestViewReadsTheMap(t *testing.T) {
	var m watchable.Map[string, int]
	v := m.View()
	done := m.RegisterInitializer("loader")
	sub := v.Subscribe(t.Context())
	subset := v.SubscribeSubset(t.Context(), func(k string, _ int) bool { return k == "a" })
	notified := make(chan struct{}, 1)
	v.Notify(t.Context(), notified)
	next(t, sub)
	next(t, subset)

	m.Store("a", 1)
	m.Store("b", 2)
	done()
	if got, ok := v.Load("a"); !ok || got != 1 || v.Len() != 2 || v.Revision() != m.Revision() {
		t.Fatalf("View reads disagree with the map: Load %v %v, Len %d, Revision %d", got, ok, v.Len(), v.Revision())
	}
	if len(v.LoadAll()) != 2 || len(v.LoadAllMatching(func(k string, _ int) bool { return k == "b" })) != 1 {
		t.Fatal("View LoadAll or LoadAllMatching disagree with the map")
	}
	if st := v.State(); st.Len() != 2 {
		t.Fatalf("View State has %d entries; want 2", st.Len())
	}
	if s := next(t, sub); !s.Initialized || s.State.Len() != 2 {
		t.Fatalf("View subscription snapshot = %+v", s)
	}
	if s := next(t, subset); s.State.Len() != 1 {
		t.Fatalf("View subset snapshot = %+v", s)
	}
	<-notified
	<-v.Initialized()
	if v.Subscribers() != 2 || v.Notifiers() != 1 || len(v.PendingInitializers()) != 0 {
		t.Fatalf("View counts: %d subscribers, %d notifiers, pending %v", v.Subscribers(), v.Notifiers(), v.PendingInitializers())
	}
}

func TestZeroViewPanicsClearly(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "zero View") {
			t.Fatalf("recovered %v; want a panic naming the zero View", r)
		}
	}()
	var v watchable.View[string, int]
	v.Len()
}

// TestViewCannotWrite checks the promise that writing through a View does
// not compile: testdata/viewwrite tries.
func TestViewCannotWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "build", "-o", "/dev/null", "./testdata/viewwrite").CombinedOutput()
	if err == nil {
		t.Fatalf("a write through a View compiled:\n%s", out)
	}
	for _, want := range []string{"v.Store undefined", "v.Delete undefined", "v.Batch undefined", "v.m undefined"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go build output lacks %q:\n%s", want, out)
		}
	}
}
