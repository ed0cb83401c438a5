module github.com/holdshelf/holdshelf/clients/go

go 1.19

// gRPC and protobuf at the releases Debian 12 packages, which the GOPATH-mode
// build uses (genproto at the one gRPC v1.33 asks for); later releases work
// too. There is no go.sum: `go mod tidy` in the module that uses this one
// writes its own.
require (
	google.golang.org/genproto v0.0.0-20200806141610-86f49bd18e98
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
