package main

import (
	"io"
	"strings"

	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// result is one benchmark line of `go test -bench` output.
type result = gobench.Result

// parse reads `go test -bench` output and returns its results in order
// (see gobench.Parse).
func parse(r io.Reader) ([]result, error) { return gobench.Parse(r) }

// libOf returns the value of r's name's lib= key, and the name without
// it: the scenario both libraries share.
func libOf(r result) (lib, scenario string) {
	var rest []string
	for _, part := range strings.Split(r.Name, "/") {
		if v, ok := strings.CutPrefix(part, "lib="); ok {
			lib = v
			continue
		}
		rest = append(rest, part)
	}
	return lib, strings.Join(rest, "/")
}
