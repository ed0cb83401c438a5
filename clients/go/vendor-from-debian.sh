#!/usr/bin/env bash
# Usage: vendor-from-debian.sh MODULE_DIR
#
# Writes MODULE_DIR/vendor (and its modules.txt) the way `go mod vendor`
# would, offline: Debian's sources under /usr/share/gocode stand in for the
# module proxy, and a module that go.mod replaces with a directory (this
# library, in a user's module) is copied from that directory. Which
# packages go in is what the module's packages and tests import (read in
# GOPATH mode); which module holds each, at which version, is read from
# MODULE_DIR/go.mod, so a package no requirement provides fails here, as it
# would fail a user's build, except that one a directory-replaced module
# requires is added to go.mod first, as `go mod tidy` adds it (printing
# "required <module> <version>"). Prints one "vendored <module> <version>"
# line per module that provides packages. Debian's releases are not the
# pinned ones: this checks that go.mod, the imports and the module paths
# hold together, not the pinned versions' code.
set -euo pipefail
module_dir=$(cd "$1" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$module_dir"

# go.mod as `go mod edit -print` formats it: "path version" per
# requirement, and "path dir" per replacement of all of a module's versions
# by a directory (the form the docs' recipe writes).
requirements() {
  go mod edit -print | awk '
    $1 == "require" && $2 == "(" { block = 1; next }
    block && $1 == ")" { block = 0; next }
    block && $1 !~ /^\/\// { print $1, $2 }
    $1 == "require" && $2 != "(" { print $2, $3 }'
}
directory_replacements() {
  go mod edit -print | awk '
    $1 == "replace" && $2 == "(" { block = 1; next }
    block && $1 == ")" { block = 0; next }
    $1 == "replace" { $1 = ""; $0 = $0 }
    block || $0 ~ /=>/ {
      for (i = 1; i <= NF; i++) if ($i == "=>") arrow = i
      if (arrow == 2 && NF == 3) print $1, $3
      arrow = 0
    }'
}
main_path=$(go mod edit -print | awk '$1 == "module" { print $2 }')
requires=$(requirements)
replaced=$(directory_replacements)

# A GOPATH in which the main module and each replaced one sit at their
# import paths, for `go list` in GOPATH mode (no module proxy needed).
gopath="$scratch/gopath"
link() { mkdir -p "$gopath/src/$(dirname "$1")" && ln -s "$2" "$gopath/src/$1"; }
link "$main_path" "$module_dir"
while read -r path dir; do
  [[ -z "$path" ]] && continue
  [[ "$dir" = /* ]] || dir="$module_dir/$dir"
  link "$path" "$(cd "$dir" && pwd)"
done <<<"$replaced"
rm -rf vendor
# The main module's packages by name: GOPATH mode's "..." does not follow
# the symlink.
own=$(find . -name '*.go' ! -path './vendor/*' -printf '%h\n' | sort -u | sed "s|^\.|$main_path|")
# shellcheck disable=SC2086 # one argument per package
packages=$(GOPATH="$gopath:/usr/share/gocode" GO111MODULE=off \
  go list -deps -test -f '{{if not .Standard}}{{.ImportPath}}{{end}}' $own)

# Of the "path version" lines in $2, the one whose module path is the
# longest prefix of package $1's.
module_of() {
  local pkg=$1 best="" path version
  while read -r path version; do
    if [[ -n "$path" && ("$pkg" == "$path" || "$pkg" == "$path/"*) ]] && ((${#path} > ${#best})); then
      best="$path $version"
    fi
  done <<<"$2"
  echo "$best"
}

# What the modules replaced by a directory require (this library's
# requirements, in a user's module): a module the build needs that the main
# go.mod lacks is required from there, at that version, as `go mod tidy`
# adds it.
inherited=$(while read -r path dir; do
  if [[ -n "$path" ]]; then (cd "$gopath/src/$path" && requirements); fi
done <<<"$replaced")

declare -A pkgs_of=()
while read -r pkg; do
  # The main module's own packages, and its test packages ("p [p.test]", "p.test").
  [[ -z "$pkg" || "$pkg" == *" "* || "$pkg" == *.test ]] && continue
  [[ "$pkg" == "$main_path" || "$pkg" == "$main_path/"* ]] && continue
  module=$(module_of "$pkg" "$requires")
  if [[ -z "$module" ]]; then
    module=$(module_of "$pkg" "$inherited")
    if [[ -z "$module" ]]; then
      echo "vendor-from-debian: no requirement in $module_dir/go.mod provides package $pkg" >&2
      exit 1
    fi
    go mod edit -require="${module/ /@}"
    requires+=$'\n'"$module"
    echo "required $module"
  fi
  pkgs_of[${module% *}]+="$pkg "
done <<<"$packages"

mkdir vendor
while read -r path version; do
  replacement=$(awk -v p="$path" '$1 == p { print $2 }' <<<"$replaced")
  if [[ -n "$replacement" ]]; then
    source_root=$(cd "$gopath/src/$path" && pwd -P)
    # The language version the vendored code is compiled at: a replaced
    # module's own; Debian's x/sys needs 1.17.
    go_version=$(cd "$source_root" && go mod edit -print | awk '$1 == "go" { print $2 }')
    printf '# %s %s => %s\n' "$path" "$version" "$replacement" >>vendor/modules.txt
  else
    source_root="/usr/share/gocode/src/$path"
    go_version=1.17
    printf '# %s %s\n' "$path" "$version" >>vendor/modules.txt
  fi
  echo "## explicit; go $go_version" >>vendor/modules.txt
  [[ -z "${pkgs_of[$path]:-}" ]] && continue
  for pkg in ${pkgs_of[$path]}; do
    echo "$pkg" >>vendor/modules.txt
    mkdir -p "vendor/$pkg"
    # A package's own files, without its tests, as `go mod vendor` copies them.
    find "$source_root${pkg#"$path"}" -maxdepth 1 -type f ! -name '*_test.go' -exec cp {} "vendor/$pkg/" \;
  done
  echo "vendored $path $version"
done <<<"$requires"
# As `go mod vendor` records a replacement of every version.
while read -r path dir; do
  if [[ -n "$path" ]]; then printf '# %s => %s\n' "$path" "$dir" >>vendor/modules.txt; fi
done <<<"$replaced"
