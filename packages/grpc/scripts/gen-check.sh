#!/bin/sh
# Fails when src/gen is not what the current proto/ and the installed generator produce,
# so a .proto change cannot land without its regenerated code.
set -eu
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
buf generate -o "$tmp"
if ! diff -r "$tmp/src/gen" src/gen; then
  echo "src/gen is stale: run 'pnpm gen' and commit the result" >&2
  exit 1
fi
echo "src/gen is up to date"
