//go:build !race

package hamt

// raceEnabled reports whether the race detector is on: see copyChildren.
const raceEnabled = false
