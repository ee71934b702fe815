#!/usr/bin/env bash
# `pnpm test:node-http2`: the gRPC transport's suite on its second HTTP/2 engine, Node's node:http2
# (grpcTransport({ engine: 'node-http2' })), issue 54. TRTLLM_GRPC_ENGINE=node-http2 points every
# grpcTransport of the tests at that engine (test/support/grpc-engine.ts, through vitest.config.ts
# and test/lifetime's tsconfig), unless a test pins one. Runs on the sources, unit project only, on
# the Node at hand when the packages support it, else the LTS of scripts/test-supported-nodes.sh.
# Further arguments go to vitest (e.g. a file filter, or --reporter=verbose).
set -euo pipefail
cd "$(dirname "$0")/.."

# The versions and the LTS as scripts/test-supported-nodes.sh keeps them.
SUPPORTED="$(sed -n 's/^SUPPORTED="\(.*\)"$/\1/p' scripts/test-supported-nodes.sh)"
LTS="$(sed -n 's/^LTS="\(.*\)"$/\1/p' scripts/test-supported-nodes.sh)"
here_major="$(node -p 'process.versions.node.split(".")[0]')"
node_path=""
for version in $SUPPORTED; do
  if [[ "${version%%.*}" == "$here_major" ]]; then node_path="$PATH"; fi
done
[[ -n "$node_path" ]] || node_path="$(bash scripts/node-runtime.sh "$LTS"):$PATH"

# Every test file that runs calls through grpcTransport: the package's own tests, the client's
# behaviour, replicas, reliability (but hostile-http1, which is HTTP/1.1 alone), process lifetime,
# proxies, and the adapters' gRPC cases.
SUITE=(
  packages/grpc/test/
  test/client/
  test/replicas/
  test/lifetime/
  test/proxies/
  test/bench/socket-probe.test.ts
  packages/openai/test/caller-words.test.ts
  packages/ai-sdk/test/call-settings.test.ts
)
for file in test/reliability/*.test.ts; do
  [[ "$file" == */hostile-http1.test.ts ]] || SUITE+=("$file")
done
echo "+ [node $(PATH="$node_path" node --version)] TRTLLM_GRPC_ENGINE=node-http2 vitest run --project unit ${SUITE[*]} $*"
TRTLLM_GRPC_ENGINE=node-http2 PATH="$node_path" exec pnpm exec vitest run --project unit "${SUITE[@]}" "$@"
