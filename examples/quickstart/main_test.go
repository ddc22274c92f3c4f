package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOutput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `revision 1, 1 entries:
  stored  users [10.0.0.1:80]
revision 5, 1 entries:
  stored  orders [10.0.0.2:80]
  removed users
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
}

// TestREADME checks the promise that the README's quick start compiles and
// runs as pasted: it is this program, from "package main" on.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Quick start\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatal("the quick start section has no go code block")
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, program, _ := strings.Cut(string(src), "package main\n")
	if diff := cmp.Diff("package main\n"+program, block); diff != "" {
		t.Fatalf("README quick start differs from examples/quickstart/main.go (-main.go +README):\n%s", diff)
	}
}
