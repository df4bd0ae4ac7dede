#!/usr/bin/env bash
# Builds a trainer image for tests without a registry: this machine's trainer
# environment (.venv/trainer, from gpu/worker/requirements.lock: CPU torch),
# the interpreter it was made from, bash, and the system libraries they load,
# imported with `docker import` (as sandbox/image/build.sh does for the
# sandbox). The environment keeps its own path layout except for its folder,
# which becomes /opt/mlepipe/trainer and comes first on PATH, so `python3` in
# the container is the worker's interpreter. The worker's code is not in the
# image: a node sends it up with each container.
# The image carries the lock's hash (label mlepipe.trainer-lock) and is
# rebuilt only when the lock, the interpreter or this script changes.
# Usage: build-test.sh [IMAGE] [--force]     (prints the image's name last)
set -euo pipefail
self="$(readlink -f "$0")"
cd "$(dirname "$self")"
IMAGE="${1:-mlepipe-trainer-test:latest}"
venv="$(readlink -f ../../.venv/trainer)"
if [ ! -f "$venv/.installed-lock" ]; then
  echo "build-test.sh: the trainer environment is not installed; run bash scripts/setup-trainer.sh" >&2
  exit 3
fi
base="$(readlink -f "$venv/bin/python3")"       # /usr/bin/python3.11, or .../versions/3.11.7/bin/python3.11
prefix="$(dirname "$(dirname "$base")")"
ver="$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
stdlib="$prefix/lib/python$ver"
if [ "$prefix" = /usr ]; then
  # A distribution's Python (setup-python.sh's default): its interpreter, the links the environment's
  # python3 goes through, and its standard library, not the whole of /usr.
  python_parts=(usr/bin/python3 "usr/bin/python$ver" "${stdlib#/}")
  python_libs="$stdlib"
else
  python_parts=("${prefix#/}")
  python_libs="$prefix/lib"
fi
lock="$(sha256sum <"$venv/.installed-lock" | cut -d' ' -f1)"
fingerprint="$( (cat "$self"; echo "$lock"; echo "$base") | sha256sum | cut -c1-16)"
current="$(docker image inspect -f '{{ index .Config.Labels "mlepipe.fingerprint" }}' "$IMAGE" 2>/dev/null || true)"
if [ "${2:-}" != "--force" ] && [ "$current" = "$fingerprint" ]; then
  echo "$IMAGE"
  exit 0
fi
started=$SECONDS
skel="$(mktemp -d)"
trap 'rm -rf "$skel"' EXIT
mkdir -p "$skel/usr/bin" "$skel/tmp" "$skel/etc" "$skel/opt/mlepipe" "$skel/root"
chmod 1777 "$skel/tmp"
chmod 755 "$skel" "$skel/usr" "$skel/usr/bin" "$skel/etc" "$skel/opt" "$skel/opt/mlepipe"
ln -s usr/bin "$skel/bin"
echo 'root:x:0:0:root:/root:/bin/bash' >"$skel/etc/passwd"
echo 'root:x:0:' >"$skel/etc/group"
for t in bash sh cat ls mkdir rm sleep; do cp -L "$(command -v "$t")" "$skel/usr/bin/$t"; done
# Every shared object the tools, the interpreter and the environment's extensions load from outside them.
objects="$( { ls "$skel"/usr/bin/*; echo "$base"; find "$python_libs" "$venv" -name '*.so*' -type f; } )"
for lib in $(echo "$objects" | xargs -r ldd 2>/dev/null | grep -o '=> /[^ ]*' | cut -c4- | grep -v -e "^$python_libs/" -e "^$venv/" | sort -u); do
  mkdir -p "$skel$(dirname "$lib")" && cp -L "$lib" "$skel$lib"
done
for lib in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do
  [ -e "$lib" ] && mkdir -p "$skel$(dirname "$lib")" && cp -L "$lib" "$skel$lib"
done
# The interpreter's own third-party packages are not the environment's (include-system-site-packages is false).
tar -C / -cf - \
  --exclude="${stdlib#/}/site-packages" --exclude="${stdlib#/}/test" \
  --transform "flags=rh;s,^${venv#/},opt/mlepipe/trainer," \
  -C "$skel" . -C / "${python_parts[@]}" "${venv#/}" |
  docker import \
    --change "ENV PATH=/opt/mlepipe/trainer/bin:/usr/bin:/bin" --change "ENV HOME=/root" \
    --change "LABEL mlepipe.fingerprint=$fingerprint" --change "LABEL mlepipe.trainer-lock=$lock" \
    - "$IMAGE" >/dev/null
docker image prune -f --filter "label=mlepipe.trainer-lock" >/dev/null 2>&1 || true
echo "built $IMAGE (trainer lock ${lock:0:12}) in $((SECONDS - started)) s" >&2
echo "$IMAGE"
