//go:build race

package hamt

const raceEnabled = true
