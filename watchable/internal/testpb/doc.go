// Package testpb holds generated proto messages that cover every field
// shape protoc-gen-go produces: scalars of each kind in implicit and
// explicit presence, lists, maps, oneofs, nested, recursive and well-known
// messages, proto2 defaults, required fields, groups and extensions. The
// tests of watchable's DeepCopy and DeepEqual use them to check that the
// fast path for generated messages agrees with proto.Clone and proto.Equal.
package testpb
