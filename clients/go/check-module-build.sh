#!/usr/bin/env bash
# Builds and vets clients/go in MODULE mode, offline: a copy of the module
# with a vendor directory made from Debian's sources under /usr/share/gocode
# (standing in for the module proxy). It shows that go.mod's module path,
# its requirements and the package's imports hold together as a module;
# it cannot show that the pinned versions resolve on the proxy. Needs
# examples/build.sh to have linked the package into .build/go-lib.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$repo/clients/go" "$scratch/mod"
cd "$scratch/mod"
pkgs=$(GOPATH="$repo/.build/go-lib:/usr/share/gocode" GO111MODULE=off go list -deps -test -f '{{if not .Standard}}{{.ImportPath}}{{end}}' github.com/holdshelf/holdshelf/clients/go | grep -v '^holdshelf')
declare -A version=(
  [google.golang.org/grpc]=v1.33.3
  [google.golang.org/protobuf]=v1.28.1
  [google.golang.org/genproto]=v0.0.0-20200806141610-86f49bd18e98
  [github.com/golang/protobuf]=v1.5.2
  [golang.org/x/net]=v0.0.0-20200822124328-c89045814202
  [golang.org/x/sys]=v0.0.0-20200323222414-85ca7c5b95cd
  [golang.org/x/text]=v0.3.3
)
: > vendor.txt
for module in google.golang.org/genproto google.golang.org/grpc google.golang.org/protobuf github.com/golang/protobuf golang.org/x/net golang.org/x/sys golang.org/x/text; do
  mine=$(grep -E "^$module(/|$)" <<<"$pkgs" || true)
  [[ -z "$mine" ]] && continue
  echo "# $module ${version[$module]}" >> vendor.txt
  if grep -q "$module " go.mod; then echo "## explicit" >> vendor.txt; fi
  for pkg in $mine; do
    echo "$pkg" >> vendor.txt
    mkdir -p "vendor/$pkg"
    find "/usr/share/gocode/src/$pkg" -maxdepth 1 -type f -exec cp {} "vendor/$pkg/" \;
  done
done
mv vendor.txt vendor/modules.txt
# Go >= 1.17 wants every vendored module in go.mod; the shipped go.mod names
# only the direct ones (a user's `go mod tidy` resolves the rest), so the
# indirect ones are added to this copy, at the versions Debian's sources are.
for module in github.com/golang/protobuf golang.org/x/net golang.org/x/sys golang.org/x/text; do
  go mod edit -require="$module@${version[$module]}"
  sed -i "s|^\(# $module .*\)|\1\n## explicit|" vendor/modules.txt
done
# The language version each dependency's code is compiled at (x/sys needs 1.17).
sed -i 's|^## explicit$|## explicit; go 1.17|' vendor/modules.txt
GOFLAGS=-mod=vendor GOPROXY=off GO111MODULE=on GOCACHE="$repo/.build/go-cache" go build ./... 
GOFLAGS=-mod=vendor GOPROXY=off GO111MODULE=on GOCACHE="$repo/.build/go-cache" go vet ./...
echo "module build OK"
