# The warm executor: a long-lived Python inside the jail that has already
# imported the heavy modules, and forks one fresh child per step, so a step
# costs a fork instead of an interpreter start plus imports. Passed with
# `python3 -c`; argv[1] is a JSON config. Protocol: one JSON object per line
# on stdin (requests) and on the original stdout (answers); while a step runs,
# a {"op": "kill"} request stops it at once.
import gc
import json
import mmap
import os
import random
import resource
import runpy
import select
import signal
import stat
import sys
import time
import traceback

CFG = json.loads(sys.argv[1])


def preload(modules):
    """Imports `modules`, those this interpreter lacks skipped. The imports create hundreds of thousands of
    objects and none of them is garbage: with the collector on, it walked them again and again, about a
    tenth of a jail's start-up (0.91 against 0.80 CPU-s for the scikit-learn stack with LightGBM). It is
    back on before any step runs."""
    gc.disable()
    try:
        for mod in modules:
            try:
                __import__(mod)
            except ModuleNotFoundError as err:
                # Not offered by this interpreter (Debian's has no LightGBM): steps that need it fail on their own.
                if err.name != mod.split(".")[0]:
                    print(f"mlepipe warm executor: cannot import {mod}: {err}", file=sys.stderr)
            except Exception as err:  # a broken module must not stop the executor
                print(f"mlepipe warm executor: cannot import {mod}: {err}", file=sys.stderr)
    finally:
        gc.enable()
    return {"preloaded": True}


t0 = time.time()
preload(CFG.get("modules", []))
IMPORT_S = time.time() - t0
# Modules imported only once a step of this jail has imported them (torch: about as much start-up as the
# whole scikit-learn stack, for steps that mostly never use it). A step's child names those it ended up with
# in a page it shares with the server; only names on this list are ever acted on.
LATER = [m for m in CFG.get("later", []) if m not in sys.modules]
USED = mmap.mmap(-1, 4096)
# `python -c` puts the working folder (/workspace) first on the path: the server must never import what a
# step wrote there. Steps get /workspace back in front, as `python FILE` gives them.
sys.path = [p for p in sys.path if p not in ("", ".", "/workspace")]

# Steps run as the same user; without this they could ptrace the server or
# read its memory through /proc and change what later steps see.
try:
    import ctypes

    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
except Exception:
    pass

CTL = os.fdopen(os.dup(1), "w", buffering=1)
# Anything the server itself prints goes to stderr, never into the protocol.
os.dup2(2, 1)
MB = 1024 * 1024
# The container's own cgroup, which its namespace shows at /sys/fs/cgroup (v2, else v1's memory controller):
# a jail on another machine's engine learns of OOM kills here at once, where the engine's events come late.
OOM_FILES = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


def oom_kills():
    """The OOM killer's count in the server's own cgroup (None when this jail does not watch it)."""
    if not CFG.get("own_oom"):
        return None
    for path in OOM_FILES:
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return None


def send(obj):
    CTL.write(json.dumps(obj) + "\n")


def vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


REAPED = {}


def wait_step(pid, flags):
    """waitpid that also knows statuses sweep() already collected."""
    if pid in REAPED:
        return pid, REAPED.pop(pid)
    try:
        return os.waitpid(pid, flags)
    except ChildProcessError:
        return pid, REAPED.pop(pid, 0)


def others():
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]


def sweep(wait=True):
    """Kills every process in the jail but the jail's init and this server, and reaps. SIGKILL cannot be
    caught, so once it is sent nothing of the step runs again; wait=False returns without waiting for the
    kernel to finish tearing the processes down (the next step's sweep reaps them)."""
    # Before a step, wait (up to 10 s) until the kernel has torn down everything killed earlier.
    until = time.time() + (10 if wait else 0)
    while True:
        # kill(-1) reaches every process of the jail (its own PID namespace) but init and this server, in one
        # call: a fork bomb cannot outrun it the way it outruns a walk over /proc.
        try:
            os.kill(-1, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            REAPED[pid] = status
        if time.time() >= until or not others():
            return
        time.sleep(0.01)


class Requests:
    """Request lines from stdin, read with os.read so that select() can watch stdin during a step."""

    def __init__(self):
        self.buf = b""
        self.eof = False

    def fill(self):
        chunk = os.read(0, 1 << 16)
        self.eof = not chunk
        self.buf += chunk

    def pop(self):
        line, sep, rest = self.buf.partition(b"\n")
        if not sep:
            return None
        self.buf = rest
        return line

    def next(self):
        """The next line, blocking; None at end of input."""
        while True:
            line = self.pop()
            if line is not None or self.eof:
                return line
            self.fill()


REQUESTS = Requests()


def take_kill():
    """The reason of a kill request among the lines read so far (which it removes), else None. Other
    requests wait for the step's end (the host sends none while a step runs)."""
    reason = None
    kept = []
    while True:
        line = REQUESTS.pop()
        if line is None:
            break
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get("op") == "kill":
            reason = reason or str(req.get("reason") or "interrupted")
        else:
            kept.append(line)
    REQUESTS.buf = b"".join(x + b"\n" for x in kept) + REQUESTS.buf
    return reason


def kill_requested():
    """Reads what the host sent during a step: a kill request's reason, "interrupted" when the host is gone
    (stdin closed), else None."""
    REQUESTS.fill()
    return "interrupted" if REQUESTS.eof else take_kill()


def child(req, out_w, err_w):
    """Runs in the forked child: becomes the step and never returns."""
    code = 70
    try:
        os.setsid()
        # Below the server in priority: a step that saturates the CPU (a fork bomb) must not delay the
        # server's enforcement of its timeout.
        os.nice(5)
        # The OOM killer's first choice in the jail, so the memory cap ends the step, never the server.
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.closerange(3, 65536)
        lim = req["rlimits"]
        resource.setrlimit(resource.RLIMIT_AS, (lim["as"], lim["as"]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim["fsize"], lim["fsize"]))
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if lim.get("nproc"):
            resource.setrlimit(resource.RLIMIT_NPROC, (lim["nproc"], lim["nproc"]))
        os.chdir("/workspace")
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        sys.argv = [req["file"], *req.get("args", [])]
        sys.path.insert(0, "/workspace")
        # A fresh interpreter seeds its generators from the OS; forked children would all share the parent's state.
        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        code = 0
        try:
            runpy.run_path(req["file"], run_name="__main__")
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException as e:
            # Show the step's own frames, not the executor's.
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != req["file"]:
                tb = tb.tb_next
            traceback.print_exception(type(e), e, tb or e.__traceback__)
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            USED.seek(0)
            USED.write(" ".join(m for m in LATER if m in sys.modules).encode()[: len(USED) - 1] + b"\0")
        except Exception:
            pass
    finally:
        os._exit(code)


DRAIN_S = 0.1


def run(req):
    sweep()  # whatever an earlier step left is gone before this one starts
    REAPED.clear()  # their statuses mean nothing to this step (and their pids may come back)
    cap = req["max_output"]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    req["rlimits"]["as"] = vm_bytes() + req["memory_mb"] * MB
    start = time.time()
    # Everything the server holds (the preloaded modules: a few hundred thousand objects) leaves the collector's
    # reach first. Otherwise the child's first full collection walks them all and copies every page they sit
    # on: a scikit-learn fit's step cost four times the CPU time (0.17 s against 0.04 s) with torch preloaded.
    gc.freeze()
    USED[:1] = b"\0"
    pid = os.fork()
    if pid == 0:
        child(req, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    bufs = {out_r: bytearray(), err_r: bytearray()}
    dropped = {out_r: 0, err_r: 0}
    open_fds = [out_r, err_r]
    deadline = start + req["timeout_s"]
    oom_before = oom_kills()
    timed_out = False
    status = None
    drain_until = None

    def stop():
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        sweep(wait=False)
        return time.time() + DRAIN_S

    # A kill request that came in the same read as this step's request.
    killed = take_kill()
    if killed:
        drain_until = stop()
    while open_fds:
        now = time.time()
        if status is None:
            done, st = wait_step(pid, os.WNOHANG)
            if done:
                status = st
                sweep(wait=False)  # daemons and detached grandchildren die with the step
                drain_until = now + DRAIN_S
        if status is None and not (timed_out or killed) and now > deadline:
            timed_out = True
            drain_until = stop()
        # A process of the step killed for the memory cap ends the whole step, as the host's watch would.
        if status is None and not (timed_out or killed) and oom_before is not None and (oom_kills() or 0) > oom_before:
            killed = "oom"
            drain_until = stop()
        # Output still buffered in the pipes is read; writers that are only being torn down are not waited for.
        if drain_until is not None and now > drain_until:
            break
        watch = open_fds + ([0] if status is None and not (timed_out or killed) and not REQUESTS.eof else [])
        ready, _, _ = select.select(watch, [], [], 0.02)
        for fd in ready:
            if fd == 0:
                killed = kill_requested()
                if killed:
                    drain_until = stop()
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.remove(fd)
                os.close(fd)
                continue
            room = cap - len(bufs[fd])
            if room > 0:
                bufs[fd] += chunk[:room]
            dropped[fd] += max(0, len(chunk) - max(room, 0))
    for fd in open_fds:
        os.close(fd)
    if status is None:
        until = time.time() + DRAIN_S
        while status is None and time.time() < until:
            done, st = wait_step(pid, os.WNOHANG)
            if done:
                status = st
            else:
                time.sleep(0.01)
    if status is None:
        status = signal.SIGKILL  # killed, still being torn down: reported as killed
    sweep(wait=False)
    REAPED.clear()
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
    else:
        code = 128 + os.WTERMSIG(status)

    def text(fd):
        s = bufs[fd].decode("utf-8", "replace")
        return s + (f"\n[mlepipe: output truncated, {dropped[fd]} more bytes]" if dropped[fd] else "")

    # The host adds the notes on timeouts, memory and interrupts, the same way for every backend.
    answer = {
        "exitCode": code,
        "timedOut": timed_out,
        "stdout": text(out_r),
        "stderr": text(err_r),
        "truncated": bool(dropped[out_r] or dropped[err_r]),
        "durationMs": round((time.time() - start) * 1000),
    }
    # A kill that ended the step before the loop above saw the count change is still the memory cap's.
    if not killed and oom_before is not None and (oom_kills() or 0) > oom_before:
        killed = "oom"
    if killed:
        answer["killed"] = killed
    return answer


def learn():
    """Imports the later modules the last step used, so that the jail's next steps find them loaded."""
    named = USED[:].split(b"\0", 1)[0].decode("ascii", "replace").split()
    wanted = [m for m in LATER if m in named]
    for mod in wanted:
        LATER.remove(mod)
    preload(wanted)


def remove(path):
    """Removes a file or a whole tree, whatever modes a step left on it (it ran as this same user)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        os.chmod(path, 0o700)
        for name in os.listdir(path):
            remove(os.path.join(path, name))
        os.rmdir(path)
    else:
        os.unlink(path)


def wipe(root, keep=()):
    for name in os.listdir(root):
        if name not in keep:
            try:
                remove(os.path.join(root, name))
            except OSError:
                pass  # reported by the check below


IPC_RMID = 0


def drop_ipc():
    """System V shared memory, queues and semaphores live in the jail's IPC namespace, not in a process."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind in ("shm", "msg", "sem"):
        for ident in ipc_ids(kind):
            if kind == "shm":
                libc.shmctl(ident, IPC_RMID, None)
            elif kind == "msg":
                libc.msgctl(ident, IPC_RMID, None)
            else:
                libc.semctl(ident, 0, IPC_RMID)


def ipc_ids(kind):
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            return [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
    except OSError:
        return []


def remove_paths(paths):
    """Deletes workspace files the host deleted on its side (a jail on another machine keeps a copy of the
    host's workspace). Paths are relative to /workspace and stay inside it."""
    for rel in paths:
        full = os.path.normpath(os.path.join("/workspace", rel))
        if full.startswith("/workspace/"):
            try:
                remove(full)
            except OSError:
                pass
    return {"removed": True}


SCRATCH = ["/tmp", "/dev/shm"]


def reset():
    """Readies the jail for another session: no process of the last one, nothing it wrote, no IPC object it
    made. Answers what is left, if anything; the host reuses the jail only when nothing is."""
    sweep()
    for d in SCRATCH:
        if os.path.isdir(d):
            wipe(d)
    # public/ is the task's read-only view (the host refills it).
    wipe("/workspace", keep=("public",))
    drop_ipc()
    left = [f"process {p}" for p in others()]
    left += [os.path.join(d, n) for d in SCRATCH if os.path.isdir(d) for n in os.listdir(d)]
    left += [os.path.join("/workspace", n) for n in os.listdir("/workspace") if n != "public"]
    left += [f"{kind} {i}" for kind in ("shm", "msg", "sem") for i in ipc_ids(kind)]
    return {"reset": True, "left": left}


# oom_count says whether this server reads its cgroup's OOM count (a number) or leaves OOM kills to the host.
send(
    {
        "ready": True,
        "pid": os.getpid(),
        "import_s": round(IMPORT_S, 3),
        "vm_mb": vm_bytes() // MB,
        "oom_count": oom_kills(),
    }
)
while True:
    line = REQUESTS.next()
    if line is None:
        break
    try:
        req = json.loads(line)
        op = req.get("op")
        if op == "run":
            send(run(req))
            # What the step left is torn down now, while the host works on its answer, rather than at the
            # start of the next step: dying forks of a server with big modules imported take a while.
            sweep()
            learn()
        elif op == "kill":
            pass  # for a step that had already ended: nothing to stop, nothing to answer
        elif op == "reset":
            send(reset())
        elif op == "remove":
            send(remove_paths(req.get("paths", [])))
        elif op == "preload":
            # A jail handed on to a stage that preloads more (sandbox/warm/shelf.ts).
            more = [str(m) for m in req.get("modules", [])]
            LATER[:] = [m for m in LATER if m not in more]
            send(preload(more))
        elif op == "exit":
            break
        else:
            send({"error": f"unknown op {op!r}"})
    except Exception:
        send({"error": traceback.format_exc()})
