"""Per-token log-probabilities of a sequence under a causal LM, without a [B, T, V] logits tensor.

At Qwen3's vocabulary of 151,936 a 32k-token sequence has about 20 GB of fp32
logits, and autograd would keep them (and their fp32 copy) until the backward
pass. Here the decoder runs once, and the output head with the log-softmax runs
over chunks of positions, each under activation checkpointing: a chunk's
logits exist only while that chunk is computed, in the forward pass and again
in the backward pass, so the peak is one chunk's logits, whatever the length.
The values are the ones the full logits give (the same head on the same hidden
states); the test compares them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

# Positions per chunk of the output head: at 151,936 entries, 1,024 positions are 0.6 GB of fp32 logits.
LOGIT_CHUNK = 1024


def _split(model: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Module] | None:
    """The decoder (hidden states after the final norm) and the output head, or None for a model without them.
    A peft model's base holds the LoRA layers, so adapters (and disable_adapter) still apply."""
    # transformers and peft add these methods at run time; torch types such attributes as Tensor | Module.
    base = getattr(model, "get_base_model", None)
    core: Any = base() if base is not None else model
    try:
        return core.get_decoder(), core.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None


def _chunk(head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor, temperature: float, entropy: bool):
    scaled = head(hidden).float()
    if temperature != 1.0:
        scaled = scaled / temperature
    lse = torch.logsumexp(scaled, dim=-1)
    logp = scaled.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - lse
    if not entropy:
        return logp, None
    with torch.no_grad():
        ent = lse - (scaled.softmax(-1) * scaled).sum(-1)
    return logp, ent


def token_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    temperature: float = 1.0,
    entropy: bool = False,
):
    """[B, T] log-probabilities of each token given the ones before it (position 0 gets 0), and optionally the
    entropy of each position's next-token distribution (no gradient). Position t's logits predict token t + 1,
    in fp32 at the given temperature."""
    parts = _split(model)
    if parts is None:
        logits = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
        return logprobs_from_logits(logits, input_ids, temperature, entropy)
    decoder, head = parts
    hidden = decoder(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state
    logps, ents = [], []
    # One chunk is checkpointed for nothing: its logits exist in the forward pass either way.
    grad = torch.is_grad_enabled() and input_ids.shape[1] - 1 > LOGIT_CHUNK
    for s in range(0, input_ids.shape[1] - 1, LOGIT_CHUNK):
        h, t = hidden[:, s : s + LOGIT_CHUNK], input_ids[:, s + 1 : s + 1 + LOGIT_CHUNK]
        h = h[:, : t.shape[1]]
        if grad:
            lp, ent = checkpoint(_chunk, head, h, t, temperature, entropy, use_reentrant=False)
        else:
            lp, ent = _chunk(head, h, t, temperature, entropy)
        logps.append(lp)
        ents.append(ent)
    logp = torch.nn.functional.pad(torch.cat(logps, 1), (1, 0))
    ent = torch.nn.functional.pad(torch.cat(ents, 1), (1, 0)).detach() if entropy else None
    return logp, ent


def logprobs_from_logits(
    logits: torch.Tensor, input_ids: torch.Tensor, temperature: float = 1.0, entropy: bool = False
):
    """The same from a model's full [B, T, V] logits (models without a separable output head)."""
    out = [_chunk(torch.nn.Identity(), logits[:, :-1], input_ids[:, 1:], temperature, entropy)]
    logp = torch.nn.functional.pad(out[0][0], (1, 0))
    ent = torch.nn.functional.pad(out[0][1], (1, 0)).detach() if entropy else None
    return logp, ent
