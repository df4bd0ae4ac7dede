#!/usr/bin/env bash
# Sets up a fresh machine for mlepipe: Debian's Python stack, bubblewrap and Chromium
# (the HTML report's browser test drives it headless; sandbox jails run /usr/bin/python3 with numpy, pandas, scikit-learn; it is
# also the fallback interpreter), the npm dependencies and the build, then the
# pinned Python environments from the package registry. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(python3-numpy python3-pandas python3-sklearn python3-scipy python3-pil python3-networkx python3-venv bubblewrap chromium)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: not a Debian/Ubuntu machine; install numpy, pandas, scikit-learn and bubblewrap yourself," >&2
    echo "       then set python: in mlepipe.config.yaml (mlepipe doctor checks it)" >&2
  fi
fi

npm ci --no-audit --no-fund
npm run build

# The pinned Python environments (scripts/setup-python.sh): .venv/agent for
# agents' code, task generators and graders (MLEPIPE_NO_AGENT_ENV=1 skips it;
# stages then fall back to /usr/bin/python3), .venv/trainer, CPU torch, for
# the trainer worker's tests and CPU runs (MLEPIPE_NO_TRAINER=1 skips it), and
# .venv/verl, verl and Ray on CPU torch, for the verl export's checks and
# local Ray runs (MLEPIPE_NO_VERL=1 skips it), and .venv/lint, ruff and mypy
# for `npm run lint` (which `npm test` runs after the type-check), and
# .venv/logger, tensorboardX and wandb, which write grpo and sft nodes'
# TensorBoard files and Weights & Biases runs (MLEPIPE_NO_LOGGER=1 skips it;
# nodes then train without them and say so).
envs=(lint)
[ -z "${MLEPIPE_NO_AGENT_ENV:-}" ] && envs+=(agent)
[ -z "${MLEPIPE_NO_TRAINER:-}" ] && envs+=(trainer)
[ -z "${MLEPIPE_NO_VERL:-}" ] && envs+=(verl)
[ -z "${MLEPIPE_NO_LOGGER:-}" ] && envs+=(logger)
if ((${#envs[@]})); then
  bash scripts/setup-python.sh "${envs[@]}"
fi

# The docker sandbox backend (and its tests): an engine and the sandbox image.
# MLEPIPE_NO_DOCKER=1 skips it; bwrap, the default backend, does not need it.
if [ -z "${MLEPIPE_NO_DOCKER:-}" ]; then
  bash scripts/docker-up.sh
fi

# The SSH server the host tests start on a loopback port (test/hosts/engines.ts),
# standing in for a GPU machine reached over ssh://. Not started here.
if [ -z "${MLEPIPE_NO_DOCKER:-}" ] && [ ! -x /usr/sbin/sshd ] && command -v apt-get >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openssh-server >/dev/null
fi
