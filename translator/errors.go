package translator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrPanicked is wrapped by the error reported when a transformation panics.
var ErrPanicked = errors.New("transformation panicked")

// ErrConflict is matched (errors.Is) by every *ConflictError.
var ErrConflict = errors.New("output key produced by more than one input key")

// KeyError is the failure of a transformation for one key. The outputs
// made before stay published until it succeeds or the key is deleted. A
// reported KeyError is not modified afterwards, so it may be read from any
// goroutine.
//
// For Derive, Key is the input key. For GroupBy, Key is the group key when
// build fails, and the input key when the key function (or the input
// equality) panics.
type KeyError[K comparable] struct {
	Translator string // the name given to Derive or GroupBy
	Key        K      // the key that failed (see above)
	Err        error  // what the transformation returned, or wraps ErrPanicked
}

// Error names the translator and the key, then the failure.
func (e *KeyError[K]) Error() string {
	return fmt.Sprintf("translator %s: key %v: %v", e.Translator, e.Key, e.Err)
}

// Unwrap returns Err.
func (e *KeyError[K]) Unwrap() error { return e.Err }

// ConflictError reports that several input keys of Derive produce the same
// output key. Only the Winner's value is published; the others are ignored
// for that output key until the winner stops producing it, when the next
// claimant in order takes over. See Derive for the order. A reported
// ConflictError is not modified afterwards, so it may be read from any
// goroutine.
type ConflictError[K1, K2 comparable] struct {
	Translator string // the name given to Derive
	Key        K2     // the output key
	Claimants  []K1   // the input keys producing it, in order; Claimants[0] is Winner
	Winner     K1
}

// Error names the translator, the output key, its claimants and the winner.
func (e *ConflictError[K1, K2]) Error() string {
	keys := make([]string, len(e.Claimants))
	for i, k := range e.Claimants {
		keys[i] = fmt.Sprint(k)
	}
	return fmt.Sprintf("translator %s: output key %v produced by input keys %s: keeping the value of %v",
		e.Translator, e.Key, strings.Join(keys, ", "), e.Winner)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError[K1, K2]) Is(target error) bool { return target == ErrConflict }

// maxReported bounds how many individual errors go into the status report, so
// that a transformation failing for every key does not produce a huge status.
const maxReported = 10

// problemKey is the key under which a translator reports its failures
// through runner.HealthOf: its own, so that problems the user's functions
// report under theirs are never erased by the translator's success, and two
// translators run by one runner keep theirs apart.
func problemKey(name string) string { return "translator " + name }

// summarize joins errs into the one problem a translator reports through
// runner.Health: nil when there are none, the first few in message order
// otherwise.
func summarize(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if len(errs) <= maxReported {
		return errors.Join(errs...)
	}
	shown := append(errs[:maxReported:maxReported], fmt.Errorf("and %d more errors", len(errs)-maxReported))
	return errors.Join(shown...)
}
