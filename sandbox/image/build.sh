#!/usr/bin/env bash
# Builds the docker sandbox image without a registry: a root filesystem made
# from this machine's Debian Python stack (rootfs.py) plus the agent
# environment (.venv/agent, from python/agent.lock) at /opt/mlepipe/agent,
# loaded with `docker import`. The image is labelled with the lock's hash;
# the docker backend refuses an image whose label differs from the installed
# lock, since its steps would run other package versions than the node keys
# record. Where registries are reachable, the Dockerfile beside this script
# builds an equivalent image from the repository root:
#   docker build -t mlepipe-sandbox -f sandbox/image/Dockerfile .
# Usage: build.sh [IMAGE] [--force]
# MLEPIPE_NO_AGENT_ENV=1 builds the image without the agent environment.
set -euo pipefail
cd "$(dirname "$0")"
IMAGE="${1:-mlepipe-sandbox:latest}"
venv=../../.venv/agent
lock=""
if [ -z "${MLEPIPE_NO_AGENT_ENV:-}" ] && [ -f "$venv/.installed-lock" ]; then
  lock="$(sha256sum <"$venv/.installed-lock" | cut -d' ' -f1)"
fi
# Rebuilt when the builder, the installed Debian Python stack or the agent lock changes.
fingerprint="$( (cat rootfs.py; dpkg-query -W python3 python3-numpy python3-pandas python3-sklearn python3-scipy python3-pil python3-networkx 2>/dev/null; echo "$lock") | sha256sum | cut -c1-16)"
current="$(docker image inspect -f '{{ index .Config.Labels "mlepipe.fingerprint" }}' "$IMAGE" 2>/dev/null || true)"
if [ "${2:-}" != "--force" ] && [ "$current" = "$fingerprint" ]; then
  echo "image $IMAGE is up to date"
  exit 0
fi
started=$SECONDS
tar="$(mktemp --suffix=.tar)"
trap 'rm -f "$tar"' EXIT
/usr/bin/python3 rootfs.py "$tar" ${lock:+--venv "$venv"}
labels=(--change "LABEL mlepipe.fingerprint=$fingerprint")
[ -n "$lock" ] && labels+=(--change "LABEL mlepipe.agent-lock=$lock")
docker import --change 'WORKDIR /workspace' --change 'USER 65534:65534' "${labels[@]}" "$tar" "$IMAGE" >/dev/null
# The image this one replaced, if any, is left untagged: drop it rather than keep 1.6 GB per rebuild.
docker image prune -f --filter label=mlepipe.fingerprint >/dev/null 2>&1 || true
echo "built $IMAGE${lock:+ with the agent environment (lock ${lock:0:12})} in $((SECONDS - started)) s"
