#!/usr/bin/env bash
# The trainer worker's GPU benchmark: update and generation tokens/s and peak
# memory of a Qwen3-8B-architecture model with LoRA (see gpu/check.py). Runs
# with the Python that has torch (CUDA), transformers and peft installed:
# PYTHON=/path/to/python to choose it. --tiny checks the script on a CPU.
# The last line of output is one JSON object, also written to $OUT/check.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PYTHONPATH="$here/worker${PYTHONPATH:+:$PYTHONPATH}"
# Fewer, larger allocations: long sequences fragment the caching allocator.
export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}"
exec "${PYTHON:-python3}" "$here/check.py" "$@"
