#!/usr/bin/env bash
# Builds and vets clients/go in MODULE mode, offline: a copy of the module
# with a vendor directory made from Debian's sources by
# vendor-from-debian.sh (standing in for the module proxy), which prints
# one "vendored <module> <version>" line per module the build takes
# packages from. It shows that go.mod's module path, its requirements (the
# indirect ones included, as Go >= 1.17 wants them) and the package's
# imports hold together as a module; it cannot show that the pinned
# versions resolve on the proxy, nor build their code (Debian's releases
# stand in for them).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$repo/clients/go" "$scratch/mod"
bash "$repo/clients/go/vendor-from-debian.sh" "$scratch/mod"
cd "$scratch/mod"
export GOFLAGS=-mod=vendor GOPROXY=off GO111MODULE=on GOCACHE="$repo/.build/go-cache"
go build ./...
go vet ./...
echo "module build OK"
