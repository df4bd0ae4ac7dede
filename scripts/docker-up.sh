#!/usr/bin/env bash
# Makes the docker sandbox usable on this machine: Debian's docker.io, an
# engine (started here if none answers: overlay2 storage where the kernel
# allows it, else vfs; no iptables, no bridge, which works inside VMs and containers), and the sandbox image built with
# `docker import` (no registry needed). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v dockerd >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  # overlay2 shares the image's files between containers; vfs, the fallback where the kernel
  # refuses overlay mounts (some nested containers), copies the whole image for each one.
  driver=vfs
  # Probed where the engine keeps its layers: an overlay over an overlay is what some hosts refuse.
  mkdir -p /var/lib/docker
  probe=$(mktemp -d -p /var/lib/docker mlepipe-probe.XXXXXX)
  mkdir -p "$probe"/{l,u,w,m}
  if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" "$probe/m" 2>/dev/null; then
    umount "$probe/m"
    driver=overlay2
  fi
  rm -rf "$probe"
  echo "docker-up: starting dockerd with $driver storage (log: /tmp/mlepipe-dockerd.log)"
  nohup dockerd --storage-driver=$driver --iptables=false --bridge=none >/tmp/mlepipe-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || { echo "docker-up: dockerd did not start; see /tmp/mlepipe-dockerd.log" >&2; exit 1; }
fi

bash sandbox/image/build.sh
