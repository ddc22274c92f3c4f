package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestMeasuredSomeCatchesAPatternAtTheWrongLevel runs go test with -bench
// patterns like the plan's on a benchmark with four levels below its name,
// as BenchmarkKeyedSubscribers has: an element one slash short selects
// nothing (the slip of an earlier plan line), and one that selects only
// skipped benchmarks measures nothing either.
func TestMeasuredSomeCatchesAPatternAtTheWrongLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a benchmark package")
	}
	tests := []struct {
		pattern string
		want    int // results with figures; 0: measuredSome must fail
	}{
		{`^BenchmarkLevels$////^how=subset$`, 1},     // how= is the fifth level
		{`^BenchmarkLevels$///^how=subset$`, 0},      // the fourth is N=
		{`^BenchmarkLevels$/^lib=peer$///^how=`, 0},  // every one skips
		{`^BenchmarkLevels$/^lib=ours$//^N=100$`, 2}, // both hows
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := goCmd(context.Background(), &out, "test", "-run", "^$", "-bench", tt.pattern, "-benchtime", "1x", "./testdata/levels")
		if err != nil {
			t.Fatalf("go test -bench '%s': %v\n%s", tt.pattern, err, out.String())
		}
		rs, err := parse(&out)
		if err != nil {
			t.Fatalf("parsing the output of -bench '%s': %v", tt.pattern, err)
		}
		measured := 0
		for _, r := range rs {
			if r.Skipped == "" {
				measured++
			}
		}
		if measured != tt.want {
			t.Errorf("-bench '%s' measured %d benchmarks; want %d\n%s", tt.pattern, measured, tt.want, out.String())
		}
		cmd := "go test -bench '" + tt.pattern + "'"
		err = measuredSome(cmd, rs)
		switch {
		case tt.want > 0 && err != nil:
			t.Errorf("measuredSome(%d results) = %v; want nil", len(rs), err)
		case tt.want == 0 && err == nil:
			t.Errorf("measuredSome for -bench '%s', which measured nothing, returned nil; want an error", tt.pattern)
		case tt.want == 0 && !strings.Contains(err.Error(), cmd):
			t.Errorf("measuredSome's error %q does not name the command %q", err, cmd)
		}
	}
}
