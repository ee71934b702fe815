#!/usr/bin/env bash
# Prepares the real Triton Inference Server (2.51, shipped inside the nvidia-pytriton wheel) for the
# conformance suite: a private venv and a backend directory whose Python backend has its stub beside it.
# Idempotent: a second run only checks. The wheels are kept in a cache directory outside the checkout
# (TRITON_WHEEL_CACHE, default ~/.cache/trtllm-sdk/triton-wheels), so a new venv or a fresh clone on the
# same machine installs offline. (pip's own HTTP cache stores nothing behind this machine's registry
# mirror, so it cannot be relied on.)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-triton"
BACKENDS="$ROOT/build/triton-backends"
PYTRITON_VERSION="0.7.0"
NUMPY_VERSION="1.26.4"
PYTHON="${TRITON_PYTHON:-python3}"
PINS="nvidia-pytriton==$PYTRITON_VERSION numpy==$NUMPY_VERSION"
STAMP="$VENV/.trtllm-pins"
WHEELS="${TRITON_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trtllm-sdk/triton-wheels}"

say() { echo "triton-setup: $*"; }

# --check: exit 0 when everything is in place, 1 when a run is needed (prints nothing).
if [[ "${1:-}" == "--check" ]]; then
  [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$PINS" &&
    -x "$BACKENDS/python/triton_python_backend_stub" && -f "$BACKENDS/python/libtriton_python.so" &&
    -n "$(compgen -G "$VENV/lib/python*/site-packages/trtllm_no_pycache.pth")" ]]
  exit $?
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating $VENV with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi

if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$PINS" ]]; then
  PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
  mkdir -p "$WHEELS"
  # shellcheck disable=SC2086 # the pins are separate words on purpose
  if "${PIP[@]}" install --no-index --find-links "$WHEELS" $PINS 2>/dev/null; then
    say "installed $PINS from the wheel cache $WHEELS"
  else
    say "downloading $PINS (and dependencies) into the wheel cache $WHEELS"
    # shellcheck disable=SC2086
    "${PIP[@]}" download -d "$WHEELS" $PINS
    # shellcheck disable=SC2086
    "${PIP[@]}" install --no-index --find-links "$WHEELS" $PINS
    say "installed $PINS"
  fi
  echo "$PINS" >"$STAMP"
else
  say "venv up to date ($PINS)"
fi

# The stub's embedded interpreter ignores PYTHON* variables (PYTHONDONTWRITEBYTECODE included) but runs
# the venv's .pth files: this one keeps __pycache__ directories out of the model repository.
SP_DIR="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
NO_PYCACHE="$SP_DIR/trtllm_no_pycache.pth"
if [[ ! -f "$NO_PYCACHE" ]]; then
  echo "import sys; sys.dont_write_bytecode = True" >"$NO_PYCACHE"
  say "wrote $NO_PYCACHE"
fi

PYVER="$("$VENV/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
SP="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
TRITON="$SP/pytriton/tritonserver"
STUB="$TRITON/python_backend_stubs/$PYVER/triton_python_backend_stub"
[[ -x "$TRITON/bin/tritonserver" ]] || { say "no tritonserver in $TRITON"; exit 1; }
[[ -f "$STUB" ]] || { say "the wheel has no Python backend stub for Python $PYVER"; exit 1; }

# The Python backend looks for its stub next to libtriton_python.so, so it needs a directory of our own.
if cmp -s "$STUB" "$BACKENDS/python/triton_python_backend_stub" &&
  cmp -s "$TRITON/backends/python/libtriton_python.so" "$BACKENDS/python/libtriton_python.so"; then
  say "backend directory up to date ($BACKENDS)"
else
  say "building $BACKENDS (Python $PYVER stub)"
  rm -rf "$BACKENDS/python"
  mkdir -p "$BACKENDS"
  cp -r "$TRITON/backends/python" "$BACKENDS/"
  rm -rf "$BACKENDS/python/__pycache__"
  cp "$STUB" "$BACKENDS/python/"
  chmod +x "$BACKENDS/python/triton_python_backend_stub"
fi

say "ready: $TRITON/bin/tritonserver"
