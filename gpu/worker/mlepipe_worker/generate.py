"""Batched sampling from the current weights, recording exactly what was
sampled: the token ids and each token's log-probability.

A token's log-probability is log softmax(logits / temperature) at its
position, before top-p truncation (greedy decoding: temperature 1). That is
the distribution `logprobs.token_logprobs` computes at the same temperature, so
on unchanged weights the PPO ratio of a sampled reply starts at 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence as Seq

import torch
from transformers import GenerationConfig

from .model import Policy


@dataclass
class Sample:
    prompt_ids: list[int]
    # Generated tokens, up to and including the stop token when one came.
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" | "length"


def chat_prompt_ids(policy: Policy, messages: list[dict[str, Any]]) -> list[int]:
    """The token ids of a conversation rendered by the tokenizer's chat template, ready for the assistant's turn."""
    tok = policy.tokenizer
    if tok is None:
        raise ValueError("this policy has no tokenizer")
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return list(tok(text, add_special_tokens=False)["input_ids"])


@torch.no_grad()
def generate(
    policy: Policy,
    prompts: Seq[Seq[int]],
    *,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
    stop_token_ids: Seq[int] | None = None,
    ignore_stop: bool = False,
    seed: int | None = None,
    stop_strings: Seq[str] | None = None,
) -> list[Sample]:
    """Samples a reply to each prompt (token ids) in one batch. temperature 0 is greedy.
    stop_token_ids defaults to the tokenizer's eos; ignore_stop always runs max_new_tokens (benchmarks).
    stop_strings only end sampling early (a row that produced one is padded after it); cutting a reply at
    its stop string is the caller's (see `cut_at_stop`)."""
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("every prompt needs at least one token")
    tok = policy.tokenizer
    if stop_token_ids is None:
        stop_token_ids = [tok.eos_token_id] if tok is not None and tok.eos_token_id is not None else []
    stops = [] if ignore_stop else [int(t) for t in stop_token_ids]
    pad = int(tok.pad_token_id) if tok is not None and tok.pad_token_id is not None else (stops[0] if stops else 0)
    if seed is not None:
        torch.manual_seed(seed)

    # Left padding: every prompt ends at the same position and the replies start together.
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=policy.device)
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=policy.device)

    sampling = temperature > 0
    gen = GenerationConfig(
        max_new_tokens=max_new_tokens,
        min_new_tokens=max_new_tokens if ignore_stop else 0,
        do_sample=sampling,
        temperature=temperature if sampling else None,
        top_p=top_p if sampling else None,
        top_k=0 if sampling else None,
        eos_token_id=stops or None,
        pad_token_id=pad,
        use_cache=True,
        return_dict_in_generate=True,
        output_logits=True,
        stop_strings=list(stop_strings) if stop_strings and not ignore_stop else None,
    )
    model = policy.model
    was_training = model.training
    model.eval()
    try:
        # The tokenizer is what lets generate() match stop strings across token boundaries.
        extra = {"tokenizer": tok} if gen.stop_strings else {}
        out = model.generate(input_ids=ids, attention_mask=attention, generation_config=gen, **extra)
    finally:
        model.train(was_training)

    new = out.sequences[:, width:]
    # out.logits: one [B, V] tensor per step, the model's raw logits.
    steps = torch.stack(out.logits, dim=1).float()
    if sampling:
        steps = steps / temperature
    logp = (steps.gather(-1, new[:, : steps.shape[1]].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(steps, -1)).tolist()

    samples: list[Sample] = []
    for i, p in enumerate(prompts):
        row = new[i].tolist()
        end = next((j + 1 for j, t in enumerate(row) if t in stops), None)
        n = end if end is not None else len(row)
        samples.append(Sample(list(p), row[:n], logp[i][:n], "stop" if end is not None else "length"))
    return samples


def cut_at_stop(tokenizer, token_ids: list[int], stops: Seq[str]) -> tuple[int, str] | None:
    """Where a reply ends at its first stop string: (the number of tokens up to and including the one that
    completed it, the text before it), or None when no stop string occurs. The tokens are the ones sampled,
    kept whole: the text is cut, never the token ids' record of what was sampled."""
    stops = [s for s in stops if s]
    if not stops or not token_ids:
        return None

    def first(text: str) -> int | None:
        hits = [i for i in (text.find(s) for s in stops) if i >= 0]
        return min(hits) if hits else None

    if first(tokenizer.decode(token_ids)) is None:
        return None
    # A longer prefix's text contains a shorter one's, so "holds a stop string" is monotone in the length.
    lo, hi = 1, len(token_ids)
    while lo < hi:
        mid = (lo + hi) // 2
        if first(tokenizer.decode(token_ids[:mid])) is None:
            lo = mid + 1
        else:
            hi = mid
    text = tokenizer.decode(token_ids[:lo])
    return lo, text[: first(text)]
