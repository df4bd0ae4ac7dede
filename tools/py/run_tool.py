"""Runs one diagnostic tool: reads the call from argv[1], writes the answer to argv[2] as JSON."""

import importlib
import json
import math
import os
import sys
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def plain(x):
    """numpy scalars and arrays, NaN and infinity made JSON-safe."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if hasattr(x, "tolist"):
        return plain(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def main():
    # Library deprecation notes are noise in an answer the agent reads.
    warnings.filterwarnings("ignore")
    with open(sys.argv[1]) as f:
        call = json.load(f)
    from mlepipe_tools.common import TOOLS, ToolError

    importlib.import_module(f"mlepipe_tools.{call['module']}")
    try:
        out = {"ok": True, **TOOLS[call["tool"]](**call["args"])}
    except ToolError as e:
        out = {"ok": False, "error": str(e)}
    except Exception as e:
        # The agent reads this: the tool's own frames would only be noise.
        out = {"ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-1500:]}
    with open(sys.argv[2], "w") as f:
        json.dump(plain(out), f, allow_nan=False, default=str)


main()
