"""gpu/check.sh --tiny: the GPU benchmark's own code path, run on the CPU so that a GPU run does not fail on a typo."""

import json
import os
import subprocess
import sys
from pathlib import Path

CHECK = Path(__file__).resolve().parents[2] / "check.sh"


def test_check_sh_tiny_prints_and_writes_one_json_report(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "OUT": str(tmp_path)}
    # bf16 as on the GPU: a bf16 base under fp32 LoRA adapters.
    proc = subprocess.run(
        ["bash", str(CHECK), "--tiny", "--dtype", "bf16", "--steps", "1", "--gen-batch", "2", "--gen-tokens", "4"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert json.loads((tmp_path / "check.json").read_text()) == report
    assert "error" not in report and report["dtype"] == "bfloat16"
    for key in ("device", "torch", "transformers", "peft", "params", "trainable_params"):
        assert report[key]
    update, gen = report["update"], report["generate"]
    assert "error" not in update and "error" not in gen
    assert update["tokens"] == 2 * 32 and update["tokens_per_s"] > 0 and len(update["step_seconds"]) == 1
    assert gen["generated_tokens"] == 2 * 4 and gen["tokens_per_s"] > 0
