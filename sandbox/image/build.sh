#!/usr/bin/env bash
# Builds the docker sandbox image without a registry: a root filesystem made
# from this machine's Debian Python stack (rootfs.py), loaded with
# `docker import`. Where registries are reachable, the Dockerfile beside this
# script builds an equivalent image: docker build -t mlepipe-sandbox sandbox/image
# Usage: build.sh [IMAGE] [--force]
set -euo pipefail
cd "$(dirname "$0")"
IMAGE="${1:-mlepipe-sandbox:latest}"
# Rebuilt when the builder or the installed Python stack changes.
fingerprint="$( (cat rootfs.py; dpkg-query -W python3 python3-numpy python3-pandas python3-sklearn python3-scipy python3-pil python3-networkx 2>/dev/null) | sha256sum | cut -c1-16)"
current="$(docker image inspect -f '{{ index .Config.Labels "mlepipe.fingerprint" }}' "$IMAGE" 2>/dev/null || true)"
if [ "${2:-}" != "--force" ] && [ "$current" = "$fingerprint" ]; then
  echo "image $IMAGE is up to date"
  exit 0
fi
tar="$(mktemp --suffix=.tar)"
trap 'rm -f "$tar"' EXIT
/usr/bin/python3 rootfs.py "$tar"
docker import --change 'WORKDIR /workspace' --change 'USER 65534:65534' --change "LABEL mlepipe.fingerprint=$fingerprint" "$tar" "$IMAGE" >/dev/null
echo "built $IMAGE"
