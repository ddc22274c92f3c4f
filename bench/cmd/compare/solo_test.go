package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Output of real runs on a 2-core machine, with the report's -benchtime
// and -count (ChangeToWatchers at 100x).
const (
	registryOutput = `goos: linux
goarch: amd64
pkg: github.com/switchyard-go/switchyard/provider/registry
cpu: AMD EPYC
BenchmarkHeartbeat-2            	   20000	     43649 ns/op	     22910 heartbeats/s	    6568 B/op	      69 allocs/op
BenchmarkHeartbeat-2            	   20000	     47595 ns/op	     21011 heartbeats/s	    6565 B/op	      68 allocs/op
BenchmarkHeartbeat-2            	   20000	     44845 ns/op	     22299 heartbeats/s	    6590 B/op	      69 allocs/op
BenchmarkHeartbeatInProcess-2   	   20000	      3213 ns/op	     996 B/op	       5 allocs/op
BenchmarkHeartbeatInProcess-2   	   20000	      3369 ns/op	    1013 B/op	       5 allocs/op
BenchmarkHeartbeatInProcess-2   	   20000	      3154 ns/op	     975 B/op	       5 allocs/op
PASS
ok  	github.com/switchyard-go/switchyard/provider/registry	3.713s
goos: linux
goarch: amd64
pkg: github.com/switchyard-go/switchyard/provider/registry
cpu: AMD EPYC
BenchmarkChangeToWatchers-2   	     100	  15099026 ns/op	      5359 heartbeats/s	      6526 p50-µs	     32025 p99-µs	10062724 B/op	    9958 allocs/op
BenchmarkChangeToWatchers-2   	     100	  21472722 ns/op	      4330 heartbeats/s	      7703 p50-µs	     34717 p99-µs	10117651 B/op	   10774 allocs/op
BenchmarkChangeToWatchers-2   	     100	  15547247 ns/op	      4046 heartbeats/s	      7521 p50-µs	     16145 p99-µs	 9937342 B/op	    8726 allocs/op
PASS
ok  	github.com/switchyard-go/switchyard/provider/registry	5.577s
`
	pipelineOutput = `goos: linux
goarch: amd64
pkg: github.com/switchyard-go/switchyard/examples/pipeline
cpu: AMD EPYC
BenchmarkGateway/direct-2         	   20000	     40641 ns/op	        44.00 p50-µs	       487.0 p99-µs	     24606 req/s	    5870 B/op	      66 allocs/op
BenchmarkGateway/direct-2         	   20000	     49119 ns/op	        42.00 p50-µs	      1003 p99-µs	     20359 req/s	    5874 B/op	      66 allocs/op
BenchmarkGateway/direct-2         	   20000	     42281 ns/op	        42.00 p50-µs	       521.0 p99-µs	     23651 req/s	    5875 B/op	      66 allocs/op
BenchmarkGateway/gateway-2        	   20000	     99427 ns/op	       101.0 p50-µs	      4082 p99-µs	     10058 req/s	   13446 B/op	     161 allocs/op
BenchmarkGateway/gateway-2        	   20000	    139521 ns/op	       101.0 p50-µs	      4532 p99-µs	      7167 req/s	   13441 B/op	     160 allocs/op
BenchmarkGateway/gateway-2        	   20000	    106182 ns/op	        64.00 p50-µs	      4355 p99-µs	      9418 req/s	   13439 B/op	     160 allocs/op
PASS
ok  	github.com/switchyard-go/switchyard/examples/pipeline	9.603s
goos: linux
goarch: amd64
pkg: github.com/switchyard-go/switchyard/examples/pipeline
cpu: AMD EPYC
BenchmarkRegistrationToFirstRoute-2   	     500	    780291 ns/op	       539.0 p50-µs	      4805 p99-µs	   47753 B/op	     485 allocs/op
BenchmarkRegistrationToFirstRoute-2   	     500	    746390 ns/op	       524.0 p50-µs	      4491 p99-µs	   44269 B/op	     466 allocs/op
BenchmarkRegistrationToFirstRoute-2   	     500	    575379 ns/op	       503.0 p50-µs	      1655 p99-µs	   46129 B/op	     478 allocs/op
PASS
ok  	github.com/switchyard-go/switchyard/examples/pipeline	3.409s
`
)

// parsePkg parses benchmark output and tags the results with the package
// they ran in, as compare does.
func parsePkg(t *testing.T, pkg, output string) []result {
	t.Helper()
	results, err := parse(strings.NewReader(output))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	for i := range results {
		results[i].Pkg = pkg
	}
	return results
}

// shape keeps the lines of a report that carry its structure and figures:
// headings, table rows, notes on missing figures and commands.
func shape(md string) []string {
	var out []string
	for _, line := range strings.Split(md, "\n") {
		for _, prefix := range []string{"#", "|", "Not measured", "go test"} {
			if strings.HasPrefix(line, prefix) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

func TestSoloSections(t *testing.T) {
	commands := []command{
		{Pkg: "./bench", Line: "go test -run '^$' -bench '^BenchmarkLoad$' -benchtime 20000x -count 3 -benchmem ./bench   # 9s"},
		{Pkg: registryPkg, Line: "go test -run '^$' -bench 'Heartbeat' -benchtime 20000x -count 3 -benchmem ./provider/registry   # 4s"},
		{Pkg: registryPkg, Line: "go test -run '^$' -bench 'Change|Watch' -benchtime 100x -count 3 -benchmem ./provider/registry   # 6s"},
		{Pkg: pipelinePkg, Line: "go test -run '^$' -bench 'Gateway|Direct|Proxy' -benchtime 20000x -count 3 -benchmem ./examples/pipeline   # 10s"},
		{Pkg: pipelinePkg, Line: "go test -run '^$' -bench 'Regist' -benchtime 500x -count 3 -benchmem ./examples/pipeline   # 3s"},
	}
	tests := []struct {
		name    string
		section int // index in soloSections
		results []result
		want    []string
	}{
		{
			name:    "registry",
			section: 0,
			results: append(parsePkg(t, registryPkg, registryOutput), parsePkg(t, pipelinePkg, pipelineOutput)...),
			want: []string{
				"## Service registry",
				"### Heartbeat throughput",
				"| benchmark | heartbeats/s | ns/op | B/op | allocs/op |",
				"|---|---:|---:|---:|---:|",
				"| Heartbeat | 22,299 | 44.8 µs | 6.57 kB | 69.0 |",
				"| HeartbeatInProcess | — | 3.21 µs | 996 B | 5.00 |",
				"### Change-to-watcher latency",
				"| benchmark | heartbeats/s | p50 | p99 | ns/op | B/op | allocs/op |",
				"|---|---:|---:|---:|---:|---:|---:|",
				"| ChangeToWatchers | 4,330 | 7.52 ms | 32.0 ms | 15.5 ms | 10.1 MB | 9958 |",
				"go test -run '^$' -bench 'Heartbeat' -benchtime 20000x -count 3 -benchmem ./provider/registry   # 4s",
				"go test -run '^$' -bench 'Change|Watch' -benchtime 100x -count 3 -benchmem ./provider/registry   # 6s",
			},
		},
		{
			name:    "pipeline",
			section: 1,
			results: append(parsePkg(t, registryPkg, registryOutput), parsePkg(t, pipelinePkg, pipelineOutput)...),
			want: []string{
				"## Pipeline gateway",
				"### Direct and through the gateway",
				"| benchmark | req/s | p50 | p99 | ns/op | B/op | allocs/op |",
				"|---|---:|---:|---:|---:|---:|---:|",
				"| Gateway/direct | 23,651 | 42.0 µs | 521 µs | 42.3 µs | 5.87 kB | 66.0 |",
				"| Gateway/gateway | 9,418 | 101 µs | 4.36 ms | 106 µs | 13.4 kB | 160 |",
				"| overhead: Gateway/gateway ÷ Gateway/direct | 2.51× | 2.40× | 8.36× | 2.51× | 2.29× | 2.42× |",
				"### Registration to first routed request",
				"| benchmark | p50 | p99 | ns/op | B/op | allocs/op |",
				"|---|---:|---:|---:|---:|---:|",
				"| RegistrationToFirstRoute | 524 µs | 4.49 ms | 746 µs | 46.1 kB | 478 |",
				"go test -run '^$' -bench 'Gateway|Direct|Proxy' -benchtime 20000x -count 3 -benchmem ./examples/pipeline   # 10s",
				"go test -run '^$' -bench 'Regist' -benchtime 500x -count 3 -benchmem ./examples/pipeline   # 3s",
			},
		},
		{
			// Another shape the pipeline's benchmarks could take: the
			// family renamed, a metric in other units, a benchmark no table
			// describes, and no registration benchmark.
			name:    "renamed, unknown and missing benchmarks",
			section: 1,
			results: parsePkg(t, pipelinePkg, `BenchmarkProxy/via=direct/size=1k-2   20000   40641 ns/op   0.044 p50-ms   24606 req/s
BenchmarkProxy/via=gateway/size=1k-2   20000   99427 ns/op   0.101 p50-ms   10058 req/s   3 retries/op
BenchmarkRouteTable-2   1000   1500 ns/op   2 routes/op
`),
			want: []string{
				"## Pipeline gateway",
				"### Direct and through the gateway",
				"| benchmark | req/s | p50 | ns/op | retries/op |",
				"|---|---:|---:|---:|---:|",
				"| Proxy/via=direct/size=1k | 24,606 | 44.0 µs | 40.6 µs | — |",
				"| Proxy/via=gateway/size=1k | 10,058 | 101 µs | 99.4 µs | 3.00 |",
				"| overhead: Proxy/via=gateway/size=1k ÷ Proxy/via=direct/size=1k | 2.45× | 2.30× | 2.45× | — |",
				"### Registration to first routed request",
				"Not measured in this run: no benchmark of ./examples/pipeline matched `-bench 'Regist'`.",
				"### Other benchmarks of ./examples/pipeline",
				"| benchmark | ns/op | routes/op |",
				"|---|---:|---:|",
				"| RouteTable | 1.50 µs | 2.00 |",
				"go test -run '^$' -bench 'Gateway|Direct|Proxy' -benchtime 20000x -count 3 -benchmem ./examples/pipeline   # 10s",
				"go test -run '^$' -bench 'Regist' -benchtime 500x -count 3 -benchmem ./examples/pipeline   # 3s",
			},
		},
		{
			name:    "a skipped benchmark",
			section: 0,
			results: parsePkg(t, registryPkg, `--- SKIP: BenchmarkHeartbeat-2
    bench_test.go:12: needs more file descriptors
BenchmarkHeartbeatInProcess-2   	   20000	      3213 ns/op	     996 B/op	       5 allocs/op
`),
			want: []string{
				"## Service registry",
				"### Heartbeat throughput",
				"| benchmark | ns/op | B/op | allocs/op |",
				"|---|---:|---:|---:|",
				"| Heartbeat | skipped | skipped | skipped |",
				"| HeartbeatInProcess | 3.21 µs | 996 B | 5.00 |",
				"### Change-to-watcher latency",
				"Not measured in this run: no benchmark of ./provider/registry matched `-bench 'Change|Watch'`.",
				"go test -run '^$' -bench 'Heartbeat' -benchtime 20000x -count 3 -benchmem ./provider/registry   # 4s",
				"go test -run '^$' -bench 'Change|Watch' -benchtime 100x -count 3 -benchmem ./provider/registry   # 6s",
			},
		},
		{
			name:    "no results from the package",
			section: 0,
			results: parsePkg(t, pipelinePkg, pipelineOutput),
			want:    nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeSoloSection(&b, tt.results, soloSections[tt.section], commands)
			if diff := cmp.Diff(tt.want, shape(b.String())); diff != "" {
				t.Errorf("section (-want +got):\n%s\nwhole output:\n%s", diff, b.String())
			}
		})
	}
}

func TestGatewayPairs(t *testing.T) {
	tests := []struct {
		name      string
		scenarios []string
		want      [][2]string
	}{
		{
			name:      "sub-benchmarks",
			scenarios: []string{"BenchmarkGateway/direct", "BenchmarkGateway/gateway"},
			want:      [][2]string{{"BenchmarkGateway/gateway", "BenchmarkGateway/direct"}},
		},
		{
			name:      "top-level benchmarks, any case",
			scenarios: []string{"BenchmarkGateway", "BenchmarkDirect", "BenchmarkRegistration"},
			want:      [][2]string{{"BenchmarkGateway", "BenchmarkDirect"}},
		},
		{
			name: "one pair per size",
			scenarios: []string{"BenchmarkGateway/direct/size=1k", "BenchmarkGateway/direct/size=1M",
				"BenchmarkGateway/gateway/size=1k", "BenchmarkGateway/gateway/size=1M"},
			want: [][2]string{
				{"BenchmarkGateway/gateway/size=1k", "BenchmarkGateway/direct/size=1k"},
				{"BenchmarkGateway/gateway/size=1M", "BenchmarkGateway/direct/size=1M"},
			},
		},
		{
			name:      "no direct counterpart",
			scenarios: []string{"BenchmarkGateway/gateway", "BenchmarkGateway/backend"},
			want:      nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, gatewayPairs(tt.scenarios)); diff != "" {
				t.Errorf("gatewayPairs(%q) (-want +got):\n%s", tt.scenarios, diff)
			}
		})
	}
}

func TestSplitByPkg(t *testing.T) {
	results := append(parsePkg(t, "./bench", "BenchmarkLoad/lib=switchyard/val=k8s/N=100-2  20000  900 ns/op\n"),
		parsePkg(t, registryPkg, registryOutput)...)
	side, solo := splitByPkg(results, "./bench")
	var sideNames, soloNames []string
	for _, r := range side {
		sideNames = append(sideNames, r.Name)
	}
	for _, r := range solo {
		soloNames = append(soloNames, r.Name)
	}
	if diff := cmp.Diff([]string{"BenchmarkLoad/lib=switchyard/val=k8s/N=100"}, sideNames); diff != "" {
		t.Errorf("side-by-side results (-want +got):\n%s", diff)
	}
	wantSolo := []string{
		"BenchmarkHeartbeat", "BenchmarkHeartbeat", "BenchmarkHeartbeat",
		"BenchmarkHeartbeatInProcess", "BenchmarkHeartbeatInProcess", "BenchmarkHeartbeatInProcess",
		"BenchmarkChangeToWatchers", "BenchmarkChangeToWatchers", "BenchmarkChangeToWatchers",
	}
	if diff := cmp.Diff(wantSolo, soloNames); diff != "" {
		t.Errorf("switchyard-only results (-want +got):\n%s", diff)
	}
}
