# Runs inside the jail before the step's own code: sets the step's resource
# limits, then becomes the step (exec). Passed with `python3 -c`, so nothing
# of mlepipe has to be mounted into the jail. argv[1] is a JSON config.
import json
import os
import resource
import signal
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
os.chdir(cfg.get("cwd", "."))
argv = cfg["argv"]


def become_step():
    # Below whoever enforces the step's timeout, so a step that saturates the CPU cannot delay it.
    os.nice(5)
    os.execv(argv[0], argv)


# Given (in a container: its own PID namespace), the launcher stays the step's parent and kills every
# process of the container itself once the step's time is up; the engine's own kill can lag seconds behind
# on a loaded machine. The host's timer, started earlier, has already marked the step as timed out.
kill_after = cfg.get("kill_all_after_s")
if kill_after is None:
    become_step()
pid = os.fork()
if pid == 0:
    become_step()


def expire(signum, frame):
    try:
        os.kill(-1, signal.SIGKILL)  # every process but the container's init and this one
    except OSError:
        pass
    os._exit(128 + signal.SIGKILL)


signal.signal(signal.SIGALRM, expire)
signal.setitimer(signal.ITIMER_REAL, kill_after)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
