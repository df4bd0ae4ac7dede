"""Runs an export's check (mlepipe_verl.check) on each overrides file given, one after another in one
interpreter, since importing verl and Hydra is most of a check's time. Run from the export's folder:

    python checks.py OVERRIDES.yaml...

Prints one JSON line per file: the exit code and stderr that `python -m mlepipe_verl.check FILE` would give
(an uncaught exception is exit 1 with its traceback, as Python's own)."""

import contextlib
import io
import json
import os
import sys
import traceback

sys.path.insert(0, os.getcwd())
from mlepipe_verl.check import main

for path in sys.argv[1:]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([path])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except Exception:
            traceback.print_exc()
            code = 1
    print(json.dumps({"path": path, "exit_code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}), flush=True)
