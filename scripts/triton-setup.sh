#!/usr/bin/env bash
# Prepares the real Triton Inference Server (2.51, shipped inside the nvidia-pytriton wheel) for the
# conformance suite: a private venv and a backend directory whose Python backend has its stub beside it.
# Idempotent: a second run only checks. pip keeps its download cache between runs (its default cache dir,
# or PIP_CACHE_DIR), so rebuilding the venv does not download the ~400 MB wheel again.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-triton"
BACKENDS="$ROOT/build/triton-backends"
PYTRITON_VERSION="0.7.0"
NUMPY_VERSION="1.26.4"
PYTHON="${TRITON_PYTHON:-python3}"
PINS="nvidia-pytriton==$PYTRITON_VERSION numpy==$NUMPY_VERSION"
STAMP="$VENV/.trtllm-pins"

say() { echo "triton-setup: $*"; }

if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating $VENV with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi

if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$PINS" ]]; then
  say "installing $PINS"
  # shellcheck disable=SC2086 # the pins are separate words on purpose
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q $PINS
  echo "$PINS" >"$STAMP"
else
  say "venv up to date ($PINS)"
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
