"""The memory plan: static training memory counted from a config on the meta device, activations from the
config, the planned sequence and micro-batch (checked against what autograd really keeps), and a refusal
before any weights are loaded when it cannot fit."""

import pytest
import torch

from mlepipe_worker.logprobs import token_logprobs
from mlepipe_worker.memory import GIB, activation_bytes, count_parameters, layer_bytes, refusal, static_bytes
from mlepipe_worker.model import QWEN3_8B, QWEN3_LORA_TARGETS, QWEN3_TINY, LoraSpec, build_policy, qwen3_config

H200 = int(139.8 * GIB)


def plan(config, rank, tokens, checkpointing):
    total, trainable = count_parameters(config, QWEN3_LORA_TARGETS, rank)
    static = static_bytes(total, trainable, full=rank is None, weight_bytes=2)
    parts = {k: v for k, v in static.items() if k != "total"} | activation_bytes(
        config, tokens, checkpointing=checkpointing, lora_rank=rank or 0
    )
    return parts, refusal(parts, H200, full=rank is None, params=total, checkpointing=checkpointing)


def test_qwen3_8b_full_fine_tuning_is_refused_on_one_h200_and_lora_fits_with_checkpointing():
    config = qwen3_config(**QWEN3_8B)
    total, trainable = count_parameters(config, QWEN3_LORA_TARGETS, None)
    assert total == trainable and 8.1e9 < total < 8.3e9
    full = static_bytes(total, trainable, full=True, weight_bytes=2)
    # 2 bytes of weights, 2 of gradients, 4 of fp32 masters and 8 of AdamW moments a parameter.
    assert full["total"] == 16 * total and full["master_weights"] == 4 * total
    parts, why = plan(config, None, 32_768, True)
    assert (
        why
        and "full fine-tuning of 8.19B parameters needs 140.4 GiB" in why
        and "activations 15.6" in why
        and "LoRA" in why
        and "trainer: verl" in why
    )
    total, lora = count_parameters(config, QWEN3_LORA_TARGETS, 64)
    # r·(in + out) on the seven projections of 36 layers.
    assert lora == 36 * 64 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 2 * (4096 + 12288) + (12288 + 4096))
    parts, why = plan(config, 64, 32_768, True)
    assert parts["master_weights"] == 0 and why is None and 38 * GIB < sum(parts.values()) < 40 * GIB
    # The same LoRA plan without gradient checkpointing keeps every layer's activations: refused, naming the fix.
    parts, why = plan(config, 64, 32_768, False)
    assert why and parts["activations"] > 300 * GIB and "turn gradient checkpointing on" in why


def test_activations_grow_with_the_planned_tokens_and_micro_batch():
    config = qwen3_config(**QWEN3_8B)
    short, long = (activation_bytes(config, t, checkpointing=True)["activations"] for t in (8_192, 32_768))
    assert long == 4 * short
    one, four = (activation_bytes(config, 8_192, micro_batch=m, checkpointing=False)["activations"] for m in (1, 4))
    assert four == 4 * one


def saved_bytes(config: dict, tokens: int, checkpointing: bool, lora: int | None) -> int:
    """What autograd keeps for the backward pass of one bf16 forward pass: the saved tensors' storages, not the parameters'."""
    policy = build_policy(
        config,
        lora=LoraSpec(rank=lora, alpha=2 * lora) if lora else None,
        device="cpu",
        dtype=torch.bfloat16,
        gradient_checkpointing=checkpointing,
    )
    params = {p.untyped_storage().data_ptr() for p in policy.model.parameters()}
    kept: dict[int, int] = {}

    def pack(t):
        if t.untyped_storage().data_ptr() not in params:
            kept[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    ids = torch.randint(0, config["vocab_size"], (1, tokens), generator=torch.Generator().manual_seed(0))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        token_logprobs(policy.model, ids, torch.ones_like(ids))
    return sum(kept.values())


SHAPE = {
    **QWEN3_TINY,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "intermediate_size": 768,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}


@pytest.mark.parametrize(
    "change",
    [{}, {"hidden_size": 512}, {"intermediate_size": 1536}, {"num_attention_heads": 8}, {"num_key_value_heads": 4}],
)
@pytest.mark.parametrize("lora", [None, 16])
def test_a_layer_keeps_what_the_estimate_counts(change, lora):
    # One more decoder layer adds layer_bytes a token to what autograd keeps (gradient checkpointing off),
    # and only the layer's input with it.
    config = {**SHAPE, **change}
    tokens = 128
    per_layer = {}
    for checkpointing in (False, True):
        two, three = (saved_bytes({**config, "num_hidden_layers": n}, tokens, checkpointing, lora) for n in (2, 3))
        per_layer[checkpointing] = (three - two) / tokens
    # Within half a percent: a few bytes a token of per-head bookkeeping depend on how SDPA groups the heads.
    assert per_layer[False] == pytest.approx(layer_bytes(qwen3_config(**config), lora or 0), rel=0.005)
    assert per_layer[True] == 2 * config["hidden_size"]


def test_the_worker_refuses_to_start_a_plan_that_cannot_fit_before_it_loads_weights(monkeypatch):
    # `python -m mlepipe_worker serve` runs __main__.main; here it runs in this interpreter, which has imported torch
    # and transformers already (a worker process of its own spends seconds on that). A refusal is a SystemExit with
    # the message (exit status 1, the message on stderr), and any weights loaded before it fail the test.
    from mlepipe_worker import __main__ as worker, model

    def loaded(*_, **__):
        raise AssertionError("weights were loaded before the plan was checked")

    monkeypatch.setattr(model, "build_policy", loaded)
    monkeypatch.setattr(model, "load_policy", loaded)
    argv = ["serve", "--tiny", "--lora-rank", "0", "--check-memory", "--device-memory-gib", "0.001", "--port", "0"]
    with pytest.raises(SystemExit) as full:
        worker.main(argv)
    assert "mlepipe-worker: full fine-tuning of" in str(full.value.code) and "turn gradient checkpointing on" in str(
        full.value.code
    )
    with pytest.raises(SystemExit) as checkpointed:
        worker.main([*argv, "--gradient-checkpointing", "--plan-tokens", "512"])
    assert "mlepipe-worker: " in str(checkpointed.value.code) and "train a LoRA adapter" in str(checkpointed.value.code)


def test_qwen3_14b_and_a_30b_a3b_moe_full_fine_tuning_are_refused_on_one_h200():
    from transformers import Qwen3MoeConfig

    dense_14b = qwen3_config(
        **{
            **QWEN3_8B,
            "hidden_size": 5120,
            "num_hidden_layers": 40,
            "intermediate_size": 17408,
            "num_attention_heads": 40,
            "num_key_value_heads": 8,
        }
    )
    moe = Qwen3MoeConfig(vocab_size=151936, hidden_size=2048, num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
                         moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8, intermediate_size=6144)  # fmt: skip
    for config, size in [(dense_14b, (14.5e9, 15.0e9)), (moe, (30.0e9, 31.0e9))]:
        total, trainable = count_parameters(config, QWEN3_LORA_TARGETS, None)
        assert size[0] < total < size[1], total
        _, why = plan(config, None, 8_192, True)
        # Every expert's weights count: an A3B model activates 3B parameters a token but trains and stores all of them.
        assert why and "LoRA" in why and "trainer: verl" in why, why
