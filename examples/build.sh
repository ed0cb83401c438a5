#!/usr/bin/env bash
# Builds the Go programs (examples, interop probe, conformance worker, the Go
# client's test programs) into .build/bin, offline, with Go's gRPC sources
# under /usr/share/gocode (GOPATH mode). The Go client library (clients/go)
# brings its generated code with it (clients/go/holdshelfv1, kept fresh by
# clients/go/generate.sh --check) and is linked into a GOPATH tree under
# .build/go-lib, so that GOPATH-mode builds find it as "github.com/holdshelf/holdshelf/clients/go".
# The Python client commits its generated code too (clients/python/src/holdshelf/_gen, kept fresh by clients/python/generate.py --check).
set -euo pipefail
cd "$(dirname "$0")/.."

# Test files run this at the same time: one build at a time, or one could
# replace a binary another is about to run.
mkdir -p .build
exec 9>.build/build.lock
flock 9

mkdir -p .build/go-lib/src/github.com/holdshelf/holdshelf/clients .build/go-lib/src/holdshelf/test/clients
ln -sfn "$PWD/clients/go" .build/go-lib/src/github.com/holdshelf/holdshelf/clients/go
# The test programs' shared packages (test/clients/go/callcount), as "holdshelf/test/clients/go/...".
ln -sfn "$PWD/test/clients/go" .build/go-lib/src/holdshelf/test/clients/go
export GOPATH="$PWD/.build/go-lib:/usr/share/gocode" GO111MODULE=off GOCACHE="$PWD/.build/go-cache"
go build -o .build/bin/go-producer ./examples/go/producer
go build -o .build/bin/go-worker ./examples/go/worker
go build -o .build/bin/go-fifo-orders ./examples/go/fifo-orders
go build -o .build/bin/go-probe ./test/interop/go/probe
go build -o .build/bin/go-conformance-worker ./test/conformance/workers/go
for program in test/clients/go/*/; do
  # A shared package, not a program.
  [[ "$(basename "$program")" == callcount ]] && continue
  go build -o ".build/bin/go-client-$(basename "$program")" "./$program"
done
