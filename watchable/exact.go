package watchable

// exactEqual reports whether DeepEqual of two values of type T implies that
// no reader can tell them apart, so that storing one over the other may be
// skipped altogether. That holds when equality is decided by == or by
// comparing every part (proto.Equal, or part by part), and not when an
// Equal method may ignore some fields (time.Time's ignores the location).
// Interface types may hold a dynamic type with such a method, so they are
// not exact either.
func exactEqual[T any]() bool {
	return planOf[T]().exact
}
