#!/usr/bin/env bash
# Regenerates clients/go/holdshelfv1 from proto/ with Debian's protoc-gen-go
# and protoc-gen-go-grpc (offline). With --check it generates into a
# temporary directory instead and fails if the committed files differ: CI
# runs that, so the committed code never drifts from the proto.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ "${1:-}" == "--check" ]]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  npx buf generate --template clients/go/buf.gen.yaml -o "$scratch"
  if ! diff -r "$scratch/clients/go/holdshelfv1" clients/go/holdshelfv1; then
    echo "clients/go/holdshelfv1 is stale: run clients/go/generate.sh and commit the result" >&2
    exit 1
  fi
  exit 0
fi

rm -rf clients/go/holdshelfv1
npx buf generate --template clients/go/buf.gen.yaml
