#!/usr/bin/env bash
# Packs every published package of the workspace from its build into one folder (default build/packages),
# so that a project outside this clone can install them before they are on npm:
#   pnpm pack:all                                  # builds, then packs into build/packages
#   npm i /path/to/clone/build/packages/*.tgz      # in your project: every package, siblings from the same folder
# The tarballs depend on each other by version; installing them all in one command lets npm answer those
# dependencies from the folder (one tarball alone would look for its siblings on npm, where they are not yet).
# Prints the folder's tarballs and the install command.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-build/packages}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out"/*.tgz

for manifest in packages/*/package.json; do
  dir="$(dirname "$manifest")"
  if node -e "process.exit(require('./$manifest').private ? 0 : 1)"; then continue; fi
  if [[ ! -f "$dir/dist/index.js" ]]; then
    echo "pack-all: $dir is not built (run pnpm build first, or pnpm pack:all, which builds)" >&2
    exit 1
  fi
  # pnpm pack turns workspace:^ ranges into the packed versions.
  (cd "$dir" && pnpm pack --pack-destination "$out" >/dev/null)
done

ls -1 "$out"/*.tgz
echo "install them into your project with:"
echo "  npm i $out/*.tgz"
