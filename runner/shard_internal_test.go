package runner

import "testing"

// TestCapLeavesNoItemUnowned checks the arithmetic the balance proof rests
// on (docs/cluster.md): M members at the cap hold more than T items, so a
// vacant item always has a member below the cap; and the cap is the fair
// share plus one at most.
func TestCapLeavesNoItemUnowned(t *testing.T) {
	for total := 0; total <= 300; total++ {
		for members := 1; members <= 30; members++ {
			c := capacity(total, members)
			if members*c < total+members {
				t.Fatalf("T=%d M=%d: cap %d, and M·cap = %d < T+M", total, members, c, members*c)
			}
			if fair := (total + members - 1) / members; c != fair+1 {
				t.Fatalf("T=%d M=%d: cap %d, want ⌈T/M⌉+1 = %d", total, members, c, fair+1)
			}
		}
	}
	if capacity(30, 0) != 31 {
		t.Errorf("capacity(30, 0) = %d: no members counted must mean one (this replica)", capacity(30, 0))
	}
}

func TestLevel(t *testing.T) {
	tests := []struct{ held, total, levels, want int }{
		{0, 30, 10, 0},
		{2, 30, 10, 0},
		{3, 30, 10, 1},
		{10, 30, 10, 3},
		{15, 30, 10, 5},
		{30, 30, 10, 9}, // never Levels: at most Levels-1
		{40, 30, 10, 9},
		{1, 0, 10, 0},
		{5, 10, 1, 0},
	}
	for _, tt := range tests {
		if got := level(tt.held, tt.total, tt.levels); got != tt.want {
			t.Errorf("level(%d, %d, %d) = %d, want %d", tt.held, tt.total, tt.levels, got, tt.want)
		}
	}
}

func TestBackoffDoublesUpToMax(t *testing.T) {
	b := backoff{min: 100, max: 700}
	var got []int64
	for range 6 {
		got = append(got, int64(b.next()))
	}
	want := []int64{100, 200, 400, 700, 700, 700}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
	b.reset()
	if d := b.next(); d != 100 {
		t.Errorf("after reset: %v, want 100", d)
	}
}
