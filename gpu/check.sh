#!/usr/bin/env bash
# The trainer worker's GPU check: one JSON line per phase (versions, update
# efficacy, update and sampling speed and memory, a MoE shape, the HTTP path;
# see gpu/check.py), also appended to $OUT/check.jsonl. Runs with the Python
# that has torch (CUDA), transformers and peft installed: PYTHON=/path/to/python
# to choose it. --tiny checks the script on a CPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONPATH="$here/worker${PYTHONPATH:+:$PYTHONPATH}"
# Fewer, larger allocations: long sequences fragment the caching allocator.
export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}"
exec "${PYTHON:-python3}" "$here/check.py" "$@"
