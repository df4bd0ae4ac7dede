"""The training-metrics sidecar of grpo and sft nodes (stages/train-log.ts).

    python mlepipe_logger.py --logdir DIR [--name N] [--wandb --project P --group G]

Reads one JSON object a line on stdin: with --wandb first the run's config
(the node's parameters, too long for an argument), then each a row of the
node's metrics.jsonl,
and writes its numbers as TensorBoard scalars (tensorboardX) under DIR, with
the row's `step` as the step and the metric's own name as the tag, so the
curves in TensorBoard are named as in the report. --name (EXPERIMENT/NODE)
is written into the event files as the text `mlepipe/run`, so that a copy of
them still says which run it is, and names the W&B run. With --wandb the same
numbers go to a Weights & Biases run (wandb reads WANDB_MODE, WANDB_DIR,
WANDB_API_KEY and WANDB_ENTITY itself; WANDB_PROJECT names the project over
--project). Prints `ready` once both are open, so the node knows before its
first step whether they opened; at the end of stdin it flushes and closes
them. Runs in .venv/logger (python/logger.lock).
"""

import argparse
import json
import math
import os
import sys


def scalars(row):
    """The row's finite numbers except its step; booleans and nulls are not curves."""
    out = {}
    for key, value in row.items():
        if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value):
            out[key] = value
    return out


def open_wandb(args):
    import wandb

    # The project's own name for W&B, unless the environment names another.
    project = os.environ.get("WANDB_PROJECT") or args.project
    # Without WANDB_DIR the run's files stay in the node's output beside the TensorBoard files.
    folder = os.environ.get("WANDB_DIR") or os.path.dirname(os.path.abspath(args.logdir))
    # console="off": wandb would otherwise wrap this process's stdout, which the node reads.
    config = json.loads(sys.stdin.readline() or "{}")
    return wandb.init(
        project=project,
        name=args.name,
        group=args.group,
        dir=folder,
        config=config,
        settings=wandb.Settings(console="off"),
    )


def main(argv):
    ap = argparse.ArgumentParser(description="TensorBoard (and W&B) logging of metrics.jsonl rows read on stdin")
    ap.add_argument("--logdir", required=True)
    ap.add_argument("--wandb", action="store_true")
    ap.add_argument("--project", default="mlepipe")
    ap.add_argument("--name")
    ap.add_argument("--group")
    args = ap.parse_args(argv)

    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir=args.logdir)
    if args.name:
        writer.add_text("mlepipe/run", args.name, global_step=0)
    run = open_wandb(args) if args.wandb else None
    print("ready", flush=True)
    count = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        row = json.loads(line)
        # A row without a step (none of grpo's or sft's) is placed after the last one.
        step = int(row["step"]) if isinstance(row.get("step"), (int, float)) else count
        values = scalars(row)
        for tag, value in values.items():
            writer.add_scalar(tag, value, global_step=step)
        # Flushed a row at a time: a node that dies mid-run still leaves its curves so far.
        writer.flush()
        if run is not None:
            run.log(values, step=step)
        count += 1
    writer.close()
    if run is not None:
        run.finish()
    print(f"logged {count} rows", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
