#!/usr/bin/env bash
# Creates .venv/trainer, the trainer worker's Python environment, from the
# hash-pinned lock gpu/worker/requirements.lock (torch there is the CPU build;
# GPU hosts run the worker with their image's CUDA torch instead). Safe to run
# again: an environment whose installed lock matches is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv/trainer
LOCK=gpu/worker/requirements.lock
STAMP="$VENV/.installed-lock"
PYTHON="${PYTHON:-python3}"

if [ -f "$STAMP" ] && cmp -s "$LOCK" "$STAMP" && "$VENV/bin/python" -c 'import torch, transformers, peft' 2>/dev/null; then
  echo "setup-trainer: $VENV is up to date"
  exit 0
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup-trainer: creating $VENV with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi
# --no-deps: the lock already lists every dependency, each with its hashes.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$LOCK"
cp "$LOCK" "$STAMP"
echo "setup-trainer: installed $LOCK into $VENV"
