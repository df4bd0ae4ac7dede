"""The policy-gradient loss on exact token batches (PPO-style clipped surrogate
with clip-higher, optional KL to a frozen reference).

Every tensor is [sequences, tokens], aligned with the token ids: position t
holds the log-probability of token t given tokens < t. `mask` is 1 where the
policy generated the token (the loss applies) and 0 on prompts, observations
and padding.

Aggregation (`loss_agg_mode`), with l the per-token loss, m the mask, B the
number of sequences holding at least one loss token and N = Σ m:
  token-mean               Σ_i Σ_t m·l / N
  seq-mean-token-mean      (1/B) Σ_i (Σ_t m·l / Σ_t m)
  seq-mean-token-sum-norm  (1/B) Σ_i (Σ_t m·l / L), L a constant length
                           (Dr. GRPO's MAX_TOKENS; by default the batch's
                           padded length)
verl's agg_loss uses the same token-mean and seq-mean-token-mean; its
seq-mean-token-sum-norm is Σ_i Σ_t m·l / L without the 1/B (its actor then
scales each micro-batch by 1/gradient-accumulation steps), so its scale
depends on the micro-batch size; here it is the mean over sequences that the
mode's name and Dr. GRPO describe.

Micro-batching: pass the whole batch's `num_tokens` and `num_seqs` (and one
`norm_length`) to every micro-batch's call and the micro-batch losses add up
to the full batch's loss exactly, so their gradients do too. The metrics are
normalised the same way (by the batch's token count) so that they add up too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

AggMode = Literal["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"]
AGG_MODES: tuple[str, ...] = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")

# Log-ratios are clamped before exp so that one stale token cannot overflow.
LOG_RATIO_BOUND = 20.0


@dataclass
class LossConfig:
    clip_low: float = 0.2
    clip_high: float = 0.28
    kl_coef: float = 0.0
    kl_estimator: Literal["k1", "k3"] = "k3"
    loss_agg_mode: AggMode = "token-mean"
    # seq-mean-token-sum-norm's constant L; None: the batch's padded length.
    norm_length: int | None = None

    def __post_init__(self) -> None:
        if self.loss_agg_mode not in AGG_MODES:
            raise ValueError(f"loss_agg_mode must be one of {', '.join(AGG_MODES)}, not {self.loss_agg_mode!r}")
        if self.kl_estimator not in ("k1", "k3"):
            raise ValueError(f"kl_estimator must be k1 or k3, not {self.kl_estimator!r}")
        if not (0 <= self.clip_low < 1) or self.clip_high < 0:
            raise ValueError(
                f"clip ranges must satisfy 0 ≤ clip_low < 1 and clip_high ≥ 0 (got {self.clip_low}, {self.clip_high})"
            )


def batch_counts(mask: torch.Tensor) -> tuple[int, int]:
    """(N, B): loss tokens and sequences holding at least one."""
    per_seq = mask.sum(dim=-1)
    return int(per_seq.sum().item()), int((per_seq > 0).sum().item())


def agg_loss(
    loss_mat: torch.Tensor,
    mask: torch.Tensor,
    mode: AggMode,
    *,
    num_tokens: int | None = None,
    num_seqs: int | None = None,
    norm_length: int | None = None,
) -> torch.Tensor:
    """Aggregates a [B, T] per-token loss to a scalar (see the module's docstring)."""
    m = mask.to(loss_mat.dtype)
    local_tokens, local_seqs = batch_counts(mask)
    n_tok = max(num_tokens if num_tokens is not None else local_tokens, 1)
    n_seq = max(num_seqs if num_seqs is not None else local_seqs, 1)
    seq_sums = (loss_mat * m).sum(dim=-1)
    if mode == "token-mean":
        return seq_sums.sum() / n_tok
    if mode == "seq-mean-token-mean":
        # A sequence with no loss token contributes 0 and is not counted in B.
        return (seq_sums / m.sum(dim=-1).clamp(min=1)).sum() / n_seq
    if mode == "seq-mean-token-sum-norm":
        length = norm_length if norm_length is not None else mask.shape[-1]
        return seq_sums.sum() / length / n_seq
    raise ValueError(f"unknown loss_agg_mode {mode!r}")


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, estimator: str) -> torch.Tensor:
    """Per-token estimates of KL(π‖π_ref) from samples of π: k1 = log π/π_ref, k3 = r − log r − 1 with r = π_ref/π."""
    log_ratio = (ref_logp - logp).clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND)
    if estimator == "k1":
        return -log_ratio
    if estimator == "k3":
        return torch.exp(log_ratio) - log_ratio - 1
    raise ValueError(f"unknown KL estimator {estimator!r}")


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    cfg: LossConfig,
    *,
    ref_logp: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    num_tokens: int | None = None,
    num_seqs: int | None = None,
    norm_length: int | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped surrogate (+ KL) loss and its metrics: clip_frac, kl, entropy, ratio_mean (token means)."""
    counts = dict(
        num_tokens=num_tokens,
        num_seqs=num_seqs,
        norm_length=norm_length if norm_length is not None else cfg.norm_length,
    )
    m = mask.to(logp.dtype)
    ratio = torch.exp((logp - old_logp).clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND))
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1 - cfg.clip_low, 1 + cfg.clip_high)
    # Pessimistic: the larger loss. Where the clipped branch wins, the ratio is
    # a constant there and the token sends no gradient.
    per_token = torch.maximum(unclipped, clipped)
    loss = agg_loss(per_token, mask, cfg.loss_agg_mode, **counts)

    n_tok = max(num_tokens if num_tokens is not None else batch_counts(mask)[0], 1)

    def token_mean(x: torch.Tensor) -> float:
        return float((x.detach() * m).sum().item() / n_tok)

    metrics = {"clip_frac": token_mean((clipped > unclipped).to(logp.dtype)), "ratio_mean": token_mean(ratio)}
    if ref_logp is not None:
        kl = kl_estimate(logp, ref_logp, cfg.kl_estimator)
        metrics["kl"] = token_mean(kl)
        if cfg.kl_coef:
            loss = loss + cfg.kl_coef * agg_loss(kl, mask, cfg.loss_agg_mode, **counts)
    if entropy is not None:
        metrics["entropy"] = token_mean(entropy)
    return loss, metrics
