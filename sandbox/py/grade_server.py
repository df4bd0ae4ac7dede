# The warm grading server: a trusted Python on the host (never in a jail:
# evaluators read private/) that has imported numpy, pandas and scikit-learn
# once and forks one child per grade, so a grade costs a fork instead of an
# interpreter start plus imports. Passed with `python -c`; argv[1] is a JSON
# config. Protocol: one JSON request per line on stdin,
#   {"id": N, "script": PATH, "args": [...], "cwd": DIR, "timeout_s": T}
# and one JSON answer per line on stdout,
#   {"id": N, "exit": CODE, "stdout": "...", "stderr": "...", "timed_out": BOOL}.
# Requests are served one at a time; the host runs several servers for more.
import gc
import json
import os
import random
import runpy
import select
import signal
import sys
import time
import traceback

CFG = json.loads(sys.argv[1])
# Off while the preloaded modules import: their objects are never garbage (sandbox/py/warm.py gives the figure).
gc.disable()
try:
    for _mod in CFG.get("modules", []):
        try:
            __import__(_mod)
        except Exception:  # a missing module is imported (and fails) in the evaluator itself
            pass
finally:
    gc.enable()

CTL = os.fdopen(os.dup(1), "w", buffering=1)
# What the server itself might print stays out of the protocol.
os.dup2(2, 1)
MAX_BYTES = int(CFG.get("max_bytes", 10 * 1024 * 1024))


def child(req, out_w, err_w):
    """Runs the evaluator as `python SCRIPT ARGS` would, in this fork."""
    os.setpgid(0, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    code = 0
    # A fresh interpreter seeds these from the OS; a fork would inherit the server's states.
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    try:
        os.chdir(req.get("cwd") or ".")
        sys.argv = [req["script"], *req.get("args", [])]
        sys.path[0] = os.path.dirname(os.path.abspath(req["script"]))
        runpy.run_path(req["script"], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve(req):
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    # The preloaded modules leave the collector's reach, so that the evaluator's collections do not walk them and
    # copy every page they sit on (sandbox/py/warm.py gives the figure for a step).
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        child(req, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    bufs = {out_r: bytearray(), err_r: bytearray()}
    open_fds = [out_r, err_r]
    deadline = time.monotonic() + float(req.get("timeout_s", 300))
    timed_out = False
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(open_fds, [], [], left)
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                open_fds.remove(fd)
                continue
            if len(bufs[fd]) < MAX_BYTES:
                bufs[fd] += data[: MAX_BYTES - len(bufs[fd])]
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    # Whatever the evaluator left running in its group goes with it.
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for fd in (out_r, err_r):
        os.close(fd)
    code = os.waitstatus_to_exitcode(status)
    return {
        "id": req.get("id"),
        "exit": code,
        "stdout": bufs[out_r].decode("utf-8", "replace"),
        "stderr": bufs[err_r].decode("utf-8", "replace"),
        "timed_out": timed_out,
    }


CTL.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
# The host sends a request only after the previous answer; stdin's end (the host exited) ends the server.
for line in sys.stdin:
    try:
        answer = serve(json.loads(line))
    except Exception as err:  # a malformed request must not end the server
        answer = {"id": None, "exit": -1, "stdout": "", "stderr": f"grade server: {err}", "timed_out": False}
    CTL.write(json.dumps(answer) + "\n")
