package lease

import (
	"fmt"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations of a sharding group's Leases.
const (
	// LabelGroup holds the group's name on each of its Leases.
	LabelGroup = "switchyard.dev/shard-group"
	// LabelRole says whether a Lease is a member's or an item's.
	LabelRole = "switchyard.dev/shard-role"
	// AnnotationItem holds an item Lease's item name, as runner names it.
	AnnotationItem = "switchyard.dev/shard-item"

	roleMember = "member"
	roleItem   = "item"
)

// checkGroup refuses a group name that cannot prefix Lease names or be a
// label value.
func checkGroup(group string) error {
	if len(group) > 40 {
		return fmt.Errorf("group %q: longer than 40 characters", group)
	}
	if errs := validation.IsDNS1123Label(group); len(errs) > 0 {
		return fmt.Errorf("group %q: %s", group, strings.Join(errs, "; "))
	}
	return nil
}

// sanitize turns s into at most n characters that may stand in a Lease
// name: lower-case letters, digits and dashes, starting and ending with a
// letter or digit.
func sanitize(s string, n int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() >= n {
			break
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		out = "x"
	}
	return out
}

// memberID returns a new member's ID: the identity, made fit for a Lease
// name, and a random suffix, so that a process that joins again is a new
// member.
func memberID(identity string) string { return sanitize(identity, 40) + "-" + nonce() }

func memberLease(group, id string) string { return group + "-m-" + id }

// itemLease returns the name of the Lease of item: readable, and made
// unique by a hash of the item's exact name.
func itemLease(group, item string) string {
	h := fnv.New32a()
	h.Write([]byte(item))
	return fmt.Sprintf("%s-i-%s-%08x", group, sanitize(item, 60), h.Sum32())
}
