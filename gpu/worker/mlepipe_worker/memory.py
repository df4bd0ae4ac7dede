"""Will training fit the GPU? The static memory of a training worker, counted before any weights are loaded.

Weights, gradients, fp32 master copies (full fine-tuning of bf16 weights,
optim.py) and AdamW's two fp32 moments are known from the parameter count
alone, which is taken from the model's config on torch's meta device (no
memory). Activations depend on the sequence length and on gradient
checkpointing and are not counted here, so the rule leaves a fifth of the GPU
for them (about 28 GiB of an H200: a 32k-token sequence under gradient
checkpointing keeps about 9 GiB of Qwen3-8B's hidden states, plus one layer's
recomputation and one chunk of logits) and refuses a plan whose static part
does not fit the rest: refused when the worker starts, before any sampling,
rather than as an out-of-memory error hours into a run. Full fine-tuning of
Qwen3-8B needs about 16 bytes a parameter (122 GiB) and is refused on one
H200; LoRA r=64 needs about 18 GiB.
"""

from __future__ import annotations

from typing import Any

import torch

GIB = 2**30
# The share of the GPU the static part may take; the rest is for activations, the allocator and CUDA itself.
STATIC_SHARE = 0.8


def count_parameters(config: Any, targets: tuple[str, ...], rank: int | None) -> tuple[int, int]:
    """(all parameters, trainable ones) of the model `config` describes: LoRA adds rank·(in + out) per targeted
    Linear; full fine-tuning trains everything."""
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    if rank is None:
        return total, total
    lora = sum(rank * (m.in_features + m.out_features) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and n.rsplit(".", 1)[-1] in targets)
    return total + lora, lora


def static_bytes(total: int, trainable: int, *, full: bool, weight_bytes: int, reference: bool = False) -> dict[str, int]:
    """Bytes of each part: weights (and LoRA adapters in fp32), gradients, master copies, AdamW moments, a KL copy."""
    adapters = 0 if full else trainable
    parts = {
        "weights": (total - adapters) * weight_bytes + adapters * 4,
        "gradients": trainable * (weight_bytes if full else 4),
        "master_weights": trainable * 4 if full and weight_bytes < 4 else 0,
        "adamw_moments": trainable * 8,
        "reference_copy": total * weight_bytes if full and reference else 0,
    }
    return {**parts, "total": sum(parts.values())}


def refusal(parts: dict[str, int], device_bytes: int, *, full: bool, params: int) -> str | None:
    """The message that refuses the plan, or None when its static part fits."""
    room = device_bytes * STATIC_SHARE
    if parts["total"] <= room:
        return None
    detail = ", ".join(f"{k.replace('_', ' ')} {v / GIB:.1f}" for k, v in parts.items() if v and k != "total")
    how = "train a LoRA adapter (lora_rank > 0) or use trainer: verl, which shards the model over GPUs" if full else "use a smaller LoRA rank, a smaller model, or trainer: verl"
    return (
        f"{'full fine-tuning' if full else 'LoRA training'} of {params / 1e9:.2f}B parameters needs {parts['total'] / GIB:.1f} GiB before activations ({detail} GiB), and this GPU has {device_bytes / GIB:.1f} GiB, of which {STATIC_SHARE:.0%} may hold it: {how}"
    )
