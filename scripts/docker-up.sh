#!/usr/bin/env bash
# Makes the docker sandbox usable on this machine: Debian's docker.io, an
# engine (started here if none answers: vfs storage, no iptables, no bridge,
# which works inside VMs and containers), and the sandbox image built with
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
  echo "docker-up: starting dockerd (log: /tmp/mlepipe-dockerd.log)"
  nohup dockerd --storage-driver=vfs --iptables=false --bridge=none >/tmp/mlepipe-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || { echo "docker-up: dockerd did not start; see /tmp/mlepipe-dockerd.log" >&2; exit 1; }
fi

bash sandbox/image/build.sh
