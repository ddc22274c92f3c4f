package gobench

import (
	"strings"
	"testing"
)

func TestProgressEchoesWholeResultLines(t *testing.T) {
	var got strings.Builder
	p := &Progress{W: &got, Prefix: "base: "}
	// go test writes the name, then the figures once the benchmark ran.
	for _, chunk := range []string{
		"goos: linux\nBenchmarkStore/N=100-2   \t",
		"  200000\t  54.1 ns/op\n",
		"--- SKIP: BenchmarkOther\n    why\nPASS\n",
		"BenchmarkUnfinished",
	} {
		if n, err := p.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	want := "base: BenchmarkStore/N=100-2   \t  200000\t  54.1 ns/op\nbase: --- SKIP: BenchmarkOther\n"
	if got.String() != want {
		t.Errorf("echoed %q, want %q", got.String(), want)
	}
}
