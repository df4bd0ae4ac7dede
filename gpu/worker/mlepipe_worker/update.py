"""One optimiser step over an exact token batch, with micro-batching and
gradient accumulation that give the same gradient as the whole batch at once.

A batch is a list of `Sequence`s: the token ids exactly as the policy saw and
sampled them, a loss mask (1 on sampled tokens, 0 on prompts and
observations), the sampling policy's per-token log-probabilities and the
advantages (one per sequence, or one per token, e.g. turn-level advantages
broadcast with `turn_advantages`). All per-token lists are aligned with
`input_ids`; the first token has no context, so its mask must be 0.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence as Seq, TypedDict

import torch

from .loss import LossConfig, batch_counts, policy_loss
from .logprobs import token_logprobs
from .model import Policy
from .optim import MasterAdamW, needs_master


@dataclass
class Sequence:
    input_ids: list[int]
    loss_mask: list[int]
    advantages: float | list[float]
    # None: the batch is on-policy and the ratio is exactly 1.
    old_logprobs: list[float] | None = None
    # None with a KL term: computed from the policy's reference model.
    ref_logprobs: list[float] | None = None

    def check(self, index: int) -> None:
        n = len(self.input_ids)
        where = f"sequence {index}"
        if n < 2:
            raise ValueError(f"{where}: needs at least 2 tokens (a context and a sampled token), has {n}")
        for name in ("loss_mask", "old_logprobs", "ref_logprobs"):
            v = getattr(self, name)
            if v is not None and len(v) != n:
                raise ValueError(f"{where}: {name} has {len(v)} entries for {n} tokens")
        if not isinstance(self.advantages, (int, float)) and len(self.advantages) != n:
            raise ValueError(
                f"{where}: advantages has {len(self.advantages)} entries for {n} tokens (give one number, or one per token)"
            )
        if any(m not in (0, 1) for m in self.loss_mask):
            raise ValueError(f"{where}: loss_mask entries must be 0 or 1")
        if self.loss_mask[0]:
            raise ValueError(f"{where}: the first token has no context and cannot carry loss (loss_mask[0] must be 0)")


def turn_advantages(loss_mask: Seq[int], per_turn: Seq[float]) -> list[float]:
    """Per-token advantages: turn k's value on the k-th run of mask-1 tokens (its assistant reply), 0 elsewhere."""
    out, turn, prev = [], -1, 0
    for m in loss_mask:
        if m and not prev:
            turn += 1
            if turn >= len(per_turn):
                raise ValueError(
                    f"the loss mask has more assistant turns than the {len(per_turn)} turn advantages given"
                )
        out.append(float(per_turn[turn]) if m else 0.0)
        prev = m
    if turn + 1 != len(per_turn):
        raise ValueError(f"{len(per_turn)} turn advantages for {turn + 1} assistant turns in the loss mask")
    return out


@dataclass
class UpdateConfig:
    loss: LossConfig = field(default_factory=LossConfig)
    lr: float = 1e-6
    # Sequences per forward/backward pass; the step's gradient does not depend on it.
    micro_batch_size: int = 1
    # None: no clipping (the norm is still reported).
    max_grad_norm: float | None = 1.0
    # Log-probabilities are taken at the sampling temperature, as the sampler saw them.
    temperature: float = 1.0
    entropy: bool = True


def make_optimizer(
    policy: Policy, lr: float = 1e-6, weight_decay: float = 0.0, betas=(0.9, 0.999)
) -> torch.optim.AdamW:
    params = policy.trainable_parameters()
    if not params:
        raise ValueError("the policy has no trainable parameters")
    # The fused kernel on CUDA; the CPU build's default elsewhere.
    fused = params[0].device.type == "cuda"
    if needs_master(params):
        # bf16 weights updated in place lose a step of lr 1e-6 to rounding (optim.py).
        return MasterAdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, fused=fused)
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, fused=fused)


def _pad(rows: list[list[float]], value: float, length: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.tensor([r + [value] * (length - len(r)) for r in rows], dtype=dtype, device=device)


class Collated(TypedDict):
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    advantages: torch.Tensor
    old_logprobs: torch.Tensor | None
    ref_logprobs: torch.Tensor | None


def collate(seqs: Seq[Sequence], pad_id: int, device: torch.device) -> Collated:
    """Right-padded [B, T] tensors; padding has attention 0 and loss mask 0."""
    length = max(len(s.input_ids) for s in seqs)
    f32 = torch.float32

    def per_token(s: Sequence, name: str) -> list[float]:
        v = getattr(s, name)
        if name == "advantages" and isinstance(v, (int, float)):
            return [float(v)] * len(s.input_ids)
        return [float(x) for x in v]

    def optional(name: str) -> torch.Tensor | None:
        present = [getattr(s, name) is not None for s in seqs]
        if any(present) and not all(present):
            raise ValueError(f"{name} must be given for every sequence of a batch or for none")
        return _pad([per_token(s, name) for s in seqs], 0.0, length, f32, device) if all(present) else None

    return {
        "input_ids": _pad([list(s.input_ids) for s in seqs], pad_id, length, torch.long, device),
        "attention_mask": _pad([[1] * len(s.input_ids) for s in seqs], 0, length, torch.long, device),
        "loss_mask": _pad([list(s.loss_mask) for s in seqs], 0, length, f32, device),
        "advantages": _pad([per_token(s, "advantages") for s in seqs], 0.0, length, f32, device),
        "old_logprobs": optional("old_logprobs"),
        "ref_logprobs": optional("ref_logprobs"),
    }


def _pad_id(policy: Policy) -> int:
    tok = policy.tokenizer
    return int(tok.pad_token_id) if tok is not None and tok.pad_token_id is not None else 0


@torch.no_grad()
def score(
    policy: Policy, seqs: Seq[Sequence], temperature: float = 1.0, micro_batch_size: int = 1, reference: bool = False
) -> list[list[float]]:
    """Per-token log-probabilities of each sequence under the current weights (or the reference), no gradient."""
    out: list[list[float]] = []
    was_training = policy.model.training
    policy.model.eval()
    try:
        for i in range(0, len(seqs), micro_batch_size):
            part = seqs[i : i + micro_batch_size]
            b = collate(part, _pad_id(policy), policy.device)
            if reference:
                with policy.reference_model() as ref:
                    logp, _ = token_logprobs(ref, b["input_ids"], b["attention_mask"], temperature)
            else:
                logp, _ = token_logprobs(policy.model, b["input_ids"], b["attention_mask"], temperature)
            out.extend(logp[j, : len(s.input_ids)].tolist() for j, s in enumerate(part))
    finally:
        policy.model.train(was_training)
    return out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def accumulate_gradients(policy: Policy, seqs: Seq[Sequence], cfg: UpdateConfig) -> dict[str, float]:
    """Forward and backward over the batch in micro-batches, leaving the whole batch's gradient in .grad.
    Every micro-batch's loss is normalised by the whole batch's token and sequence counts, so the sum
    of the micro-batch gradients is the gradient of the batch's loss whatever the micro-batch size."""
    if not seqs:
        raise ValueError("an empty batch")
    for i, s in enumerate(seqs):
        s.check(i)
    width = max(len(s.input_ids) for s in seqs)
    all_masks = torch.zeros(len(seqs), width)
    for i, s in enumerate(seqs):
        all_masks[i, : len(s.loss_mask)] = torch.tensor(s.loss_mask, dtype=torch.float32)
    num_tokens, num_seqs = batch_counts(all_masks)
    norm_length = cfg.loss.norm_length if cfg.loss.norm_length is not None else width
    use_ref = cfg.loss.kl_coef > 0 or any(s.ref_logprobs is not None for s in seqs)

    model = policy.model
    model.train()
    totals: dict[str, float] = {"loss": 0.0, "clip_frac": 0.0, "ratio_mean": 0.0}
    for i in range(0, len(seqs), cfg.micro_batch_size):
        part = seqs[i : i + cfg.micro_batch_size]
        b = collate(part, _pad_id(policy), policy.device)
        ref = b["ref_logprobs"]
        if use_ref and ref is None:
            with torch.no_grad(), policy.reference_model() as ref_model:
                ref, _ = token_logprobs(ref_model, b["input_ids"], b["attention_mask"], cfg.temperature)
        logp, ent = token_logprobs(model, b["input_ids"], b["attention_mask"], cfg.temperature, entropy=cfg.entropy)
        old = b["old_logprobs"] if b["old_logprobs"] is not None else logp.detach()
        loss, metrics = policy_loss(
            logp, old, b["advantages"], b["loss_mask"], cfg.loss,
            ref_logp=ref, entropy=ent, num_tokens=num_tokens, num_seqs=num_seqs, norm_length=norm_length,
        )  # fmt: skip
        loss.backward()
        totals["loss"] += float(loss.detach().item())
        for k, v in metrics.items():
            totals[k] = totals.get(k, 0.0) + v
    return {**totals, "tokens": sum(len(s.input_ids) for s in seqs), "loss_tokens": num_tokens, "sequences": len(seqs)}


def update_step(
    policy: Policy, optimizer: torch.optim.Optimizer, seqs: Seq[Sequence], cfg: UpdateConfig
) -> dict[str, float]:
    """One optimiser step on the whole batch. Returns loss, clip_frac, grad_norm, entropy, kl (when a reference is
    used), the token counts and tokens/s (all tokens forwarded, prompts and observations included)."""
    _sync(policy.device)
    t0 = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    stats = accumulate_gradients(policy, seqs, cfg)
    params = policy.trainable_parameters()
    max_norm = cfg.max_grad_norm if cfg.max_grad_norm is not None else math.inf
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm).item())
    if not math.isfinite(grad_norm):
        optimizer.zero_grad(set_to_none=True)
        raise FloatingPointError(
            f"the gradient norm is {grad_norm}: the step was not applied and the weights are unchanged"
        )
    for group in optimizer.param_groups:
        group["lr"] = cfg.lr
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    _sync(policy.device)
    seconds = time.perf_counter() - t0
    return {
        **stats,
        "grad_norm": grad_norm,
        "seconds": seconds,
        "tokens_per_s": stats["tokens"] / seconds if seconds > 0 else math.inf,
    }
