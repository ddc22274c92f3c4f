package watchable_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVetCatchesCopies checks the promise that go vet reports a Map copied
// after first use: testdata/copylock copies one in three ways.
func TestVetCatchesCopies(t *testing.T) {
	goTool := goCommand(t, "runs go vet")
	out, err := exec.Command(goTool, "vet", "./testdata/copylock").CombinedOutput()
	if err == nil {
		t.Fatalf("go vet accepted copies of a Map:\n%s", out)
	}
	for _, want := range []string{"byValue passes lock by value", "assignment copies lock value", "call of byValue copies lock value"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	}
}

// goCommand returns the path of the go command for a test that runs it
// (doing what why says), and skips the test under -short or without one.
func goCommand(t *testing.T, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	return goTool
}
