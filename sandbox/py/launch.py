# Runs inside the jail before the step's own code: sets the step's resource
# limits, then becomes the step (exec). Passed with `python3 -c`, so nothing
# of mlepipe has to be mounted into the jail. argv[1] is a JSON config.
import json
import os
import resource
import sys

cfg = json.loads(sys.argv[1])
LIMITS = {
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}
for name, value in cfg.get("rlimits", {}).items():
    if value is None:
        continue
    try:
        resource.setrlimit(LIMITS[name], (value, value))
    except (ValueError, OSError) as err:
        print(f"mlepipe sandbox: cannot set {name} limit: {err}", file=sys.stderr)
# Below whoever enforces the step's timeout, so a step that saturates the CPU cannot delay it.
os.nice(5)
os.chdir(cfg.get("cwd", "."))
argv = cfg["argv"]
os.execv(argv[0], argv)
