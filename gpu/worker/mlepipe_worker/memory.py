"""Will training fit the GPU? The peak memory of a training worker, counted before any weights are loaded.

Weights, gradients, fp32 master copies (full fine-tuning of bf16 weights,
optim.py) and AdamW's two fp32 moments are known from the parameter count
alone, which is taken from the model's config on torch's meta device (no
memory). Activations are counted from the same config, the longest sequence
the node sends and its micro-batch: what autograd keeps for the backward pass
of each decoder layer (every layer without gradient checkpointing; each
layer's input with it, plus one layer recomputed at a time) and the output
head's one chunk of logits (logprobs.py). The per-token counts below were
read off autograd's saved tensors for Qwen3 layers of several shapes in
bf16 (tests/test_memory.py measures them again). A plan whose estimate does
not fit is refused when the worker starts, before any sampling, rather than
as an out-of-memory error hours into a run. At 32k tokens with gradient
checkpointing, Qwen3-8B needs about 140 GiB to fine-tune every weight, which
one H200 refuses, and about 39 GiB for LoRA r=64; without checkpointing its
LoRA activations alone are about 326 GiB.
"""

from __future__ import annotations

from typing import Any

import torch

from .logprobs import LOGIT_CHUNK

GIB = 2**30
# The share of the GPU the estimate may take; the rest is for CUDA's own context, the allocator's
# fragmentation and short-lived temporaries the count leaves out.
PEAK_SHARE = 0.9
# The sequence planned for when none is given: the GRPO context.
PLAN_TOKENS = 32_768


def count_parameters(config: Any, targets: tuple[str, ...], rank: int | None) -> tuple[int, int]:
    """(all parameters, trainable ones) of the model `config` describes: LoRA adds rank·(in + out) per targeted
    Linear; full fine-tuning trains everything."""
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    if rank is None:
        return total, total
    lora = sum(
        rank * (m.in_features + m.out_features)
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and n.rsplit(".", 1)[-1] in targets
    )
    return total + lora, lora


def static_bytes(
    total: int, trainable: int, *, full: bool, weight_bytes: int, reference: bool = False
) -> dict[str, int]:
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


def _shape(config: Any) -> dict[str, int]:
    c = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = c.num_attention_heads
    kv_heads = getattr(c, "num_key_value_heads", None) or heads
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // heads
    # A mixture of experts runs top-k experts a token: their intermediate activations are what is kept.
    top_k, expert = getattr(c, "num_experts_per_tok", None), getattr(c, "moe_intermediate_size", None)
    mlp = top_k * expert if top_k and expert else c.intermediate_size
    return {
        "h": c.hidden_size,
        "layers": c.num_hidden_layers,
        "heads": heads,
        "kv_heads": kv_heads,
        "q": heads * head_dim,
        "kv": kv_heads * head_dim,
        "mlp": mlp,
        "vocab": c.vocab_size,
    }


def layer_bytes(config: Any, lora_rank: int = 0) -> int:
    """Bytes autograd keeps per token for one decoder layer's backward pass, in bf16: the norms (fp32 inside),
    the q/k/v/o projections, rotary, SDPA's inputs, output and log-sum-exp, and the SwiGLU's gate, up and
    product; with LoRA also each adapted layer's input cast to the adapter's fp32, and the r-wide A outputs."""
    d = _shape(config)
    out = 16 * d["h"] + 10 * d["q"] + 10 * d["kv"] + 8 * d["mlp"] + 8 * (d["heads"] + d["kv_heads"])
    if lora_rank:
        out += 12 * d["h"] + 2 * d["q"] - 2 * d["kv"] + 2 * d["mlp"] + 28 * lora_rank
    return out


def activation_bytes(
    config: Any, tokens: int, *, micro_batch: int = 1, checkpointing: bool, lora_rank: int = 0, act_bytes: int = 2
) -> dict[str, int]:
    """Bytes the forward pass keeps for the backward pass of `micro_batch` sequences of `tokens` tokens, in
    bf16 (act_bytes 2; fp32 on a CPU doubles it at most). With gradient checkpointing each layer keeps its
    bf16 input, and the layer being recomputed holds its own activations."""
    d = _shape(config)
    n = tokens * micro_batch
    layer = layer_bytes(config, lora_rank)
    kept = d["layers"] * n * (2 * d["h"] if checkpointing else layer) + (n * layer if checkpointing else 0)
    # The final norm's input and output per token, and one chunk of fp32 logits with their softmax and gradient.
    head = n * (8 * d["h"] + 256) + min(tokens, LOGIT_CHUNK) * micro_batch * 12 * d["vocab"]
    scale = act_bytes / 2
    return {"activations": int(kept * scale), "output_head": int(head * scale)}


def refusal(
    parts: dict[str, int], device_bytes: int, *, full: bool, params: int, checkpointing: bool = True
) -> str | None:
    """The message that refuses the plan, or None when its estimate fits. `parts` holds static_bytes' parts and
    activation_bytes' (the total is their sum)."""
    total = sum(v for k, v in parts.items() if k != "total")
    room = device_bytes * PEAK_SHARE
    if total <= room:
        return None
    detail = ", ".join(f"{k.replace('_', ' ')} {v / GIB:.1f}" for k, v in parts.items() if v and k != "total")
    if not checkpointing and parts.get("activations", 0) > total - parts.get("activations", 0):
        how = "turn gradient checkpointing on (gradient_checkpointing: true on the stage), which keeps one layer's activations at a time"
    elif full:
        how = "train a LoRA adapter (lora_rank > 0) or use trainer: verl, which shards the model over GPUs"
    else:
        how = "use a smaller LoRA rank, shorter sequences, a smaller model, or trainer: verl"
    return f"{'full fine-tuning' if full else 'LoRA training'} of {params / 1e9:.2f}B parameters needs {total / GIB:.1f} GiB ({detail} GiB), and this GPU has {device_bytes / GIB:.1f} GiB, of which {PEAK_SHARE:.0%} may hold it: {how}"
