package testpb

// The generated files are committed, so neither building nor testing needs
// protoc. To regenerate them after editing a .proto file, install protoc
// (3.15 or newer, for proto3 optional fields; Debian's protobuf-compiler
// package will do) and protoc-gen-go at the version of
// google.golang.org/protobuf in go.mod:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//
// then run go generate in this directory. Paths are given relative to the
// repository root, which is what the generated files record.
//
//go:generate protoc --proto_path=../../.. --go_out=../../.. --go_opt=paths=source_relative watchable/internal/testpb/shapes2.proto watchable/internal/testpb/shapes3.proto
