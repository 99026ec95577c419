#!/usr/bin/env bash
# Prints the path of the OpenTofu CLI (tofu) that `make test-tofu` runs, building it first if it
# is not cached yet. OpenTofu publishes no binary on the Go module proxy and `go install` refuses
# its module (its go.mod has a replace directive), so tools/tofu, a module of its own that
# requires OpenTofu with the same replace, builds cmd/tofu from the proxy with the flags of
# OpenTofu's release build. The version is the one tools/tofu/go.mod pins.
#
# The binary is cached outside the repository, one folder per version, and built only when it is
# missing:
#   ${TOFU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-artemis}/tofu-<version>/tofu
# A build takes minutes on a busy machine and needs nothing but the Go module proxy (GOPROXY).
#
# Everything but the path goes to stderr, so that `tofu=$(bash scripts/tofu.sh)` works.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
module_dir=$repo/tools/tofu

die() { printf 'tofu.sh: error: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "Go is needed to build OpenTofu"

# GOTOOLCHAIN=local: build with the Go installed, never download another toolchain.
export GOTOOLCHAIN=local
version=$(go -C "$module_dir" list -m -f '{{.Version}}' github.com/opentofu/opentofu) \
  || die "cannot read the OpenTofu version pinned in $module_dir/go.mod"
version=${version#v}

cache_root=${TOFU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-artemis}
dir=$cache_root/tofu-$version
bin=$dir/tofu

if [ ! -x "$bin" ]; then
  printf 'tofu.sh: building OpenTofu %s into %s (once; it takes a few minutes)\n' "$version" "$bin" >&2
  mkdir -p "$dir"
  # Built under a name of its own and renamed when complete, so that a build that is interrupted,
  # or runs beside another one, never leaves a half-written binary at $bin.
  tmp=$(mktemp "$dir/tofu.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  # The flags of OpenTofu's release build (its .goreleaser.yaml); version.dev=no makes
  # `tofu version` report the release, not a development build.
  start=$SECONDS
  CGO_ENABLED=0 go -C "$module_dir" build -mod=readonly -trimpath \
    -ldflags "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'" \
    -o "$tmp" github.com/opentofu/opentofu/cmd/tofu \
    || die "building OpenTofu $version failed (see above); the Go module proxy must be reachable"
  mv -f "$tmp" "$bin"
  trap - EXIT
  printf 'tofu.sh: built OpenTofu %s in %ss\n' "$version" "$((SECONDS - start))" >&2
fi

printf '%s\n' "$bin"
