"""gpu/check.sh --tiny: the GPU check's own code path, every phase, run on the CPU so that a device run does not
fail on a typo; and a case that runs out of memory is a measurement, not the end of the run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

GPU = Path(__file__).resolve().parents[2]
CHECK = GPU / "check.sh"


def test_check_sh_tiny_prints_and_writes_one_json_line_per_phase(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "OUT": str(tmp_path)}
    proc = subprocess.run(["bash", str(CHECK), "--tiny"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in proc.stdout.strip().splitlines()]
    assert [json.loads(x) for x in (tmp_path / "check.jsonl").read_text().splitlines()] == lines
    by = {x["phase"]: x for x in lines}
    assert list(by) == ["versions", "efficacy", "update", "sampling", "moe", "http", "summary"]
    assert by["summary"]["failed"] == []
    assert by["versions"]["torch"] == torch.__version__ and by["versions"]["sdpa"]["math"] == "ok"
    eff = {c["optimizer"]: c["realised_share"] for c in by["efficacy"]["cases"]}
    assert eff["worker"] > 0.9 and eff["in_place"] < 0.5, eff
    steps = [c for c in by["update"]["cases"] if not c.get("build")]
    # full and LoRA, with and without checkpointing, at three lengths.
    assert len(steps) == 12 and all(c["tokens_per_s"] > 0 for c in steps), steps
    assert {c["optimizer"] for c in steps if c["mode"] == "full"} == {"MasterAdamW"}
    # Each update case carries the worker's plan for it, to read beside the GPU's measured peak.
    assert all(c["estimated_peak_gib"] > 0 for c in steps)
    by_case = {(c["mode"], c["gradient_checkpointing"], c["tokens"]): c["estimated_peak_gib"] for c in steps}
    assert all(by_case[(m, False, n)] > by_case[(m, True, n)] for m, _, n in by_case)
    assert [c["generated_tokens"] for c in by["sampling"]["cases"]] == [8, 8, 64]
    (m,) = by["moe"]["cases"]
    assert m["adapters_with_grad"] > 0 and m["trainable_params"] < m["params"]
    (h,) = by["http"]["cases"]
    assert len(h["request_seconds"]) == 4 and h["completion_tokens"] > 0


def test_a_case_that_runs_out_of_memory_is_recorded_and_the_next_one_runs():
    sys.path.insert(0, str(GPU))
    import check_phases as phases

    shapes, guard = phases.Shapes.tiny(), phases.Guard(60)

    def oom():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB")

    assert phases.case(shapes, guard, {"tokens": 32768}, oom) == {"tokens": 32768, "oom": True, "peak_memory_gib": None}
    assert phases.case(shapes, guard, {"tokens": 8}, lambda: {"ok": 1})["ok"] == 1
    assert phases.case(shapes, phases.Guard(-1), {"tokens": 8}, lambda: {"ok": 1})["skipped"]
