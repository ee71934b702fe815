#!/usr/bin/env bash
# Starts the real Triton 2.51 on loopback with our model repository (test/triton/models) in the background.
# Ports: TRITON_HTTP_PORT (18000), TRITON_GRPC_PORT (18001), TRITON_METRICS_PORT (18002).
# Event log of the generator models: TRTLLM_FAKE_EVENT_LOG (build/triton-events.jsonl).
# Model repository: TRITON_MODEL_REPOSITORY (test/triton/models). More tritonserver flags: TRITON_EXTRA_ARGS,
# split on whitespace and appended to the command line (e.g. a scaled gRPC ping policy for a test).
# Writes build/triton-<http port>.pid and .log (per port, so servers on other ports can run side by side; the
# previous run's .log is kept as .log.prev); stop it with scripts/triton-down.sh and the same TRITON_HTTP_PORT.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HTTP_PORT="${TRITON_HTTP_PORT:-18000}"
GRPC_PORT="${TRITON_GRPC_PORT:-18001}"
METRICS_PORT="${TRITON_METRICS_PORT:-18002}"
READY_TIMEOUT_S="${TRITON_READY_TIMEOUT_S:-60}"
BUILD="$ROOT/build"
PIDFILE="$BUILD/triton-$HTTP_PORT.pid"
LOG="$BUILD/triton-$HTTP_PORT.log"
EVENTS="${TRTLLM_FAKE_EVENT_LOG:-$BUILD/triton-events.jsonl}"
VENV="$ROOT/.venv-triton"
MODELS="${TRITON_MODEL_REPOSITORY:-$ROOT/test/triton/models}"
read -r -a EXTRA_ARGS <<<"${TRITON_EXTRA_ARGS:-}"
# What a server's log shows when it died rather than stopped (an abort, a segfault, a stub that died),
# one extended regular expression a line; .ci/run reads the same list.
CRASH_LINES="$ROOT/scripts/triton-crash-lines.txt"

say() { echo "triton-up: $*"; }

if [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  say "already running (pid $(cat "$PIDFILE")); run scripts/triton-down.sh first"
  exit 1
fi

# A port already taken would make the readiness probe below talk to someone else's server.
for PORT in "$HTTP_PORT" "$GRPC_PORT" "$METRICS_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    say "port $PORT on 127.0.0.1 is already in use; set TRITON_HTTP_PORT / TRITON_GRPC_PORT / TRITON_METRICS_PORT"
    exit 1
  fi
done

bash "$ROOT/scripts/triton-setup.sh" --check || bash "$ROOT/scripts/triton-setup.sh"

SP="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
LIBDIR="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')"
mkdir -p "$BUILD" "$(dirname "$EVENTS")"
# The previous run's log is kept beside the new one: a test that restarts Triton (reliability) would
# otherwise erase the evidence of what went wrong before it.
# A log that records a crash is also kept under a name of its own, which no later start rotates away
# (.ci/run prints the crash lines of every such log when it fails).
if [[ -s "$LOG" ]] && grep -qEf "$CRASH_LINES" "$LOG"; then cp "$LOG" "$BUILD/triton-$HTTP_PORT.crash-$(date +%s).log"; fi
if [[ -s "$LOG" ]]; then mv -f "$LOG" "$LOG.prev"; fi
: >"$LOG"
: >"$EVENTS" # a fresh event log per server run

start_ms() { date +%s%3N; }
T0="$(start_ms)"
# The stub links libpython from the interpreter's LIBDIR and libcudart from the wheel's bundled libs; the
# venv's bin first on PATH makes the stub's embedded interpreter import the venv's numpy.
(
  cd "$ROOT"
  export LD_LIBRARY_PATH="$LIBDIR:$SP/nvidia_pytriton.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$VENV/bin:$PATH"
  export TRTLLM_FAKE_EVENT_LOG="$EVENTS"
  exec "$SP/pytriton/tritonserver/bin/tritonserver" \
    --model-repository="$MODELS" \
    --backend-directory="$BUILD/triton-backends" \
    --http-address=127.0.0.1 --http-port="$HTTP_PORT" \
    --grpc-address=127.0.0.1 --grpc-port="$GRPC_PORT" \
    --metrics-address=127.0.0.1 --metrics-port="$METRICS_PORT" \
    --allow-metrics=true --exit-timeout-secs=5 \
    ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}
) >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"

fail() {
  say "$1"
  echo "---- last lines of $LOG ----"
  tail -n 40 "$LOG"
  kill "$PID" 2>/dev/null || true
  rm -f "$PIDFILE"
  exit 1
}

DEADLINE=$(($(start_ms) + READY_TIMEOUT_S * 1000))
until curl -fsS -o /dev/null "http://127.0.0.1:$HTTP_PORT/v2/health/ready" 2>/dev/null; do
  kill -0 "$PID" 2>/dev/null || fail "tritonserver exited during start-up"
  (($(start_ms) < DEADLINE)) || fail "not ready after ${READY_TIMEOUT_S}s"
  sleep 0.2
done
ELAPSED_MS=$(($(start_ms) - T0))
say "ready in $((ELAPSED_MS / 1000)).$(printf '%03d' $((ELAPSED_MS % 1000)))s (pid $PID): http://127.0.0.1:$HTTP_PORT grpc://127.0.0.1:$GRPC_PORT metrics http://127.0.0.1:$METRICS_PORT/metrics events $EVENTS log $LOG"
