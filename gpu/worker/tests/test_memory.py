"""The memory plan: static training memory counted from a config on the meta device, and a refusal before any
weights are loaded when it cannot fit."""

import subprocess
import sys
from pathlib import Path

from mlepipe_worker.memory import GIB, count_parameters, refusal, static_bytes
from mlepipe_worker.model import QWEN3_8B, QWEN3_LORA_TARGETS, qwen3_config

H200 = int(139.8 * GIB)
WORKER = Path(__file__).resolve().parents[1]


def test_qwen3_8b_full_fine_tuning_is_refused_on_one_h200_and_lora_fits():
    config = qwen3_config(**QWEN3_8B)
    total, trainable = count_parameters(config, QWEN3_LORA_TARGETS, None)
    assert total == trainable and 8.1e9 < total < 8.3e9
    full = static_bytes(total, trainable, full=True, weight_bytes=2)
    # 2 bytes of weights, 2 of gradients, 4 of fp32 masters and 8 of AdamW moments a parameter.
    assert full["total"] == 16 * total and full["master_weights"] == 4 * total
    why = refusal(full, H200, full=True, params=total)
    assert why and "full fine-tuning of 8.19B parameters needs 122.1 GiB" in why and "LoRA" in why and "trainer: verl" in why
    total, lora = count_parameters(config, QWEN3_LORA_TARGETS, 64)
    # r·(in + out) on the seven projections of 36 layers.
    assert lora == 36 * 64 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 2 * (4096 + 12288) + (12288 + 4096))
    parts = static_bytes(total, lora, full=False, weight_bytes=2)
    assert parts["master_weights"] == 0 and refusal(parts, H200, full=False, params=total) is None


def test_the_worker_refuses_to_start_a_plan_that_cannot_fit_before_it_loads_weights():
    r = subprocess.run([sys.executable, "-m", "mlepipe_worker", "serve", "--tiny", "--lora-rank", "0", "--check-memory", "--device-memory-gib", "0.001", "--port", "0"], cwd=WORKER, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "mlepipe-worker: full fine-tuning of" in r.stderr and "train a LoRA adapter" in r.stderr
    assert "listening" not in r.stdout


def test_qwen3_14b_and_a_30b_a3b_moe_full_fine_tuning_are_refused_on_one_h200():
    from transformers import Qwen3MoeConfig

    dense_14b = qwen3_config(**{**QWEN3_8B, "hidden_size": 5120, "num_hidden_layers": 40, "intermediate_size": 17408, "num_attention_heads": 40, "num_key_value_heads": 8})
    moe = Qwen3MoeConfig(vocab_size=151936, hidden_size=2048, num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
                         moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8, intermediate_size=6144)  # fmt: skip
    for config, size in [(dense_14b, (14.5e9, 15.0e9)), (moe, (30.0e9, 31.0e9))]:
        total, trainable = count_parameters(config, QWEN3_LORA_TARGETS, None)
        assert size[0] < total < size[1], total
        why = refusal(static_bytes(total, trainable, full=True, weight_bytes=2), H200, full=True, params=total)
        # Every expert's weights count: an A3B model activates 3B parameters a token but trains and stores all of them.
        assert why and "LoRA" in why and "trainer: verl" in why, why
