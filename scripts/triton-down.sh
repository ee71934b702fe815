#!/usr/bin/env bash
# Stops the Triton started by scripts/triton-up.sh (on TRITON_HTTP_PORT, default 18000), by the pid it recorded.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PIDFILE="$ROOT/build/triton-${TRITON_HTTP_PORT:-18000}.pid"

if [[ ! -f "$PIDFILE" ]]; then
  echo "triton-down: not running (no $PIDFILE)"
  exit 0
fi
PID="$(cat "$PIDFILE")"
if ! kill -0 "$PID" 2>/dev/null; then
  echo "triton-down: pid $PID already gone"
  rm -f "$PIDFILE"
  exit 0
fi
# The Python backend's stub processes are the server's children; note them to make sure they end too.
STUBS="$(pgrep -P "$PID" || true)"
kill -TERM "$PID"
# Triton waits for in-flight requests (up to --exit-timeout-secs, 5 s here, then exits hard) and unloads
# the models on SIGTERM.
wait_gone() {
  for _ in $(seq 1 150); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}
if ! wait_gone "$PID"; then
  echo "triton-down: pid $PID still running after 15s, sending SIGKILL"
  kill -KILL "$PID" 2>/dev/null || true
fi
for STUB in $STUBS; do
  if ! wait_gone "$STUB"; then
    echo "triton-down: stub pid $STUB still running, sending SIGKILL"
    kill -KILL "$STUB" 2>/dev/null || true
  fi
done
rm -f "$PIDFILE"
echo "triton-down: stopped pid $PID"
