"""Worker checkpoints: the policy (adapter or full weights, tokenizer, manifest
as model.save_policy writes them), the optimizer's state and the step.

A checkpoint is written into a hidden temporary folder beside its final place
and renamed into place only once every file is written, so a folder under the
checkpoint directory whose name does not start with a dot is always complete;
a crash mid-save leaves only a hidden folder behind, which resuming ignores.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from .model import Policy, save_policy

STATE = "state.json"
OPTIMIZER = "optimizer.pt"
FORMAT = "mlepipe-worker-state/1"


def write_checkpoint(
    root: Path,
    tag: str,
    policy: Policy,
    optimizer: torch.optim.Optimizer | None,
    state: dict[str, Any],
    *,
    optimizer_from: Path | None = None,
) -> Path:
    """`optimizer` None: no step was taken since the start or the last load; the state loaded from
    `optimizer_from` (if any) is copied as it is, without making an optimiser for it."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / tag
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{tag}-", dir=root))
    try:
        save_policy(policy, tmp)
        if optimizer is not None:
            torch.save(optimizer.state_dict(), tmp / OPTIMIZER)
        elif optimizer_from is not None and (optimizer_from / OPTIMIZER).is_file():
            shutil.copyfile(optimizer_from / OPTIMIZER, tmp / OPTIMIZER)
        (tmp / STATE).write_text(json.dumps({"format": FORMAT, "tag": tag, "saved_at": time.time(), **state}, indent=2))
        old = None
        if final.exists():
            # Renaming the old one aside first: a directory cannot be replaced in one rename.
            old = Path(tempfile.mkdtemp(prefix=f".old-{tag}-", dir=root))
            os.rename(final, old / tag)
        os.rename(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def read_state(path: Path) -> dict[str, Any]:
    f = path / STATE
    if not f.is_file():
        raise FileNotFoundError(f"{path} is not a worker checkpoint (it has no {STATE})")
    state = json.loads(f.read_text())
    if state.get("format") != FORMAT:
        raise ValueError(f"{f}: unknown format {state.get('format')!r} (expected {FORMAT})")
    return state


def newest_checkpoint(root: Path) -> Path | None:
    """The complete checkpoint with the highest step (the latest written among equals), or None."""
    best: tuple[int, float, Path] | None = None
    if not root.is_dir():
        return None
    for d in root.iterdir():
        if d.name.startswith(".") or not (d / STATE).is_file():
            continue
        try:
            state = read_state(d)
        except (ValueError, OSError):
            continue
        key = (int(state.get("step", 0)), float(state.get("saved_at", 0.0)), d)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def load_optimizer_state(optimizer: torch.optim.Optimizer, path: Path, device: torch.device) -> bool:
    f = path / OPTIMIZER
    if not f.is_file():
        return False
    optimizer.load_state_dict(torch.load(f, map_location=device, weights_only=True))
    return True
