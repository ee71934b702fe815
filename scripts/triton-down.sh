#!/usr/bin/env bash
# Stops the Triton started by scripts/triton-up.sh (on TRITON_HTTP_PORT, default 18000), by the pid it recorded.
# TRITON_DOWN_SIGNAL=KILL ends it the way a crash would (SIGKILL to the server and its stubs, no goodbye);
# the default, TERM, lets it finish its requests and unload its models.
set -euo pipefail

SIGNAL="${TRITON_DOWN_SIGNAL:-TERM}"
if [[ "$SIGNAL" != TERM && "$SIGNAL" != KILL ]]; then
  echo "triton-down: TRITON_DOWN_SIGNAL must be TERM or KILL (got '$SIGNAL')" >&2
  exit 2
fi

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
# The Python backend's shared-memory regions (about 1 MB each, in RAM) that the server and its stubs map.
# A server that exits cleanly removes them; one that is killed leaves them in /dev/shm until reboot.
REGIONS="$(for P in "$PID" $STUBS; do cat "/proc/$P/maps" 2>/dev/null || true; done |
  grep -o '/dev/shm/triton_python_backend_shm_region_[0-9a-f-]*' | sort -u || true)"
if [[ "$SIGNAL" == KILL ]]; then
  # shellcheck disable=SC2086 # one pid per word
  kill -KILL "$PID" $STUBS 2>/dev/null || true
else
  # Triton waits for in-flight requests (up to --exit-timeout-secs, 5 s here, then exits hard) and
  # unloads the models on SIGTERM.
  kill -TERM "$PID"
fi
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
# Names are unique to this server (a UUID each), so no other server's region goes with them.
if [[ -n "$REGIONS" ]]; then
  # shellcheck disable=SC2086 # one path per word
  rm -f $REGIONS
fi
rm -f "$PIDFILE"
echo "triton-down: stopped pid $PID ($SIGNAL)"
