#!/usr/bin/env bash
# Generates the Go and Python client code from proto/ and builds the Go
# examples (and the interop probe) into .build/bin. Offline: Debian's
# generators and Go's gRPC sources under /usr/share/gocode (GOPATH mode).
set -euo pipefail
cd "$(dirname "$0")/.."

npx buf generate --template buf.gen.go.yaml
npx buf generate --template buf.gen.python.yaml

export GOPATH="$PWD/.build/go:/usr/share/gocode" GO111MODULE=off GOCACHE="$PWD/.build/go-cache"
go build -o .build/bin/go-producer ./examples/go/producer
go build -o .build/bin/go-worker ./examples/go/worker
go build -o .build/bin/go-probe ./test/interop/go/probe
