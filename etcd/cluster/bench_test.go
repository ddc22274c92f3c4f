package cluster_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// The failover benchmarks: real processes, killed with SIGKILL or stopped
// gracefully, on an etcd server process. Each iteration is one failover;
// the metrics are the failover times (p50, p99, max) over the iterations,
// in milliseconds. Run a bounded number of iterations, for example:
//
//	go test -run '^$' -bench 'Failover|Takeover' -benchtime 20x ./cluster
//
// ns/op counts the whole cycle (the failover, and bringing the replica
// back), and means little.

// restart starts a killed or stopped replica again, and follows its events.
func (r *replica) restart(tb testing.TB, o *observer) {
	tb.Helper()
	within(tb, r.streamed, "the event stream of "+r.id+" to end")
	o.died(r.id, time.Now())
	r.proc.Restart(tb)
	if err := o.follow(r); err != nil {
		tb.Fatalf("follow the events of %s: %v", r.id, err)
	}
}

func reportDurations(b *testing.B, ds []time.Duration) {
	b.Helper()
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	// The nearest rank: of 20 samples, the p99 is the largest.
	at := func(q float64) time.Duration { return ds[max(0, int(math.Ceil(q*float64(len(ds))))-1)] }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(at(0.50)), "p50-ms")
	b.ReportMetric(ms(at(0.99)), "p99-ms")
	b.ReportMetric(ms(ds[len(ds)-1]), "max-ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d failovers: p50 %v, p99 %v, max %v", len(ds), at(0.50), at(0.99), ds[len(ds)-1])
}

// BenchmarkFailover measures how long after the leader process goes
// another one leads: killed (crash: the TTL runs out) or stopped (resign:
// the lease is revoked at once).
func BenchmarkFailover(b *testing.B) {
	for _, how := range []string{"crash", "resign"} {
		b.Run("how="+how, func(b *testing.B) {
			srv := startEtcd(b)
			o := newObserver()
			rs := startCandidates(b, o, srv.Endpoints, ttl, "a", "b", "c")
			var took []time.Duration
			b.ResetTimer()
			for range b.N {
				o.wait(b, "a leader", func(r map[string]map[string]int64) bool { return len(leaders(r)) == 1 })
				first := leaders(o.running)[0]
				mark := o.mark()
				var at time.Time
				if how == "crash" {
					at = rs[first].kill(b, o)
				} else {
					at = rs[first].stop(b, o)
				}
				o.wait(b, "another leader", func(r map[string]map[string]int64) bool {
					l := leaders(r)
					return len(l) == 1 && l[0] != first
				})
				events := o.since(mark)
				start, _ := startOf(events, leaders(o.running)[0], "")
				took = append(took, start.time().Sub(at))
				rs[first].restart(b, o)
			}
			b.StopTimer()
			reportDurations(b, took)
			o.check(b)
		})
	}
}

// BenchmarkTakeover measures how long after one of three replicas sharing
// 30 items is killed every item is handled again, and reports the most
// items a survivor held (the bound is 16) and how the survivors split the
// items, with the workload levels' Step at 10 ms and at the default 50 ms.
func BenchmarkTakeover(b *testing.B) {
	for _, step := range []time.Duration{10 * time.Millisecond, 50 * time.Millisecond} {
		b.Run("step="+step.String(), func(b *testing.B) { benchmarkTakeover(b, step) })
	}
}

func benchmarkTakeover(b *testing.B, step time.Duration) {
	srv := startEtcd(b)
	o := newObserver()
	ids := []string{"a", "b", "c"}
	rs := map[string]*replica{}
	for _, id := range ids {
		rs[id] = startReplica(b, o, srv.Endpoints, id, "shard", "-key=/app/shards", "-items=30", "-ttl="+ttl.String(), "-step="+step.String())
	}
	balanced := func(r map[string]map[string]int64) bool {
		c := runsPer(r)
		return sum(c) == 30 && c["a"] <= 11 && c["b"] <= 11 && c["c"] <= 11 && c["a"] > 0 && c["b"] > 0 && c["c"] > 0
	}
	var took []time.Duration
	most := 0
	outcomes := map[string]int{} // "15/15" -> runs
	b.ResetTimer()
	for i := range b.N {
		o.wait(b, "the three to share 30 items", balanced)
		victim := ids[i%3]
		at := rs[victim].kill(b, o)
		events := o.wait(b, "the survivors to hold all 30", func(r map[string]map[string]int64) bool { return sum(runsPer(r)) == 30 })
		var last time.Time
		for _, e := range events {
			if e.Kind == "start" && e.At > last.UnixNano() {
				last = e.time()
			}
		}
		took = append(took, last.Sub(at))
		var split []int
		for _, n := range runsPer(o.running) {
			most = max(most, n)
			split = append(split, n)
		}
		slices.Sort(split)
		slices.Reverse(split)
		outcomes[fmt.Sprint(split)]++
		rs[victim].restart(b, o)
	}
	b.StopTimer()
	reportDurations(b, took)
	b.ReportMetric(float64(most), "most-held")
	b.Logf("the most items a survivor held: %d (bound 16); splits after the takeovers: %v", most, outcomes)
	o.check(b)
}
