package runner

import "context"

// Health is a runner's handle for the problems it survives: a bad input
// file, a failed refresh, an entry that cannot be translated. A problem is
// kept under a key naming its source (a file, a connection, a stage), and
// appears in the runner's Status.Problems until it is cleared by reporting
// nil under the same key. Problems under different keys never erase each
// other, so a library component and the user's code it calls can report
// through the same Health. Keys may be as many as the entries of an input:
// a Status lists MaxProblems of them and counts the others.
//
// A Health is a small value, safe for concurrent use and to copy. The zero
// Health, and the Health of a context that no group gave, discard reports.
type Health struct {
	m *member
}

// HealthOf returns the Health of the runner whose Run received ctx (or a
// context derived from it). Outside a runner group it returns the zero
// Health, which discards reports.
func HealthOf(ctx context.Context) Health {
	m, _ := ctx.Value(memberKey{}).(*member)
	return Health{m: m}
}

// Report records err as the problem under key, replacing the one reported
// there before, or clears that key when err is nil. Reporting the problem
// already recorded publishes nothing new, so reporting on every attempt
// costs little. Reports are ignored once the group's Run has returned.
func (h Health) Report(key string, err error) {
	if h.m != nil {
		h.m.g.report(h.m, key, err)
	}
}

// NameOf returns the name of the runner whose Run received ctx, and "" when
// ctx comes from no runner group. Loops that log or count use it to say
// which runner they belong to.
func NameOf(ctx context.Context) string {
	if m, ok := ctx.Value(memberKey{}).(*member); ok {
		return m.name
	}
	return ""
}
