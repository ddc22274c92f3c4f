// Package levels has one benchmark with four levels of sub-benchmarks, for
// TestMeasuredSomeCatchesAPatternAtTheWrongLevel in bench/cmd/compare.
package levels

import "testing"

func BenchmarkLevels(b *testing.B) {
	for _, lib := range []string{"ours", "peer"} {
		b.Run("lib="+lib, func(b *testing.B) {
			b.Run("val=int", func(b *testing.B) {
				b.Run("N=100", func(b *testing.B) {
					for _, how := range []string{"keys", "subset"} {
						b.Run("how="+how, func(b *testing.B) {
							if lib == "peer" {
								b.Skip("the peer has no keyed subscriptions")
							}
							for range b.N {
							}
						})
					}
				})
			})
		})
	}
}
