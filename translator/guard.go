package translator

import (
	"fmt"
	"reflect"
	"sync"
)

// runGuard keeps a translator's Run from overlapping itself, and its
// configuration methods (WithInputEqual) from changing what a running Run
// uses. Both are programming errors, cheap to detect, and reported with a
// panic naming the translator.
type runGuard struct {
	mu      sync.Mutex
	running bool
}

// start marks Run as running and calls read, under the guard's lock, to take
// the configuration Run uses. It panics if Run is running already.
func (g *runGuard) start(translator string, read func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		panic(translator + ": Run called while it is running")
	}
	g.running = true
	read()
}

// stop marks Run as returned.
func (g *runGuard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running = false
}

// configure calls set under the guard's lock, or panics, naming method, if
// Run is running.
func (g *runGuard) configure(translator, method string, set func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		panic(fmt.Sprintf("%s: %s called while Run is running; call it before Run", translator, method))
	}
	set()
}

// checkInput panics, naming the input as what, when in cannot be watched: a
// nil interface, a nil pointer, or a zero watchable.View. It runs at
// construction, so that the mistake shows where the translator is made
// rather than in Run's goroutine.
func checkInput(what string, in Input) {
	if in == nil {
		panic(what + " is nil")
	}
	if v := reflect.ValueOf(in); v.Kind() == reflect.Pointer && v.IsNil() {
		panic(fmt.Sprintf("%s is a nil %T", what, in))
	}
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("%s cannot be watched: %v", what, p))
		}
	}()
	in.Initialized() // a zero View panics here
}
