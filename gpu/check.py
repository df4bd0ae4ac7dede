"""The trainer worker's GPU check (run it through gpu/check.sh).

One JSON line per phase on stdout (and in $OUT/check.jsonl when OUT is set),
each phase under a time guard of its own, and every case in a phase survives
its own out-of-memory error (it is recorded as `"oom": true` and the next case
runs), because a device run is rare and cannot be repeated at will:

  versions   torch, CUDA, transformers, peft, the GPU, SDPA backends
  efficacy   the share of the intended weight change realised by a bf16 model
             at lr 1e-6, through the worker's optimiser and in place
  update     one optimiser step of full fine-tuning and of LoRA r=64 on one
             sequence of 8k, 16k and 32k tokens, with and without gradient
             checkpointing: seconds, tokens/s, peak memory
  sampling   generation in rollout shape: batch 1 at 4k and 16k tokens of
             context, and batch 64
  moe        a Qwen3-MoE shape cut to a few layers, LoRA on its attention,
             forward and backward
  http       the worker's HTTP service with 4 concurrent chat requests

Models are Qwen3-8B's architecture (and Qwen3-30B-A3B's, cut) with random
weights built on the GPU: nothing is downloaded. --tiny runs every phase on
tiny shapes on the CPU, so that the suite checks this script. The last line
is a summary with the phases that failed; the exit code is 1 if any did.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import torch

import check_phases as phases

# Seconds per phase on a GPU (the whole check stays under 10 minutes); a phase past its guard skips the
# cases it has not started, and says so.
GUARDS = {"versions": 20, "efficacy": 60, "update": 220, "sampling": 100, "moe": 50, "http": 50}


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--tiny", action="store_true", help="tiny shapes on the CPU: checks the script, measures nothing of interest"
    )
    p.add_argument("--phases", default=",".join(GUARDS), help=f"comma-separated subset of {','.join(GUARDS)}")
    p.add_argument("--guard-scale", type=float, default=1.0, help="multiply every phase's time guard")
    args = p.parse_args(argv)
    unknown = [x for x in args.phases.split(",") if x not in GUARDS]
    if unknown:
        p.error(f"unknown phase(s) {', '.join(unknown)}: choose from {', '.join(GUARDS)}")
    return args


def emit(record: dict) -> None:
    line = json.dumps(record)
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
        with open(os.path.join(os.environ["OUT"], "check.jsonl"), "a") as f:
            f.write(line + "\n")
    print(line, flush=True)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not args.tiny and not torch.cuda.is_available():
        print(
            "gpu/check.sh: no CUDA device is visible to torch; use --tiny to check the script on a CPU", file=sys.stderr
        )
        return 3
    shapes = phases.Shapes.tiny() if args.tiny else phases.Shapes.h200()
    start = time.perf_counter()
    failed: list[str] = []
    for name in args.phases.split(","):
        guard = phases.Guard(GUARDS[name] * args.guard_scale)
        record: dict = {"phase": name, "tiny": args.tiny, "guard_s": guard.seconds}
        t = time.perf_counter()
        try:
            record.update(getattr(phases, name)(shapes, guard))
        except Exception as err:  # a phase that breaks still gives its line, and the next phase runs
            traceback.print_exc()
            record["error"] = f"{type(err).__name__}: {err}"
        phases.free()
        record["seconds"] = round(time.perf_counter() - t, 1)
        if "error" in record or any("error" in c for c in record.get("cases", [])):
            failed.append(name)
        emit(record)
    emit({"phase": "summary", "tiny": args.tiny, "failed": failed, "seconds": round(time.perf_counter() - start, 1)})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
