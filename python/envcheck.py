"""Compares the running interpreter's installed distributions with a lock.

    python envcheck.py LOCK [--json]

Prints the locked packages that are missing or at another version (as JSON
with --json) and exits 1 when there is any. Reads metadata only, imports
nothing, so it is quick enough to run on every set-up and `mlepipe doctor`.
"""

import json
import re
import sys
from importlib import metadata


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(path):
    pins = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)", line)
            if m:
                pins[normalize(m.group(1))] = m.group(2)
    return pins


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    installed = {normalize(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    missing, wrong = [], []
    for name, version in sorted(locked(argv[0]).items()):
        have = installed.get(name)
        if have is None:
            missing.append(f"{name}=={version}")
        elif have != version:
            wrong.append(f"{name}=={version} (installed {have})")
    if "--json" in argv[1:]:
        print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "missing": missing, "mismatched": wrong}))
    else:
        for line in missing:
            print(f"missing: {line}")
        for line in wrong:
            print(f"other version: {line}")
    return 1 if missing or wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
