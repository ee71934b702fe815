#!/usr/bin/env bash
# Stops the Triton started by scripts/triton-up.sh, by the pid it recorded.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PIDFILE="$ROOT/build/triton.pid"

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
kill -TERM "$PID"
# Triton drains in-flight requests and unloads models on SIGTERM; the Python stubs take a moment.
for _ in $(seq 1 150); do
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$PID" 2>/dev/null; then
  echo "triton-down: pid $PID still running after 15s, sending SIGKILL"
  kill -KILL "$PID" 2>/dev/null || true
fi
rm -f "$PIDFILE"
echo "triton-down: stopped pid $PID"
