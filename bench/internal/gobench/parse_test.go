package gobench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    []Result
		wantErr string
	}{
		{
			name: "standard metrics with header and footer",
			input: `goos: linux
goarch: amd64
pkg: github.com/switchyard-go/switchyard/bench
cpu: AMD EPYC
BenchmarkStore/lib=switchyard/val=int/N=10000/S=8-2     	    2000	       612.5 ns/op	     412 B/op	       6 allocs/op
BenchmarkStore/lib=peer/val=int/N=10000/S=8-2           	     200	   1364568 ns/op	  379620 B/op	      49 allocs/op
PASS
ok  	github.com/switchyard-go/switchyard/bench	5.286s
`,
			want: []Result{
				{Name: "BenchmarkStore/lib=switchyard/val=int/N=10000/S=8", Procs: 2, Iterations: 2000,
					Metrics: map[string]float64{"ns/op": 612.5, "B/op": 412, "allocs/op": 6}},
				{Name: "BenchmarkStore/lib=peer/val=int/N=10000/S=8", Procs: 2, Iterations: 200,
					Metrics: map[string]float64{"ns/op": 1364568, "B/op": 379620, "allocs/op": 49}},
			},
		},
		{
			name:  "custom metrics and no GOMAXPROCS suffix",
			input: "BenchmarkBurst/lib=peer/val=k8s \t 20\t 6866905 ns/op\t 4301392 publish-ns/op\t 4.400 snapshots/op\t 227.3 updates/snapshot\t 2728758 B/op\t 18049 allocs/op\n",
			want: []Result{
				{Name: "BenchmarkBurst/lib=peer/val=k8s", Procs: 1, Iterations: 20, Metrics: map[string]float64{
					"ns/op": 6866905, "publish-ns/op": 4301392, "snapshots/op": 4.4,
					"updates/snapshot": 227.3, "B/op": 2728758, "allocs/op": 18049,
				}},
			},
		},
		{
			name: "percentile and rate metrics with a non-ASCII unit",
			input: `BenchmarkChangeToWatchers-2   	     100	  15099026 ns/op	      5359 heartbeats/s	      6526 p50-µs	     32025 p99-µs	10062724 B/op	    9958 allocs/op
BenchmarkGateway/direct-2         	   20000	     40641 ns/op	        44.00 p50-µs	       487.0 p99-µs	     24606 req/s	    5870 B/op	      66 allocs/op
`,
			want: []Result{
				{Name: "BenchmarkChangeToWatchers", Procs: 2, Iterations: 100, Metrics: map[string]float64{
					"ns/op": 15099026, "heartbeats/s": 5359, "p50-µs": 6526, "p99-µs": 32025, "B/op": 10062724, "allocs/op": 9958,
				}},
				{Name: "BenchmarkGateway/direct", Procs: 2, Iterations: 20000, Metrics: map[string]float64{
					"ns/op": 40641, "p50-µs": 44, "p99-µs": 487, "req/s": 24606, "B/op": 5870, "allocs/op": 66,
				}},
			},
		},
		{
			name:  "negative and exponent values",
			input: "BenchmarkIdleSubscriber/lib=switchyard/val=int/N=100/idle=0-8   20   7666 ns/op   -409.6 retained-B/op   1.5e+06 heap-MB\n",
			want: []Result{
				{Name: "BenchmarkIdleSubscriber/lib=switchyard/val=int/N=100/idle=0", Procs: 8, Iterations: 20,
					Metrics: map[string]float64{"ns/op": 7666, "retained-B/op": -409.6, "heap-MB": 1.5e6}},
			},
		},
		{
			name: "skipped benchmark keeps its reason",
			input: `--- SKIP: BenchmarkIdleSubscriber/lib=peer/val=int/N=10000/idle=1-2
    idle_test.go:61: publisher blocked after 3 of 100 stores with a never-reading subscriber
BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=1-2   100   900 ns/op
`,
			want: []Result{
				{Name: "BenchmarkIdleSubscriber/lib=peer/val=int/N=10000/idle=1", Procs: 2,
					Skipped: "idle_test.go:61: publisher blocked after 3 of 100 stores with a never-reading subscriber"},
				{Name: "BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=1", Procs: 2, Iterations: 100,
					Metrics: map[string]float64{"ns/op": 900}},
			},
		},
		{
			name:  "parent benchmark names without results are ignored",
			input: "BenchmarkStore\nBenchmarkStore/lib=peer\n--- FAIL: BenchmarkLoad/lib=peer/val=k8s/N=100\n",
			want:  nil,
		},
		{
			name:    "unpaired value",
			input:   "BenchmarkLoad/lib=peer/val=k8s/N=100-2   20   568.9 ns/op 1312\n",
			wantErr: "do not pair up",
		},
		{
			name:    "bad value",
			input:   "BenchmarkLoad/lib=peer/val=k8s/N=100-2   20   fast ns/op\n",
			wantErr: `value "fast"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}
