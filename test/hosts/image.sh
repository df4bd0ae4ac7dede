#!/usr/bin/env bash
# Builds a small image for host tests without a registry: bash and a few
# coreutils from this machine with the libraries they load, via docker import.
set -euo pipefail
IMAGE="$1"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
tools=(bash cat mkdir cp sleep ls tr wc touch date rm)
files=()
for t in "${tools[@]}"; do
  p="$(command -v "$t")"
  files+=("$(readlink -f "$p")")
  mkdir -p "$root/usr/bin" && cp -L "$p" "$root/usr/bin/$t"
done
for lib in $(ldd "${files[@]}" 2>/dev/null | grep -o '/[^ ]*\.so[^ ]*' | sort -u); do
  mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
done
ln -s usr/bin "$root/bin"
mkdir -p "$root/tmp" "$root/etc"
tar -C "$root" -cf - . | docker import - "$IMAGE" >/dev/null
