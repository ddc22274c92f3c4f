module github.com/switchyard-go/switchyard/bench

go 1.24.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/switchyard-go/switchyard v0.0.0
	github.com/telepresenceio/watchable v0.0.0-20220726211108-9bb86f92afa7
	go.uber.org/goleak v1.3.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

replace github.com/switchyard-go/switchyard => ../
