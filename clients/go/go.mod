module github.com/holdshelf/holdshelf/clients/go

go 1.19

// gRPC-Go and protobuf at the releases Debian 12 packages, which the
// offline builds stand on; later releases work too. The second block is
// what `go mod tidy` lists for Go >= 1.17: the other modules whose packages
// the build compiles. go.sum is tidy's too (docs/clients/go.md, Install).
require (
	google.golang.org/genproto v0.0.0-20200806141610-86f49bd18e98
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)

require (
	github.com/golang/protobuf v1.5.2 // indirect
	golang.org/x/net v0.0.0-20200822124328-c89045814202 // indirect
	golang.org/x/sys v0.0.0-20200323222414-85ca7c5b95cd // indirect
	golang.org/x/text v0.3.3 // indirect
)
