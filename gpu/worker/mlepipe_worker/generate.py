"""Batched sampling from the current weights, recording exactly what was
sampled: the token ids and each token's log-probability.

A token's log-probability is log softmax(logits / temperature) at its
position, before top-p truncation (greedy decoding: temperature 1). That is
the distribution `logprobs.token_logprobs` computes at the same temperature, so
on unchanged weights the PPO ratio of a sampled reply starts at 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence as Seq

import torch
from transformers.generation.logits_process import TopPLogitsWarper
from transformers.generation.stopping_criteria import StopStringCriteria

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


@dataclass
class Group:
    """Rows sampled under one set of parameters and one random stream: a chat request's `n` replies, or the prompts
    of one `generate` call. A group's draws depend only on its own rows, so a group samples the same tokens alone
    or beside others in a batch (up to the floating-point noise of the wider batch's matrix products)."""

    prompts: list[list[int]]
    max_new_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop_strings: Seq[str] = ()
    # Asked before each token: True ends the group's rows where they are (a client that went away).
    cancelled: Callable[[], bool] = lambda: False


def _stop_string_check(tok, stops: Seq[str]):
    # transformers' matcher finds a stop string across token boundaries from the token ids alone.
    return StopStringCriteria(tok, list(stops)) if stops and tok is not None else None


@torch.no_grad()
def generate_groups(
    policy: Policy,
    groups: Seq[Group],
    *,
    stop_token_ids: Seq[int] | None = None,
    ignore_stop: bool = False,
    on_done: Callable[[int, list[Sample]], None] | None = None,
) -> list[list[Sample]]:
    """Samples every group's rows in one left-padded batch with one KV cache, each row to its own group's length
    limit. Only the chosen token's log-probability is kept per step: a [B, V] row of logits lives for one step,
    never a [steps, B, V] record. `on_done(i, samples)` is called as soon as group i's rows have all ended, so that
    its reply need not wait for the batch's longest."""
    rows = [(g, p) for g in range(len(groups)) for p in groups[g].prompts]
    if not rows or any(len(p) == 0 for _, p in rows):
        raise ValueError("every prompt needs at least one token")
    tok = policy.tokenizer
    if stop_token_ids is None:
        stop_token_ids = [tok.eos_token_id] if tok is not None and tok.eos_token_id is not None else []
    stops = set() if ignore_stop else {int(t) for t in stop_token_ids}
    pad = int(tok.pad_token_id) if tok is not None and tok.pad_token_id is not None else (min(stops) if stops else 0)
    dev = policy.device
    members = [[r for r, (g, _) in enumerate(rows) if g == i] for i in range(len(groups))]
    # One random stream per group; seeded as torch.manual_seed would seed the global one.
    rngs = [torch.Generator(device=dev).manual_seed(g.seed) if g.seed is not None else None for g in groups]
    top_p = [TopPLogitsWarper(g.top_p) if g.temperature > 0 and g.top_p < 1.0 else None for g in groups]
    matchers = [None if ignore_stop else _stop_string_check(tok, g.stop_strings) for g in groups]

    # Left padding: every prompt ends at the same position and the replies start together; positions count
    # each row's own tokens, as transformers' generate numbers them.
    width = max(len(p) for _, p in rows)
    seq = torch.tensor([[pad] * (width - len(p)) + list(p) for _, p in rows], device=dev)
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for _, p in rows], device=dev)
    positions = (attention.cumsum(-1) - 1).masked_fill(attention == 0, 0)
    tokens: list[list[int]] = [[] for _ in rows]
    logprobs: list[list[float]] = [[] for _ in rows]
    finish: list[str | None] = [None] * len(rows)
    results: list[list[Sample] | None] = [None] * len(groups)

    model = policy.model
    was_training = model.training
    model.eval()
    try:
        out = model(input_ids=seq, attention_mask=attention, position_ids=positions, use_cache=True, logits_to_keep=1)
        cache = out.past_key_values
        for _ in range(max(g.max_new_tokens for g in groups)):
            logits = out.logits[:, -1].float()
            del out
            chosen = torch.full((len(rows),), pad, dtype=torch.long, device=dev)
            for i, g in enumerate(groups):
                live = [r for r in members[i] if finish[r] is None]
                if results[i] is not None or not live:
                    continue
                idx = torch.tensor(members[i], device=dev)
                raw = logits[idx]
                scaled = raw / g.temperature if g.temperature > 0 else raw
                if g.temperature > 0:
                    warp = top_p[i]
                    scores = warp(seq[idx], scaled) if warp is not None else scaled
                    # A draw for every row of the group, ended or not, so that its stream does not depend on the batch.
                    picked = torch.multinomial(torch.softmax(scores, -1), 1, generator=rngs[i]).squeeze(1)
                else:
                    picked = raw.argmax(-1)
                # The log-probability at the sampling temperature, before top-p: what the update recomputes.
                lp = (scaled.gather(-1, picked[:, None]).squeeze(1) - torch.logsumexp(scaled, -1)).tolist()
                chosen[idx] = picked
                for j, r in enumerate(members[i]):
                    if finish[r] is None:
                        tokens[r].append(int(picked[j]))
                        logprobs[r].append(lp[j])
            seq = torch.cat([seq, chosen[:, None]], dim=-1)
            for i, g in enumerate(groups):
                if results[i] is not None:
                    continue
                match = matchers[i]
                hit = match(seq[members[i]], None).tolist() if match is not None else [False] * len(members[i])
                gone = g.cancelled()
                for j, r in enumerate(members[i]):
                    if finish[r] is not None:
                        continue
                    if tokens[r][-1] in stops or hit[j]:
                        finish[r] = "stop"
                    elif len(tokens[r]) >= g.max_new_tokens or gone:
                        finish[r] = "length"
                ends = [finish[r] for r in members[i]]
                if all(ends):
                    done = [
                        Sample(list(rows[r][1]), tokens[r], logprobs[r], str(end)) for r, end in zip(members[i], ends)
                    ]
                    results[i] = done
                    if on_done is not None:
                        on_done(i, done)
            if all(r is not None for r in results):
                break
            attention = torch.cat([attention, attention.new_ones((len(rows), 1))], dim=-1)
            positions = positions[:, -1:] + 1
            out = model(  # noqa: F841 - read at the top of the next step
                input_ids=chosen[:, None],
                attention_mask=attention,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
    finally:
        model.train(was_training)
    return [r if r is not None else [] for r in results]


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
    """Samples a reply to each prompt (token ids) in one batch, as one group. temperature 0 is greedy.
    stop_token_ids defaults to the tokenizer's eos; ignore_stop always runs max_new_tokens (benchmarks).
    A reply ends at its first stop token or stop string (the token that completed it included); cutting the
    text at the stop string is the caller's (see `cut_at_stop`)."""
    if not prompts:
        raise ValueError("every prompt needs at least one token")
    group = Group([list(p) for p in prompts], max_new_tokens, temperature, top_p, seed, tuple(stop_strings or ()))
    return generate_groups(policy, [group], stop_token_ids=stop_token_ids, ignore_stop=ignore_stop)[0]


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
